/* SPDX-License-Identifier: MIT */
/*
 * Signal syscalls of a ULP. Handlers and the mask are per process, so shared by every ULP of it;
 * the signals the runtime owns (sys.h: ULP_RT_SIGNALS) stay the runtime's.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <signal.h>
#include <string.h>

long ulp_sys_rt_sigaction(struct ulp_cb *cb, struct ulp_sys *s)
{
	long sig = s->a[0], act = s->a[1], oact = s->a[2], size = s->a[3];

	if (ulp_rt_signal((int)sig)) {
		if (oact && size > 0 && size <= 64)
			memset((void *)oact, 0, sizeof(struct ulp_ksigaction)); /* "default" */
		return 0; /* accepted, not installed: the runtime keeps these */
	}
	/* Through the relay that tells the ULP's parked calls (EINTR) and runs the handler as that
	 * ULP (io_ring.c). */
	return ulp_io_sigaction(cb, (int)sig, (const void *)act, (void *)oact, size);
}

long ulp_sys_rt_sigprocmask(struct ulp_cb *cb, struct ulp_sys *s)
{
	long how = s->a[0], set = s->a[1], oset = s->a[2], size = s->a[3];
	unsigned long m;

	if (set && (how == SIG_BLOCK || how == SIG_SETMASK) && size == ULP_KSIGSET_SIZE) {
		m = *(unsigned long *)set & ~ULP_RT_SIGMASK;
		return ulp_arch_syscall(SYS_rt_sigprocmask, how, (long)&m, oset, size, 0, 0);
	}
	return ulp_arch_syscall(SYS_rt_sigprocmask, how, set, oset, size, 0, 0);
}

/* The worker's alternate stack is the runtime's (faults run on it): report none, change nothing. */
long ulp_sys_sigaltstack(struct ulp_cb *cb, struct ulp_sys *s)
{
	stack_t *old = (stack_t *)s->a[1];

	if (old) {
		memset(old, 0, sizeof(*old));
		old->ss_flags = SS_DISABLE;
	}
	return 0;
}
