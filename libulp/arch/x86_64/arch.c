/* SPDX-License-Identifier: MIT */
#include "../arch.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(ULP_FRAME_FPCTL == 0 && ULP_FRAME_R15 == 8 && ULP_FRAME_R14 == 16 &&
		   ULP_FRAME_R13 == 24 && ULP_FRAME_R12 == 32 && ULP_FRAME_RBX == 40 &&
		   ULP_FRAME_RBP == 48 && ULP_FRAME_RIP == 56 && ULP_ARCH_FRAME_SIZE == 64,
	       "frame offsets must match the table in switch.S");
_Static_assert(offsetof(ulp_ctx_t, sp) == 0, "switch.S reads ctx->sp at offset 0");

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

int ulp_x86_fsgsbase;
int ulp_x86_rdbase;
static int probed_fsgsbase;

extern void ulp_arch_trampoline(void);

long ulp_x86_arch_prctl(int code, unsigned long addr)
{
	long ret;
	/* Raw syscall: this may run while a ULP's fs is loaded, so errno must not be touched. */
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_arch_prctl), "D"((long)code), "S"(addr)
			 : "rcx", "r11", "memory");
	return ret;
}

static sigjmp_buf probe_env;

static void probe_sigill(int sig)
{
	(void)sig;
	siglongjmp(probe_env, 1);
}

/* Whether rdfsbase executes without SIGILL (reading is safe even where writing is not). */
static int rdbase_works(void)
{
	struct sigaction sa, old;
	volatile int ok = 0;
	unsigned long v;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_sigill;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old) != 0)
		return 0;
	if (sigsetjmp(probe_env, 1) == 0) {
		__asm__ volatile("rdfsbase %0" : "=r"(v));
		ok = 1;
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

void ulp_arch_init(void)
{
	static int done;

	if (done)
		return;
	probed_fsgsbase = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	ulp_x86_fsgsbase = probed_fsgsbase;
	ulp_x86_rdbase = probed_fsgsbase || rdbase_works();
	done = 1;
}

const char *ulp_arch_tls_method(void)
{
	return ulp_x86_fsgsbase ? "wrfsbase" : "arch_prctl";
}

void ulp_arch_tls_force_syscall(int on)
{
	ulp_x86_fsgsbase = on ? 0 : probed_fsgsbase;
}

void ulp_arch_ctx_init(ulp_ctx_t *ctx, void *lo, size_t size, ulp_arch_fn entry, void *arg)
{
	uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
	unsigned char *f = (unsigned char *)(top - ULP_ARCH_FRAME_SIZE);
	uint32_t mxcsr;
	uint16_t fcw;

	__asm__ volatile("stmxcsr %0; fnstcw %1" : "=m"(mxcsr), "=m"(fcw));
	/* rbx, r14 and r15 are left as they are: the trampoline does not read them. rbp is 0 so
	 * that unwinders stop at the new context's first frame. */
	memcpy(f + ULP_FRAME_FPCTL, &mxcsr, 4);
	memcpy(f + ULP_FRAME_FPCTL + 4, &fcw, 2);
	*(uintptr_t *)(f + ULP_FRAME_RBP) = 0;
	*(uintptr_t *)(f + ULP_FRAME_R12) = (uintptr_t)entry;
	*(uintptr_t *)(f + ULP_FRAME_R13) = (uintptr_t)arg;
	*(uintptr_t *)(f + ULP_FRAME_RIP) = (uintptr_t)ulp_arch_trampoline;
	ctx->sp = f; /* after `ret` rsp = top, 16-aligned, as the trampoline's call needs */
}
