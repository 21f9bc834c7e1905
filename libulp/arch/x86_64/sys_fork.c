/* SPDX-License-Identifier: MIT */
/*
 * x86_64 part of fork from a ULP (libulp/kernel/sys_fork.c): the signal frame a CLONE_VM child
 * resumes from (clone_sigreturn.S).
 */
#include "proc.h"
#include "sys_fork_arch.h"

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

/* A fork child given a stack (clone without CLONE_VM): it resumes there. */
void ulp_arch_trap_set_sp(void *ucv, uintptr_t sp)
{
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
}
