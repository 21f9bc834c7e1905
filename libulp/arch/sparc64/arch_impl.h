/* SPDX-License-Identifier: MIT */
/*
 * sparc64 (SPARC V9, 64-bit ABI, Linux): the TLS register is %g7, which user space writes
 * directly, so loading a ULP's TLS costs no system call. Nothing but ulp_arch_tls_set writes %g7;
 * the switch leaves it alone (the scheduler decides which TLS a worker runs on).
 */
#ifndef ULP_ARCH_IMPL_H
#define ULP_ARCH_IMPL_H

/* %sp and %fp hold the real address minus this bias (the 64-bit ABI's way to tell v9 frames). */
#define ULP_SPARC_BIAS 2047
/* Every frame starts with a 16-word window save area, then 6 argument dump words. */
#define ULP_SPARC_MINFRAME 176

/*
 * The frame ulp_arch_switch allocates (save %sp, -ULP_ARCH_FRAME_SIZE, %sp); ctx->sp holds its
 * %sp, biased as the register is. Offsets from %sp + ULP_SPARC_BIAS; same table in switch.S,
 * checked in arch.c. The first 176 bytes belong to the ABI: a trap may spill the current window
 * into 0..127 at any moment and a function called from the switch may store its arguments in
 * 128..175, so the switch keeps its own words above them.
 */
#define ULP_FRAME_WINDOW 0	/* 0..127: window save area (%l0-%l7, %i0-%i7) */
#define ULP_FRAME_ARGS 128	/* 128..175: argument dump area */
#define ULP_FRAME_FP 176	/* %i6: the caller's %sp, where its window was flushed */
#define ULP_FRAME_I7 184	/* %i7: the caller's call instruction; the context resumes at +8 */
#define ULP_FRAME_FSR 192	/* %fsr: rounding mode, trap enables, ... (8 bytes) */
#define ULP_ARCH_FRAME_SIZE 208 /* 200..207 unused: frames stay 16-byte aligned */

#ifndef __ASSEMBLER__
#include <stdint.h>

/* The TLS register, read and written by one instruction (user_tp.h). */
#define ULP_ARCH_TP_READ "mov %%g7, %0"
#define ULP_ARCH_TP_WRITE "mov %0, %%g7"
#define ULP_ARCH_TP_NAME "g7"
/* No register left for the runtime (%g6/%g7 belong to the system and libc, GCC allocates %g1-%g5):
 * the self pointer is a __thread variable (self_tls.h). */
#include "user_tp.h"
#include "syscall_regs.h"

static inline void ulp_arch_relax(void)
{
	__asm__ volatile("rd %%ccr, %%g0\n\t"
			 "rd %%ccr, %%g0\n\t"
			 "rd %%ccr, %%g0"
			 :
			 :
			 : "memory");
}

/* What the kernel may change across a trap into it, besides %o0/%o1 and the condition codes:
 * the application globals and the floating-point registers (the C library assumes the same). */
#define ULP_SPARC_SYSCALL_CLOBBERS                                                                 \
	"g2", "g3", "g4", "g5", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", \
	    "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22",    \
	    "f23", "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31", "f32", "f34", "f36",    \
	    "f38", "f40", "f42", "f44", "f46", "f48", "f50", "f52", "f54", "f56", "f58", "f60",    \
	    "f62", "cc", "memory"

/*
 * Raw system call: returns -errno on failure and never touches errno (TLS). The Linux sparc64
 * convention: number in %g1, arguments in %o0-%o5, `ta 0x6d`; on failure the carry flag (xcc) is
 * set and %o0 holds the positive errno, which is negated here. Some calls (getpid, pipe) also
 * return a value in %o1, so %o1 is an output as well.
 */
static inline long ulp_arch_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	ULP_ARCH_SYSCALL_REGS("g1", "o0", "o1", "o2", "o3", "o4", "o5");
	__asm__ volatile("ta 0x6d\n\t"
			 "bcc,pt %%xcc, 1f\n\t"
			 " nop\n\t"
			 "sub %%g0, %%o0, %%o0\n"
			 "1:"
			 : "+r"(ulp_sc_a1), "+r"(ulp_sc_a2), "+r"(ulp_sc_nr)
			 : "r"(ulp_sc_a3), "r"(ulp_sc_a4), "r"(ulp_sc_a5), "r"(ulp_sc_a6)
			 : ULP_SPARC_SYSCALL_CLOBBERS);
	return ulp_sc_a1;
}
#endif /* !__ASSEMBLER__ */

#endif
