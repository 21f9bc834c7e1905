/* SPDX-License-Identifier: MIT */
/*
 * Preemption of ULPs that run past their quantum without entering the runtime. Each worker has a
 * POSIX timer (CLOCK_MONOTONIC, SIGEV_THREAD_ID: the signal goes to that worker's kernel thread)
 * ticking every quantum while the worker is not idle. The handler runs on the interrupted ULP's
 * stack with its whole register state in the signal frame, like the SIGSYS handler (trap.c): it
 * may switch to another task right there, and the ULP resumes later, maybe on another worker, by
 * returning from the handler.
 *
 * A ULP is switched out when the same task was running, without a switch in between, at the
 * previous tick too (so after one to two quanta), and only when the signal interrupted the ULP's
 * own code (pc in the PVAS region). Runtime code (trap handler, scheduler, a vDSO call) is never
 * preempted: this thread may hold a runtime lock there. The tick also reaps the ring, so that a
 * completion is picked up while a ULP computes on the only worker.
 */
#include "io.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#define DEFAULT_QUANTUM_US 1000

unsigned ulp_quantum_us = DEFAULT_QUANTUM_US;
static uintptr_t region_lo, region_hi;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/*
 * CPU accounting per ULP: the CPU time the worker's thread used since its previous tick goes to
 * the ULP running at this tick, as user time when its own code was interrupted, else as system
 * time (the runtime working for it). Nothing is added to the switch: a tick costs one
 * clock_gettime. What ran between two ticks is charged to the one found at the second, a
 * sampling error of one quantum; idle time is no CPU time.
 */
static void account(struct ulp_worker *w, struct ulp_task *t, int user)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);
	struct timespec ts;
	uint64_t now, d;

	if (!iw || sys(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, (long)&ts, 0, 0, 0, 0))
		return;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	d = iw->cpu_seen && now > iw->cpu_seen ? now - iw->cpu_seen : 0;
	iw->cpu_seen = now;
	if (t && t->owner && d)
		atomic_fetch_add(&((struct ulp_cb *)t->owner)->cpu_ns[user ? 0 : 1], d);
}

static void tick_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_io_worker *iw;
	ucontext_t *uc = ucv;
	struct ulp_task *t;
	uintptr_t pc;

	if (!w || si->si_code != SI_TIMER)
		return;
	t = w->cur;
	pc = ulp_arch_trap_pc(ucv);
	account(w, t, pc >= region_lo && pc < region_hi);
	if (!t || !t->owner || pc < region_lo || pc >= region_hi)
		return;
	ulp_io_poll(w);
	/* A thread of a dying ULP that spins without system calls (MPI progress loops) ends
	 * here, as it would at a trap's return; so does one resumed below. */
	ulp_tg_kick(t->owner, ucv);
	ulp_sig_deliver(t->owner, ucv);
	w = ulp_worker_self(); /* a handler may have parked the ULP */
	iw = ulp_io_worker(w);
	if (!iw)
		return;
	if (t != iw->tick_task || t->switches != iw->tick_switches) {
		iw->tick_task = t;
		iw->tick_switches = t->switches;
		return;
	}
	if (!ulp_task_yield(t))
		return; /* nothing else to run here */
	/* Resumed, maybe on another worker: sigreturn restores the alternate-stack setting saved
	 * in the frame, which must be this worker's. */
	w = ulp_worker_self();
	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = ULP_ALTSTACK_SIZE;
	uc->uc_stack.ss_flags = 0;
	/* Its ULP's end or signals posted to it while it waited its turn. */
	ulp_tg_kick(t->owner, ucv);
	ulp_sig_deliver(t->owner, ucv);
}

static void wake_handler(int sig)
{
	/* Only there to end io_uring_enter's wait (EINTR) without killing the process. */
}

void ulp_preempt_arm(struct ulp_worker *w, int on)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);
	struct itimerspec its;
	long ns = (long)ulp_quantum_us * 1000;

	if (!iw || iw->timer < 0)
		return;
	memset(&its, 0, sizeof(its));
	if (on) {
		its.it_value.tv_sec = its.it_interval.tv_sec = ns / 1000000000;
		its.it_value.tv_nsec = its.it_interval.tv_nsec = ns % 1000000000;
	}
	sys(SYS_timer_settime, iw->timer, 0, (long)&its, 0, 0, 0);
}

void ulp_preempt_worker_init(struct ulp_worker *w)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);
	struct sigevent sev;
	int id = -1;

	if (!ulp_quantum_us || !iw || iw->timer >= 0)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = ULP_SIG_TICK;
	sev._sigev_un._tid = w->tid;
	if (sys(SYS_timer_create, CLOCK_MONOTONIC, (long)&sev, (long)&id, 0, 0, 0) != 0)
		return; /* no preemption on this worker: ULPs still yield and block */
	iw->timer = id;
	ulp_preempt_arm(w, 1);
}

int ulp_io_install(struct pvas_region *r)
{
	const char *q = getenv("ULP_QUANTUM_US");
	struct sigaction sa;
	char *end;

	if (q && *q) {
		unsigned long v = strtoul(q, &end, 10);

		if (*end || v > 10000000) {
			fprintf(stderr,
				"libulp: ULP_QUANTUM_US=%s: not a number of microseconds (0 to "
				"10000000; 0: no preemption)\n",
				q);
			return -EINVAL;
		}
		ulp_quantum_us = (unsigned)v;
	}
	region_lo = r->base;
	region_hi = r->base + r->size;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tick_handler;
	/* On the ULP's stack (no SA_ONSTACK), re-entrant (SA_NODEFER: the next ULP must stay
	 * preemptible after a switch inside the handler), restarting interrupted system calls. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(ULP_SIG_TICK, &sa, NULL) != 0)
		return -errno;
	sa.sa_handler = wake_handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(ULP_SIG_WAKE, &sa, NULL) != 0)
		return -errno;
	return 0;
}
