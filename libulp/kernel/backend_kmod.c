/* SPDX-License-Identifier: MIT */
/*
 * The kmod backend: partitions are claimed from /dev/pvas and programs are loaded by the kernel
 * module (exec permission checks, noexec mounts and file permissions as for execve). Everything
 * else (trap, scheduler, tasks) is shared with the user backend. The launching process owns the
 * partitions, so the module frees them all if it dies.
 */
#include "backend.h"
#include "pvas.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "loader.h"
#include "uapi/pvas_ioctl.h"

_Static_assert(ULP_CB_SIZE == PVAS_CB_SIZE, "the module leaves the control block alone");
_Static_assert(ULP_AT_PVAS_CB >= PVAS_AUX_PRIVATE_MIN, "a private auxv type");

static void kmod_release(struct ulp_cb *cb);

/* Zero a PVAS_IOC_* argument and fill the head every one starts with (uapi/pvas_ioctl.h); the
 * second form for an argument on cb's partition, whose head goes on with its pvid. */
#define KMOD_ARG_INIT(arg)                                                                         \
	(memset(&(arg), 0, sizeof(arg)), (arg).version = PVAS_ABI_VERSION, (arg).size = sizeof(arg))
#define KMOD_PART_ARG_INIT(arg, cb) (KMOD_ARG_INIT(arg), (arg).pvid = (uint32_t)(cb)->pvid)

/* cmd on the address space, with arg: 0 or -errno. */
static int kmod_ioctl(const struct ulp_cb *cb, unsigned long cmd, void *arg)
{
	return ioctl(cb->region->backend_fd, cmd, arg) != 0 ? -errno : 0;
}

static int kmod_open(struct pvas_region *r)
{
	struct pvas_create c;
	int dev, fd;

	dev = open(PVAS_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	KMOD_ARG_INIT(c);
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
	r->backend_fd = pvas_fd_high(fd);
	return 0;
}

static void kmod_close(struct pvas_region *r)
{
	if (r->backend_fd >= 0)
		close(r->backend_fd);
	r->backend_fd = -1;
}

/* The module loads path into cb's partition, which this process owns (PVAS_IOC_LOAD resets it
 * first: the old program of an execve goes there). */
static int kmod_load_into(struct ulp_cb *cb, const char *path, char *const argv[],
			  char *const envp[], struct ulp_backend_image *img, char *err,
			  size_t errlen)
{
	struct pvas_load l;
	int rc;

	KMOD_PART_ARG_INIT(l, cb);
	l.path = (uintptr_t)path;
	l.argv = (uintptr_t)argv;
	l.envp = (uintptr_t)envp;
	l.aux_type = ULP_AT_PVAS_CB;
	l.aux_val = (uintptr_t)cb;
	rc = kmod_ioctl(cb, PVAS_IOC_LOAD, &l);
	if (rc) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(-rc),
			 rc == -ENOEXEC	 ? " (not an x86_64 position-independent executable; "
					   "rebuild with -fPIE -pie)"
			 : rc == -EACCES ? " (the module checks exec and read permission, noexec)"
					 : "");
		return rc;
	}
	img->entry = l.entry;
	img->sp = l.sp;
	img->brk_start = l.brk_start;
	img->brk_max = l.brk_limit;
	img->mmap_lo = l.mmap_start; /* the layout: the mmap area runs to the end */
	return 0;
}

static int kmod_load(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		     struct ulp_backend_image *img, char *err, size_t errlen)
{
	struct pvas_attach a;
	int rc;

	KMOD_PART_ARG_INIT(a, cb);
	rc = kmod_ioctl(cb, PVAS_IOC_ATTACH, &a);
	if (rc) {
		snprintf(err, errlen, "%s: /dev/pvas: claiming partition %d: %s", path, cb->pvid,
			 strerror(-rc));
		return rc;
	}
	rc = kmod_load_into(cb, path, argv, envp, img, err, errlen);
	if (rc)
		kmod_release(cb);
	return rc;
}

/*
 * execve in place. prepare: the checks of libulp's own loader, which refuses what the module
 * refuses (not an x86_64 ET_DYN: -ENOEXEC, so that exec.c runs an ET_EXEC target as a child;
 * missing files, permissions, a bad interpreter, arguments over the stack) with the same
 * messages, and touches no memory of the partition: the ULP's old program goes on when they
 * fail. commit: the module loads the program into the ULP's own partition, which the launching
 * process still owns (PVAS_IOC_LOAD resets it first, as execve drops the old image); what the
 * module refuses only then leaves the partition reset, and exec.c ends the ULP.
 */
struct kmod_prep {
	const char *path;
	char *const *argv;
	char *const *envp;
};

static int kmod_exec_prepare(struct ulp_cb *cb, const char *path, const char *execfn,
			     char *const argv[], char *const envp[], void **prep, char *err,
			     size_t errlen)
{
	struct kmod_prep *p = calloc(1, sizeof(*p));
	struct ulp_load_prep *ld;
	uint64_t aux[1][2];
	int rc;

	if (!p) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	rc = ulp_backend_prepare(cb, path, execfn, argv, envp, aux, &ld, err, errlen);
	if (rc) {
		free(p);
		return rc;
	}
	ulp_load_abort(ld);
	p->path = path;
	p->argv = argv;
	p->envp = envp;
	*prep = p;
	return 0;
}

static int kmod_exec_commit(struct ulp_cb *cb, void *prep, struct ulp_backend_image *img, char *err,
			    size_t errlen)
{
	struct kmod_prep *p = prep;
	int rc = kmod_load_into(cb, p->path, p->argv, p->envp, img, err, errlen);

	free(p);
	return rc;
}

static void kmod_exec_abort(void *prep)
{
	free(prep);
}

static void kmod_release(struct ulp_cb *cb)
{
	struct pvas_release rel;

	KMOD_PART_ARG_INIT(rel, cb);
	kmod_ioctl(cb, PVAS_IOC_RELEASE, &rel);
}

const struct ulp_backend_ops ulp_backend_kmod = ULP_BACKEND_OPS(kmod);
