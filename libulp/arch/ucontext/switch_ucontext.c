/* SPDX-License-Identifier: MIT */
/*
 * The context switch of libulp/arch/arch.h built on glibc's getcontext/makecontext/swapcontext
 * instead of switch.S: the "ucontext" variant of the scheduler (make ULP_SWITCH=ucontext, see
 * module.mk here). It exists to be measured against the assembly switch, as MassiveThreads
 * measured its switch against ucontext; TLS, raw system calls, program entry and clone stay those
 * of the architecture's folder (x86_64).
 *
 * Saved context: a struct uc_frame on the stack of the context being left; ctx->sp points at it,
 * so ulp_ctx_t stays one pointer, as arch.h says.
 *
 *   field      contents
 *   uc         glibc's ucontext_t: general registers, signal mask, FP environment and MXCSR
 *   call       set by the context that resumes this one: run call(call_arg) on arrival
 *   call_arg
 *   entry      fresh contexts only (ulp_arch_ctx_init): what uc_start calls
 *   entry_arg
 *
 * What it costs compared with switch.S: swapcontext saves and restores the signal mask with one
 * rt_sigprocmask system call per switch, and ulp_arch_ctx_init calls getcontext (another one) per
 * new context. Runs no code that reads the TLS register (glibc touches errno only when
 * rt_sigprocmask fails, which it cannot here), so it is safe while a ULP's fs is loaded.
 */
#include "../arch.h"

#include <stdlib.h>
#include <ucontext.h>

struct uc_frame {
	ucontext_t uc;
	ulp_arch_fn call;
	void *call_arg;
	ulp_arch_fn entry;
	void *entry_arg;
};

/*
 * Back in a context: run what the switch that brought us here asked for. switch.S runs it before
 * the target's registers are restored; here they are restored already, so the FP control state
 * (MXCSR, x87 control word: the part of the FP state the ABI says a callee keeps) is saved around
 * fn, which must not change it for the target. x86_64 only, like this variant.
 */
static void arrive(struct uc_frame *self)
{
	ulp_arch_fn fn = self->call;
	uint32_t mxcsr;
	uint16_t fcw;

	if (!fn)
		return;
	self->call = NULL;
	__asm__ volatile("stmxcsr %0; fnstcw %1" : "=m"(mxcsr), "=m"(fcw));
	fn(self->call_arg);
	__asm__ volatile("ldmxcsr %0; fldcw %1" ::"m"(mxcsr), "m"(fcw));
}

void ulp_arch_switch_call(ulp_ctx_t *from, ulp_ctx_t *to, ulp_arch_fn fn, void *arg)
{
	struct uc_frame self, *next = to->sp;

	/* Nobody else can be resuming `to`: it is ours to write until we jump. */
	next->call = fn;
	next->call_arg = arg;
	if (!from) {
		setcontext(&next->uc);
		abort(); /* setcontext returns only on a corrupt context */
	}
	self.call = NULL;
	/* The context lives in this frame, which stays put until someone switches back to it. */
	// cppcheck-suppress autoVariables
	from->sp = &self;
	if (swapcontext(&self.uc, &next->uc) != 0)
		abort();
	arrive(&self);
}

void ulp_arch_switch(ulp_ctx_t *from, ulp_ctx_t *to)
{
	ulp_arch_switch_call(from, to, NULL, NULL);
}

/* makecontext passes int arguments: the frame's address comes in two halves. */
static void uc_start(unsigned lo, unsigned hi)
{
	struct uc_frame *f = (struct uc_frame *)(((uintptr_t)hi << 32) | lo);
	ulp_arch_fn entry = f->entry;
	void *arg = f->entry_arg;

	arrive(f);
	entry(arg);
	abort(); /* entry must not return */
}

void ulp_arch_ctx_init(ulp_ctx_t *ctx, void *lo, size_t size, ulp_arch_fn entry, void *arg)
{
	uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
	struct uc_frame *f = (struct uc_frame *)((top - sizeof(*f)) & ~(uintptr_t)63);

	/* getcontext also gives the new context the creator's FP control state and signal mask. */
	if (getcontext(&f->uc) != 0)
		abort();
	f->uc.uc_stack.ss_sp = lo;
	f->uc.uc_stack.ss_size = (size_t)((uintptr_t)f - (uintptr_t)lo);
	f->uc.uc_link = NULL;
	f->call = NULL;
	f->entry = entry;
	f->entry_arg = arg;
	makecontext(&f->uc, (void (*)(void))uc_start, 2, (unsigned)(uintptr_t)f,
		    (unsigned)((uintptr_t)f >> 32));
	ctx->sp = f;
}
