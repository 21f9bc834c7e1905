/* SPDX-License-Identifier: MIT */
/*
 * libpvas-guest: the guest side of the pvas API, linked into programs that run as ULPs. It only
 * reads the control block's header (include/uapi/pvas_cb.h, which pins its layout).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "pvas.h"
#include "uapi/pvas_cb.h"

static struct pvas_cb *cached;

static struct pvas_cb *find_cb(void)
{
	if (!cached) {
		struct pvas_cb *cb = (struct pvas_cb *)getauxval(PVAS_AT_CB);

		if (cb && cb->magic == PVAS_CB_MAGIC && cb->ops && cb->ops->version >= 1)
			cached = cb;
	}
	return cached;
}

/* The runtime's view of the same control block, which the entry points take. */
static struct ulp_cb *self(struct pvas_cb *cb)
{
	return (struct ulp_cb *)cb;
}

int pvas_get_pvid(int *pvid)
{
	struct pvas_cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	if (!pvid)
		return -EINVAL;
	*pvid = cb->ops->get_pvid(self(cb));
	return 0;
}

int pvas_ulp_switch(int pvid)
{
	struct pvas_cb *cb = find_cb();

	return cb ? cb->ops->switch_to(self(cb), pvid) : -ENOTSUP;
}

int pvas_yield(void)
{
	struct pvas_cb *cb = find_cb();

	return cb ? cb->ops->yield(self(cb)) : -ENOTSUP;
}

int pvas_export(const char *name, void *addr)
{
	struct pvas_cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 2 ? cb->ops->export_addr(self(cb), name, addr) : -ENOSYS;
}

int pvas_import(const char *name, void **addr)
{
	struct pvas_cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 2 ? cb->ops->import_addr(self(cb), name, addr) : -ENOSYS;
}

int pvas_ulp_exec(int pvid, const char *file, char *const argv[], char *const envp[])
{
	struct pvas_cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 3 ? cb->ops->exec(self(cb), pvid, file, argv, envp) : -ENOSYS;
}

int pvas_barrier(const char *name, int count)
{
	struct pvas_cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 3 ? cb->ops->barrier(self(cb), name, count) : -ENOSYS;
}
