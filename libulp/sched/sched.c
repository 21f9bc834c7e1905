/* SPDX-License-Identifier: MIT */
/*
 * Work-stealing scheduler: per-worker deques, work-first creation, LIFO local scheduling, yield
 * behind the ready work, random-victim stealing, futex sleep for idle workers.
 *
 * See ulp_sched.h for the rule that none of this touches the host's TLS.
 */
#include "ulp_sched.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>

#include "sys.h"

#ifdef ULP_SANITIZE
#include <sanitizer/common_interface_defs.h>
#endif

uint64_t ulp_now_ns(void)
{
	struct timespec ts;

	/* A raw system call, not libc's vDSO wrapper: Debian's libc reads the stack-protector
	 * canary through fs, and PVAS task workers run with fs = 0. Accounting is opt-in. */
	ulp_arch_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Remove t from w's inbox if it is there (pointer comparisons only). */
static int inbox_remove(struct ulp_worker *w, struct ulp_task *t)
{
	struct ulp_task **p;
	int found = 0;

	if (!__atomic_load_n(&w->inbox, __ATOMIC_RELAXED))
		return 0;
	ulp_spin_lock(&w->inbox_lock);
	for (p = &w->inbox; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			found = 1;
			break;
		}
	}
	ulp_spin_unlock(&w->inbox_lock);
	return found;
}

/* Owner only: take t out of w's yield queue. */
static int yq_remove(struct ulp_worker *w, struct ulp_task *t)
{
	struct ulp_task **p, *prev = NULL;

	for (p = &w->yq_head; *p; prev = *p, p = &(*p)->next) {
		if (*p != t)
			continue;
		*p = t->next;
		if (w->yq_tail == t)
			w->yq_tail = prev;
		return 1;
	}
	return 0;
}

int ulp_task_unqueue(struct ulp_runtime *rt, struct ulp_task *t)
{
	struct ulp_worker *self = ulp_worker_self();
	unsigned i;
	int found;

	/* Ready tasks wait in an inbox (resumed from elsewhere, started by the manager), in a
	 * deque, or in their worker's yield queue; t is dereferenced only once found. */
	for (i = 0; i < rt->nworkers; i++)
		if (inbox_remove(rt->workers[i], t))
			return 1;
	if (self && self->rt == rt && (yq_remove(self, t) || ulp_deque_remove(&self->dq, t)))
		return 1;
	/* Another worker's deque: only announced in the gate (its owner then claims slots by
	 * exchange), which costs a membarrier, so only where t was just seen. Another worker's
	 * yield queue is its own: t is found once it moves to that deque or runs. */
	for (i = 0; i < rt->nworkers; i++) {
		struct ulp_worker *v = rt->workers[i];

		if (v == self || !ulp_deque_may_hold(&v->dq, t))
			continue;
		ulp_gate_enter(&rt->gate);
		found = ulp_deque_remove(&v->dq, t);
		ulp_gate_leave(&rt->gate);
		if (found)
			return 1;
	}
	return 0;
}

/* ---- waking idle workers ---- */

/*
 * Called after making a task runnable. A worker that may sleep has entered the steal gate first
 * (membarrier included, deque.h), then counts itself in sleepers, fences and looks for work once
 * more before it sleeps. So: seeing nobody in the gate, the task we just queued was visible to any
 * such worker before it looked, and nothing needs waking (no fence: one worker, or all busy).
 * Otherwise the classic pairing: our fence against the sleeper's, one of us sees the other.
 */
static __attribute__((noinline, cold)) void wake_sleepers(struct ulp_runtime *rt, int all)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&rt->sleepers, memory_order_relaxed) > 0) {
		atomic_fetch_add(&rt->idle_seq, 1);
		ulp_raw_futex_wake((uint32_t *)&rt->idle_seq, all ? 0x7fffffff : 1);
		if (rt->hooks.wake)
			rt->hooks.wake(rt, all ? -1 : 1, rt->hooks.arg);
	}
}

static inline void wake_idle(struct ulp_runtime *rt, int all)
{
	atomic_signal_fence(memory_order_seq_cst); /* the queueing store before the gate load */
	if (__builtin_expect(ulp_gate_active(&rt->gate) != 0, 0))
		wake_sleepers(rt, all);
}

static void inbox_push(struct ulp_worker *w, struct ulp_task *t)
{
	ulp_spin_lock(&w->inbox_lock);
	t->next = w->inbox;
	w->inbox = t;
	ulp_spin_unlock(&w->inbox_lock);
}

static struct ulp_task *inbox_pop(struct ulp_worker *w)
{
	struct ulp_task *t;

	if (!__atomic_load_n(&w->inbox, __ATOMIC_RELAXED))
		return NULL;
	ulp_spin_lock(&w->inbox_lock);
	t = w->inbox;
	if (t)
		w->inbox = t->next;
	ulp_spin_unlock(&w->inbox_lock);
	return t;
}

void ulp_task_resume_pair(struct ulp_task *first, struct ulp_task *then)
{
	struct ulp_worker *w = first->worker;

	if (!w || w != then->worker || first->pinned || then->pinned) {
		ulp_task_resume(then);
		ulp_task_resume(first);
		return;
	}
	first->state = then->state = ULP_READY;
	ulp_spin_lock(&w->inbox_lock);
	then->next = w->inbox;
	first->next = then;
	w->inbox = first;
	ulp_spin_unlock(&w->inbox_lock);
	wake_idle(w->rt, 1);
}

void ulp_task_resume(struct ulp_task *t)
{
	struct ulp_worker *w = ulp_worker_self(), *to;

	t->state = ULP_READY;
	if (t->pinned) {
		inbox_push(t->home, t);
		if (t->home != w)
			wake_idle(t->home->rt, 1); /* only the home worker can take it: wake all */
		return;
	}
	if (w && (!t->worker || t->worker->rt == w->rt)) {
		ulp_deque_push(&w->dq, t);
		wake_idle(w->rt, 0);
		return;
	}
	/* From outside the runtime, or into another scheduler instance (another PVAS task): the
	 * worker that ran t last takes it. */
	to = t->worker ? t->worker : ulp_rt.workers[0];
	inbox_push(to, t);
	wake_idle(to->rt, 1);
}

/* ---- switching ---- */

#ifdef ULP_SANITIZE
/* ASan's fiber calls use libc's TLS: a PVAS task's workers have none (fs = 0, or a ULP's), so
 * there the switches are not announced and ASan sees one stack per kernel thread. */
static void san_leave(struct ulp_worker *w, struct ulp_task *from, struct ulp_task *to)
{
	if (w->rt->no_libc)
		return;
	w->san_from = from;
	__sanitizer_start_switch_fiber(NULL, to->san_lo, to->san_size);
}

/* We are running (again) as self: tell ASan, and learn the bounds of the stack we came from. */
static void san_arrive(struct ulp_task *self)
{
	struct ulp_task *prev = self->worker->san_from;

	if (self->worker->rt->no_libc)
		return;
	if (prev && !prev->san_lo)
		__sanitizer_finish_switch_fiber(NULL, &prev->san_lo, &prev->san_size);
	else
		__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
}
#else
static inline void san_leave(struct ulp_worker *w, struct ulp_task *from, struct ulp_task *to)
{
}

static inline void san_arrive(struct ulp_task *self)
{
}
#endif

#ifdef ULP_SANITIZE
void ulp_task_arrive(struct ulp_task *self)
{
	san_arrive(self);
}
#endif

/*
 * Switching. The assembly switch saves the callee-saved registers, once; the C around it must not
 * save them a second time. So the fast path (no TLS write, no accounting) is inlined into its
 * callers with no call before the switch, and whatever needs a call (the TLS system call,
 * clock reads, the fenced deque pop, stealing) sits in noinline functions that finish the
 * operation themselves, switch included: on the fast path nothing is live across a call, and
 * gcc needs no callee-saved register in these functions.
 */
static inline __attribute__((always_inline)) void switch_go(struct ulp_worker *w,
							    struct ulp_task *from,
							    struct ulp_task *to, ulp_arch_fn after,
							    void *arg)
{
	to->worker = w;
	to->state = ULP_RUNNING;
	to->switches++;
	w->cur = to;
	san_leave(w, from, to);
	if (!from && !after)
		ulp_arch_jump(&to->ctx); /* an exit that released everything already */
	else if (after || !from)
		ulp_arch_switch_call(from ? &from->ctx : NULL, &to->ctx, after, arg);
	else
		ulp_arch_switch(&from->ctx, &to->ctx);
	san_arrive(from);
}

/* switch_go for a task that never ran: start entry(to) on its fresh stack, after(from) first. */
static inline __attribute__((always_inline)) void start_go(struct ulp_worker *w,
							   struct ulp_task *from,
							   struct ulp_task *to, ulp_arch_fn entry,
							   ulp_arch_fn after)
{
	to->worker = w;
	to->state = ULP_RUNNING;
	to->switches = 1;
	w->cur = to;
	san_leave(w, from, to);
	ulp_arch_switch_start(&from->ctx, (char *)to->stack + w->page_size, to->stack_size, entry,
			      to, after);
	san_arrive(from);
}

/* A worker's scheduler loop touches no TLS: switching into it keeps whatever is loaded, so a ULP
 * that blocks and is resumed on the same worker costs no TLS write at all (a write is a system
 * call without kernel FSGSBASE support: ~3.5 us on the development VM). */
static inline uintptr_t tls_for(struct ulp_worker *w, struct ulp_task *to)
{
	return to->kind == ULP_TASK_SCHED ? w->cur_tls : to->own_tls ? to->tls : w->host_tls;
}

static __attribute__((noinline, cold)) void switch_slow(struct ulp_worker *w, struct ulp_task *from,
							struct ulp_task *to, ulp_arch_fn after,
							void *arg)
{
	uintptr_t tls = tls_for(w, to);

	if (w->rt->accounting) {
		uint64_t now = ulp_now_ns();
		if (from)
			from->cpu_ns += now - from->run_start_ns;
		to->run_start_ns = now;
	}
	if (tls != w->cur_tls) {
		ulp_arch_tls_set(tls);
		w->cur_tls = tls;
	}
	if (to->owner && w->rt->hooks.switch_in)
		w->rt->hooks.switch_in(w, to, w->rt->hooks.arg);
	w->slow_switch = w->rt->accounting || w->cur_tls != w->host_tls;
	switch_go(w, from, to, after, arg);
}

/*
 * Switch the worker from `from` (NULL: abandoned) to `to`, loading to's TLS only when it differs
 * from what the register holds. after(arg), when given, runs on to's stack once from is saved.
 * Fast path: the host TLS is loaded, no accounting, and `to` has no TLS of its own (a ULT; the
 * scheduler loop keeps whatever is loaded, the host TLS here).
 */
static inline __attribute__((always_inline)) void switch_to(struct ulp_worker *w,
							    struct ulp_task *from,
							    struct ulp_task *to, ulp_arch_fn after,
							    void *arg)
{
	if (__builtin_expect(w->slow_switch | to->own_tls, 0))
		switch_slow(w, from, to, after, arg);
	else
		switch_go(w, from, to, after, arg);
}

long ulp_live_count(struct ulp_runtime *rt)
{
	long n = atomic_load(&rt->live_tasks);
	unsigned i;

	for (i = 0; i < rt->nworkers; i++)
		n += __atomic_load_n(&rt->workers[i]->live, __ATOMIC_RELAXED);
	return n;
}

/* The deque is empty: the oldest yielder runs next, the others move into the deque, oldest at
 * the bottom, where they keep their order and thieves can take them. */
static struct ulp_task *yq_take(struct ulp_worker *w)
{
	struct ulp_task *t = w->yq_head, *rev = NULL, *n;

	if (!t)
		return NULL;
	n = t->next;
	w->yq_head = w->yq_tail = NULL;
	if (!n)
		return t;
	while (n) { /* reverse: the newest is pushed first */
		struct ulp_task *next = n->next;
		n->next = rev;
		rev = n;
		n = next;
	}
	for (; rev; rev = rev->next)
		ulp_deque_push(&w->dq, rev);
	wake_idle(w->rt, 0);
	return t;
}

static struct ulp_task *next_ready(struct ulp_worker *w)
{
	struct ulp_task *t;

	if (__builtin_expect(__atomic_load_n(&w->inbox, __ATOMIC_RELAXED) != NULL, 0)) {
		t = inbox_pop(w);
		if (t)
			return t;
	}
	t = ulp_deque_pop(&w->dq);
	return t ? t : yq_take(w);
}

/* A task that yields goes behind the ready work: into the deque when it is empty (where an idle
 * worker may take it), else at the end of the yield queue. 1 when it went into the deque. */
static inline int yield_queue_put(struct ulp_worker *w, struct ulp_task *t)
{
	if (!w->yq_head && !ulp_deque_looks_nonempty(&w->dq)) {
		ulp_deque_push_room(&w->dq, t); /* empty, even by a stale top: room */
		return 1;
	}
	t->next = NULL;
	if (w->yq_tail)
		w->yq_tail->next = t;
	else
		w->yq_head = t;
	w->yq_tail = t;
	return 0;
}

static inline void yield_queue(struct ulp_worker *w, struct ulp_task *t)
{
	if (yield_queue_put(w, t))
		wake_idle(w->rt, 0);
}

static void nothing(void *arg)
{
}

static struct ulp_task *past_waiters(struct ulp_worker *w, struct ulp_task *t);

void ulp_task_suspend(struct ulp_task *self, void (*after)(void *), void *arg)
{
	struct ulp_worker *w = self->worker;
	struct ulp_task *next = next_ready(w);

	if (next && __builtin_expect(next->probe != NULL, 0)) {
		struct ulp_task *t = past_waiters(w, next);

		next = t ? t : next_ready(w); /* all wait: one of them spins on here */
	}
	self->state = ULP_BLOCKED;
	switch_to(w, self, next ? next : &w->sched, after ? after : nothing, arg);
}

void ulp_after_unlock(void *spinlock)
{
	ulp_spin_unlock(spinlock);
}

static void after_yield(void *arg)
{
	struct ulp_task *t = arg;

	yield_queue(t->worker, t);
}

static void after_push_bottom(void *arg)
{
	struct ulp_task *t = arg;

	ulp_deque_push(&t->worker->dq, t);
	wake_idle(t->worker->rt, 0);
}

/* ulp_arch_switch_start passes the creator's context: the task it starts a descriptor with. */
_Static_assert(offsetof(struct ulp_task, ctx) == 0, "a task's context is its first field");

static void after_resume(void *arg)
{
	ulp_task_resume(arg);
}

static struct ulp_task *steal(struct ulp_worker *w);
static int work_visible(struct ulp_worker *w);

/* Queue self as a yielder and run next. Solo: nobody else can take self from the queues, so it
 * is queued first and the switch is a plain one; else only once saved (after the switch). */
static inline __attribute__((always_inline)) void
yield_switch(struct ulp_worker *w, struct ulp_task *self, struct ulp_task *next)
{
	self->state = ULP_READY;
	if (self->pinned) {
		switch_to(w, self, next, after_resume, self);
	} else if (w->solo) {
		yield_queue_put(w, self); /* nobody to wake: we are the only worker */
		switch_to(w, self, next, NULL, NULL);
	} else {
		switch_to(w, self, next, after_yield, self);
	}
}

/* At most this many ready tasks are looked at for one yield. */
#define WAIT_SCAN_MAX 256

/* t waits for memory that has not changed (its probe says its loop would go round again). */
static int waits_in_vain(struct ulp_task *t)
{
	return t->probe && !t->pinned && !t->probe(t);
}

/*
 * The next ready task that does not wait in vain, starting with t (already taken, or NULL), or
 * NULL. Switching to every rank that waits at a barrier, only for it to find its flag unchanged
 * and yield again, cost each of them a switch and its loop entry's XSAVE/XRSTOR (about a quarter
 * of the CPU of 64 MPI ranks starting on 2 workers, 27 Nov). Their probes read the flag instead;
 * those still waiting go behind the others, once round the queue at most.
 */
static __attribute__((noinline, cold)) struct ulp_task *past_waiters(struct ulp_worker *w,
								     struct ulp_task *t)
{
	uint32_t scan = ++w->wait_scan;
	unsigned n;

	for (n = 0; n < WAIT_SCAN_MAX && (t || (t = next_ready(w)) != NULL); n++, t = NULL) {
		if (t->probe_scan == scan) { /* seen in this round: all the others wait too */
			yield_queue(w, t);
			return NULL;
		}
		if (!waits_in_vain(t))
			return t;
		t->probe_scan = scan;
		yield_queue(w, t);
	}
	return NULL;
}

int ulp_task_yield_wait(struct ulp_task *self)
{
	struct ulp_worker *w = self->worker;
	struct ulp_task *next = past_waiters(w, NULL);

	if (!next)
		return 0;
	yield_switch(w, self, next);
	return 1;
}

/* The rest of ulp_task_yield: the inbox, the fenced pop, the yield queue, waiting threads,
 * stealing. */
static __attribute__((noinline, cold)) int yield_slow(struct ulp_task *self, struct ulp_task *next)
{
	struct ulp_worker *w = self->worker;

	if (next == ULP_DQ_FENCE)
		next = ulp_deque_pop_fenced(&w->dq);
	if (!next)
		next = next_ready(w);
	if (next && next->probe) {
		/* every one here waits: nothing to run (our own deque shows work, so the look
		 * below would enter the steal gate, a membarrier, at every yield) */
		next = past_waiters(w, next);
		if (!next)
			return 0;
	}
	/* Nothing here: take work from another worker rather than spin on this one. Stealing
	 * means entering the gate (a membarrier): only when some deque shows work. */
	if (!next && !self->pinned && w->rt->nworkers > 1 && work_visible(w)) {
		ulp_gate_enter(&w->rt->gate);
		next = steal(w);
		ulp_gate_leave(&w->rt->gate);
	}
	if (!next)
		return 0;
	yield_switch(w, self, next);
	return 1;
}

int ulp_task_yield(struct ulp_task *self)
{
	struct ulp_worker *w = self->worker;
	struct ulp_task *next = NULL;

	if (__builtin_expect(!__atomic_load_n(&w->inbox, __ATOMIC_RELAXED), 1))
		next = ulp_deque_pop_try(&w->dq);
	/* a waiting thread (next->probe) is asked first, there */
	if (__builtin_expect(next == NULL || next == ULP_DQ_FENCE || next->probe != NULL, 0))
		return yield_slow(self, next);
	yield_switch(w, self, next);
	return 1;
}

void ulp_task_yield_to(struct ulp_task *self, struct ulp_task *to)
{
	yield_switch(self->worker, self, to);
}

static void task_ctx_init(struct ulp_worker *w, struct ulp_task *t, ulp_arch_fn entry)
{
	ulp_arch_ctx_init(&t->ctx, (char *)t->stack + w->page_size, t->stack_size, entry, t);
}

/* All but the fast path of ulp_task_run_first (calls: kept out of it, which then needs no
 * callee-saved register): help-first, a TLS to load, accounting, a full deque to grow. */
static __attribute__((noinline, cold)) void
run_first_slow(struct ulp_worker *w, struct ulp_task *self, struct ulp_task *t, ulp_arch_fn entry)
{
	task_ctx_init(w, t, entry);
	t->switches = 0;
	if (self->pinned && !w->solo) {
		/* Help-first: a pinned creator's continuation cannot be stolen, so with work-first
		 * everything it creates would run on its worker alone. Queue the child instead. On
		 * the only worker that is so anyway: work-first, as for any creator. */
		t->state = ULP_READY;
		ulp_deque_push(&w->dq, t);
		wake_idle(w->rt, 0);
		return;
	}
	self->state = ULP_READY;
	if (w->solo) {
		ulp_deque_push(&w->dq, self);
		switch_to(w, self, t, NULL, NULL);
	} else {
		switch_to(w, self, t, after_push_bottom, self);
	}
}

void ulp_task_run_first(struct ulp_task *self, struct ulp_task *t, ulp_arch_fn entry)
{
	struct ulp_worker *w = self->worker;

	if (w->solo) {
		/* Queued before the switch: nobody else can take it before it is saved. */
		if (__builtin_expect(!(w->slow_switch | t->own_tls), 1) &&
		    __builtin_expect(ulp_deque_push_try(&w->dq, self), 1)) {
			self->state = ULP_READY;
			start_go(w, self, t, entry, NULL);
			return;
		}
	} else if (__builtin_expect(!(self->pinned | w->slow_switch | t->own_tls), 1)) {
		self->state = ULP_READY;
		start_go(w, self, t, entry, after_push_bottom);
		return;
	}
	run_first_slow(w, self, t, entry);
}

void ulp_task_set_tls(struct ulp_task *t, uintptr_t tls)
{
	t->tls = tls;
	t->own_tls = 1;
	if (t->state == ULP_RUNNING && t->worker && t->worker->cur == t) {
		ulp_arch_tls_set(tls);
		t->worker->cur_tls = tls;
		t->worker->slow_switch = 1;
	}
}

/* A ULP's exit, on the next task's stack: the ULP's stack is no longer in use. */
static void after_exit_ulp(void *arg)
{
	struct ulp_task *t = arg, *joiner;
	struct ulp_worker *w = t->worker;
	struct ulp_runtime *rt = w->rt;

	if (t->stack)
		ulp_stack_free(w, t);
	/* The hook owns the rest (waking whoever waits, then one final store, after which the
	 * partition holding t may be unmapped, then dropping its reference). ULPs are counted as
	 * references: per-worker counters cannot tell "zero" without a race. */
	if (rt->hooks.task_exit) {
		rt->hooks.task_exit(t, rt->hooks.arg);
		return;
	}
	joiner = atomic_exchange(&t->joiner, ULP_JOIN_DONE);
	if (joiner && joiner != ULP_JOIN_DETACHED)
		ulp_task_resume(joiner);
	ulp_sched_unref(rt);
}

/* What an exiting task runs next: its worker's newest ready task, or the scheduler loop. */
static inline __attribute__((always_inline)) struct ulp_task *exit_next(struct ulp_worker *w)
{
	struct ulp_task *next = NULL;

	if (__builtin_expect(!__atomic_load_n(&w->inbox, __ATOMIC_RELAXED), 1))
		next = ulp_deque_pop_try(&w->dq);
	if (__builtin_expect(next == NULL || next == ULP_DQ_FENCE, 0))
		next = next == ULP_DQ_FENCE ? ulp_deque_pop_fenced(&w->dq) : next_ready(w);
	return next ? next : &w->sched;
}

/* A ULP's last switch: the rest happens on the next task's stack (a call: off the fast path). */
static __attribute__((noinline, cold, noreturn)) void exit_ulp(struct ulp_worker *w,
							       struct ulp_task *self)
{
	/* Its last stint counts too (the switch from an abandoned task charges nothing): before
	 * 27 Nov a ULP that computed to its end without a switch showed about 0 ms of CPU time in
	 * ulpspawn --stats. */
	if (w->rt->accounting && self->run_start_ns)
		self->cpu_ns += ulp_now_ns() - self->run_start_ns;
	switch_to(w, NULL, exit_next(w), after_exit_ulp, self);
	__builtin_unreachable();
}

/*
 * A thread's exit does everything before its last switch, which then saves nothing (a jump):
 * its stack goes back to the worker's cache while we still run on it (only this worker takes
 * stacks from there, and nothing until the jump does: the link word is at the far end), and
 * once the joiner word says ULP_JOIN_DONE the descriptor is the joiner's (it may free it on
 * another worker at once): self is not touched after that. A full cache first unmaps one of
 * the stacks it holds. A ULP's exit finishes on the next task's stack instead.
 */
/* Not instrumented: ASan's hook before a call that does not return (__asan_handle_no_return)
 * asks glibc for the running thread's stack, through TLS that is a ULP's in a PVAS task (it
 * waited forever on that ULP's thread lock). */
ULP_NO_ASAN void ulp_task_exit(struct ulp_task *self, void *ret)
{
	struct ulp_worker *w = self->worker;
	struct ulp_task *next = NULL, *j;

	self->ret = ret;
	self->state = ULP_EXITED;
	if (__builtin_expect(self->kind == ULP_TASK_ULP, 0))
		exit_ulp(w, self);
	if (self->stack) {
		if (__builtin_expect(w->nfree_stacks >= ULP_MAX_FREE_STACKS, 0))
			ulp_stacks_trim(w);
		ulp_stack_free(w, self);
	}
	ulp_worker_live_add(w, -1);
	/* A joiner that registered stays (only we change the word from then on): a plain store
	 * hands over. NULL on several workers: a joiner or a detach may come now, exchange. */
	j = atomic_load_explicit(&self->joiner, memory_order_acquire);
	if (!j && !w->solo)
		j = atomic_exchange(&self->joiner, ULP_JOIN_DONE);
	else
		atomic_store_explicit(&self->joiner, ULP_JOIN_DONE, memory_order_release);
	if (j == ULP_JOIN_DETACHED) {
		ulp_task_free(w, self);
	} else if (j) {
		/* It waits, suspended by its join, and only we resume it: switch to it directly
		 * (the join of a child created from the ulp_init thread would otherwise go through
		 * the scheduler loop and the inbox: three switches instead of two). */
		if (j->worker->rt == w->rt && (!j->pinned || j->home == w)) {
			j->state = ULP_READY;
			next = j;
		} else {
			ulp_task_resume(j);
		}
	}
	switch_to(w, NULL, next ? next : exit_next(w), NULL, NULL);
	__builtin_unreachable();
}

/* ---- workers ---- */

/* Take a task from another worker's deque. The caller is in the steal gate. */
static struct ulp_task *steal(struct ulp_worker *w)
{
	unsigned i, n = w->rt->nworkers, start;
	struct ulp_task *t;

	if (n < 2)
		return NULL;
	w->rng ^= w->rng << 13; /* xorshift64 */
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	start = (unsigned)(w->rng % n);
	for (i = 0; i < n; i++) {
		struct ulp_worker *v = w->rt->workers[(start + i) % n];
		if (v == w)
			continue;
		t = ulp_deque_steal(&v->dq);
		if (t) {
			w->steals++;
			return t;
		}
	}
	return NULL;
}

/* The yield queue counts: with three tasks or more on a worker, the deque is empty while the
 * others wait there, and a trapped sched_yield that missed them spun and napped alone until the
 * next preemption tick (which each nap put off). Only the owner calls this (yq is its own). */
int ulp_worker_has_ready(struct ulp_worker *w)
{
	return __atomic_load_n(&w->inbox, __ATOMIC_RELAXED) || w->yq_head ||
	       ulp_deque_looks_nonempty(&w->dq);
}

int ulp_sched_owner_runs_elsewhere(struct ulp_worker *w, const void *owner)
{
	unsigned i;

	for (i = 0; i < w->rt->nworkers; i++) {
		struct ulp_worker *o = w->rt->workers[i];
		struct ulp_task *t = o == w ? NULL : __atomic_load_n(&o->cur, __ATOMIC_ACQUIRE);

		if (t && __atomic_load_n(&t->owner, __ATOMIC_RELAXED) == owner)
			return 1;
	}
	return 0;
}

static int work_visible(struct ulp_worker *w)
{
	unsigned i;

	if (__atomic_load_n(&w->inbox, __ATOMIC_RELAXED))
		return 1;
	for (i = 0; i < w->rt->nworkers; i++)
		if (ulp_deque_looks_nonempty(&w->rt->workers[i]->dq))
			return 1;
	return 0;
}

#define IDLE_SPINS 2000

/*
 * The scheduler loop of worker w, run as w->sched. Returns at shutdown.
 *
 * Idle protocol. A worker out of local work enters the steal gate (deque.h: count + membarrier)
 * before it steals, and stays there while it spins; it leaves once it has a task. So while every
 * worker is busy, owners' pops and wake_idle are plain loads and stores. Before sleeping it is in
 * the gate too (also with one worker), counts itself in sleepers, fences, and looks for work a
 * last time: a producer either saw the gate empty, and then its task was visible to that look
 * (the membarrier), or it fences and sees sleepers > 0 and wakes it (wake_idle). futex_wait on
 * idle_seq read before counting itself closes the window between the look and the sleep.
 */
static void sched_loop(struct ulp_worker *w)
{
	struct ulp_runtime *rt = w->rt;
	unsigned spins = 0;
	int in_gate = 0;

	for (;;) {
		struct ulp_task *t;

		if (rt->hooks.poll)
			rt->hooks.poll(w, rt->hooks.arg);
		t = next_ready(w);
		if (!t && rt->nworkers > 1) {
			if (!in_gate) {
				ulp_gate_enter(&rt->gate);
				in_gate = 1;
			}
			t = steal(w);
		}
		if (t) {
			if (in_gate) {
				ulp_gate_leave(&rt->gate);
				in_gate = 0;
			}
			spins = 0;
			switch_to(w, &w->sched, t, NULL, NULL);
			continue;
		}
		if (atomic_load(&rt->shutdown))
			break;
		if (++spins < IDLE_SPINS) {
			ulp_arch_relax();
			continue;
		}
		if (!in_gate) {
			ulp_gate_enter(&rt->gate);
			in_gate = 1;
		}
		uint32_t seq = atomic_load(&rt->idle_seq);
		atomic_fetch_add(&rt->sleepers, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (!work_visible(w) && !atomic_load(&rt->shutdown)) {
			w->sleeps++;
			if (rt->hooks.idle)
				rt->hooks.idle(w, &rt->idle_seq, seq, rt->hooks.arg);
			else
				ulp_raw_futex_wait((uint32_t *)&rt->idle_seq, seq);
		}
		atomic_fetch_sub(&rt->sleepers, 1);
		spins = 0;
	}
	if (in_gate)
		ulp_gate_leave(&rt->gate);
}

static void sched_entry(void *arg)
{
	struct ulp_worker *w = arg;

	san_arrive(&w->sched);
	sched_loop(w);
	__builtin_trap(); /* worker 0's loop never ends: ulp_fini does not switch to it */
}

/* Become worker w: the calling kernel thread's TLS and self pointer. */
void ulp_worker_enter(struct ulp_worker *w)
{
	w->self = w;
	ulp_arch_self_set(w);
	w->host_tls = ulp_arch_tls_get();
	w->cur_tls = w->host_tls;
	w->slow_switch = w->rt->accounting != 0;
	w->tid = (int)ulp_arch_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
	if (w->rt->hooks.worker_start)
		w->rt->hooks.worker_start(w, w->rt->hooks.arg);
}

void ulp_worker_loop(struct ulp_worker *w)
{
	w->cur = &w->sched;
	w->sched.worker = w;
	w->sched.state = ULP_RUNNING;
	sched_loop(w);
}

void ulp_worker_run(struct ulp_worker *w)
{
	ulp_worker_enter(w);
	ulp_worker_loop(w);
	if (w->cur_tls != w->host_tls) /* the loop may have kept a ULP's TLS loaded */
		ulp_arch_tls_set(w->host_tls);
	ulp_arch_self_set(NULL);
}

int ulp_worker_init(struct ulp_worker *w, unsigned id, struct ulp_runtime *rt)
{
	w->id = id;
	w->rt = rt;
	w->rng = 0x9e3779b97f4a7c15ull * (id + 1);
	w->sched.kind = ULP_TASK_SCHED;
	w->sched.pinned = 1;
	w->sched.home = w;
	w->sched.worker = w;
	w->solo = rt->nworkers == 1;
	w->page_size = ulp_page_size();
	if (id == 0) /* the first worker of an instance sets up what they share */
		ulp_gate_init(&rt->gate, 1);
	return ulp_deque_init(&w->dq, &rt->gate);
}

/* Worker 0's scheduler needs a stack of its own: the ulp_init thread keeps its stack. */
int ulp_worker0_sched_stack(struct ulp_worker *w, size_t size)
{
	w->sched_stack = ulp_raw_mmap(size, 0);
	if (!w->sched_stack)
		return -ENOMEM;
	w->sched.san_lo = w->sched_stack;
	w->sched.san_size = size;
	ulp_arch_ctx_init(&w->sched.ctx, w->sched_stack, size, sched_entry, w);
	return 0;
}

void ulp_worker_destroy(struct ulp_worker *w, size_t sched_stack_size)
{
	ulp_stacks_drain(w);
	if (w->altstack) /* its thread has ended, or (worker 0) disabled it in ulp_fini */
		ulp_raw_munmap(w->altstack, ULP_ALTSTACK_SIZE);
	if (w->sched_stack)
		ulp_raw_munmap(w->sched_stack, sched_stack_size);
	ulp_deque_destroy(&w->dq);
}

void ulp_sched_wake_all(struct ulp_runtime *rt)
{
	atomic_fetch_add(&rt->idle_seq, 1);
	ulp_raw_futex_wake((uint32_t *)&rt->idle_seq, 0x7fffffff);
	if (rt->hooks.wake)
		rt->hooks.wake(rt, -1, rt->hooks.arg);
}
