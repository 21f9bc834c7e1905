/* SPDX-License-Identifier: MIT */
/* The user backend: programs are loaded by libulp's own loader (loader/) in this process. */
#include "backend.h"
#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "loader.h"
#include "uapi/pvas_ioctl.h"

_Static_assert(ULP_CB_SIZE == PVAS_CB_SIZE, "one control block size for both backends");

static int user_open(struct pvas_region *r)
{
	(void)r;
	return 0;
}

static void user_close(struct pvas_region *r)
{
	(void)r;
}

/*
 * The layout of include/uapi/pvas_ioctl.h (S = partition size): control block, stack (its guard
 * page protects the control block), program and brk heap up to 3S/16, interpreter, mmap area
 * from S/4 up, handed out bottom-up. Everything a small program touches sits in the partition's
 * first S/4, so it needs few page-table pages: each new one costs a fault (~85 us on the
 * development VM, bench/ulp_spawn.c) and 4 KiB per ULP.
 */
static void layout_req(const struct ulp_cb *cb, struct ulp_load_req *req, uint64_t aux[1][2])
{
	uintptr_t lo = cb->part_lo;
	size_t size = cb->part_hi - cb->part_lo;

	req->stack_lo = lo + PVAS_LAYOUT_STACK(size);
	req->stack_hi = lo + PVAS_LAYOUT_IMAGE(size);
	req->image_base = lo + PVAS_LAYOUT_IMAGE(size);
	req->image_limit = lo + PVAS_LAYOUT_IMAGE_END(size);
	req->interp_base = lo + PVAS_LAYOUT_INTERP(size);
	req->interp_limit = lo + PVAS_LAYOUT_MMAP(size);
	aux[0][0] = ULP_AT_PVAS_CB;
	aux[0][1] = (uint64_t)(uintptr_t)cb;
	req->extra_auxv = (const uint64_t(*)[2])aux;
	req->n_extra_auxv = 1;
}

int ulp_backend_prepare(const struct ulp_cb *cb, const char *path, const char *execfn,
			char *const argv[], char *const envp[], uint64_t aux[1][2],
			struct ulp_load_prep **ld, char *err, size_t errlen)
{
	struct ulp_load_req req;

	memset(&req, 0, sizeof(req));
	req.path = path;
	req.execfn = execfn;
	req.argv = argv;
	req.envp = envp;
	layout_req(cb, &req, aux);
	return ulp_load_prepare(&req, ld, err, errlen);
}

/* What a load tells the process object: where to start, the heap, the mmap area. */
static void user_loaded(const struct ulp_cb *cb, const struct ulp_image *img,
			struct ulp_backend_image *out)
{
	size_t size = cb->part_hi - cb->part_lo;

	out->entry = img->entry;
	out->sp = img->sp;
	out->brk_start = img->brk_start;
	out->brk_max = cb->part_lo + PVAS_LAYOUT_BRK_END(size);
	out->mmap_lo = cb->part_lo + PVAS_LAYOUT_MMAP(size);
}

/* A program loaded afresh into cb's partition, by the layout above (layout_req). */
static int user_load(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		     struct ulp_backend_image *out, char *err, size_t errlen)
{
	struct ulp_load_req req;
	struct ulp_image img;
	uint64_t aux[1][2];
	int rc;

	memset(&req, 0, sizeof(req));
	req.path = path;
	req.argv = argv;
	req.envp = envp;
	layout_req(cb, &req, aux);
	rc = ulp_load(&req, &img, err, errlen);
	if (rc)
		return rc;
	user_loaded(cb, &img, out);
	return 0;
}

/* The request lives in the preparation (its auxv pair included) until commit. */
struct user_prep {
	struct ulp_load_prep *ld;
	uint64_t aux[1][2];
};

static int user_exec_prepare(struct ulp_cb *cb, const char *path, const char *execfn,
			     char *const argv[], char *const envp[], void **prep, char *err,
			     size_t errlen)
{
	struct user_prep *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	rc = ulp_backend_prepare(cb, path, execfn, argv, envp, p->aux, &p->ld, err, errlen);
	if (rc) {
		free(p);
		return rc;
	}
	*prep = p;
	return 0;
}

static int user_exec_commit(struct ulp_cb *cb, void *prep, struct ulp_backend_image *out, char *err,
			    size_t errlen)
{
	struct user_prep *p = prep;
	struct ulp_image img;
	int rc;

	/* The old program: text, data, heap, mmaps, stack (not the control block). */
	mmap((void *)(cb->part_lo + ULP_CB_SIZE), cb->part_hi - cb->part_lo - ULP_CB_SIZE,
	     PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	rc = ulp_load_commit(p->ld, &img, err, errlen);
	free(p);
	if (!rc)
		user_loaded(cb, &img, out);
	return rc;
}

static void user_exec_abort(void *prep)
{
	struct user_prep *p = prep;

	if (p)
		ulp_load_abort(p->ld);
	free(p);
}

static void user_release(struct ulp_cb *cb)
{
	(void)cb;
}

const struct ulp_backend_ops ulp_backend_user = ULP_BACKEND_OPS(user);
