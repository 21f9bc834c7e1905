/* SPDX-License-Identifier: MIT */
/*
 * aarch64 (AAPCS64, Linux): the TLS register is tpidr_el0, which user space reads and writes
 * directly (mrs/msr), so loading a ULP's TLS costs no system call.
 */
#ifndef ULP_ARCH_IMPL_H
#define ULP_ARCH_IMPL_H

/*
 * Saved frame, lowest address first (ctx->sp points at offset 0). switch.S uses these names and
 * shows the same table; arch.c checks the numbers. The size keeps sp 16-byte aligned, as AAPCS64
 * demands of sp at all times.
 */
#define ULP_FRAME_X19 0 /* x19..x28 at 0, 8, ..., 72 */
#define ULP_FRAME_X20 8
#define ULP_FRAME_X21 16
#define ULP_FRAME_X22 24
#define ULP_FRAME_X23 32
#define ULP_FRAME_X24 40
#define ULP_FRAME_X25 48
#define ULP_FRAME_X26 56
#define ULP_FRAME_X27 64
#define ULP_FRAME_X28 72
#define ULP_FRAME_X29 80 /* frame pointer */
#define ULP_FRAME_LR 88	 /* x30: where the context resumes */
#define ULP_FRAME_D8 96	 /* d8..d15: the low halves of v8..v15 */
#define ULP_FRAME_D9 104
#define ULP_FRAME_D10 112
#define ULP_FRAME_D11 120
#define ULP_FRAME_D12 128
#define ULP_FRAME_D13 136
#define ULP_FRAME_D14 144
#define ULP_FRAME_D15 152
#define ULP_FRAME_FPCR 160 /* 8 bytes; 168..175 unused */
#define ULP_ARCH_FRAME_SIZE 176

#ifndef __ASSEMBLER__
#include <stdint.h>

/* The TLS register, read and written by one instruction (user_tp.h). */
#define ULP_ARCH_TP_READ "mrs %0, tpidr_el0"
#define ULP_ARCH_TP_WRITE "msr tpidr_el0, %0"
#define ULP_ARCH_TP_NAME "tpidr_el0"
/* No register left for the runtime (x18 is an ordinary temporary on Linux, GCC allocates it;
 * tpidr_el0 is libc's TLS pointer): the self pointer is a __thread variable (self_tls.h). */
#include "user_tp.h"
#include "syscall_regs.h"

static inline void ulp_arch_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* Raw system call: returns -errno on failure and never touches errno (TLS). The kernel keeps
 * every register but x0. */
static inline long ulp_arch_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	ULP_ARCH_SYSCALL_REGS("x8", "x0", "x1", "x2", "x3", "x4", "x5");
	__asm__ volatile("svc #0"
			 : "+r"(ulp_sc_a1)
			 : "r"(ulp_sc_nr), "r"(ulp_sc_a2), "r"(ulp_sc_a3), "r"(ulp_sc_a4),
			   "r"(ulp_sc_a5), "r"(ulp_sc_a6)
			 : "memory");
	return ulp_sc_a1;
}
#endif /* !__ASSEMBLER__ */

#endif
