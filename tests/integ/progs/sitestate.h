/* SPDX-License-Identifier: MIT */
/*
 * How a syscall site of a loaded function looks in memory (fastcall.c, fastcall_mt.c): as built,
 * or rewritten by the fast path (docs/syscalls.md, "Fast path"): a 5-byte jmp ending at the
 * syscall, or covering its first byte, whose second is then a nop, before glibc's
 * `cmp $-4095,%rax`; or a 2-byte jmp into padding right before it.
 */
#ifndef ULP_TESTS_SITESTATE_H
#define ULP_TESTS_SITESTATE_H

#include <stdint.h>

/* The next site in p[from, to): the offset to go on from after it, *rewritten set; -1: none. */
static inline int site_next(const uint8_t *p, int from, int to, int *rewritten)
{
	int i, j;

	for (i = from; i < to; i++) {
		if (p[i] == 0xe9) {
			for (j = i + 5; p[j] == 0x90 && j < i + 16; j++)
				;
			if ((p[j] == 0x0f && p[j + 1] == 0x05) || (p[j] == 0x48 && p[j + 1] == 0x3d)) {
				*rewritten = 1;
				return j + 2;
			}
		}
		if (p[i] == 0x0f && p[i + 1] == 0x05) {
			*rewritten = i >= 2 && p[i - 2] == 0xeb;
			return i + 2;
		}
	}
	return -1;
}

#endif
