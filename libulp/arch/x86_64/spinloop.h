/* SPDX-License-Identifier: MIT */
/*
 * Wait loops of a ULP's text (spinloop.c): the innermost loop around a pc, accepted only when
 * decoding proves it waits for memory to change (docs/syscalls.md, "Spin loops that yield").
 */
#ifndef ULP_ARCH_X86_64_SPINLOOP_H
#define ULP_ARCH_X86_64_SPINLOOP_H

#include <stdint.h>

struct ulp_x86_loop {
	uintptr_t head, end; /* [head, end): the loop, its back branch last */
	uintptr_t site;	     /* an instruction of 5 bytes or more, its first 5 bytes in one
				aligned 16-byte block (one atomic store can change them); 0: none */
	uintptr_t any;	     /* the first instruction of 5 bytes or more; 0: none */
};

/*
 * The innermost loop of the function [flo, fhi) holding pc (a backward direct branch at b to h
 * with h <= pc <= b, [h, b] at most 64 bytes and 16 instructions), and whether it is a wait loop:
 * straight-line but for forward exits, only whitelisted instructions (loads, register moves,
 * compares, ALU ops into registers, pause, nops, jcc, jmp), no store, no call, no syscall, at least
 * one memory read, a conditional branch, and no loop-carried register or flag (each one the body
 * writes is written before the body reads it). 0: accepted (l->site and l->any may still be 0);
 * -ENOENT: no loop around pc, or pc is no instruction boundary of the function; -EILSEQ: not a
 * wait loop.
 */
int ulp_x86_wait_loop(uintptr_t flo, uintptr_t fhi, uintptr_t pc, struct ulp_x86_loop *l);

#endif
