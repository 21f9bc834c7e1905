/* SPDX-License-Identifier: MIT */
/*
 * ULP threads: what clone(CLONE_THREAD) makes inside a ULP, and the futex emulation they wait in.
 *
 * A ULP thread is a scheduler task of its ULP (owner = the ULP's control block) with its own stack
 * (the program's) and TLS (clone's tls argument). The ULP's first thread is the control block's
 * own task (the "leader"); the others are tasks embedded in struct ulp_uthread. Threads of one ULP
 * run M:N on the workers of the ULP's PVAS task, in parallel where there are several.
 *
 * A thread waiting on a futex is parked in a user-space wait queue (futex.c) and its worker runs
 * something else. Timeouts are served by one timer kernel thread per scheduler instance.
 *
 * Everything here may run while a ULP's TLS is loaded: raw system calls, no errno, no libc state.
 */
#ifndef ULP_KERNEL_UTHREAD_H
#define ULP_KERNEL_UTHREAD_H

#include "proc.h"

#include <signal.h>

struct ulp_tg;
struct ulp_futex_bucket;

struct ulp_uthread {
	struct ulp_task task; /* the scheduler task of a non-leader thread */
	struct ulp_task *t;   /* its task: &task, or &cb->task for the leader */
	struct ulp_cb *cb;
	struct ulp_tg *tg;
	int tid;
	int ended; /* left the ULP (exit, or killed), on the way out */
	uint32_t *clear_tid;
	uintptr_t robust_head;
	size_t robust_len;
	_Atomic unsigned long sigpending; /* bit sig-1: sent to this thread, not delivered yet */
	unsigned long wait_mask;	  /* its signal mask while parked in a futex wait */
	unsigned long sigmask;		  /* its signal mask (the leader's: cb->sig.mask) */
	/* CPU time of this thread, user and system, in ns (preempt.c charges it with the ULP's;
	 * the leader's starts at the ULP's when the group is made) */
	_Atomic uint64_t cpu_ns[2];
	struct ulp_uthread *gnext; /* the group's thread list / free list */
	/* futex wait: guarded by the bucket lock */
	struct ulp_futex_bucket *fbucket;
	struct ulp_uthread *fnext;
	uintptr_t fkey;
	uint32_t fbits;
	uint32_t fval;
	int fqueued;
	int fresult;
	int fshared;
	/* timeout: guarded by the timer service's lock */
	struct ulp_uthread *tnext;
	uint64_t deadline;	/* when the timer thread looks at it next (monotonic ns) */
	uint64_t user_deadline; /* the caller's own (0: none) */
	int tqueued;
	_Atomic int tref; /* the timer thread is looking at it: do not return yet */
	void *tsvc;
	/* first start (clone) */
	unsigned long start_mask;
	struct ulp_arch_regs regs;
	/* a fast call's result, returned through the trap (fastcall.c); fast_pc 0: none */
	long fast_ret;
	uintptr_t fast_pc;
};

/* Per ULP: its threads and how the ULP ends. Created with the first thread-identity call. */
struct ulp_tg {
	uint32_t lock;
	int nlive; /* threads not ended, the leader included */
	int dying; /* exit_group or a fatal signal: every thread ends, then the ULP */
	int leader_waiting;
	uint32_t next_tid;
	struct ulp_uthread *threads; /* non-leader threads alive */
	struct ulp_uthread *free;    /* descriptors of ended threads, for reuse */
	void *reaper;		     /* stack the leader waits on for its last threads */
	ulp_ctx_t reaper_ctx;
	uint64_t created;
	struct ulp_uthread leader;
};

#define ULP_TG_REAPER_STACK (32 * 1024)

/* tgkill/tkill/rt_tgsigqueueinfo aimed at a thread of this ULP: 1 and *ret; 0 when it is not
 * one of them (the caller goes on as for another process). A standard signal's siginfo is
 * SI_TKILL's whatever rt_tgsigqueueinfo gave (a thread keeps only its bit). */
int ulp_tg_kill(struct ulp_cb *cb, long nr, const long *a, long *ret);
/* The tag of thread u's queued signals (sigqueue.c): its place in the ULP's tids, the leader's
 * 0xffff. */
int ulp_tg_sigtag(const struct ulp_cb *cb, const struct ulp_uthread *u);
/* Take one signal of `want` sent to thread u (the lowest number; a queued one's oldest): its
 * number and siginfo, or 0. */
int ulp_tg_take(struct ulp_cb *cb, struct ulp_uthread *u, unsigned long want, siginfo_t *si);

/* End the whole ULP: every thread, then the ULP with this status or signal (exit_group, fatal
 * signals, faults). Called on the ending thread; never returns. */
void ulp_tg_die(struct ulp_cb *cb, int status, int sig) __attribute__((noreturn));

/* Last step of every trap: end the thread when its ULP is dying, deliver signals sent to it. */
void ulp_tg_trap_return(struct ulp_cb *cb, void *uc);
/* Deliver the signals sent to the running thread that its mask lets through; uc: the frame it
 * resumes from (NULL: none at hand, a wait that goes on after the handlers: SA_RESTART). */
void ulp_tg_deliver(struct ulp_cb *cb, void *uc);
/* A kick (ULP_SIG_KICK) from another thread of the ULP (ulp_tg_die, ulp_tg_kill) to the worker
 * running this thread: end it or deliver its signals where its own code was interrupted. */
void ulp_tg_kick(struct ulp_cb *cb, void *uc);

/* The task running now on this worker (a ULP thread, the leader, or a runtime task). */
static inline struct ulp_task *ulp_cur_task(void)
{
	return ulp_worker_self()->cur;
}

/* The ULP thread running now, NULL when the ULP has no thread group yet. */
struct ulp_uthread *ulp_tg_current(struct ulp_cb *cb);
/* The thread of cb that scheduler task t runs (NULL: cb has no thread group). */
struct ulp_uthread *ulp_tg_thread_of(struct ulp_cb *cb, struct ulp_task *t);
/* CPU time (user, system ns) of cb's thread tid: 0, or -ESRCH when cb has no such thread. */
int ulp_tg_thread_cpu(struct ulp_cb *cb, long tid, uint64_t ns[2]);

/* The exit path of a non-leader thread, from ulp_proc_exited on the next task's stack: its
 * clear-tid word, then the group's count (the leader may end the ULP from then on). */
void ulp_tg_thread_exited(struct ulp_task *t);

/* Free a ULP's thread group once the ULP ended (ulp_proc_release). */
void ulp_tg_release(struct ulp_cb *cb);

/* Futex table (futex.c). */
long ulp_futex(struct ulp_uthread *self, const long *a, unsigned long mask);
/* Wake up to n waiters on addr (user-space queue; also the kernel's when shared). */
int ulp_futex_wake_addr(uintptr_t addr, int n, int shared);
/* Take a parked thread out of its wait with `result` (signals, exit_group). */
void ulp_futex_interrupt(struct ulp_uthread *u, int result);
/* Take it out without resuming it (its task is gone). */
void ulp_futex_interrupt_quiet(struct ulp_uthread *u);

#endif
