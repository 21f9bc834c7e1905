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
	/* What one iteration needs from before it (for the scheduler's probe, spin_patch.c):
	 * the registers the body reads and never writes, bits 0-15 (rax..r15, rsp 4), and
	 * ULP_X86_LOOP_FLAGS when it reads flags it never sets; seg: a load with an fs or gs
	 * prefix (the thread's own TLS base). */
	unsigned inputs;
	int seg;
};

#define ULP_X86_LOOP_FLAGS (1u << 16)

/* A wait loop's trampoline slot (spin_patch.c): the top bit of its first word says that the next
 * slot holds the loop's probe, whose first word is the magic (no user address has the top bit). */
#define ULP_SPIN_HAS_PROBE (1ull << 63)
#define ULP_SPIN_PROBE_MAGIC 0xd1a9e5c0be5a1e00ull

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

/* Write the probe of the accepted loop l at slot (ULP_FAST_SLOT bytes, writable, within 2 GiB of
 * the loop's rip-relative operands), from the loop's bytes as they are now (spin_patch.c has its
 * layout; ulp_arch_spin_probe runs it). 0, -EINVAL: the loop reads rsp, flags it does not set or
 * TLS; -E2BIG: it does not fit; -ERANGE: an operand does not reach from the slot. */
int ulp_x86_spin_probe_build(uintptr_t slot, const struct ulp_x86_loop *l);

#endif
