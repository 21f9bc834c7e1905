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
 *
 * Spinners. A ULP preempted SPIN_PREEMPTS times in a row without entering the runtime (no trapped
 * call: trap.c resets the count) is taken for one that busy-polls memory, as Debian's MPICH does
 * while it waits for a message (it never yields): it is switched out at its first tick, and while
 * such ULPs take turns with others ready the worker ticks every ulp_spin_quantum_us instead of
 * every quantum, so a rank that waits gives the worker back within that time rather than within
 * one to two quanta. A ULP that computes without calls looks the same and gets the short turns
 * too (a few switches more per quantum, shared fairly); one alone on its worker is not preempted
 * and the tick goes back to the quantum. ULP_SPIN_QUANTUM_US=0 turns this off.
 *
 * Alone. A tick's work is needed when something else could run on the worker (a ULP to switch
 * to, a completion to reap for a parked one) or when the running ULP has a CPU-time timer
 * (ITIMER_VIRTUAL/PROF fire at ticks). While every live task of the instance runs on a worker
 * (ulp_live_count at most the workers running a task: none ready, none parked on the ring; a ULP
 * thread alone in its task, or one per worker) there is none of these, and a tick costs ~20 us
 * on the 2-vCPU VM (a timer signal and its sigreturn; an empty handler's cost there), ~2% of a
 * lone ULP's time at 1 ms. Such a worker ticks every ALONE_PERIOD_US instead ("alone"), still
 * charging the CPU time (exact: nothing else ran on it). It leaves that at once when it sees
 * work wait: at the end of a trapped call that made a thread or woke one (ulp_preempt_after_call),
 * at a switch to a ULP's task (ulp_preempt_switch_in), when it goes idle (ulp_preempt_arm); a
 * signal posted meanwhile kicks it (ulp_preempt_kick_alone, ulp_preempt_alone_here). What waits for
 * its long tick: work made by another worker (that one ticks at the quantum and runs it, this one
 * joins within ALONE_PERIOD_US), and a ULP that another process (the pvas_* API of a launcher)
 * starts in the task meanwhile, at most ALONE_PERIOD_US.
 *
 * Kicks (ULP_SIG_KICK, sys_thread.c) come on the tick's signal from tgkill (SI_TKILL): the
 * handler then only makes the running ULP thread look at its marks (kicked), it preempts nothing.
 *
 * One handler at a time. The kernel blocks the tick while its handler runs (no SA_NODEFER), so a
 * tick that comes before the handler is done waits (a timer's signal is pending once, with its
 * overrun) instead of nesting a frame on the stack: when every handler took longer than the
 * period (under strace -f, where each signal and system call stops for the tracer) each tick
 * interrupted the previous one's handler, thousands of frames deep, until the ULP's stack or the
 * worker's alternate stack overflowed and the kernel killed the task with SIGSEGV. A handler that
 * switches away leaves the tick blocked on its worker's thread: the next switch to a ULP's task
 * unblocks it (ulp_preempt_release, from the switch_in hook), so that task stays preemptible,
 * and so does a ULP's signal handler called from the handler (signal.c's invoke), which is the
 * ULP's code and may leave by siglongjmp, never returning here.
 */
#include "io.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

#define DEFAULT_QUANTUM_US 1000
#define DEFAULT_SPIN_QUANTUM_US 200
#define SPIN_PREEMPTS 2
/* Shorter turns cost more in ticks than they save: a tick's handler takes about 25 us on the
 * 2-vCPU VM here. (Before 27 Nov ticks that came faster than that piled up on the stack and
 * ULP_QUANTUM_US=20 crashed ULPs, 15 of 15 runs; now they wait for the handler, see above.)
 * The quantum and the spinners' turn are 0 (off) or at least this. */
#define MIN_QUANTUM_US 50u
/* The tick's period on a worker whose ULP thread is alone (see the top), unless the quantum is
 * longer. */
#define ALONE_PERIOD_US 10000u

unsigned ulp_quantum_us = DEFAULT_QUANTUM_US;
unsigned ulp_spin_quantum_us = DEFAULT_SPIN_QUANTUM_US;
static uintptr_t region_lo, region_hi;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/*
 * CPU accounting per ULP: the CPU time the worker's thread used since its previous tick goes to
 * the ULP running at this tick, as user time when its own code (or the vDSO's) was interrupted,
 * else as system time (the runtime working for it). Nothing is added to the switch: a tick
 * costs one clock_gettime. What ran between two ticks is charged to the one found at the
 * second, a sampling error of one period; idle time is no CPU time.
 */
static uint64_t account(struct ulp_worker *w, struct ulp_task *t, int user)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);
	struct timespec ts;
	uint64_t now, d;

	if (!iw || sys(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, (long)&ts, 0, 0, 0, 0))
		return UINT64_MAX;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	d = iw->cpu_seen && now > iw->cpu_seen ? now - iw->cpu_seen : 0;
	iw->cpu_seen = now;
	if (t && t->owner && d) {
		struct ulp_cb *cb = t->owner;
		struct ulp_uthread *u = ulp_tg_thread_of(cb, t);

		atomic_fetch_add(&cb->cpu_ns[user ? 0 : 1], d);
		if (u) /* and to the thread, for CLOCK_THREAD_CPUTIME_ID */
			atomic_fetch_add(&u->cpu_ns[user ? 0 : 1], d);
		ulp_cputime_check(cb); /* its CPU-time timers and RLIMIT_CPU */
	}
	return d;
}

void ulp_preempt_account_now(struct ulp_worker *w)
{
	account(w, w->cur, 1);
}

static unsigned alone_period(void)
{
	return ulp_quantum_us > ALONE_PERIOD_US ? ulp_quantum_us : ALONE_PERIOD_US;
}

_Atomic int ulp_preempt_alone_n;

/* iw->alone, and the count of such workers, each change counted once (a kick's handler may
 * change it over a trapped call's change on the same thread). */
static void set_alone(struct ulp_io_worker *iw, int on)
{
	int was = atomic_exchange_explicit(&iw->alone, on, memory_order_relaxed);

	if (was != on)
		atomic_fetch_add_explicit(&ulp_preempt_alone_n, on - was, memory_order_relaxed);
}

static void set_period(struct ulp_io_worker *iw, unsigned us)
{
	struct itimerspec its;
	long ns = (long)us * 1000;

	if (iw->period_us == us || iw->timer < 0)
		return;
	iw->period_us = us;
	set_alone(iw, us == alone_period() && us != ulp_quantum_us);
	its.it_value.tv_sec = its.it_interval.tv_sec = ns / 1000000000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = ns % 1000000000;
	sys(SYS_timer_settime, iw->timer, 0, (long)&its, 0, 0, 0);
}

/* Workers of rt that run a task now, not their scheduler loop (a moment's answer; pointers
 * compared only, as a task another worker runs may end meanwhile). */
static long running(struct ulp_runtime *rt)
{
	long n = 0;
	unsigned i;

	for (i = 0; i < rt->nworkers; i++) {
		struct ulp_worker *o = rt->workers[i];
		struct ulp_task *c = __atomic_load_n(&o->cur, __ATOMIC_RELAXED);

		n += c && c != &o->sched;
	}
	return n;
}

/* Whether every live task of w's instance runs on a worker now (none ready, none parked: a ULP
 * thread alone in its task, or one per worker) and t's ULP has no CPU-time timer: w's tick can
 * wait (see the top). */
static int alone(struct ulp_worker *w, struct ulp_task *t)
{
	struct ulp_cb *cb = t->owner;

	return cb && !ulp_worker_has_ready(w) && ulp_live_count(w->rt) <= running(w->rt) &&
	       !atomic_load_explicit(&cb->itimer[0][0], memory_order_relaxed) &&
	       !atomic_load_explicit(&cb->itimer[1][0], memory_order_relaxed);
}

/* Back to the quantum from the long period, on w's own thread: what ran since the last tick
 * was the lone ULP thread, when it is the one running now (at a switch: the one left). */
static void leave_alone(struct ulp_worker *w, struct ulp_io_worker *iw)
{
	struct ulp_task *t = w->cur;

	if (t && t->owner)
		account(w, t, 1);
	set_period(iw, ulp_quantum_us);
}

void ulp_preempt_after_call(struct ulp_worker *w)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);

	if (iw && atomic_load_explicit(&iw->alone, memory_order_relaxed) && !alone(w, w->cur))
		leave_alone(w, iw);
}

static void kicked(void *ucv);

/* Whether the signal frame ucv on w interrupted the code of a ULP (not the runtime's). */
static int own_code(struct ulp_worker *w, void *ucv)
{
	uintptr_t pc = ulp_arch_trap_pc(ucv);

	return w->cur && w->cur->owner && pc >= region_lo && pc < region_hi &&
	       !__atomic_load_n(&w->probing, __ATOMIC_RELAXED);
}

void ulp_worker_kick(const struct ulp_worker *w)
{
	sys(SYS_tgkill, sys(SYS_getpid, 0, 0, 0, 0, 0, 0), w->tid, ULP_SIG_KICK, 0, 0, 0);
}

void ulp_preempt_kick_alone(struct ulp_worker *w)
{
	unsigned i;

	if (!w)
		return;
	for (i = 0; i < w->rt->nworkers; i++) {
		struct ulp_worker *o = w->rt->workers[i];
		struct ulp_io_worker *iw = o == w ? NULL : ulp_io_worker(o);

		if (iw && atomic_load_explicit(&iw->alone, memory_order_relaxed))
			ulp_worker_kick(o);
	}
}

void ulp_preempt_alone_here(struct ulp_worker *w, void *ucv)
{
	struct ulp_io_worker *iw = w ? ulp_io_worker(w) : NULL;

	if (!iw || !atomic_load_explicit(&iw->alone, memory_order_relaxed))
		return;
	/* Over the ULP's own code: as a kick would. Over runtime code (a tick's handler deciding
	 * to tick seldom, a trap): a kick of its own, which waits while a tick's handler runs and
	 * finds the ULP's code after it. */
	if (own_code(w, ucv))
		kicked(ucv);
	else
		ulp_worker_kick(w);
}

/* Whether t, found running at this tick, is switched out now. */
static int turn_over(struct ulp_io_worker *iw, struct ulp_task *t, int spinner)
{
	if (t != iw->tick_task || t->switches != iw->tick_switches) {
		iw->tick_task = t;
		iw->tick_switches = t->switches;
		iw->ticks_seen = 0;
	} else {
		iw->ticks_seen++;
	}
	if (spinner)
		return 1;
	/* Back to the quantum: a ULP that makes calls keeps its whole turn. */
	set_period(iw, ulp_quantum_us);
	/* Seen at a previous tick, and a quantum's worth of ticks: after one to two quanta. */
	return iw->ticks_seen && iw->ticks_seen * iw->period_us >= ulp_quantum_us;
}

static void tick_unblock(void)
{
	unsigned long tick = 1ul << (ULP_SIG_TICK - 1);

	sys(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&tick, 0, sizeof(tick), 0, 0);
}

static void release(struct ulp_io_worker *iw)
{
	if (iw && iw->tick_held) {
		iw->tick_held = 0;
		tick_unblock();
	}
}

void ulp_preempt_release(struct ulp_worker *w)
{
	release(w ? ulp_io_worker(w) : NULL);
}

/* At every switch to a ULP's task: one look-up of the worker's state for both. */
void ulp_preempt_switch_in(struct ulp_worker *w)
{
	struct ulp_io_worker *iw = w ? ulp_io_worker(w) : NULL;

	release(iw);
	if (iw && atomic_load_explicit(&iw->alone, memory_order_relaxed))
		leave_alone(w, iw);
}

/* A kick (ULP_SIG_KICK, sys_thread.c): another thread marked the ULP thread it saw running here
 * (a signal for it, its ULP dying). Whatever runs now looks, where its own code was interrupted;
 * inside the runtime, the trap's end looks anyway. */
static void kicked(void *ucv)
{
	struct ulp_cb *cb = ulp_current_cb();
	uintptr_t pc = ulp_arch_trap_pc(ucv);
	struct ulp_worker *w;
	struct ulp_io_worker *iw;

	if (!cb || cb->magic != ULP_CB_MAGIC)
		return;
	ulp_tg_kick(cb, ucv);
	if (pc >= cb->part_lo && pc < cb->part_hi && !ulp_fast_in_slots(cb, pc)) {
		ulp_sig_deliver(cb, ucv);
		return;
	}
	/* Not here (the vDSO, a trampoline, the runtime): a worker that ticks seldom (a ULP
	 * alone) ticks at the quantum again, so its next tick takes it as before. Never over a
	 * tick's handler, which blocks this signal. */
	w = ulp_worker_self();
	iw = w ? ulp_io_worker(w) : NULL;
	if (iw && atomic_load_explicit(&iw->alone, memory_order_relaxed))
		leave_alone(w, iw);
}

/* At a tick that interrupted t's own code: its ULP's end, signals due to it. */
static void tick_deliver(struct ulp_task *t, void *ucv)
{
	ulp_tg_kick(t->owner, ucv);
	if (!ulp_fast_in_slots(t->owner, ulp_arch_trap_pc(ucv)))
		ulp_sig_deliver(t->owner, ucv);
}

/*
 * Whether this tick came while the previous tick's handler on this worker ran, and waited for it
 * (blocked): it finds the task where that handler returned to (same pc and stack pointer, no
 * switch since) and the worker's thread used less than half a period of CPU since the previous
 * tick began (cpu, from account). The ULP has not run since: switching it out now would give it
 * no turn at all. When every handler takes longer than the period (under strace -f), nearly
 * every sigreturn met such a tick and the ULPs made little progress (8 ranks of a loop without
 * calls on 2 workers took up to 29 s under strace -f instead of 1-2 s).
 */
static int stale_tick(struct ulp_io_worker *iw, struct ulp_task *t, void *ucv, uint64_t cpu)
{
	return iw && t == iw->ret_task && t->switches == iw->ret_switches &&
	       ulp_arch_trap_pc(ucv) == iw->ret_pc && ulp_arch_trap_sp(ucv) == iw->ret_sp &&
	       cpu < (uint64_t)iw->period_us * 500;
}

static void tick_run(struct ulp_worker *w, siginfo_t *si, void *ucv)
{
	struct ulp_io_worker *iw;
	ucontext_t *uc = ucv;
	struct ulp_task *t;
	uintptr_t pc;
	uint64_t cpu;
	int spinner;

	if (si->si_code == SI_TKILL) {
		kicked(ucv);
		return;
	}
	if (si->si_code != SI_TIMER)
		return;
	t = w->cur;
	pc = ulp_arch_trap_pc(ucv);
	/* user time: the ULP's own code, and the vDSO's, which its clock reads run (until 27 Nov
	 * system time: a perl loop reading the time showed 0.64 s user and 0.35 s system as a ULP
	 * against 1.00 s user as a process) */
	cpu = account(w, t, (pc >= region_lo && pc < region_hi) || ulp_trap_in_vdso(pc));
	/* a waiting thread's probe (spinyield.c) runs the scheduler's work, not t's code */
	if (!t || !t->owner || pc < region_lo || pc >= region_hi ||
	    __atomic_load_n(&w->probing, __ATOMIC_RELAXED) ||
	    stale_tick(ulp_io_worker(w), t, ucv, cpu))
		return;
	ulp_io_poll(w);
	/* A thread of a dying ULP that spins without system calls (MPI progress loops) ends
	 * here, as it would at a trap's return; so does one resumed below. */
	tick_deliver(t, ucv);
	w = ulp_worker_self(); /* a handler may have parked the ULP */
	iw = ulp_io_worker(w);
	if (!iw)
		return;
	if (alone(w, t)) { /* nothing to switch to or reap for: tick seldom (see the top) */
		set_period(iw, alone_period());
		return;
	}
	spinner = ulp_spin_quantum_us && t->spins >= SPIN_PREEMPTS;
	if (spinner) /* its loop may be rewritten to yield at each iteration (spinyield.c) */
		ulp_spin_tick(t->owner, ucv);
	if (!turn_over(iw, t, spinner))
		return;
	/* What runs next is likely a spinner too when this one is (ranks waiting in turn). */
	if (spinner)
		set_period(iw, ulp_spin_quantum_us);
	iw->preempts++;
	if (!ulp_task_yield(t)) {
		set_period(iw, ulp_quantum_us); /* nothing else to run here */
		return;
	}
	if (t->spins < SPIN_PREEMPTS)
		t->spins++;
	/* Resumed, maybe on another worker: sigreturn restores the alternate-stack setting saved
	 * in the frame, which must be this worker's. */
	w = ulp_worker_self();
	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = ULP_ALTSTACK_SIZE;
	uc->uc_stack.ss_flags = 0;
	/* Its ULP's end or signals posted to it while it waited its turn. */
	tick_deliver(t, ucv);
}

/* Runs with the tick blocked (see the top): tick_held says so to a switch made inside. */
static void tick_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_io_worker *iw = w ? ulp_io_worker(w) : NULL;

	if (!w)
		return;
	if (iw)
		iw->tick_held = 1;
	else
		tick_unblock(); /* nothing would unblock it at a switch: as before, re-entrant */
	tick_run(w, si, ucv);
	/* Maybe resumed on another worker, whose tick a switch to this task unblocked. The
	 * sigreturn unblocks it here: it was not blocked when this tick came. */
	w = ulp_worker_self();
	iw = ulp_io_worker(w);
	if (!iw)
		return;
	iw->tick_held = 0;
	iw->ret_task = w->cur;
	iw->ret_switches = w->cur ? w->cur->switches : 0;
	iw->ret_pc = ulp_arch_trap_pc(ucv);
	iw->ret_sp = ulp_arch_trap_sp(ucv);
}

static void wake_handler(int sig, siginfo_t *si, void *uc)
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
	iw->period_us = ulp_quantum_us;
	set_alone(iw, 0);
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

/* *us from the environment variable name when set; -EINVAL (and a message) when it is no number
 * of microseconds, or one from 1 to MIN_QUANTUM_US - 1. */
static int env_us(const char *name, unsigned *us, const char *zero)
{
	const char *q = getenv(name);
	unsigned long v;
	char *end;

	if (!q || !*q)
		return 0;
	v = strtoul(q, &end, 10);
	if (*end || v > 10000000) {
		fprintf(stderr,
			"libulp: %s=%s: not a number of microseconds (0 to 10000000; 0: %s)\n",
			name, q, zero);
		return -EINVAL;
	}
	if (v && v < MIN_QUANTUM_US) {
		fprintf(stderr, "libulp: %s=%lu: below %u microseconds (0: %s)\n", name, v,
			MIN_QUANTUM_US, zero);
		return -EINVAL;
	}
	*us = (unsigned)v;
	return 0;
}

/* Whether this kernel's sockets take RWF_NOWAIT: then a descriptor that refuses it is no socket
 * and has no SO_RCVTIMEO to read (io_calls.c). Every socket file comes from sock_alloc_file,
 * which gives them FMODE_NOWAIT, the flag RWF_NOWAIT asks for, all alike: on 6.18 unix stream,
 * datagram and seqpacket, UDP, TCP and netlink sockets took it, on 6.1 none does. Two families
 * are asked, to be sure (an empty one must answer EAGAIN, not EOPNOTSUPP). Hosted libc: before
 * any worker runs. */
static int sockets_take_rwf_nowait(void)
{
	int sv[2] = {-1, -1}, ok;
	char c;
	struct iovec iov = {&c, 1};

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 0;
	ok = preadv2(sv[0], &iov, 1, -1, RWF_NOWAIT) < 0 && errno == EAGAIN;
	close(sv[0]);
	close(sv[1]);
	sv[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sv[0] < 0)
		return 0;
	ok = ok && preadv2(sv[0], &iov, 1, -1, RWF_NOWAIT) < 0 && errno == EAGAIN;
	close(sv[0]);
	return ok;
}

/*
 * ulp_io_ring_rw: whether the ring does a read or write that would block (io_calls.c). A file
 * that refuses RWF_NOWAIT (a FIFO, a terminal) is tried by the ring's poll only from Linux 6.4
 * (io_uring's "pollable non-blocking attempts for !FMODE_NOWAIT"); before, the ring gives it to
 * an io-wq thread that blocks in it, whose thread starts io_ring.c's iowq_kick shows can stall:
 * there, such files keep the polls (1). 6.6 is asked, the first long-term kernel with it.
 * ULP_IO_RING_RW=0 turns the ring's reads and writes off, 1 or 2 forces a mode (tests).
 */
static int ring_rw_mode(void)
{
	const char *q = getenv("ULP_IO_RING_RW");
	struct utsname u;
	int major = 0, minor = 0;

	if (q && (!strcmp(q, "0") || !strcmp(q, "1") || !strcmp(q, "2")))
		return *q - '0';
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 1;
	return major > 6 || (major == 6 && minor >= 6) ? 2 : 1;
}

int ulp_io_install(struct pvas_region *r)
{
	const char *q;
	int rc;

	if (env_us("ULP_QUANTUM_US", &ulp_quantum_us, "no preemption") ||
	    env_us("ULP_SPIN_QUANTUM_US", &ulp_spin_quantum_us, "no spinner detection"))
		return -EINVAL;
	if (ulp_spin_quantum_us > ulp_quantum_us)
		ulp_spin_quantum_us = ulp_quantum_us; /* never longer than a whole quantum */
	/* ULP_IO_RWF_NOWAIT=0: read and write take the path of a driver that refuses RWF_NOWAIT
	 * (pipes and sockets on 6.1), so that the tests run it on any kernel. */
	q = getenv("ULP_IO_RWF_NOWAIT");
	ulp_io_rwf_nowait = !(q && !strcmp(q, "0"));
	ulp_io_sock_rwf_nowait = sockets_take_rwf_nowait();
	ulp_io_ring_rw = ring_rw_mode();
	region_lo = r->base;
	region_hi = r->base + r->size;
	/* On the ULP's stack (no SA_ONSTACK), not re-entrant (no SA_NODEFER: see the top; a switch
	 * inside the handler unblocks the tick for the next ULP), restarting interrupted system
	 * calls. */
	rc = ulp_trap_handler_install(ULP_SIG_TICK, tick_handler, SA_RESTART);
	if (rc)
		return rc;
	return ulp_trap_handler_install(ULP_SIG_WAKE, wake_handler, SA_RESTART);
}
