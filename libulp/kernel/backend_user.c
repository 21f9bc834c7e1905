/* SPDX-License-Identifier: MIT */
/* The user backend: programs are loaded by libulp's own loader (loader/) in this process. */
#include "backend.h"
#include "proc.h"

#include <string.h>

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
static int user_load(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		     char *err, size_t errlen)
{
	uintptr_t lo = cb->part_lo;
	size_t size = cb->part_hi - cb->part_lo;
	struct ulp_load_req req;
	struct ulp_image img;
	uint64_t aux[1][2];
	int rc;

	memset(&req, 0, sizeof(req));
	req.path = path;
	req.argv = argv;
	req.envp = envp;
	req.stack_lo = lo + PVAS_LAYOUT_STACK(size);
	req.stack_hi = lo + PVAS_LAYOUT_IMAGE(size);
	req.image_base = lo + PVAS_LAYOUT_IMAGE(size);
	req.image_limit = lo + PVAS_LAYOUT_IMAGE_END(size);
	req.interp_base = lo + PVAS_LAYOUT_INTERP(size);
	req.interp_limit = lo + PVAS_LAYOUT_MMAP(size);
	aux[0][0] = ULP_AT_PVAS_CB;
	aux[0][1] = (uint64_t)(uintptr_t)cb;
	req.extra_auxv = (const uint64_t(*)[2])aux;
	req.n_extra_auxv = 1;
	rc = ulp_load(&req, &img, err, errlen);
	if (rc)
		return rc;
	cb->entry = img.entry;
	cb->sp = img.sp;
	cb->brk_start = cb->brk_cur = cb->brk_mapped = img.brk_start;
	cb->brk_max = lo + PVAS_LAYOUT_BRK_END(size);
	ulp_mm_init(cb, lo + PVAS_LAYOUT_MMAP(size), cb->part_hi);
	return 0;
}

static void user_release(struct ulp_cb *cb)
{
	(void)cb;
}

const struct ulp_backend_ops ulp_backend_user = {
    .name = "user",
    .open = user_open,
    .close = user_close,
    .load = user_load,
    .release = user_release,
};
