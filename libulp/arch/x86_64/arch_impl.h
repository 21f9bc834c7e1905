/* SPDX-License-Identifier: MIT */
/* x86_64: TLS is the fs base; the runtime's own per-thread pointer lives in the gs base, which
 * glibc leaves alone on x86_64, so it stays reachable while a ULP's fs is loaded. */
#ifndef ULP_ARCH_IMPL_H
#define ULP_ARCH_IMPL_H

#include <stdint.h>

/*
 * Saved frame, lowest address first (ctx->sp points at offset 0). Same table in switch.S.
 */
#define ULP_FRAME_FPCTL 0 /* MXCSR (4 bytes), then x87 control word (2 bytes) */
#define ULP_FRAME_R15 8
#define ULP_FRAME_R14 16
#define ULP_FRAME_R13 24
#define ULP_FRAME_R12 32
#define ULP_FRAME_RBX 40
#define ULP_FRAME_RBP 48
#define ULP_FRAME_RIP 56 /* return address */
#define ULP_ARCH_FRAME_SIZE 64

/* Register block of ulp_arch_regs_resume (regs.S reads these offsets; trap.c asserts them). */
struct ulp_arch_regs {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp; /* 0 .. 56 */
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;	 /* 64 .. 120 */
	uint64_t rip, rflags;				 /* 128, 136 */
	uint32_t mxcsr;					 /* 144 */
	uint16_t fcw;					 /* 148 */
};

#define ULP_ARCH_SELF_SURVIVES_TLS 1
#define ULP_ARCH_SECCOMP_IP_HI 12   /* little endian: high word of the u64 at offset 8 */
#define ULP_ARCH_SECCOMP_IP_LO 8    /* ... and its low word */
#define ULP_ARCH_SECCOMP_ARG0_LO 16 /* low word of args[0] */
#define ULP_ARCH_SECCOMP_ARG1_LO 24 /* low word of args[1] */
#define ULP_ARCH_SECCOMP_ARG_LO(n) (16 + 8 * (n)) /* low word of args[n] */

/*
 * ulp_x86_fsgsbase: the kernel enabled FSGSBASE (AT_HWCAP2): it saves and restores the fs/gs bases
 * user space writes, so wrfsbase/wrgsbase may be used. ulp_x86_rdbase: rdfsbase/rdgsbase do not
 * fault. The two differ on some VMs (measured on this project's Firecracker guests: AT_HWCAP2 is 0,
 * the instructions execute, and a base written with wrfsbase is silently replaced by the kernel's
 * saved copy at the next context switch), so writes there must go through arch_prctl.
 */
extern int ulp_x86_fsgsbase;
extern int ulp_x86_rdbase;
long ulp_x86_arch_prctl(int code, unsigned long addr);

static inline uintptr_t ulp_arch_tls_get(void)
{
	uintptr_t v;
	if (__builtin_expect(ulp_x86_rdbase, 1)) {
		__asm__ volatile("rdfsbase %0" : "=r"(v));
		return v;
	}
	ulp_x86_arch_prctl(0x1003 /* ARCH_GET_FS */, (unsigned long)&v);
	return v;
}

static inline void ulp_arch_tls_set(uintptr_t v)
{
	if (__builtin_expect(ulp_x86_fsgsbase, 1))
		__asm__ volatile("wrfsbase %0" ::"r"(v) : "memory");
	else
		ulp_x86_arch_prctl(0x1002 /* ARCH_SET_FS */, v);
}

/* NULL in kernel threads the runtime did not set up (where rdgsbase can tell). */
static inline void *ulp_arch_self_get(void)
{
	void *self;
	if (__builtin_expect(ulp_x86_rdbase, 1))
		__asm__ volatile("rdgsbase %0" : "=r"(self));
	else
		__asm__ volatile("movq %%gs:0, %0" : "=r"(self));
	return self;
}

static inline void ulp_arch_self_set(void *self)
{
	if (ulp_x86_fsgsbase)
		__asm__ volatile("wrgsbase %0" ::"r"(self) : "memory");
	else
		ulp_x86_arch_prctl(0x1001 /* ARCH_SET_GS */, (unsigned long)self);
}

static inline void ulp_arch_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

/* Raw system call: returns -errno on failure and never touches errno (TLS). The constraint letters
 * name rax, rdi, rsi and rdx; only r10, r8 and r9 need binding (syscall_regs.h binds all seven
 * where an arch has no letters). */
static inline long ulp_arch_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
