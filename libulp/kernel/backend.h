/* SPDX-License-Identifier: MIT */
/*
 * Backends: how a region's partitions are claimed and programs loaded into them. The process
 * object (proc.c) calls these and nothing else of a backend; a backend calls back into no layer
 * above it. Both place a program by the one partition layout of include/uapi/pvas_ioctl.h.
 *
 *   user (backend_user.c): libulp's loader (loader/) in this process; the default.
 *   kmod (backend_kmod.c): /dev/pvas owns the partitions (freed if this process dies) and loads
 *                          programs in the kernel, with execve's permission checks.
 */
#ifndef ULP_KERNEL_BACKEND_H
#define ULP_KERNEL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

struct pvas_region;
struct ulp_cb;

/* Where a load placed the program: the process object (proc.c), the one writer of ULP state,
 * puts it into the control block. */
struct ulp_backend_image {
	uintptr_t entry, sp;	      /* the program's entry point and initial stack pointer */
	uintptr_t brk_start, brk_max; /* the brk heap: its start and how far it may grow */
	uintptr_t mmap_lo;	      /* the mmap area: from here to the partition's end */
};

struct ulp_backend_ops {
	const char *name;
	/* Attach the backend to a region that has no ULP yet: 0 or -errno. */
	int (*open)(struct pvas_region *r);
	void (*close)(struct pvas_region *r);
	/* Load path into cb's partition (control block mapped, pvid, region and part_lo/hi set),
	 * saying where in *img. 0, or -errno with "path: reason" in err; a failed load holds
	 * nothing of the backend's. */
	int (*load)(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		    struct ulp_backend_image *img, char *err, size_t errlen);
	/* execve in place (NULL: the backend cannot; exec then runs a child process). prepare:
	 * every check of load that needs no memory of the partition, on a partition whose ULP
	 * still runs its old program; *prep holds the opened files. commit: the old program's
	 * memory goes (all of the partition but the control block), the new one is loaded as load
	 * would (into *img); a failure there leaves the partition empty. abort: a prepared exec not
	 * done. The strings stay the caller's until commit or abort. */
	int (*exec_prepare)(struct ulp_cb *cb, const char *path, const char *execfn,
			    char *const argv[], char *const envp[], void **prep, char *err,
			    size_t errlen);
	int (*exec_commit)(struct ulp_cb *cb, void *prep, struct ulp_backend_image *img, char *err,
			   size_t errlen);
	void (*exec_abort)(void *prep);
	/* The partition of a successful load is given back. */
	void (*release)(struct ulp_cb *cb);
};

extern const struct ulp_backend_ops ulp_backend_user, ulp_backend_kmod;

/* A backend's table, named prefix, from its functions prefix_open, prefix_close, ... (each entry
 * above). Both backends define theirs with it: an entry is added here once, and a backend that
 * lacks its function does not build. */
#define ULP_BACKEND_OPS(prefix)                                                                    \
	{                                                                                          \
		.name = #prefix, .open = prefix##_open, .close = prefix##_close,                   \
		.load = prefix##_load, .exec_prepare = prefix##_exec_prepare,                      \
		.exec_commit = prefix##_exec_commit, .exec_abort = prefix##_exec_abort,            \
		.release = prefix##_release,                                                       \
	}

/* The checks of libulp's loader (ulp_load_prepare) for path as a program of cb's partition, by
 * the layout of include/uapi/pvas_ioctl.h: 0 with the files opened in *ld, or -errno with "path:
 * reason" in err. aux receives the control block's auxv pair and must live as long as *ld. Both
 * backends check an execve target with it (backend_user.c). */
struct ulp_load_prep;
int ulp_backend_prepare(const struct ulp_cb *cb, const char *path, const char *execfn,
			char *const argv[], char *const envp[], uint64_t aux[1][2],
			struct ulp_load_prep **ld, char *err, size_t errlen);

#endif
