/* SPDX-License-Identifier: MIT */
/*
 * Signal syscalls of a ULP: its actions, masks, alternate stack, pending set, waits and timers are
 * its own, as a process's are (signal.c does the delivery). The signals the runtime owns
 * (sys.h: ULP_RT_SIGMASK) are never blocked in the kernel; a ULP's action for a fault (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE) is honoured for faults of its own code.
 *
 * In a fork child of a ULP (a real process) the calls are the kernel's, but for the runtime's
 * signals and for reporting the ULP's action where the kernel still has the relay.
 */
#include "io.h"
#include "proc.h"
#include "ulp_signal.h"
#include "sys.h"
#include "syscall.h"
#include "uthread.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define SS_AUTODISARM_FLAG (1u << 31)
#define KERNEL_MINSIGSTKSZ 2048 /* the kernel's check (libc's MINSIGSTKSZ may be a call) */

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* In a fork child: the kernel's action, or the ULP's where the kernel still has the relay (an
 * ignored one is made the kernel's then, so that it stays ignored across execve). */
static long child_sigaction(struct ulp_cb *cb, long sig, const struct ulp_ksigaction *act,
			    struct ulp_ksigaction *oact, long size)
{
	struct ulp_ksigaction k;
	long r;

	if (ulp_rt_signal((int)sig)) {
		if (oact)
			memset(oact, 0, sizeof(*oact));
		return 0;
	}
	r = sys(SYS_rt_sigaction, sig, 0, (long)&k, size, 0, 0);
	if (r)
		return r;
	if (ulp_sig_is_relay(k.handler)) {
		/* Not the program's own: the relay, standing for the ULP's action. */
		struct ulp_ksigaction u = cb->sig.act[sig];

		if (u.handler == SIG_IGN && !act) {
			struct ulp_ksigaction ign = {SIG_IGN, 0, NULL, 0};

			sys(SYS_rt_sigaction, sig, (long)&ign, 0, size, 0, 0);
		}
		k = u;
	}
	if (act) {
		r = sys(SYS_rt_sigaction, sig, (long)act, 0, size, 0, 0);
		if (r)
			return r;
	}
	if (oact)
		*oact = k;
	return 0;
}

long ulp_sys_rt_sigaction(struct ulp_cb *cb, struct ulp_sys *s)
{
	long sig = s->a[0], size = s->a[3];
	const struct ulp_ksigaction *act = (const void *)s->a[1];
	struct ulp_ksigaction *oact = (void *)s->a[2], old;

	if (size != ULP_KSIGSET_SIZE || sig < 1 || sig > ULP_NSIG)
		return -EINVAL;
	if (ulp_sys_in_child())
		return child_sigaction(cb, sig, act, oact, size);
	if (act && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (sig == SIGSYS || sig == ULP_SIG_TICK || sig == ULP_SIG_WAKE || sig == ULP_SIG_IDENT) {
		if (oact)
			memset(oact, 0, sizeof(*oact)); /* "default" */
		return 0; /* accepted, not installed: the runtime keeps these */
	}
	old = cb->sig.act[sig];
	if (act) {
		struct ulp_ksigaction n = *act;

		n.mask &= ~ULP_SIG_UNBLOCKABLE;
		cb->sig.act[sig] = n;
		ulp_sig_action_changed(cb, (int)sig);
		if (!ulp_rt_signal((int)sig))
			ulp_sig_relay_on((int)sig);
	}
	if (oact)
		*oact = old;
	return 0;
}

/* The mask is the thread's own (signal.c); in a fork child, the kernel's, kept in the trap
 * frame that sigreturn gives back. */
long ulp_sys_rt_sigprocmask(struct ulp_cb *cb, struct ulp_sys *s)
{
	long how = s->a[0], size = s->a[3];
	unsigned long *set = (unsigned long *)s->a[1], *oset = (unsigned long *)s->a[2];
	unsigned long *fm = ulp_arch_trap_sigmask(s->uc), nm;
	int child = ulp_sys_in_child();
	unsigned long *m = child ? fm : ulp_sig_mask(cb), old = *m & ~ULP_RT_SIGMASK;

	if (size != ULP_KSIGSET_SIZE)
		return -EINVAL;
	if (set) {
		unsigned long v = *set & ~ULP_RT_SIGMASK & ~ULP_SIG_UNBLOCKABLE;

		switch (how) {
		case SIG_BLOCK:
			nm = old | v;
			break;
		case SIG_UNBLOCK:
			nm = old & ~v;
			break;
		case SIG_SETMASK:
			nm = v;
			break;
		default:
			return -EINVAL;
		}
		if (child) {
			*fm = (*fm & ULP_RT_SIGMASK) | nm;
		} else {
			*m = nm;
			ulp_sig_set_blocked(cb, nm);
		}
	}
	if (oset)
		*oset = old;
	return 0; /* newly unblocked signals are delivered at the trap's end */
}

/* The ULP's own alternate stack (the worker's, which faults of the runtime use, stays). */
long ulp_sys_sigaltstack(struct ulp_cb *cb, struct ulp_sys *s)
{
	const stack_t *ss = (const stack_t *)s->a[0];
	stack_t *old = (stack_t *)s->a[1], n;
	struct ulp_sigstate *st = &cb->sig;
	uintptr_t sp = ulp_arch_trap_sp(s->uc);
	int on = st->alt_size && sp >= st->alt_sp && sp < st->alt_sp + st->alt_size;

	if (ss)
		n = *ss;
	if (old) {
		old->ss_sp = (void *)st->alt_sp;
		old->ss_size = st->alt_size;
		old->ss_flags = on ? SS_ONSTACK : st->alt_size ? 0 : SS_DISABLE;
	}
	if (!ss)
		return 0;
	if (on)
		return -EPERM;
	n.ss_flags &= ~(int)SS_AUTODISARM_FLAG;
	if (n.ss_flags == SS_DISABLE) {
		st->alt_sp = 0;
		st->alt_size = 0;
		return 0;
	}
	if (n.ss_flags != 0)
		return -EINVAL;
	if (n.ss_size < KERNEL_MINSIGSTKSZ)
		return -ENOMEM;
	st->alt_sp = (uintptr_t)n.ss_sp;
	st->alt_size = n.ss_size;
	return 0;
}

long ulp_sys_rt_sigpending(struct ulp_cb *cb, struct ulp_sys *s)
{
	unsigned long *set = (unsigned long *)s->a[0];

	if (s->a[1] != ULP_KSIGSET_SIZE)
		return -EINVAL;
	*set = ulp_sig_pending(cb) & *ulp_sig_mask(cb);
	return 0;
}

/* Park until a signal is posted to the ULP (or the deadline, CLOCK_MONOTONIC ns, 0: none).
 * 1: timed out. */
int ulp_sig_park(struct ulp_cb *cb, long long deadline)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_wait wt;

	ulp_io_wait_init(io, &wt, cb, 1);
	if (deadline) {
		wt.ts.tv_sec = deadline / 1000000000;
		wt.ts.tv_nsec = deadline % 1000000000;
		wt.ts_flags = 0x1; /* IORING_TIMEOUT_ABS */
		wt.ts_set = 1;
	}
	/* Posted between the caller's look and the snapshot above: not slept through, since the
	 * caller looks again after every wake-up and a post after the snapshot ends the park. */
	ulp_io_park(io, &wt, NULL, 0);
	return wt.timed_out;
}

/* The signal mask that ppoll, pselect6 or epoll_pwait(2) call s carries (NULL: none); -EINVAL in
 * *bad for a wrong size, as the kernel's. */
static const unsigned long *wait_mask(const struct ulp_sys *s, int *bad)
{
	const unsigned long *set = NULL;
	long size = 0;

	if (s->nr == SYS_ppoll || s->nr == SYS_epoll_pwait || s->nr == SYS_epoll_pwait2) {
		set = (const unsigned long *)s->a[s->nr == SYS_ppoll ? 3 : 4];
		size = s->a[s->nr == SYS_ppoll ? 4 : 5];
	} else if (s->nr == SYS_pselect6 && s->a[5]) {
		const struct {
			const unsigned long *ss;
			size_t len;
		} *p = (const void *)s->a[5];

		set = p->ss;
		size = (long)p->len;
	}
	*bad = set && size != ULP_KSIGSET_SIZE;
	return set;
}

/*
 * ppoll, pselect6 and epoll_pwait with a signal mask: that mask is the thread's while the call
 * waits, so a signal it unblocks ends the wait with EINTR (GNU make -j waits for its jobserver
 * token in pselect with SIGCHLD blocked but for the call, and hung as a ULP: the emulated mask
 * stayed the old one while the call was parked), and the handler of one that did runs before the
 * old mask comes back, as after sigsuspend. The waiting is ulp_sys_io_block's (io_calls.c).
 */
long ulp_sys_masked_wait(struct ulp_cb *cb, struct ulp_sys *s)
{
	const unsigned long *set;
	unsigned long *m, saved;
	long r;
	int bad;

	set = wait_mask(s, &bad);
	if (bad)
		return -EINVAL;
	if (!set || !ulp_io_self())
		return ulp_sys_io_block(cb, s);
	m = ulp_sig_mask(cb);
	saved = *m;
	*m = *set & ~ULP_RT_SIGMASK & ~ULP_SIG_UNBLOCKABLE;
	ulp_sig_set_blocked(cb, *m);
	r = ulp_sys_io_block(cb, s);
	if (r == -EINTR) {
		ulp_tg_trap_return(cb, s->uc);
		ulp_sig_deliver(cb, s->uc);
	}
	m = ulp_sig_mask(cb); /* maybe another worker's thread record by now */
	*m = saved;
	ulp_sig_set_blocked(cb, saved);
	return r;
}

/* sigsuspend: the given mask until a handler has run, then the old one back. */
long ulp_sys_rt_sigsuspend(struct ulp_cb *cb, struct ulp_sys *s)
{
	unsigned long *m = ulp_sig_mask(cb), saved = *m;
	int ran = 0;

	if (s->a[1] != ULP_KSIGSET_SIZE)
		return -EINVAL;
	if (!ulp_io_self())
		return sys(SYS_rt_sigsuspend, s->a[0], s->a[1], 0, 0, 0, 0);
	*m = *(unsigned long *)s->a[0] & ~ULP_RT_SIGMASK & ~ULP_SIG_UNBLOCKABLE;
	ulp_sig_set_blocked(cb, *m);
	while (!ran) {
		ulp_tg_trap_return(cb, s->uc);
		ran = ulp_sig_deliver(cb, s->uc);
		if (!ran)
			ulp_sig_park(cb, 0);
	}
	m = ulp_sig_mask(cb);
	*m = saved;
	ulp_sig_set_blocked(cb, saved);
	return -EINTR;
}

/* sigtimedwait/sigwaitinfo/sigwait: take a pending signal of the set. */
long ulp_sys_rt_sigtimedwait(struct ulp_cb *cb, struct ulp_sys *s)
{
	const struct timespec *to = (const struct timespec *)s->a[2];
	siginfo_t *info = (siginfo_t *)s->a[1], si;
	unsigned long want;
	long long deadline = 0;
	int sig;

	if (s->a[3] != ULP_KSIGSET_SIZE)
		return -EINVAL;
	want = *(unsigned long *)s->a[0] & ~ULP_RT_SIGMASK & ~ULP_SIG_UNBLOCKABLE;
	if (to) {
		if (to->tv_nsec < 0 || to->tv_nsec >= 1000000000 || to->tv_sec < 0)
			return -EINVAL;
		deadline =
		    ulp_raw_clock_ns(CLOCK_MONOTONIC) + to->tv_sec * 1000000000ll + to->tv_nsec;
	}
	for (;;) {
		sig = ulp_sig_take(cb, want, &si);
		if (sig) {
			if (info)
				*info = si;
			return sig;
		}
		/* A signal outside the set with a handler ends the wait (the trap's end runs it).
		 */
		if (ulp_sig_pending(cb) & ~*ulp_sig_mask(cb) & ~want)
			return -EINTR;
		if ((to && deadline <= ulp_raw_clock_ns(CLOCK_MONOTONIC)) || !ulp_io_self())
			return -EAGAIN;
		ulp_sig_set_waitset(cb, want);
		sig = ulp_sig_park(cb, deadline);
		ulp_sig_set_waitset(cb, 0);
	}
}

/* sigqueue to itself: posted with the caller's siginfo; to another process: the kernel's. */
long ulp_sys_rt_sigqueueinfo(struct ulp_cb *cb, struct ulp_sys *s)
{
	long pid = cb->pid;
	int sig = (int)s->a[1];
	const siginfo_t *si = (const siginfo_t *)s->a[2];

	if (ulp_sys_in_child() || (int)s->a[0] != pid)
		return sys(s->nr, s->a[0], s->a[1], s->a[2], 0, 0, 0);
	if (sig < 0 || sig > ULP_NSIG)
		return -EINVAL;
	if (si->si_code >= 0 || si->si_code == SI_TKILL)
		return -EPERM; /* as the kernel: a process may not pose as the kernel */
	if (sig)
		return ulp_sig_post(cb->pvid, sig, si->si_code, (int)pid, (int)si->si_uid,
				    (long)si->si_value.sival_ptr);
	return 0;
}

/* rt_tgsigqueueinfo (pthread_sigqueue) to a thread of the ULP: queued there with the caller's
 * siginfo (sys_thread.c), taken before the call returns when it is the caller; elsewhere: the
 * kernel's. Before 27 Nov it was the kernel's always: the ULP's placeholder took one aimed at the
 * ULP's main thread and passed it on, later, to the ULP (pthread_sigqueue to itself returned
 * before its handler ran), and one aimed at another thread failed with ESRCH. */
long ulp_sys_rt_tgsigqueueinfo(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r;

	if (!ulp_sys_in_child() && ulp_tg_kill(cb, s->nr, s->a, &r))
		return r;
	return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], 0, 0);
}

/* ---- timers ---- */

/* Saturated at the kernel's KTIME_MAX, as its timeval_to_ktime is: a value of 2^40 s overflowed
 * (ITIMER_REAL then failed with EINVAL, ITIMER_VIRTUAL expired at once). */
static long long tv_ns(const struct timeval *tv)
{
	if (tv->tv_sec >= LLONG_MAX / 1000000000ll)
		return LLONG_MAX;
	return tv->tv_sec * 1000000000ll + tv->tv_usec * 1000ll;
}

static void ns_tv(long long ns, struct timeval *tv)
{
	tv->tv_sec = ns / 1000000000;
	tv->tv_usec = (ns % 1000000000 + 999) / 1000;
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

static void ns_ts(long long ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
}

/* An itimerval setitimer takes: no negative part, microseconds below a second (else EINVAL). */
static int itv_valid(const struct itimerval *v)
{
	return v->it_value.tv_sec >= 0 && v->it_value.tv_usec >= 0 &&
	       v->it_value.tv_usec < 1000000 && v->it_interval.tv_sec >= 0 &&
	       v->it_interval.tv_usec >= 0 && v->it_interval.tv_usec < 1000000;
}

/* ITIMER_REAL of cb: set (new, or NULL: just read) and the old value. */
static long itimer_real(struct ulp_cb *cb, const struct itimerval *nv, struct itimerval *ov)
{
	struct itimerspec n, o;
	long kid;

	if (!cb->sig.alarm_timer && !nv) {
		if (ov)
			memset(ov, 0, sizeof(*ov));
		return 0;
	}
	kid = ulp_sig_alarm_timer(cb);
	if (kid < 0)
		return kid;
	if (nv) {
		if (!itv_valid(nv)) /* a negative second: timer_settime's EINVAL as well */
			return -EINVAL;
		ns_ts(tv_ns(&nv->it_value), &n.it_value);
		ns_ts(tv_ns(&nv->it_interval), &n.it_interval);
		if (sys(SYS_timer_settime, kid, 0, (long)&n, (long)&o, 0, 0))
			return -EINVAL;
	} else if (sys(SYS_timer_gettime, kid, (long)&o, 0, 0, 0, 0)) {
		return -EINVAL;
	}
	if (ov) {
		ns_tv(ts_ns(&o.it_value), &ov->it_value);
		ns_tv(ts_ns(&o.it_interval), &ov->it_interval);
	}
	return 0;
}

/* ITIMER_VIRTUAL or ITIMER_PROF of cb: counted on its own CPU time (cputime.c). */
static long itimer_cpu(struct ulp_cb *cb, int which, const struct itimerval *nv,
		       struct itimerval *ov)
{
	uint64_t set[2], old[2];

	if (nv) {
		if (!itv_valid(nv))
			return -EINVAL;
		set[0] = (uint64_t)tv_ns(&nv->it_value);
		set[1] = (uint64_t)tv_ns(&nv->it_interval);
	}
	ulp_cputime_itimer(cb, which, nv ? set : NULL, old);
	if (ov) {
		ns_tv((long long)old[0], &ov->it_value);
		ns_tv((long long)old[1], &ov->it_interval);
	}
	return 0;
}

static long itimer(struct ulp_cb *cb, long which, const struct itimerval *nv, struct itimerval *ov)
{
	if (which == ITIMER_REAL)
		return itimer_real(cb, nv, ov);
	if (which == ITIMER_VIRTUAL || which == ITIMER_PROF)
		return itimer_cpu(cb, (int)which, nv, ov);
	return -EINVAL;
}

long ulp_sys_setitimer(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return sys(s->nr, s->a[0], s->a[1], s->a[2], 0, 0, 0);
	return itimer(cb, (int)s->a[0], (const struct itimerval *)s->a[1],
		      (struct itimerval *)s->a[2]);
}

long ulp_sys_getitimer(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return sys(s->nr, s->a[0], s->a[1], 0, 0, 0, 0);
	return itimer(cb, (int)s->a[0], NULL, (struct itimerval *)s->a[1]);
}

long ulp_sys_alarm(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct itimerval n, o;
	long r;

	if (ulp_sys_in_child())
		return sys(s->nr, s->a[0], 0, 0, 0, 0, 0);
	memset(&n, 0, sizeof(n));
	n.it_value.tv_sec = (unsigned)s->a[0];
	r = itimer_real(cb, &n, &o);
	if (r)
		return r;
	/* As the kernel rounds: to the nearest second, and never 0 for a pending alarm. */
	r = o.it_value.tv_sec + (o.it_value.tv_usec >= 500000);
	if (!r && (o.it_value.tv_sec || o.it_value.tv_usec))
		r = 1;
	return r;
}

long ulp_sys_timer_create(struct ulp_cb *cb, struct ulp_sys *s)
{
	const struct sigevent *sev = (const struct sigevent *)s->a[1];
	int *idp = (int *)s->a[2], kid = -1;
	long r;

	if (ulp_sys_in_child() || (sev && sev->sigev_notify == SIGEV_NONE))
		return sys(s->nr, s->a[0], s->a[1], s->a[2], 0, 0, 0);
	if (sev && sev->sigev_notify != SIGEV_SIGNAL)
		return -EINVAL; /* SIGEV_THREAD_ID at a ULP thread: not supported (docs) */
	r = ulp_sig_timer_create(cb, (int)s->a[0], sev ? sev->sigev_signo : SIGALRM,
				 sev ? (long)sev->sigev_value.sival_ptr : 0, &kid);
	if (r)
		return r;
	if (!sev)
		ulp_sig_timer_value(cb, kid, kid);
	*idp = kid;
	return 0;
}

long ulp_sys_timer_delete(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r;

	if (ulp_sys_in_child())
		return sys(s->nr, s->a[0], 0, 0, 0, 0, 0);
	r = ulp_sig_timer_delete(cb, (int)s->a[0]);
	if (r == -EINVAL) /* a SIGEV_NONE timer, not in the ULP's list */
		return sys(s->nr, s->a[0], 0, 0, 0, 0, 0);
	return r;
}
