/* SPDX-License-Identifier: MIT */
/*
 * Where a code address of a ULP lies: its ELF object in memory and the function around it, from
 * the object's .eh_frame_hdr (fast_find.c). Every read checks the object's own segments first, and
 * the object is found without faulting (process_vm_readv), so a strange program makes a site be
 * left alone, never a fault.
 */
#ifndef ULP_ARCH_X86_64_FAST_FIND_H
#define ULP_ARCH_X86_64_FAST_FIND_H

#include <elf.h>
#include <stdint.h>

struct ulp_x86_obj {
	uintptr_t bias;
	const Elf64_Phdr *ph;
	unsigned phnum;
	uintptr_t x_lo, x_hi; /* the executable PT_LOAD holding the site */
	int x_prot;
	uintptr_t t_lo, t_hi; /* the ULP's syscall trampolines (fastcall.c), when known: else 0 */
};

/* The object whose executable segment holds site: its ELF header is the nearest page in
 * [lo, site] starting with the ELF magic (lo: the start of the partition's code), or the header of
 * an object found before at the same offset from lo that holds site. 0 or -errno. */
int ulp_x86_find_obj(uintptr_t site, uintptr_t lo, struct ulp_x86_obj *o);
/* [*lo, *hi): the function (FDE) holding site. 0 or -1. */
int ulp_x86_find_func(const struct ulp_x86_obj *o, uintptr_t site, uintptr_t *lo, uintptr_t *hi);
/* [*lo, *hi): the function (FDE) that starts last at or before at, which may end before it (the
 * padding between two functions holds none). 0 or -1. */
int ulp_x86_func_before(const struct ulp_x86_obj *o, uintptr_t at, uintptr_t *lo, uintptr_t *hi);
/* 0 when no direct branch of the function [flo, fhi) of o, nor of the code outside it that it
 * jumps to (its .cold part), targets the inside of (wlo, whi), and none of them jumps indirectly;
 * else -1 (fastcall.c: what may be overwritten across instruction boundaries). */
int ulp_x86_no_branch_into(const struct ulp_x86_obj *o, uintptr_t flo, uintptr_t fhi, uintptr_t wlo,
			   uintptr_t whi);

/* Write `jmp rel32` (rel counted from w + 5) over the 5 bytes at w, in a private copy of their
 * page(s) made writable for the store only; prot: the segment's protection. store writes the 5
 * bytes (NULL: a plain copy, for when no other thread can run them). 0 or -errno
 * (fastcall.c). */
int ulp_x86_put_jmp(uintptr_t w, int32_t rel, int prot,
		    int (*store)(uintptr_t, const uint8_t *, unsigned));
/* A store for ulp_x86_put_jmp while other threads may run the code later: one atomic store when
 * the n bytes lie in one aligned 16-byte block (ulp_x86_jmp_atomic for a jmp), else byte by byte
 * (for a thread alone). 0, or -ENOSYS without CMPXCHG16B where 16 bytes are needed. */
int ulp_x86_store_code(uintptr_t at, const uint8_t *b, unsigned n);
static inline int ulp_x86_jmp_atomic(uintptr_t site)
{
	return (site & 15) + 5 <= 16;
}

#endif
