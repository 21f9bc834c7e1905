/* SPDX-License-Identifier: MIT */
/* x86_64 pieces of the syscall trap: where a signal context keeps the syscall and the pc. */
#include "../arch.h"
#include "gregs.h"

#include <linux/audit.h>
#include <stddef.h>
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

void ulp_arch_trap_set_nr(void *ucv, long nr)
{
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RAX] = nr;
}

void ulp_arch_trap_set_pc(void *ucv, uintptr_t pc)
{
	greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;

	g[REG_RIP] = (greg_t)pc;
	g[REG_RCX] = (greg_t)pc;
}

uintptr_t ulp_arch_trap_pc(void *ucv)
{
	return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
}

uintptr_t ulp_arch_trap_sp(void *ucv)
{
	return (uintptr_t)((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RSP];
}

_Static_assert(offsetof(struct ulp_arch_regs, rsp) == 56 &&
		   offsetof(struct ulp_arch_regs, r8) == 64 &&
		   offsetof(struct ulp_arch_regs, rip) == 128 &&
		   offsetof(struct ulp_arch_regs, rflags) == 136 &&
		   offsetof(struct ulp_arch_regs, mxcsr) == 144 &&
		   offsetof(struct ulp_arch_regs, fcw) == 148,
	       "regs.S reads these offsets");

void ulp_arch_regs_from_trap(struct ulp_arch_regs *r, const void *ucv)
{
	const ucontext_t *uc = ucv;
	const greg_t *g = uc->uc_mcontext.gregs;

	ULP_X86_GREGS_FROM_UC(r, g);
	r->rcx = (uint64_t)g[REG_RCX];
	r->r11 = (uint64_t)g[REG_R11];
	r->rsp = (uint64_t)g[REG_RSP];
	r->rip = (uint64_t)g[REG_RIP];
	/* Only the flags user code may set: popfq in user mode ignores the rest anyway. */
	r->rflags = (uint64_t)g[REG_EFL] & 0x8d5;
	if (uc->uc_mcontext.fpregs) {
		r->mxcsr = uc->uc_mcontext.fpregs->mxcsr;
		r->fcw = uc->uc_mcontext.fpregs->cwd;
	} else {
		r->mxcsr = 0x1f80;
		r->fcw = 0x37f;
	}
}

/* clone(2) in the child: the same registers, rax = 0 and the new stack; rcx and r11 hold what the
 * syscall instruction leaves there (the return address and the flags). */
void ulp_arch_regs_set_child(struct ulp_arch_regs *r, uintptr_t sp, long ret)
{
	r->rax = (uint64_t)ret;
	r->rsp = sp;
	r->rcx = r->rip;
	r->r11 = r->rflags;
}

unsigned long *ulp_arch_trap_sigmask(void *ucv)
{
	return (unsigned long *)&((ucontext_t *)ucv)->uc_sigmask;
}
