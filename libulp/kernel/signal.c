/* SPDX-License-Identifier: MIT */
/*
 * Signals of ULPs: per-ULP dispositions, pending sets, alternate stacks and timers (ulp_signal.h).
 *
 * Where a signal goes. The relay is the kernel's action in a PVAS task for every signal a ULP may
 * catch; it runs on whichever worker the kernel picked and decides by the siginfo:
 *   - a timer's signal carries the record of the timer (value MAGIC|slot): the ULP that made it;
 *   - SIGCHLD: the ULP whose child it is (its list of children, sys_fork.c);
 *   - a signal the kernel sent this process for what the running thread did (SIGPIPE from a
 *     write, SIGXFSZ: SI_USER from this very process, or SI_KERNEL): the ULP running there;
 *   - any other (kill from another process, sigqueue): every ULP of the task, as a launcher
 *     forwards a signal to every rank (docs/usage.md).
 * A ULP's own kill/raise/tgkill never reach the kernel (sys_proc.c, sys_thread.c).
 *
 * Posting sets a bit in the ULP's entry of a region-wide table indexed by pvid (never unmapped,
 * unlike a control block, so a post racing with the ULP's end touches nothing freed); the entry's
 * generation changes at each start of a ULP in that partition, so a timer of an ended ULP signals
 * nobody. A parked call of the ULP ends (io_ring.c) when the signal would do something there.
 * The ULP runs the action itself, in its own context: at the end of its next trap, at a tick, or
 * at once when the relay interrupted its code. Handlers of a ULP that ended are never called:
 * they are only ever called from that ULP's context.
 */
#include "ulp_signal.h"

#include "io.h"
#include "syscall.h"
#include "uthread.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <ucontext.h>

#define KSA_SIGINFO 4
#define KSA_ONSTACK 0x08000000
#define KSA_RESTART 0x10000000
#define KSA_NODEFER 0x40000000
#define KSA_RESETHAND 0x80000000
#define KSA_RESTORER 0x04000000

#define TIMER_MAGIC 0x554c5000l /* "ULP": the high half of a timer signal's value */
#define MAX_TIMER_RECS 16384
#define FAULT_STACK (64 * 1024) /* room a fault handler gets on the ULP's stack */
/* Handlers set up above one another at most (invoke): the frames are the runtime's, on the
 * stack the trap runs on. */
#define MAX_NEST 8

/* One ULP's entry (by pvid). */
struct sigrec {
	_Atomic uint64_t pend;	  /* posted, not yet run */
	_Atomic uint64_t wake;	  /* signals that end a parked call: a handler, or fatal */
	_Atomic uint64_t restart; /* ... whose handler has SA_RESTART */
	_Atomic uint64_t blocked; /* the mask as the ULP last set it */
	_Atomic uint64_t waitset; /* taken by a sigtimedwait in progress */
	_Atomic uint32_t gen;	  /* bumped at each start of a ULP here */
	_Atomic int stopped;	  /* by a stop signal's default action, until SIGCONT */
	_Atomic int tgid;	  /* the PVAS task it runs in */
	struct {
		int code, pid, uid, pad;
		long value;
		long utime, stime; /* SIGCHLD: the child's CPU times (clock ticks) */
	} info[ULP_NSIG];
};

/* A timer that signals a ULP. */
struct timerrec {
	_Atomic int pvid1; /* pvid + 1; 0: free */
	uint32_t gen;
	int kid;
	long value; /* the program's sigev_value */
};

static struct pvas_region *region;
static struct sigrec *recs;
static struct timerrec *timers;
static unsigned long relay_restorer;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static struct sigrec *rec_of(int pvid)
{
	return recs && pvid >= 0 && (unsigned)pvid < region->nparts ? &recs[pvid] : NULL;
}

/* Signals a ULP may catch: not the runtime's, not SIGKILL/SIGSTOP. */
static int catchable(int sig)
{
	return sig >= 1 && sig <= ULP_NSIG && !ulp_rt_signal(sig) && sig != SIGKILL &&
	       sig != SIGSTOP;
}

/* ---- posting ---- */

/* The stop signals: their default action stops the process. */
#define STOP_SIGS                                                                                  \
	(ULP_SIG_BIT(SIGSTOP) | ULP_SIG_BIT(SIGTSTP) | ULP_SIG_BIT(SIGTTIN) | ULP_SIG_BIT(SIGTTOU))

/* How the kernel queues a real-time signal sent so (sigqueue.c): one that user space sent by
 * other means than kill may be refused; a timer's is queued once while pending. */
static int queue_how(int code)
{
	if (code == SI_TIMER)
		return ULP_SIGQ_ONCE;
	return code >= 0 ? ULP_SIGQ_OVER : ULP_SIGQ_BOUNDED;
}

int ulp_sig_record(int pvid, int sig, int code, int pid, int uid, long value)
{
	struct sigrec *r = rec_of(pvid);

	return r ? ulp_sig_record_to(pvid, sig, code, pid, uid, value, &r->pend) : 0;
}

void ulp_sig_publish(int pvid, uint64_t bits)
{
	struct sigrec *r = rec_of(pvid);

	if (r && bits)
		atomic_fetch_or(&r->pend, bits);
}

int ulp_sig_record_to(int pvid, int sig, int code, int pid, int uid, long value,
		      _Atomic uint64_t *bits)
{
	struct sigrec *r = rec_of(pvid);

	if (!r || sig < 1 || sig > ULP_NSIG)
		return 0;
	if (ULP_SIG_QUEUED(sig)) {
		struct ulp_sigq_info in = {code, pid, uid, 0, value};

		return ulp_sigq_push(pvid, 0, sig, &in, bits, queue_how(code));
	}
	/* As the kernel: SIGCONT continues the process, whatever its action, and discards its
	 * pending stop signals; a stop signal discards a pending SIGCONT. */
	if (sig == SIGCONT) {
		atomic_fetch_and(&r->pend, ~(uint64_t)STOP_SIGS);
		atomic_store(&r->stopped, 0);
	} else if (ULP_SIG_BIT(sig) & STOP_SIGS) {
		atomic_fetch_and(&r->pend, ~(uint64_t)ULP_SIG_BIT(SIGCONT));
	}
	r->info[sig - 1].code = code;
	r->info[sig - 1].pid = pid;
	r->info[sig - 1].uid = uid;
	r->info[sig - 1].value = value;
	r->info[sig - 1].utime = 0;
	r->info[sig - 1].stime = 0;
	atomic_fetch_or(bits, ULP_SIG_BIT(sig));
	return 0;
}

int ulp_sig_record_chld(int pvid, const siginfo_t *si, _Atomic uint64_t *bits)
{
	struct sigrec *r = rec_of(pvid);

	if (!r)
		return 0;
	ulp_sig_record_to(pvid, SIGCHLD, si->si_code, si->si_pid, (int)si->si_uid, si->si_status,
			  bits);
	/* before the bit is published: the caller's ulp_sig_publish */
	r->info[SIGCHLD - 1].utime = si->si_utime;
	r->info[SIGCHLD - 1].stime = si->si_stime;
	return 0;
}

/*
 * The ULP's main thread running on another worker now: that worker is kicked, and takes the
 * signal in its kick handler (preempt.c, kicked), as the kernel interrupts a running process.
 * Before 28 Nov a signal posted to a ULP busy in its own code waited for the next tick there: a
 * SIGALRM every 2 ms reached 4 busy perl loops of one worker 124-247 times in a second each
 * (now 217-244; 4 processes on one CPU: 188-191), and with --quantum 0 (no ticks) once. Only
 * pointers are compared: the running task is never read.
 */
static void kick_runner(int pvid)
{
	struct ulp_worker *self = ulp_worker_self();
	struct ulp_task *t = &pvas_cb(region, pvid)->task;
	unsigned i;

	for (i = 0; self && i < self->rt->nworkers; i++) {
		struct ulp_worker *o = self->rt->workers[i];

		if (o && o != self && __atomic_load_n(&o->cur, __ATOMIC_RELAXED) == t)
			ulp_worker_kick(o);
	}
}

void ulp_sig_notify(int pvid, int sig)
{
	struct sigrec *r = rec_of(pvid);
	unsigned long bit = ULP_SIG_BIT(sig), acts;

	if (!r || sig < 1 || sig > ULP_NSIG || !(atomic_load(&r->pend) & bit))
		return;
	ulp_sigfd_notify(pvid, sig);
	/* not blocked, and one that ends a parked call (wake: a handler, or fatal) */
	acts = atomic_load(&r->wake) & bit & ~atomic_load(&r->blocked);
	if (acts || (atomic_load(&r->waitset) & bit))
		ulp_io_signal_note(pvid, region->nparts, (atomic_load(&r->restart) & bit) != 0);
	if ((acts || sig == SIGSTOP || sig == SIGKILL) && !ulp_sys_in_child())
		kick_runner(pvid);
	/* Running on a worker that ticks seldom (preempt.c): kicked, to take it now. */
	if (atomic_load_explicit(&ulp_preempt_alone_n, memory_order_relaxed) && !ulp_sys_in_child())
		ulp_preempt_kick_alone(ulp_worker_self());
}

int ulp_sig_post(int pvid, int sig, int code, int pid, int uid, long value)
{
	int rc = ulp_sig_record(pvid, sig, code, pid, uid, value);

	if (rc == 0)
		ulp_sig_notify(pvid, sig);
	return rc;
}

void ulp_sig_adopt(struct ulp_cb *cb, struct ulp_uthread *u)
{
	struct sigrec *r = rec_of(cb->pvid);

	if (r)
		atomic_fetch_or(&r->pend, ulp_sigq_retag(cb->pvid, ulp_tg_sigtag(cb, u), 0));
}

uint32_t ulp_sig_gen(int pvid)
{
	struct sigrec *r = rec_of(pvid);

	return r ? atomic_load(&r->gen) : 0;
}

/* A ULP that signals reach: running, or between two programs (exec.c; its pending set is kept
 * for the new one, as execve keeps a process's). */
static int alive(int pvid)
{
	int s = ulp_proc_state(region, pvid);

	return s == ULP_PROC_RUNNING || s == ULP_PROC_EXEC;
}

/* Every ULP of this task (a signal from outside). */
static void broadcast(int sig, int code, int pid, int uid, long value)
{
	int self = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0), i;

	for (i = ulp_proc_next(region, -1, 0); i >= 0; i = ulp_proc_next(region, i, 0))
		if (alive(i) && atomic_load(&recs[i].tgid) == self)
			ulp_sig_post(i, sig, code, pid, uid, value);
}

/* The ULP of this task with child pid, or -1. */
/* The ULP's list of children, read without touching its partition directly: a ULP that ends
 * meanwhile has its partition made PROT_NONE by its release, and a fault here (a signal handler
 * of the task) would end every ULP of the task. 0 when it could not be read. */
static int read_kids(int self, const struct ulp_cb *cb, int *kids)
{
	int n[1 + ULP_MAX_KIDS]; /* nkids, then kids[]: adjacent ints in the control block */
	struct iovec l = {n, sizeof(n)}, r = {(void *)&cb->nkids, sizeof(n)};

	_Static_assert(offsetof(struct ulp_cb, kids) ==
			   offsetof(struct ulp_cb, nkids) + sizeof(int),
		       "kids[] follows nkids");
	if (sys(SYS_process_vm_readv, self, (long)&l, 1, (long)&r, 1, 0) != (long)sizeof(n) ||
	    n[0] <= 0)
		return 0;
	if (n[0] > ULP_MAX_KIDS)
		n[0] = ULP_MAX_KIDS;
	memcpy(kids, n + 1, (size_t)n[0] * sizeof(int));
	return n[0];
}

/* The next ULP after pvid i (-1: the first) that runs in task self, its control block in *cb;
 * -1: none. */
static int next_of_task(int self, int i, struct ulp_cb **cb)
{
	for (i = ulp_proc_next(region, i, 0); i >= 0; i = ulp_proc_next(region, i, 0))
		if (alive(i) && atomic_load(&recs[i].tgid) == self &&
		    ulp_proc_find(region, i, cb) >= 0)
			return i;
	return -1;
}

static int owner_of_child(int pid)
{
	int self = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0), i, k, n, kids[ULP_MAX_KIDS];
	struct ulp_cb *cb;

	for (i = next_of_task(self, -1, &cb); i >= 0; i = next_of_task(self, i, &cb)) {
		n = read_kids(self, cb, kids);
		for (k = 0; k < n; k++)
			if (kids[k] == pid)
				return i;
	}
	return -1;
}

/* Children whose end was announced to their ULP (SIGCHLD posted), by pid modulo the size: a
 * child the scan below finds ended is announced once. A collision announces one twice. */
#define ANNOUNCED 1024
static _Atomic int announced[ANNOUNCED];

static int chld_exit(int code)
{
	return code == CLD_EXITED || code == CLD_KILLED || code == CLD_DUMPED;
}

/* SIGCHLD to ULP pvid for its child pid if that has ended and was not announced yet. */
static void announce_ended(int pvid, int pid)
{
	siginfo_t si;

	if (atomic_load(&announced[pid % ANNOUNCED]) == pid)
		return;
	memset(&si, 0, sizeof(si));
	if (sys(SYS_waitid, P_PID, pid, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0, 0) != 0 ||
	    si.si_pid != pid || atomic_exchange(&announced[pid % ANNOUNCED], pid) == pid)
		return;
	ulp_sig_post(pvid, SIGCHLD, si.si_code, si.si_pid, (int)si.si_uid, si.si_status);
}

/*
 * The kernel keeps one SIGCHLD pending for the whole task: when children of two of its ULPs end
 * together, or one ends with a placeholder (a ULP of the task that ended), the relay hears of one
 * of them. So at each SIGCHLD every other child of the task's ULPs that has ended, and was not
 * announced yet, is announced to its ULP too (waitid with WNOWAIT: it stays to be waited for);
 * so is a child that ended before its ULP recorded it (ulp_sig_child_added), whose SIGCHLD found
 * no owner. Before, of 8 ULPs of one task whose children ended at once, 1 to 3 never had their
 * SIGCHLD (a handler, sigwaitinfo, a signalfd waited for ever).
 */
static void chld_others(int self, int pid)
{
	int i, k, n, kids[ULP_MAX_KIDS];
	struct ulp_cb *cb;

	for (i = next_of_task(self, -1, &cb); i >= 0; i = next_of_task(self, i, &cb)) {
		n = read_kids(self, cb, kids);
		for (k = 0; k < n; k++)
			if (kids[k] != pid)
				announce_ended(i, kids[k]);
	}
}

void ulp_sig_child_added(struct ulp_cb *cb, int pid)
{
	announce_ended(cb->pvid, pid);
}

void ulp_sig_child_new(int pid)
{
	int o = pid;

	atomic_compare_exchange_strong(&announced[pid % ANNOUNCED], &o, 0);
}

static void child_relay(struct ulp_cb *cb, int sig, siginfo_t *si, void *uc);

static void relay_post(int sig, siginfo_t *si, void *uc)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_cb *cur = w && w->cur && w->cur->owner ? w->cur->owner : NULL;
	uintptr_t pc = ulp_arch_trap_pc(uc);
	long value = (long)si->si_value.sival_ptr;
	int self, pvid;

	if (!recs || sig < 1 || sig > ULP_NSIG)
		return;
	if (ulp_sys_in_child()) {
		if (cur)
			child_relay(cur, sig, si, uc);
		return;
	}
	if (si->si_code == SI_TIMER && (value >> 32) == TIMER_MAGIC &&
	    (value & 0xffffffff) < MAX_TIMER_RECS) {
		struct timerrec *t = &timers[value & 0xffffffff];
		int p1 = atomic_load(&t->pvid1);

		/* (its own code interrupted here: relay takes the action now) */
		if (p1 && atomic_load(&recs[p1 - 1].gen) == t->gen)
			ulp_sig_post(p1 - 1, sig, SI_TIMER, t->kid, 0, t->value);
		return; /* else a timer of a ULP that ended: nobody's */
	}
	if (sig == SIGCHLD && (si->si_code == CLD_STOPPED || si->si_code == CLD_CONTINUED) &&
	    ulp_ident_task_of(si->si_pid, &pvid) == (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0)) {
		/* A placeholder stopped (kill -STOP of the ULP's pid, which it cannot forward):
		 * its ULP stops, while it is stopped; continued, it forwards the SIGCONT. */
		if (si->si_code == CLD_STOPPED && ulp_ident_stopped(si->si_pid)) {
			ulp_sig_post(pvid, SIGSTOP, SI_KERNEL, 0, 0, 0);
			if (!ulp_ident_stopped(si->si_pid)) /* continued meanwhile */
				ulp_sig_post(pvid, SIGCONT, SI_KERNEL, 0, 0, 0);
		}
		/* the one SIGCHLD pending may stand for a child's end too */
		chld_others((int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0), 0);
		return;
	}
	if (sig == SIGCHLD && si->si_code > 0) { /* CLD_EXITED ... */
		/* a placeholder that exec'd to end (ident.c) is no ULP's child; its SIGCHLD may
		 * stand for one of theirs all the same */
		pvid = ulp_ident_is_placeholder(si->si_pid) ? -1 : owner_of_child(si->si_pid);
		/* an end announced already (the ULP recorded the child after it ended) is not
		 * announced twice */
		if (pvid >= 0 &&
		    (!chld_exit(si->si_code) || atomic_exchange(&announced[si->si_pid % ANNOUNCED],
								si->si_pid) != si->si_pid)) {
			_Atomic uint64_t bits = 0;

			ulp_sig_record_chld(pvid, si, &bits);
			ulp_sig_publish(pvid, atomic_load(&bits));
			ulp_sig_notify(pvid, sig);
		}
		chld_others((int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0), si->si_pid);
		return;
	}
	self = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	if (sig == SIGCHLD) /* sent by kill: a child's end may hide behind it too */
		chld_others(self, 0);
	if (cur && (si->si_code == SI_KERNEL || (si->si_code == SI_USER && si->si_pid == self))) {
		ulp_sig_post(cur->pvid, sig, si->si_code, si->si_pid, (int)si->si_uid, 0);
		/* Its own code was interrupted: run the action now, as the kernel would. Inside
		 * the runtime (a trap in progress, a waiting thread's probe), the trap's end does
		 * it. */
		if (pc >= cur->part_lo && pc < cur->part_hi && !ulp_spin_probing())
			ulp_sig_deliver(cur, uc);
		return;
	}
	/* Sent by a child process of one of the task's ULPs: the kernel's parent of that child is
	 * the task, so getppid() in a program it runs names the task, and `kill -USR1 $PPID` in a
	 * shell script a ULP's shell ran reached every ULP of the task (ended those with the
	 * default action): it is meant for the child's ULP alone. */
	if ((si->si_code == SI_USER || si->si_code == SI_QUEUE) && si->si_pid > 0 &&
	    (pvid = owner_of_child(si->si_pid)) >= 0) {
		ulp_sig_post(pvid, sig, si->si_code, si->si_pid, (int)si->si_uid, value);
		if (cur && cur->pvid == pvid && pc >= cur->part_lo && pc < cur->part_hi)
			ulp_sig_deliver(cur, uc);
		return;
	}
	broadcast(sig, si->si_code, si->si_pid, (int)si->si_uid, value);
	if (cur && pc >= cur->part_lo && pc < cur->part_hi)
		ulp_sig_deliver(cur, uc);
}

static void relay(int sig, siginfo_t *si, void *uc)
{
	struct ulp_cb *cur;
	uintptr_t pc;

	relay_post(sig, si, uc);
	/* Whatever it posted to the ULP whose own code it interrupted (a stop of its placeholder,
	 * a child's end): taken now, as the kernel would (before 28 Nov a stop of a busy ULP
	 * waited for the next tick or call: with --quantum 0 it ran on). Never over a trampoline
	 * or a waiting thread's probe. */
	cur = ulp_sys_in_child() ? NULL : ulp_current_cb();
	pc = ulp_arch_trap_pc(uc);
	if (cur && cur->magic == ULP_CB_MAGIC && pc >= cur->part_lo && pc < cur->part_hi &&
	    !ulp_fast_in_slots(cur, pc) && !ulp_spin_probing())
		ulp_sig_deliver(cur, uc);
	/* A ULP computing alone ticks seldom (preempt.c): what was posted to the one this signal
	 * interrupted is taken now, as its next tick would have (a timer's signal, a child's end;
	 * ulp_sig_notify kicked the other workers). */
	if (!ulp_sys_in_child())
		ulp_preempt_alone_here(ulp_worker_self(), uc);
}

static void call_handler(const struct ulp_ksigaction *a, int sig, const siginfo_t *si, void *uc)
{
	if (a->flags & KSA_SIGINFO)
		((void (*)(int, const siginfo_t *, void *))a->handler)(sig, si, uc);
	else
		((void (*)(int))a->handler)(sig);
}

/* In a fork child (a process of its own) a signal the child has not given an action to itself:
 * the ULP's action as it was at the fork. */
static void child_relay(struct ulp_cb *cb, int sig, siginfo_t *si, void *uc)
{
	const struct ulp_ksigaction *a = &cb->sig.act[sig];

	if (a->handler == SIG_IGN)
		return;
	if (a->handler == SIG_DFL) {
		if (!(ULP_SIG_IGNORED_BY_DEFAULT & ULP_SIG_BIT(sig)))
			ulp_sys_die(0, sig);
		return;
	}
	call_handler(a, sig, si, uc);
}

/* ---- running actions ---- */

struct onstack {
	const struct ulp_ksigaction *a;
	int sig;
	const siginfo_t *si;
	void *uc;
	ulp_ctx_t back;
};

static void onstack_entry(void *arg)
{
	struct onstack *o = arg;
	ulp_ctx_t gone;

	call_handler(o->a, o->sig, o->si, o->uc);
	ulp_arch_switch(&gone, &o->back); /* this context is dropped */
	__builtin_unreachable();
}

/* The mask of thread u of cb (NULL: cb without threads): the leader's is cb's. */
static unsigned long *mask_of(struct ulp_cb *cb, struct ulp_uthread *u)
{
	return u && u != &cb->tg->leader ? &u->sigmask : &cb->sig.mask;
}

unsigned long *ulp_sig_mask(struct ulp_cb *cb)
{
	return mask_of(cb, ulp_tg_current(cb));
}

static int run_pending(struct ulp_cb *cb, void *uc, int depth);

/* Call the handler as the kernel would: the mask widened for its duration, on the ULP's
 * alternate stack when asked for and not already on it. fault: we run on the worker's stack for
 * faults, which the handler must not keep (it may be preempted): without an alternate stack of
 * its own it runs on the ULP's stack, below what the fault interrupted. depth: how many handlers
 * wait below this one (run_pending). */
static void invoke(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc, int fault, int depth)
{
	struct ulp_ksigaction a = cb->sig.act[sig];
	unsigned long *m = ulp_sig_mask(cb), old = *m;
	uintptr_t here = (uintptr_t)&a;

	if (a.flags & KSA_RESETHAND) {
		cb->sig.act[sig].handler = SIG_DFL;
		cb->sig.act[sig].flags &= ~(unsigned long)KSA_SIGINFO;
		ulp_sig_action_changed(cb, sig);
	}
	*m = (old | a.mask | ((a.flags & KSA_NODEFER) ? 0 : ULP_SIG_BIT(sig))) &
	     ~ULP_SIG_UNBLOCKABLE;
	ulp_sig_set_blocked(cb, *m);
	/* The kernel sets up this handler's frame, then, under the widened mask, the frames of
	 * the other signals due, each above the last: the last one's handler runs first. So
	 * SIGRTMIN+1 and SIGRTMIN+2 both due run every SIGRTMIN+2 handler first. */
	if (!fault && depth < MAX_NEST)
		run_pending(cb, uc, depth + 1);
	/* Called from the tick's handler, which runs with the tick blocked: the handler is the
	 * ULP's code, preemptible, and may leave by siglongjmp (preempt.c). */
	ulp_preempt_release(ulp_worker_self());
	if ((a.flags & KSA_ONSTACK) && cb->sig.alt_size &&
	    !(here >= cb->sig.alt_sp && here < cb->sig.alt_sp + cb->sig.alt_size)) {
		struct onstack o = {&a, sig, si, uc, {0}};
		ulp_ctx_t ctx;

		ulp_arch_ctx_init(&ctx, (void *)cb->sig.alt_sp, cb->sig.alt_size, onstack_entry,
				  &o);
		ulp_arch_switch(&o.back, &ctx);
	} else if (fault) {
		/* Below the interrupted frame's red zone (128 bytes on x86_64 and aarch64). */
		uintptr_t top = (ulp_arch_trap_sp(uc) - 256) & ~(uintptr_t)63;
		struct onstack o = {&a, sig, si, uc, {0}};
		ulp_ctx_t ctx;

		ulp_arch_ctx_init(&ctx, (void *)(top - FAULT_STACK), FAULT_STACK, onstack_entry,
				  &o);
		ulp_arch_switch(&o.back, &ctx);
	} else {
		call_handler(&a, sig, si, uc);
	}
	/* The mask from before (what the handler changed is dropped, as at sigreturn). A
	 * handler that leaves by siglongjmp sets its own through sigprocmask. */
	m = ulp_sig_mask(cb);
	*m = old;
	ulp_sig_set_blocked(cb, old);
}

static void handle(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc, int depth)
{
	void *h = cb->sig.act[sig].handler;

	if (h == SIG_IGN)
		return;
	if (h == SIG_DFL) {
		if (ULP_SIG_BIT(sig) & STOP_SIGS) {
			struct sigrec *r = rec_of(cb->pvid);

			if (r)
				atomic_store(&r->stopped, 1);
			ulp_sig_stopped_wait(cb);
		} else if (!(ULP_SIG_IGNORED_BY_DEFAULT & ULP_SIG_BIT(sig))) {
			ulp_sys_end(cb, 0, sig); /* "killed by SIGx": this ULP only */
		}
		return;
	}
	invoke(cb, sig, si, uc, 0, depth);
}

void ulp_sig_handle(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc)
{
	handle(cb, sig, si, uc, 0);
}

int ulp_sig_fault(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc)
{
	void *h = cb->sig.act[sig].handler;

	if (h == SIG_DFL || h == SIG_IGN || ulp_sys_in_child() ||
	    (*ulp_sig_mask(cb) & ULP_SIG_BIT(sig)) || ulp_arch_trap_pc(uc) < cb->part_lo ||
	    ulp_arch_trap_pc(uc) >= cb->part_hi)
		return 0; /* blocked or ignored kills, as in the kernel; so does one of the runtime
			   */
	invoke(cb, sig, si, uc, 1, 0);
	return 1;
}

/* Take pending sig of the ULP (pvid, its entry r) with its siginfo: 0 when another thread took
 * it first, or when a queued one is still being written. */
static int take_rec(int pvid, struct sigrec *r, int sig, siginfo_t *si)
{
	unsigned long bit = ULP_SIG_BIT(sig);

	memset(si, 0, sizeof(*si));
	si->si_signo = sig;
	if (ULP_SIG_QUEUED(sig)) {
		struct ulp_sigq_info in;

		if (!ulp_sigq_take(pvid, 0, sig, &in, &r->pend))
			return 0;
		si->si_code = in.code;
		si->si_pid = in.pid;
		si->si_uid = (uid_t)in.uid;
		si->si_value.sival_ptr = (void *)in.value;
		return 1;
	}
	if (!(atomic_fetch_and(&r->pend, ~bit) & bit))
		return 0;
	si->si_code = r->info[sig - 1].code;
	si->si_pid = r->info[sig - 1].pid;
	si->si_uid = (uid_t)r->info[sig - 1].uid;
	si->si_value.sival_ptr = (void *)r->info[sig - 1].value;
	if (sig == SIGCHLD && si->si_code > 0) {
		si->si_utime = r->info[sig - 1].utime;
		si->si_stime = r->info[sig - 1].stime;
	}
	return 1;
}

/* Run the actions of the signals due for cb's running thread, as the kernel picks them: the
 * thread's own first, then the process's, the lowest number first, each under the mask as it is
 * then (an outer handler's widened one: invoke). How many handlers ran (at this depth). */
static int run_pending(struct ulp_cb *cb, void *uc, int depth)
{
	siginfo_t si;
	int sig, n = 0;

	while ((sig = ulp_sig_take(cb, ~*ulp_sig_mask(cb), &si)) > 0) {
		if (cb->sig.act[sig].handler != SIG_IGN && cb->sig.act[sig].handler != SIG_DFL)
			n++;
		handle(cb, sig, &si, uc, depth);
	}
	return n;
}

int ulp_sig_deliver(struct ulp_cb *cb, void *uc)
{
	struct sigrec *r = rec_of(cb->pvid);

	if (!r || !atomic_load_explicit(&r->pend, memory_order_relaxed) || ulp_sys_in_child())
		return 0;
	if (!uc) { /* no frame at hand (a restarted wait): the handler gets an empty one */
		ucontext_t none;

		memset(&none, 0, sizeof(none));
		return ulp_sig_deliver(cb, &none);
	}
	return run_pending(cb, uc, 0);
}

int ulp_sig_due_task(struct ulp_cb *cb, struct ulp_task *t)
{
	struct sigrec *r = rec_of(cb->pvid);
	struct ulp_uthread *u = ulp_tg_thread_of(cb, t);
	unsigned long pend = r ? atomic_load(&r->pend) : 0;

	if (u)
		pend |= atomic_load(&u->sigpending);
	return (pend & ~*mask_of(cb, u)) != 0;
}

int ulp_sig_due(struct ulp_cb *cb)
{
	return ulp_sig_due_task(cb, ulp_cur_task());
}

int ulp_sig_would_interrupt(int pvid)
{
	struct sigrec *r = rec_of(pvid);

	/* the waitset too: a signal posted between a wait's look (sigwaitinfo, a signalfd's
	 * read) and its park, which ulp_sig_notify saw no wait for, ends the park at once */
	return r && (atomic_load(&r->pend) & ((atomic_load(&r->wake) & ~atomic_load(&r->blocked)) |
					      atomic_load(&r->waitset)));
}

int ulp_sig_interrupts(int pvid, unsigned long set)
{
	struct sigrec *r = rec_of(pvid);
	unsigned long w = r ? set & atomic_load(&r->wake) : 0;

	if (!w)
		return 0;
	return (w & ~atomic_load(&r->restart)) ? 1 : 2;
}

/* Bits p of tag less the queued signals' whose entries another taker took (sigqueue.c: such a
 * bit may stay set until the next look). */
static unsigned long queued_now(int pvid, int tag, unsigned long p)
{
	unsigned long q = p & ULP_SIG_QUEUED_BITS;
	int sig;

	for (; q; q &= q - 1) {
		sig = __builtin_ctzl(q) + 1;
		if (!ulp_sigq_has(pvid, tag, sig))
			p &= ~ULP_SIG_BIT(sig);
	}
	return p;
}

unsigned long ulp_sig_pending(struct ulp_cb *cb)
{
	struct sigrec *r = rec_of(cb->pvid);
	struct ulp_uthread *u = ulp_tg_current(cb);

	return queued_now(cb->pvid, 0, r ? atomic_load(&r->pend) : 0) |
	       (u ? queued_now(cb->pvid, ulp_tg_sigtag(cb, u), atomic_load(&u->sigpending)) : 0);
}

int ulp_sig_take(struct ulp_cb *cb, unsigned long want, siginfo_t *si)
{
	struct sigrec *r = rec_of(cb->pvid);
	struct ulp_uthread *u = ulp_tg_current(cb);
	unsigned long p, skip = 0;
	int sig;

	memset(si, 0, sizeof(*si));
	if (u && (sig = ulp_tg_take(cb, u, want, si)) > 0)
		return sig;
	while (r && (p = atomic_load(&r->pend) & want & ~skip) != 0) {
		sig = __builtin_ctzl(p) + 1;
		if (take_rec(cb->pvid, r, sig, si))
			return sig;
		skip |= ULP_SIG_BIT(sig);
	}
	memset(si, 0, sizeof(*si));
	return 0;
}

void ulp_sig_set_blocked(struct ulp_cb *cb, unsigned long mask)
{
	struct sigrec *r = rec_of(cb->pvid);

	if (r)
		atomic_store(&r->blocked, mask & ~ULP_RT_SIGMASK);
}

void ulp_sig_set_waitset(struct ulp_cb *cb, unsigned long set)
{
	struct sigrec *r = rec_of(cb->pvid);

	if (r)
		atomic_store(&r->waitset, set);
}

void ulp_sig_action_changed(struct ulp_cb *cb, int sig)
{
	struct sigrec *r = rec_of(cb->pvid);
	const struct ulp_ksigaction *a = &cb->sig.act[sig];
	unsigned long bit = ULP_SIG_BIT(sig);
	int wakes;

	if (!r)
		return;
	if (a->handler == SIG_IGN ||
	    (a->handler == SIG_DFL && (ULP_SIG_IGNORED_BY_DEFAULT & bit))) {
		atomic_fetch_and(&r->pend, ~bit); /* discarded, as POSIX says */
		if (ULP_SIG_QUEUED(sig))
			ulp_sigq_flush(cb->pvid, -1, sig); /* the threads' too */
		wakes = 0;
	} else {
		wakes = 1;
	}
	if (wakes)
		atomic_fetch_or(&r->wake, bit);
	else
		atomic_fetch_and(&r->wake, ~bit);
	if (a->handler != SIG_DFL && (a->flags & KSA_RESTART))
		atomic_fetch_or(&r->restart, bit);
	else
		atomic_fetch_and(&r->restart, ~bit);
	if (sig == SIGCHLD)
		ulp_ident_chld_action(cb);
}

/* ---- the kernel's side ---- */

/* The relay as sig's kernel action, with flags (SIGCHLD's SA_NOCLDSTOP, SA_NOCLDWAIT) too. */
static void relay_set(int sig, unsigned long flags)
{
	struct ulp_ksigaction n;

	memset(&n, 0, sizeof(n));
	n.handler = (void *)relay;
	/* SA_RESTART: the runtime's own waits go on; the ULP's parked calls are ended by the
	 * post. No SA_ONSTACK: on the stack of what was interrupted, like the trap. */
	n.flags = KSA_SIGINFO | KSA_RESTART | KSA_RESTORER | flags;
	n.restorer = (void *)relay_restorer;
	sys(SYS_rt_sigaction, sig, (long)&n, 0, ULP_KSIGSET_SIZE, 0, 0);
}

void ulp_sig_relay_on(int sig)
{
	struct ulp_ksigaction k;

	if (!catchable(sig) || !relay_restorer)
		return;
	if (sys(SYS_rt_sigaction, sig, 0, (long)&k, ULP_KSIGSET_SIZE, 0, 0) == 0 &&
	    k.handler == (void *)relay)
		return;
	relay_set(sig, 0);
}

void ulp_sig_task_init(void)
{
	int sig;

	/* Stop signals stop the whole task (the kernel's default; docs/usage.md). */
	for (sig = 1; sig <= ULP_NSIG; sig++)
		if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
			ulp_sig_relay_on(sig);
}

int ulp_sig_setup(struct pvas_region *r)
{
	struct ulp_ksigaction k;
	size_t len = (size_t)r->nparts * sizeof(struct sigrec);

	if (recs)
		return 0;
	/* The restorer the kernel needs for a handler: libc's, as it gave it for SIGSYS. */
	if (sys(SYS_rt_sigaction, SIGSYS, 0, (long)&k, ULP_KSIGSET_SIZE, 0, 0) != 0 ||
	    !(k.flags & KSA_RESTORER))
		return -EINVAL;
	relay_restorer = (unsigned long)k.restorer;
	timers = ulp_raw_mmap(MAX_TIMER_RECS * sizeof(*timers), MAP_NORESERVE);
	recs = ulp_raw_mmap(len, MAP_NORESERVE);
	if (!recs || !timers || ulp_sigq_setup(r->nparts) < 0)
		return -ENOMEM;
	region = r;
	return 0;
}

/*
 * A stopped ULP: the calling thread of it waits here, parked (its worker runs other ULPs),
 * until SIGCONT reaches the ULP (ulp_sig_record), or SIGKILL, or its end. Before 27 Nov a stop
 * signal's default action was ignored, and `kill -STOP` of a ULP's pid stopped only its
 * placeholder process: the ULP ran on.
 */
void ulp_sig_stopped_wait(struct ulp_cb *cb)
{
	struct sigrec *r = rec_of(cb->pvid);
	struct timespec ts = {0, 20 * 1000 * 1000};

	if (!r || ulp_sys_in_child())
		return;
	while (atomic_load(&r->stopped) && !(atomic_load(&r->pend) & ULP_SIG_BIT(SIGKILL)) &&
	       !(cb->tg && cb->tg->dying))
		if (ulp_io_wait_fds(cb, NULL, 0, 0, 20, 0) == -ENOSYS)
			sys(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

/* The bound of a new ULP's queued signals: its RLIMIT_SIGPENDING, which its placeholder (made
 * next, ident.c) inherits from the task. */
static unsigned queue_limit(void)
{
	struct {
		uint64_t cur, max;
	} l;

	if (sys(SYS_prlimit64, 0, RLIMIT_SIGPENDING, 0, (long)&l, 0, 0) != 0)
		return ULP_SIGQ_MAX;
	return l.cur < ULP_SIGQ_MAX ? (unsigned)l.cur : ULP_SIGQ_MAX;
}

void ulp_sig_start(struct ulp_cb *cb)
{
	struct sigrec *r = rec_of(cb->pvid);
	unsigned long m;
	int sig;

	if (!r)
		return;
	atomic_fetch_add(&r->gen, 1);
	atomic_store(&r->stopped, 0);
	atomic_store(&r->pend, 0);
	ulp_sigq_reset(cb->pvid, queue_limit());
	atomic_store(&r->blocked, 0);
	atomic_store(&r->waitset, 0);
	atomic_store(&r->tgid, (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0));
	for (sig = 1; sig <= ULP_NSIG; sig++)
		ulp_sig_action_changed(cb, sig);
	/* A process starts with no signal blocked; the worker's own (runtime) bits stay. */
	if (sys(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&m, ULP_KSIGSET_SIZE, 0, 0) == 0 &&
	    (m & ~ULP_RT_SIGMASK)) {
		m &= ULP_RT_SIGMASK;
		sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, ULP_KSIGSET_SIZE, 0, 0);
	}
}

/* In a child process of cb: its ignored and default actions become the kernel's, which the
 * child's execve keeps (ignored) as a process's, SIGCHLD's with the ULP's SA_NOCLDSTOP and
 * SA_NOCLDWAIT (its children are the kernel's here). The child's copy of the task's actions
 * has the relay for every catchable signal but the stop signals (ulp_sig_task_init), which the
 * launcher's may ignore, and SIGCHLD's as its placeholder mirrors the ULP's (ident.c). cleared:
 * the clone made those handlers SIG_DFL (CLONE_CLEAR_SIGHAND; the runtime's own were put back
 * first: sys_fork.c): the relay is set for the ULP's handlers, and a default action only where
 * the copy may ignore the signal (about 40 system calls fewer in a fork child of a shell). */
static void kernel_actions(struct ulp_cb *cb, int cleared)
{
	struct ulp_ksigaction n;
	int sig;

	for (sig = 1; sig <= ULP_NSIG; sig++) {
		void *h = cb->sig.act[sig].handler;
		unsigned long chld =
		    sig == SIGCHLD ? cb->sig.act[sig].flags & (SA_NOCLDSTOP | SA_NOCLDWAIT) : 0;

		if (!catchable(sig))
			continue;
		if (h != SIG_IGN && h != SIG_DFL) {
			if (cleared) /* the relay calls them (child_relay) */
				relay_set(sig, chld);
			continue;
		}
		if (cleared && h == SIG_DFL && !(STOP_SIGS & ULP_SIG_BIT(sig)) && sig != SIGCHLD)
			continue;
		memset(&n, 0, sizeof(n));
		n.handler = h;
		n.flags = chld;
		sys(SYS_rt_sigaction, sig, (long)&n, 0, ULP_KSIGSET_SIZE, 0, 0);
	}
}

void ulp_sig_fork_child(struct ulp_cb *cb, void *uc, int cleared)
{
	unsigned long *m = ulp_arch_trap_sigmask(uc);

	/* A process's mask is the kernel's: the thread's, from the trap's sigreturn on. */
	*m = (*m & ULP_RT_SIGMASK) | *ulp_sig_mask(cb);
	kernel_actions(cb, cleared);
}

void ulp_sig_exec_child(struct ulp_cb *cb)
{
	unsigned long m = *ulp_sig_mask(cb);

	kernel_actions(cb, 0);
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, ULP_KSIGSET_SIZE, 0, 0);
}

/* ---- timers ---- */

static int timer_slot(struct ulp_cb *cb, long value)
{
	struct sigrec *r = rec_of(cb->pvid);
	int i;

	if (!r)
		return -EAGAIN;
	/* Claim the slot first, then fill it: two ULPs that filled the same free slot before
	 * racing for it left the loser's value in the winner's timer (another rank's sigev_value
	 * in integ-signals, about 1 run in 6). No signal names the slot before timer_create. */
	for (i = 0; i < MAX_TIMER_RECS; i++) {
		int zero = 0;

		if (atomic_load_explicit(&timers[i].pvid1, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&timers[i].pvid1, &zero, cb->pvid + 1))
			continue;
		timers[i].gen = atomic_load(&r->gen);
		timers[i].value = value;
		timers[i].kid = -1;
		return i;
	}
	return -EAGAIN;
}

static long make_timer(struct ulp_cb *cb, int clk, int signo, long value, int *kid, int *slot)
{
	struct sigevent sev;
	int s = timer_slot(cb, value), id = -1;
	long rc;

	if (s < 0)
		return s;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = signo;
	sev.sigev_value.sival_ptr = (void *)((TIMER_MAGIC << 32) | s);
	rc = sys(SYS_timer_create, clk, (long)&sev, (long)&id, 0, 0, 0);
	if (rc) {
		atomic_store(&timers[s].pvid1, 0);
		return rc;
	}
	ulp_sig_relay_on(signo);
	timers[s].kid = id;
	*kid = id;
	*slot = s;
	return 0;
}

long ulp_sig_timer_create(struct ulp_cb *cb, int clk, int signo, long value, int *kid)
{
	struct ulp_sigstate *st = &cb->sig;
	int slot;
	long rc;

	if (!catchable(signo))
		return -EINVAL;
	if (st->ntimers >= ULP_MAX_TIMERS)
		return -EAGAIN;
	rc = make_timer(cb, clk, signo, value, kid, &slot);
	if (rc)
		return rc;
	st->timers[st->ntimers].kid = *kid;
	st->timers[st->ntimers].slot = slot;
	st->ntimers++;
	return 0;
}

long ulp_sig_timer_delete(struct ulp_cb *cb, int kid)
{
	struct ulp_sigstate *st = &cb->sig;
	int i;

	for (i = 0; i < st->ntimers; i++) {
		if (st->timers[i].kid != kid)
			continue;
		sys(SYS_timer_delete, kid, 0, 0, 0, 0, 0);
		atomic_store(&timers[st->timers[i].slot].pvid1, 0);
		st->timers[i] = st->timers[--st->ntimers];
		return 0;
	}
	return -EINVAL; /* not one of this ULP's */
}

long ulp_sig_alarm_timer(struct ulp_cb *cb)
{
	struct ulp_sigstate *st = &cb->sig;
	int kid, slot;
	long rc;

	if (st->alarm_timer)
		return st->alarm_timer - 1;
	rc = make_timer(cb, CLOCK_MONOTONIC, SIGALRM, 0, &kid, &slot);
	if (rc)
		return rc;
	st->alarm_timer = kid + 1;
	st->alarm_slot = slot;
	return kid;
}

void ulp_sig_exit(struct ulp_cb *cb)
{
	struct ulp_sigstate *st = &cb->sig;

	while (st->ntimers)
		ulp_sig_timer_delete(cb, st->timers[0].kid);
	if (st->alarm_timer) {
		sys(SYS_timer_delete, st->alarm_timer - 1, 0, 0, 0, 0, 0);
		atomic_store(&timers[st->alarm_slot].pvid1, 0);
		st->alarm_timer = 0;
	}
}

void ulp_sig_exec(struct ulp_cb *cb)
{
	struct ulp_sigstate *st = &cb->sig;
	int sig;

	while (st->ntimers)
		ulp_sig_timer_delete(cb, st->timers[0].kid);
	for (sig = 1; sig <= ULP_NSIG; sig++) {
		int ign = st->act[sig].handler == SIG_IGN;

		memset(&st->act[sig], 0, sizeof(st->act[sig]));
		if (ign)
			st->act[sig].handler = SIG_IGN;
		ulp_sig_action_changed(cb, sig);
	}
	st->alt_sp = 0;
	st->alt_size = 0;
}

void ulp_sig_timer_value(struct ulp_cb *cb, int kid, long value)
{
	int i;

	for (i = 0; i < cb->sig.ntimers; i++)
		if (cb->sig.timers[i].kid == kid)
			timers[cb->sig.timers[i].slot].value = value;
}

int ulp_sig_is_relay(void *handler)
{
	return handler == (void *)relay;
}
