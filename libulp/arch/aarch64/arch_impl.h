/* SPDX-License-Identifier: MIT */
/*
 * aarch64 (AAPCS64, Linux): the TLS register is tpidr_el0, which user space reads and writes
 * directly (mrs/msr), so loading a ULP's TLS costs no system call.
 * ulp_arch_syscall has sparc64's shape but none of its registers, trap, outputs or clobbers: an
 * architecture parallel that no shared code can express, kept apart on purpose.
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

static inline void ulp_arch_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* Raw system call: returns -errno on failure and never touches errno (TLS). The kernel keeps
 * every register but x0. */
static inline long ulp_arch_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#endif /* !__ASSEMBLER__ */

#endif
