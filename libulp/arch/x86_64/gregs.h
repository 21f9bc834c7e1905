/* SPDX-License-Identifier: MIT */
/*
 * Copies between a signal context's general registers (ucontext_t's gregs) and the runtime's own
 * register structs (struct ulp_arch_regs in trap.c, the fast-call frame in fastcall.c), which name
 * their fields after the registers. The list names each register once, as (field, REG_ index).
 *
 * It holds the registers a syscall instruction gives back as they were: all but rcx and r11,
 * which it overwrites, and rsp, which each copy computes its own way. Callers copy those three
 * (and rip, rflags) themselves.
 */
#ifndef ULP_ARCH_X86_64_GREGS_H
#define ULP_ARCH_X86_64_GREGS_H

#include <stdint.h>
#include <ucontext.h>

/* The list, as a table (five registers a line). */
/* clang-format off */
#define ULP_X86_GREGS_KEPT(X, p, g)                                                                \
	X(p, g, rax, RAX) X(p, g, rbx, RBX) X(p, g, rdx, RDX) X(p, g, rsi, RSI) X(p, g, rdi, RDI)  \
	X(p, g, rbp, RBP) X(p, g, r8, R8)   X(p, g, r9, R9)   X(p, g, r10, R10) X(p, g, r12, R12)  \
	X(p, g, r13, R13) X(p, g, r14, R14) X(p, g, r15, R15)
/* clang-format on */

/* Registers as fast_entry.S pushes them: the fast-call frame (fastcall.c checks the offsets;
 * a wait loop's probe loads from it: spin_patch.c). */
struct ulp_fast_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t rflags, ret;
};

#define ULP_X86_GREG_FROM_UC(p, g, field, REG) (p)->field = (uint64_t)(g)[REG_##REG];
#define ULP_X86_GREG_TO_UC(p, g, field, REG) (g)[REG_##REG] = (greg_t)(p)->field;

/* p->rax = g[REG_RAX], ... for the registers of the list (p: a pointer to a register struct). */
#define ULP_X86_GREGS_FROM_UC(p, g) ULP_X86_GREGS_KEPT(ULP_X86_GREG_FROM_UC, p, g)
/* g[REG_RAX] = p->rax, ... */
#define ULP_X86_GREGS_TO_UC(p, g) ULP_X86_GREGS_KEPT(ULP_X86_GREG_TO_UC, p, g)

#endif
