/* SPDX-License-Identifier: MIT */
/*
 * x86_64 part of fork from a ULP (libulp/kernel/sys_fork.c): the signal frame a CLONE_VM child
 * resumes from (clone_sigreturn.S).
 */
#include "proc.h"
#include "sys_fork_arch.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

/*
 * Copy the trapped call's ucontext below the child's stack pointer `sp`, as clone(2) returns in the
 * child: rax = 0, rsp = sp. Returns where the child's rsp must point (the copy), 16-byte aligned,
 * with a free word below it for the restorer slot rt_sigreturn skips. The copy's FPU pointer still
 * names the parent's frame: the parent stays suspended in clone (CLONE_VFORK) or at least in the
 * trap handler until the child has returned from rt_sigreturn, so that memory is intact.
 */
uintptr_t ulp_arch_fork_frame(const void *ucv, uintptr_t sp)
{
	uintptr_t at = (sp - sizeof(ucontext_t) - 64) & ~(uintptr_t)15;
	ucontext_t *uc = (ucontext_t *)at;

	memcpy(uc, ucv, sizeof(*uc));
	uc->uc_mcontext.gregs[REG_RAX] = 0;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	return at;
}

/* The software-reserved words at the end of the 512-byte FXSAVE image of a signal frame: when
 * magic1 says so, the kernel saved the whole XSAVE state there, extended_size bytes in all. */
struct fp_sw_bytes {
	uint32_t magic1, extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size, padding[7];
};
#define FP_SW_AT 464
#define FP_MAGIC1 0x46505853u

/*
 * The frame a new kernel thread of a fork child resumes from (clone_sigreturn.S), below `sp`: as
 * ulp_arch_fork_frame, but the FPU state is copied too (64-byte aligned, as XRSTOR wants it), for
 * the caller returns from its trap at once and its frame goes; and no alternate stack, which a new
 * thread does not inherit (the caller's is the worker's). The thread starts with the caller's
 * registers, signal mask and FPU state (the floating-point environment), as clone gives them.
 */
uintptr_t ulp_arch_thread_frame(const void *ucv, uintptr_t sp)
{
	const ucontext_t *from = ucv;
	const char *fp = (const char *)from->uc_mcontext.fpregs;
	size_t fpsize = 512;
	uintptr_t fpat, at;
	ucontext_t *uc;

	if (fp) {
		const struct fp_sw_bytes *sw = (const void *)(fp + FP_SW_AT);

		if (sw->magic1 == FP_MAGIC1 && sw->extended_size > fpsize)
			fpsize = sw->extended_size;
	}
	fpat = (sp - 64 - fpsize) & ~(uintptr_t)63;
	at = (fpat - sizeof(ucontext_t) - 64) & ~(uintptr_t)15;
	uc = (ucontext_t *)at;
	memcpy(uc, from, sizeof(*uc));
	if (fp) {
		memcpy((void *)fpat, fp, fpsize);
		uc->uc_mcontext.fpregs = (void *)fpat;
	}
	uc->uc_mcontext.gregs[REG_RAX] = 0;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc->uc_stack.ss_sp = NULL;
	uc->uc_stack.ss_size = 0;
	uc->uc_stack.ss_flags = SS_DISABLE;
	return at;
}

/* A fork child given a stack (clone without CLONE_VM): it resumes there. */
void ulp_arch_trap_set_sp(void *ucv, uintptr_t sp)
{
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
}
