/* SPDX-License-Identifier: MIT */
/*
 * Wait loops that yield (docs/syscalls.md, "Spin loops that yield"). A ULP thread that the tick
 * found spinning (preempt.c: preempted SPIN_PREEMPTS times in a row without entering the runtime)
 * busy-polls memory with no call at all, as Debian's MPICH does in MPI_Init's barrier and while it
 * waits for a message: it keeps its worker until the next tick, however many ranks wait behind it.
 * At such a tick the loop around its pc is rewritten, once, when decoding proves it a pure wait
 * (libulp/arch/x86_64/spinloop.c) so that each iteration switches to the next ready task of its
 * worker, through a trampoline slot of the fast path.
 *
 * The rewrite happens only while no other thread of the ULP runs on another worker of its task
 * (one that resumes later starts in the runtime, where it stopped); the tick's own thread is in
 * the handler. What is refused is remembered with the fast path's refused sites and not decoded
 * again: the loop, or the whole function when no short loop is around pc (a progress engine that
 * calls functions, whose pcs vary from tick to tick). ULP_SPINYIELD=0 turns this off, and so does
 * ULP_FASTCALL=0; ULP_SPINYIELD_STATS=1 prints how many loops were rewritten when the launcher
 * exits.
 */
#include "proc.h"
#include "sys.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"
#include "io.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1: loops are rewritten. Set once, before any ULP runs. */
static int spin_on;
/* 1: waiting threads' loops get probes (ULP_SPINPROBE, not 0). Set once, with spin_on. */
static int spin_probe_on;
/* ULP_SPINYIELD_STATS=1: the counts below are kept and printed at the launcher's exit. */
static int spin_stats;
/* Loops rewritten, all ULPs of all tasks (they share this address space); those with a probe;
 * probes that found the loop still waiting (no switch) or ending. */
static _Atomic unsigned long spin_rewritten, spin_with_probe, spin_probed_waiting,
    spin_probed_ready;

/* glibc's SIGCANCEL (its first real-time signal, which it keeps from programs). */
#define SIGCANCEL 32

/*
 * The probe of a waiting thread t (ulp_task_yield_wait, on another task's stack): 1 when t must
 * run, because its loop would end (ulp_arch_spin_probe) or because it has to take a signal or end
 * with its ULP, 0 when it would only find its memory unchanged. While the probe runs, this thread's
 * ticks and faults know it for runtime code (worker->probing).
 */
static int spin_ready(struct ulp_task *t)
{
	struct ulp_cb *cb = t->owner;
	struct ulp_worker *w = ulp_worker_self();
	int r;

	if (!cb || (cb->tg && cb->tg->dying) || ulp_sig_due_task(cb, t))
		return 1;
	__atomic_store_n(&w->probing, t->probe_code, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r = ulp_arch_spin_probe(t->probe_code, t->probe_regs);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&w->probing, 0, __ATOMIC_RELAXED);
	if (spin_stats)
		atomic_fetch_add(r ? &spin_probed_ready : &spin_probed_waiting, 1);
	return r;
}

/*
 * From a rewritten loop, each iteration: the thread's turn goes to the next ready task of its
 * worker (passing over threads whose probe says they would only find their memory unchanged:
 * ulp_task_yield_wait), then the thread ends if its ULP is dying. With nothing else ready here the
 * loop goes on spinning, as the program wrote it: unlike a sched_yield the program asked for
 * (ulp_io_yield), no system call and no nap, so a wait for a ULP on another worker ends as soon as
 * the memory changes. Signals are delivered here, on the context built by the entry, as the fast
 * path does, but glibc's cancellation signal of a ULP with several threads: the next tick that
 * finds the thread in its own code delivers that one from the kernel's signal frame, through which
 * an asynchronous pthread_cancel can unwind (there is no unwind information for the trampoline).
 * Until 27 Nov every signal of such a ULP waited so, and two threads of one ULP spinning on one
 * worker, which hand it to each other at every iteration, seldom were in their own code at a tick:
 * their SIGALRM came 1 to 50 s late.
 */
static void spin_hook(void *uc, uintptr_t probe, void *regs)
{
	struct ulp_cb *cb = ulp_current_cb();
	struct ulp_worker *w;
	struct ulp_task *self;

	if (!cb || cb->magic != ULP_CB_MAGIC || ulp_sys_in_child())
		return; /* a fork child of the ULP: a process of its own, alone in it */
	w = ulp_worker_self();
	self = w->cur;
	ulp_io_poll(w); /* completions make parked ULPs ready */
	if (ulp_worker_has_ready(w)) {
		if (probe && spin_probe_on) {
			self->probe_code = probe;
			self->probe_regs = regs;
			self->probe = spin_ready;
			ulp_task_yield_wait(self);
			self->probe = NULL;
		} else {
			ulp_task_yield(self);
		}
	}
	if (!cb->tg || cb->tg->nlive <= 1 || !(ulp_sig_pending(cb) & ULP_SIG_BIT(SIGCANCEL))) {
		ulp_tg_kick(cb, uc);
		ulp_sig_deliver(cb, uc);
	} else if (cb->tg->dying) {
		ulp_tg_kick(cb, uc); /* ends the thread, before any signal */
	}
}

int ulp_spin_probe_fault(void *uc)
{
	struct ulp_worker *w = ulp_worker_self();
	uintptr_t probe = w ? __atomic_load_n(&w->probing, __ATOMIC_RELAXED) : 0;

	return probe && ulp_arch_spin_probe_fault(probe, uc);
}

int ulp_spin_probing(void)
{
	struct ulp_worker *w = ulp_worker_self();

	return w && __atomic_load_n(&w->probing, __ATOMIC_RELAXED) != 0;
}

static void print_stats(void)
{
	fprintf(stderr,
		"libulp: %lu spin loops rewritten (%lu with a probe), %lu waits passed over, "
		"%lu probes found the loop ending\n",
		atomic_load(&spin_rewritten), atomic_load(&spin_with_probe),
		atomic_load(&spin_probed_waiting), atomic_load(&spin_probed_ready));
}

void ulp_spin_init(void)
{
	const char *e = getenv("ULP_SPINYIELD"), *st = getenv("ULP_SPINYIELD_STATS");
	const char *pr = getenv("ULP_SPINPROBE");
	static int stats_armed;

	spin_on = !(e && !strcmp(e, "0")) && ulp_fast_on() && ulp_arch_spin_init(spin_hook) == 0;
	spin_probe_on = spin_on && !(pr && !strcmp(pr, "0"));
	if (st && !strcmp(st, "1") && !stats_armed) {
		stats_armed = 1;
		spin_stats = 1;
		atexit(print_stats);
	}
}

/* The ULP has one thread: the one the tick interrupted. A probe only when asked for (a spare
 * slot left unused stays free). */
static int patch_alone(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
		       uintptr_t *refuse)
{
	return ulp_arch_spin_patch(pc, lo, hi, slot, spin_probe_on ? spare : 0, 1, refuse);
}

static int patch_shared(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
			uintptr_t *refuse)
{
	return ulp_arch_spin_patch(pc, lo, hi, slot, spin_probe_on ? spare : 0, 0, refuse);
}

void ulp_spin_tick(struct ulp_cb *cb, void *uc)
{
	uintptr_t pc = ulp_arch_trap_pc(uc);
	int alone, rc;

	if (!spin_on || ulp_sys_in_child())
		return;
	/* the ULP's own text: not a trampoline, nor the control block */
	if (pc < cb->part_lo + ULP_CB_SIZE || pc >= cb->part_hi)
		return;
	if (ulp_sched_owner_runs_elsewhere(ulp_worker_self(), cb))
		return; /* a later tick tries again */
	alone = !cb->tg || cb->tg->nlive <= 1;
	rc = ulp_fast_rewrite(cb, pc, alone ? patch_alone : patch_shared);
	if (rc >= 0)
		atomic_fetch_add(&spin_rewritten, 1);
	if (rc == 1)
		atomic_fetch_add(&spin_with_probe, 1);
}
