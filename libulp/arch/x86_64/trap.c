/* SPDX-License-Identifier: MIT */
/* x86_64 pieces of the syscall trap: where a signal context keeps the syscall and the pc. */
#include "../arch.h"

#include <linux/audit.h>
#include <signal.h>
#include <ucontext.h>

uint32_t ulp_arch_audit(void)
{
	return AUDIT_ARCH_X86_64;
}

void ulp_arch_trap_args(void *ucv, long a[6])
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;

	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];
}

void ulp_arch_trap_set_ret(void *ucv, long v)
{
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RAX] = v;
}

uintptr_t ulp_arch_trap_pc(void *ucv)
{
	return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
}
