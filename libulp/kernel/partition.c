/* SPDX-License-Identifier: MIT */
/*
 * The PVAS region and its partitions. Partition N is [base + N*size, base + (N+1)*size); its
 * first ULP_CB_SIZE bytes are the control block, so any address tells its ULP. The mmap area of
 * a partition is handed out bottom-up from a sorted list of free ranges kept in the control block.
 * Functions used by the syscall trap use raw system calls only (no errno: TLS may be the ULP's).
 */
#include "backend.h"
#include "proc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int is_pow2(size_t v)
{
	return v && !(v & (v - 1));
}

static void region_free(struct pvas_region *r)
{
	free(r->procs);
	free(r->used_map);
	free(r->zombie_map);
	free(r->names);
	free(r->bars);
	free(r);
}

int pvas_region_create(struct pvas_region **out, uintptr_t base, size_t size, size_t part_size)
{
	struct pvas_region *r;
	long p;

	base = base ? base : ULP_DEFAULT_BASE;
	size = size ? size : ULP_DEFAULT_REGION;
	part_size = part_size ? part_size : ULP_DEFAULT_PARTITION;
	if (!is_pow2(size) || !is_pow2(part_size) || part_size < ULP_MIN_PARTITION ||
	    part_size > size || base % part_size || base % (4ull << 30) || size % (4ull << 30))
		return -EINVAL;
	if (size > (1ull << 47) || base + size > (1ull << 47) || base + size < base)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->base = base;
	r->backend = &ulp_backend_user;
	r->backend_fd = -1;
	r->end_efd = -1;
	r->size = size;
	r->part_size = part_size;
	r->nparts = (unsigned)(size / part_size);
	r->procs = calloc(r->nparts, sizeof(*r->procs));
	r->used_map = calloc((r->nparts + 63) / 64, sizeof(uint64_t));
	r->zombie_map = calloc((r->nparts + 63) / 64, sizeof(uint64_t));
	r->names = calloc(PVAS_MAX_NAMES, sizeof(*r->names));
	r->bars = calloc(PVAS_MAX_BARRIERS, sizeof(*r->bars));
	if (!r->procs || !r->used_map || !r->zombie_map || !r->names || !r->bars) {
		region_free(r);
		return -ENOMEM;
	}
	p = ulp_arch_syscall(SYS_mmap, (long)base, (long)size, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1,
			     0);
	if ((unsigned long)p > -4096UL || (uintptr_t)p != base) {
		if ((unsigned long)p <= -4096UL)
			ulp_arch_syscall(SYS_munmap, p, (long)size, 0, 0, 0, 0);
		region_free(r);
		return (unsigned long)p > -4096UL && p != -EEXIST ? (int)p : -EADDRINUSE;
	}
	*out = r;
	return 0;
}

int pvas_region_set_backend(struct pvas_region *r, const struct ulp_backend_ops *b)
{
	int rc;

	if (r->nused)
		return -EBUSY;
	r->backend->close(r);
	r->backend = &ulp_backend_user;
	rc = b->open(r);
	if (!rc)
		r->backend = b;
	return rc;
}

void pvas_region_destroy(struct pvas_region *r)
{
	if (!r)
		return;
	r->backend->close(r);
	ulp_arch_syscall(SYS_munmap, (long)r->base, (long)r->size, 0, 0, 0, 0);
	region_free(r);
}

struct ulp_cb *pvas_cb(struct pvas_region *r, int pvid)
{
	if (!r || pvid < 0 || (unsigned)pvid >= r->nparts)
		return NULL;
	return (struct ulp_cb *)(r->base + (uintptr_t)pvid * r->part_size);
}

/* ---- mmap area ---- */

void ulp_mm_init(struct ulp_cb *cb, uintptr_t lo, uintptr_t hi)
{
	cb->mmap_lo = lo;
	cb->mmap_hi = hi;
	cb->nfree = 1;
	cb->free_ext[0].lo = lo;
	cb->free_ext[0].hi = hi;
}

/* Lowest free range that fits: bottom-up, so mappings stay near the rest of the program and
 * share its page tables. 0 when full. */
uintptr_t ulp_mm_alloc(struct ulp_cb *cb, size_t len)
{
	uintptr_t addr = 0;
	unsigned i;

	ulp_spin_lock(&cb->mm_lock);
	for (i = 0; i < cb->nfree; i++) {
		struct ulp_extent *e = &cb->free_ext[i];

		if (e->hi - e->lo < len)
			continue;
		addr = e->lo;
		e->lo += len;
		if (e->hi == e->lo) {
			memmove(e, e + 1, (cb->nfree - i - 1) * sizeof(*e));
			cb->nfree--;
		}
		break;
	}
	ulp_spin_unlock(&cb->mm_lock);
	return addr;
}

/* Remove [lo, hi) from the free ranges. */
static void mm_cut(struct ulp_cb *cb, uintptr_t lo, uintptr_t hi)
{
	unsigned i;

	for (i = 0; i < cb->nfree; i++) {
		struct ulp_extent *e = &cb->free_ext[i];

		if (e->hi <= lo || e->lo >= hi)
			continue;
		if (e->lo < lo && e->hi > hi) { /* split */
			if (cb->nfree == ULP_MAX_EXTENTS)
				return; /* table full: leave the hole out of the free list */
			memmove(e + 1, e, (cb->nfree - i) * sizeof(*e));
			cb->nfree++;
			e->hi = lo;
			e[1].lo = hi;
			return;
		}
		if (e->lo >= lo && e->hi <= hi) { /* fully covered */
			memmove(e, e + 1, (cb->nfree - i - 1) * sizeof(*e));
			cb->nfree--;
			i--;
		} else if (e->lo < lo) {
			e->hi = lo;
		} else {
			e->lo = hi;
		}
	}
}

void ulp_mm_take(struct ulp_cb *cb, uintptr_t lo, size_t len)
{
	ulp_spin_lock(&cb->mm_lock);
	mm_cut(cb, lo, lo + len);
	ulp_spin_unlock(&cb->mm_lock);
}

void ulp_mm_free(struct ulp_cb *cb, uintptr_t lo, size_t len)
{
	uintptr_t hi = lo + len;
	unsigned i;

	if (lo < cb->mmap_lo)
		lo = cb->mmap_lo;
	if (hi > cb->mmap_hi)
		hi = cb->mmap_hi;
	if (lo >= hi)
		return;
	ulp_spin_lock(&cb->mm_lock);
	mm_cut(cb, lo, hi); /* makes the range disjoint from the free list */
	for (i = 0; i < cb->nfree && cb->free_ext[i].hi < lo; i++)
		;
	/* merge with neighbours, else insert */
	if (i > 0 && cb->free_ext[i - 1].hi == lo) {
		cb->free_ext[i - 1].hi = hi;
		if (i < cb->nfree && cb->free_ext[i].lo == hi) {
			cb->free_ext[i - 1].hi = cb->free_ext[i].hi;
			memmove(&cb->free_ext[i], &cb->free_ext[i + 1],
				(cb->nfree - i - 1) * sizeof(cb->free_ext[0]));
			cb->nfree--;
		}
	} else if (i < cb->nfree && cb->free_ext[i].lo == hi) {
		cb->free_ext[i].lo = lo;
	} else if (cb->nfree < ULP_MAX_EXTENTS) {
		memmove(&cb->free_ext[i + 1], &cb->free_ext[i],
			(cb->nfree - i) * sizeof(cb->free_ext[0]));
		cb->free_ext[i].lo = lo;
		cb->free_ext[i].hi = hi;
		cb->nfree++;
	}
	ulp_spin_unlock(&cb->mm_lock);
}
