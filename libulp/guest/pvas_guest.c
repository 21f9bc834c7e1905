/* SPDX-License-Identifier: MIT */
/*
 * libpvas-guest: the guest side of the pvas API, linked into programs that run as ULPs. It only
 * reads the control block's header, whose layout libulp/kernel/proc.c pins with a static assert.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "pvas.h"

#define AT_PVAS_CB 0x50564153
#define CB_MAGIC 0x50564153434231ull

struct cb;
struct guest_ops {
	uint32_t version;
	int (*get_pvid)(struct cb *cb);
	int (*yield)(struct cb *cb);
	int (*switch_to)(struct cb *cb, int pvid);
	int (*export_addr)(struct cb *cb, const char *name, void *addr);
	int (*import_addr)(struct cb *cb, const char *name, void **addr);
	int (*exec)(struct cb *cb, int pvid, const char *file, char *const argv[],
		    char *const envp[]);
	int (*barrier)(struct cb *cb, const char *name, int count);
};
struct cb {
	uint64_t magic;
	int pvid;
	int state;
	const struct guest_ops *ops;
};

static struct cb *cached;

static struct cb *find_cb(void)
{
	if (!cached) {
		struct cb *cb = (struct cb *)getauxval(AT_PVAS_CB);

		if (cb && cb->magic == CB_MAGIC && cb->ops && cb->ops->version >= 1)
			cached = cb;
	}
	return cached;
}

int pvas_get_pvid(int *pvid)
{
	struct cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	if (!pvid)
		return -EINVAL;
	*pvid = cb->ops->get_pvid(cb);
	return 0;
}

int pvas_ulp_switch(int pvid)
{
	struct cb *cb = find_cb();

	return cb ? cb->ops->switch_to(cb, pvid) : -ENOTSUP;
}

int pvas_yield(void)
{
	struct cb *cb = find_cb();

	return cb ? cb->ops->yield(cb) : -ENOTSUP;
}

int pvas_export(const char *name, void *addr)
{
	struct cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 2 ? cb->ops->export_addr(cb, name, addr) : -ENOSYS;
}

int pvas_import(const char *name, void **addr)
{
	struct cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 2 ? cb->ops->import_addr(cb, name, addr) : -ENOSYS;
}

int pvas_ulp_exec(int pvid, const char *file, char *const argv[], char *const envp[])
{
	struct cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 3 ? cb->ops->exec(cb, pvid, file, argv, envp) : -ENOSYS;
}

int pvas_barrier(const char *name, int count)
{
	struct cb *cb = find_cb();

	if (!cb)
		return -ENOTSUP;
	return cb->ops->version >= 3 ? cb->ops->barrier(cb, name, count) : -ENOSYS;
}
