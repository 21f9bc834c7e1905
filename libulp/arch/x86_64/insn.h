/* SPDX-License-Identifier: MIT */
/*
 * A length decoder for x86-64 (64-bit mode) instructions: enough to walk a function from its start
 * and know where each instruction begins, which ones branch where, and which address memory
 * relative to rip. Used to verify a syscall site before it is rewritten (fastcall.c); it never
 * guesses: an opcode it does not know makes the walk fail, and the site is left alone.
 */
#ifndef ULP_ARCH_X86_64_INSN_H
#define ULP_ARCH_X86_64_INSN_H

#include <stddef.h>
#include <stdint.h>

enum {
	ULP_INSN_BRANCH = 1,   /* direct jmp/jcc/loop/call: target is valid */
	ULP_INSN_INDIRECT = 2, /* jmp through a register or memory */
	ULP_INSN_RIPREL = 4,   /* a memory operand relative to rip */
	ULP_INSN_CALL = 8,     /* a direct call (also BRANCH) */
	ULP_INSN_PREFIXED = 16 /* legacy prefixes (other than REX) */
};

struct ulp_insn {
	unsigned len;
	unsigned flags;
	unsigned map;	     /* 0: one-byte opcodes, 1: 0f, 2: 0f38, 3: 0f3a */
	unsigned opcode;     /* in its map */
	int modrm;	     /* -1: none */
	unsigned modrm_at;   /* offset of the ModRM byte, when there is one */
	unsigned rex;	     /* 0: none */
	int64_t target_disp; /* BRANCH: target = address + len + target_disp */
};

/* Decode the instruction at p (at most max bytes readable). Returns its length, or 0 when the
 * bytes are not an instruction this decoder knows (or run past max). */
unsigned ulp_insn_decode(const uint8_t *p, size_t max, struct ulp_insn *in);

#endif
