/* SPDX-License-Identifier: MIT */
/*
 * The kmod backend: partitions are claimed from /dev/pvas and programs are loaded by the kernel
 * module (exec permission checks, noexec mounts and file permissions as for execve). Everything
 * else (trap, scheduler, tasks) is shared with the user backend. The launching process owns the
 * partitions, so the module frees them all if it dies.
 */
#include "backend.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/pvas_ioctl.h"

_Static_assert(ULP_CB_SIZE == PVAS_CB_SIZE, "the module leaves the control block alone");
_Static_assert(ULP_AT_PVAS_CB >= PVAS_AUX_PRIVATE_MIN, "a private auxv type");

static void kmod_release(struct ulp_cb *cb);

static int kmod_open(struct pvas_region *r)
{
	struct pvas_create c;
	int dev, fd;

	dev = open(PVAS_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	memset(&c, 0, sizeof(c));
	c.version = PVAS_ABI_VERSION;
	c.size = sizeof(c);
	c.part_size = r->part_size;
	c.base = r->base;
	c.count = r->nparts > PVAS_COUNT_MAX ? PVAS_COUNT_MAX : r->nparts;
	c.flags = PVAS_CREATE_CLOEXEC;
	fd = ioctl(dev, PVAS_IOC_CREATE, &c);
	if (fd < 0) {
		int e = errno;
		close(dev);
		return -e;
	}
	close(dev);
	if (c.count < r->nparts)
		r->nparts = c.count;
	r->backend_fd = fd;
	return 0;
}

static void kmod_close(struct pvas_region *r)
{
	if (r->backend_fd >= 0)
		close(r->backend_fd);
	r->backend_fd = -1;
}

static int kmod_load(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		     struct ulp_backend_image *img, char *err, size_t errlen)
{
	struct pvas_region *r = cb->region;
	struct pvas_attach a;
	struct pvas_load l;
	int rc;

	memset(&a, 0, sizeof(a));
	a.version = PVAS_ABI_VERSION;
	a.size = sizeof(a);
	a.pvid = (uint32_t)cb->pvid;
	if (ioctl(r->backend_fd, PVAS_IOC_ATTACH, &a) != 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: /dev/pvas: claiming partition %d: %s", path, cb->pvid,
			 strerror(-rc));
		return rc;
	}
	memset(&l, 0, sizeof(l));
	l.version = PVAS_ABI_VERSION;
	l.size = sizeof(l);
	l.pvid = (uint32_t)cb->pvid;
	l.path = (uintptr_t)path;
	l.argv = (uintptr_t)argv;
	l.envp = (uintptr_t)envp;
	l.aux_type = ULP_AT_PVAS_CB;
	l.aux_val = (uintptr_t)cb;
	if (ioctl(r->backend_fd, PVAS_IOC_LOAD, &l) != 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(-rc),
			 rc == -ENOEXEC	 ? " (not an x86_64 position-independent executable; "
					   "rebuild with -fPIE -pie)"
			 : rc == -EACCES ? " (the module checks exec and read permission, noexec)"
					 : "");
		kmod_release(cb);
		return rc;
	}
	img->entry = l.entry;
	img->sp = l.sp;
	img->brk_start = l.brk_start;
	img->brk_max = l.brk_limit;
	img->mmap_lo = l.mmap_start; /* the layout: the mmap area runs to the end */
	return 0;
}

static void kmod_release(struct ulp_cb *cb)
{
	struct pvas_release rel;

	memset(&rel, 0, sizeof(rel));
	rel.version = PVAS_ABI_VERSION;
	rel.size = sizeof(rel);
	rel.pvid = (uint32_t)cb->pvid;
	ioctl(cb->region->backend_fd, PVAS_IOC_RELEASE, &rel);
}

const struct ulp_backend_ops ulp_backend_kmod = {
    .name = "kmod",
    .open = kmod_open,
    .close = kmod_close,
    .load = kmod_load,
    .release = kmod_release,
};
