/* SPDX-License-Identifier: MIT */
/*
 * What a ULP's CPU time sets off: its ITIMER_VIRTUAL and ITIMER_PROF timers and its RLIMIT_CPU.
 *
 * The kernel counts CPU time per process, and the ULPs of a task are threads of one: its own
 * CPU-time timers and limit would count every ULP of the task (until 27 Nov setitimer of
 * ITIMER_VIRTUAL and ITIMER_PROF was refused with EINVAL, and RLIMIT_CPU held only the ULP's
 * children: `ulimit -t 1; exec perl -e '1 while 1'` ran for ever). A ULP's CPU time is charged
 * by the preemption tick of the worker that runs it (preempt.c); after each charge,
 * ulp_cputime_check does what the kernel's posix-cpu-timers do at a tick:
 *   - a timer whose expiry the ULP's CPU time reached (user time for ITIMER_VIRTUAL, user and
 *     system for ITIMER_PROF) sends its signal (SIGVTALRM, SIGPROF) and, with an interval,
 *     expires again one interval later (once per tick at most, as the kernel's);
 *   - at its RLIMIT_CPU hard limit the ULP is sent SIGKILL; at its soft limit SIGXCPU, and the
 *     soft limit is raised by a second (below the hard one), so SIGXCPU comes every second.
 * The limit is its placeholder's (sys_rlimit.c), read at the first tick, when the ULP sets it,
 * and once per second of CPU time after (one changed from outside, `prlimit --pid`, holds
 * within that second), at most one system call per CPU second.
 *
 * Runs in a worker's tick handler, perhaps over runtime code of the ULP: atomics and raw system
 * calls only. Two workers may charge threads of one ULP at once: a compare-and-swap decides
 * which one fires a timer or looks at the limit.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "ulp_signal.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>

#define NS 1000000000ull

struct rlim {
	uint64_t cur, max;
};

/* CPU time for timer i (0: ITIMER_VIRTUAL, user time; 1: ITIMER_PROF, user and system). */
static uint64_t cpu_of(const struct ulp_cb *cb, int i)
{
	uint64_t user = atomic_load(&cb->cpu_ns[0]);

	return i ? user + atomic_load(&cb->cpu_ns[1]) : user;
}

static void timers_check(struct ulp_cb *cb)
{
	static const int sig[2] = {SIGVTALRM, SIGPROF};
	uint64_t exp, inc;
	int i;

	for (i = 0; i < 2; i++) {
		exp = atomic_load(&cb->itimer[i][0]);
		if (!exp || cpu_of(cb, i) < exp)
			continue;
		inc = atomic_load(&cb->itimer[i][1]);
		if (atomic_compare_exchange_strong(&cb->itimer[i][0], &exp, inc ? exp + inc : 0))
			ulp_sig_post(cb->pvid, sig[i], SI_KERNEL, 0, 0, 0);
	}
}

/* Seconds of a limit in ns; UINT64_MAX for none (or more than fits). */
static uint64_t limit_ns(uint64_t sec)
{
	return sec == RLIM_INFINITY || sec > UINT64_MAX / NS ? UINT64_MAX : sec * NS;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* The ULP's RLIMIT_CPU against its CPU time, when that reached the point of the next look. */
static void limit_check(struct ulp_cb *cb)
{
	uint64_t now = cpu_of(cb, 1), at = atomic_load(&cb->cpu_limit_at), soft, hard, next;
	struct rlim l;

	if (now < at || cb->pid <= 0)
		return;
	next = now + NS; /* a look in a second unless it says sooner */
	if (!atomic_compare_exchange_strong(&cb->cpu_limit_at, &at, next))
		return; /* another worker looks */
	if (ulp_arch_syscall(SYS_prlimit64, cb->pid, RLIMIT_CPU, 0, (long)&l, 0, 0) < 0 ||
	    l.cur == RLIM_INFINITY)
		return;
	soft = limit_ns(l.cur);
	hard = limit_ns(l.max);
	if (now >= hard) {
		ulp_sig_post(cb->pvid, SIGKILL, SI_KERNEL, 0, 0, 0);
		return;
	}
	if (now >= soft) {
		if (l.cur < l.max) { /* the kernel's next SIGXCPU comes a second later */
			l.cur++;
			ulp_arch_syscall(SYS_prlimit64, cb->pid, RLIMIT_CPU, (long)&l, 0, 0, 0);
		}
		ulp_sig_post(cb->pvid, SIGXCPU, SI_KERNEL, 0, 0, 0);
		soft = limit_ns(l.cur);
	}
	/* Unless the ULP set a new limit meanwhile (then: at the next tick). */
	at = now + NS;
	atomic_compare_exchange_strong(&cb->cpu_limit_at, &at,
				       min3(now + NS, soft > now ? soft : now + NS, hard));
}

void ulp_cputime_check(struct ulp_cb *cb)
{
	timers_check(cb);
	limit_check(cb);
}

void ulp_cputime_itimer(struct ulp_cb *cb, int which, const uint64_t *set, uint64_t *old)
{
	int i = which == ITIMER_PROF;
	uint64_t now, exp;

	/* The ULP's time up to now, not up to its worker's last tick. */
	ulp_preempt_account_now(ulp_worker_self());
	now = cpu_of(cb, i);
	exp = set ? atomic_exchange(&cb->itimer[i][0], 0) : atomic_load(&cb->itimer[i][0]);
	/* An expiry passed whose tick has not come yet: "about to fire", as the kernel says (its
	 * tick's length there, a quantum here). */
	old[0] = !exp ? 0 : exp > now ? exp - now : (uint64_t)ulp_quantum_us * 1000 + 1;
	old[1] = atomic_load(&cb->itimer[i][1]);
	if (!set)
		return;
	atomic_store(&cb->itimer[i][1], set[1]);
	if (set[0])
		atomic_store(&cb->itimer[i][0], now + set[0]);
}

void ulp_cputime_limit_changed(struct ulp_cb *cb)
{
	atomic_store(&cb->cpu_limit_at, 0);
}
