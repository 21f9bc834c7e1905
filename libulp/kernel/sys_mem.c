/* SPDX-License-Identifier: MIT */
/*
 * Memory syscalls of a ULP. All ULPs share one address space: a ULP maps only inside its own
 * partition (brk heap at a fixed place, mmap area managed by partition.c), and what it unmaps
 * goes back to reserved (PROT_NONE) address space, never to a hole the host could map into.
 */
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#endif

/* v rounded up to whole pages; 0 when that wraps around (callers refuse a length of 0). */
static size_t page_up(size_t v)
{
	size_t m = ulp_page_size() - 1;

	return v > SIZE_MAX - m ? 0 : (v + m) & ~m;
}

/* Never computes lo + len, which may wrap: an address above the partition must not pass as a
 * small distance below its end. */
int ulp_sys_range_ok(const struct ulp_cb *cb, uintptr_t lo, size_t len)
{
	return lo >= cb->part_lo + ULP_CB_SIZE && lo <= cb->part_hi && len <= cb->part_hi - lo;
}

long ulp_sys_brk(struct ulp_cb *cb, struct ulp_sys *s)
{
	uintptr_t want = (uintptr_t)s->a[0], need;
	long r;

	if (want < cb->brk_start || want > cb->brk_max)
		return (long)cb->brk_cur; /* the kernel's way of saying no */
	need = page_up(want);
	if (need > cb->brk_mapped) {
		r = ulp_arch_syscall(SYS_mmap, (long)cb->brk_mapped, (long)(need - cb->brk_mapped),
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (ulp_raw_is_err(r))
			return (long)cb->brk_cur;
	} else if (need < cb->brk_mapped) {
		ulp_raw_reserve(need, cb->brk_mapped - need);
	}
	cb->brk_mapped = need;
	cb->brk_cur = want;
	return (long)want;
}

/* len bytes found no room in cb's partition: remembered for its end (the largest), when a
 * process could have had them (the kernel's overcommit heuristic refuses one mapping larger than
 * RAM and swap together: a program probing with such a size is told no either way). */
static void refused(struct ulp_cb *cb, size_t len)
{
	struct sysinfo si;

	if (len <= cb->mm_refused || ulp_arch_syscall(SYS_sysinfo, (long)&si, 0, 0, 0, 0, 0))
		return;
	if (len <= ((uint64_t)si.totalram + si.totalswap) * (si.mem_unit ? si.mem_unit : 1))
		cb->mm_refused = len;
}

long ulp_sys_mmap(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	uintptr_t addr = (uintptr_t)a[0];
	size_t len = page_up((size_t)a[1]);
	int flags = (int)a[3];
	long r;

	if (!a[1] || !len)
		return -EINVAL;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (!ulp_sys_range_ok(cb, addr, len))
			return -ENOMEM; /* never outside its own partition */
		r = ulp_arch_syscall(SYS_mmap, a[0], a[1], a[2], flags, a[4], a[5]);
		if (!ulp_raw_is_err(r))
			ulp_mm_take(cb, addr, len);
		return r;
	}
	addr = ulp_mm_alloc(cb, len);
	if (!addr) {
		refused(cb, len);
		return -ENOMEM;
	}
	r = ulp_arch_syscall(SYS_mmap, (long)addr, a[1], a[2], flags | MAP_FIXED, a[4], a[5]);
	if (ulp_raw_is_err(r))
		ulp_mm_free(cb, addr, len);
	return r;
}

long ulp_sys_munmap(struct ulp_cb *cb, struct ulp_sys *s)
{
	uintptr_t addr = (uintptr_t)s->a[0];
	size_t len = page_up((size_t)s->a[1]);

	if ((addr & (ulp_page_size() - 1)) || !len)
		return -EINVAL;
	if (!ulp_sys_range_ok(cb, addr, len))
		return -EINVAL;
	ulp_raw_reserve(addr, len);
	ulp_mm_free(cb, addr, len);
	return 0;
}

long ulp_sys_mremap(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	uintptr_t old = (uintptr_t)a[0], to;
	size_t old_len = page_up((size_t)a[1]), new_len = page_up((size_t)a[2]);
	int flags = (int)a[3];
	long r;

	if ((a[1] && !old_len) || !new_len || !ulp_sys_range_ok(cb, old, old_len))
		return -EINVAL;
	if (new_len <= old_len && !(flags & MREMAP_FIXED)) {
		r = ulp_arch_syscall(SYS_mremap, a[0], a[1], a[2], 0, 0, 0);
		if (!ulp_raw_is_err(r) && new_len < old_len) {
			ulp_raw_reserve(old + new_len, old_len - new_len);
			ulp_mm_free(cb, old + new_len, old_len - new_len);
		}
		return r;
	}
	if (flags & MREMAP_FIXED) {
		if (!(flags & MREMAP_MAYMOVE))
			return -EINVAL; /* as the kernel says */
		to = (uintptr_t)a[4];
		if (!ulp_sys_range_ok(cb, to, new_len))
			return -EINVAL;
	} else {
		if (!(flags & MREMAP_MAYMOVE))
			return -ENOMEM; /* growing in place would eat the reservation around it */
		to = ulp_mm_alloc(cb, new_len);
		if (!to) {
			refused(cb, new_len);
			return -ENOMEM;
		}
	}
	r = ulp_arch_syscall(SYS_mremap, (long)old, (long)old_len, (long)new_len,
			     MREMAP_MAYMOVE | MREMAP_FIXED, (long)to, 0);
	if (ulp_raw_is_err(r)) {
		if (!(flags & MREMAP_FIXED))
			ulp_mm_free(cb, to, new_len);
		return r;
	}
	ulp_mm_take(cb, to, new_len);
	ulp_raw_reserve(old, old_len); /* mremap left a hole: keep the region reserved */
	ulp_mm_free(cb, old, old_len);
	return r;
}

/* mprotect and madvise act on whatever is mapped: outside its own partition (the launcher's code,
 * another ULP) a ULP gets what the kernel says for an unmapped range. */
static long own_range(struct ulp_cb *cb, struct ulp_sys *s)
{
	uintptr_t addr = (uintptr_t)s->a[0];
	size_t len = page_up((size_t)s->a[1]);

	if (addr & (ulp_page_size() - 1))
		return -EINVAL;
	if (s->a[1] && (!len || !ulp_sys_range_ok(cb, addr, len)))
		return -ENOMEM;
	return 0;
}

long ulp_sys_mprotect(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r = own_range(cb, s);

	return r ? r : ulp_arch_syscall(SYS_mprotect, s->a[0], s->a[1], s->a[2], 0, 0, 0);
}

long ulp_sys_madvise(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r = own_range(cb, s);

	if (r)
		return r;
	/* what the program marks for its forks stands from now on (fork_copy.c) */
	if (s->a[2] == MADV_DONTFORK || s->a[2] == MADV_DOFORK)
		ulp_fork_copy_own(cb);
	return ulp_arch_syscall(SYS_madvise, s->a[0], s->a[1], s->a[2], 0, 0, 0);
}
