/* SPDX-License-Identifier: MIT */
/*
 * The work-stealing deque's slow paths and the steal gate (the protocol is described in deque.h).
 * Raw system calls only: this runs on scheduler paths, possibly with a ULP's TLS loaded.
 */
#include "deque.h"

#include "arch.h"
#include "sys.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <sys/syscall.h>

#define DEQUE_CAP0 256

/* 1: this process registered for private expedited membarrier; -1: the kernel refused. */
static _Atomic int membarrier_state;

static int membarrier_ready(void)
{
	int s = atomic_load_explicit(&membarrier_state, memory_order_relaxed);

	if (!s) {
		long r = ulp_arch_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
					  0, 0, 0, 0, 0);
		s = r == 0 ? 1 : -1;
		atomic_store_explicit(&membarrier_state, s, memory_order_relaxed);
	}
	return s > 0;
}

/* Registered at load, while the process is most likely single-threaded: registering later,
 * once another thread or a PVAS task shares the address space, waits for an RCU grace period
 * (sync_runqueues_membarrier_state: about 10 ms on the 2-vCPU VM, in every launcher's start). */
__attribute__((constructor)) static void membarrier_register_early(void)
{
	membarrier_ready();
}

void ulp_gate_init(struct ulp_steal_gate *g, int use_membarrier)
{
	g->membarrier = use_membarrier && membarrier_ready();
	atomic_store_explicit(&g->active, g->membarrier ? 0 : 1, memory_order_relaxed);
}

void ulp_gate_enter(struct ulp_steal_gate *g)
{
	/* Seq_cst RMW, then a barrier on every CPU running one of our threads: from here on an
	 * owner either sees active > 0 or has its last bottom store visible to us (deque.h). */
	atomic_fetch_add(&g->active, 1);
	if (!g->membarrier ||
	    ulp_arch_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0, 0, 0, 0) == 0)
		return;
	/* Refused although registration succeeded: the address space is not the one that
	 * registered (a ULP's fork continues it in a child process; this kernel carries the
	 * registration over, measured, others may not). Register it and retry: never continue
	 * without the barrier. */
	if (ulp_arch_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0, 0, 0,
			     0) != 0 ||
	    ulp_arch_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0, 0, 0, 0) != 0)
		__builtin_trap();
}

void ulp_gate_leave(struct ulp_steal_gate *g)
{
	/* Release: an owner that reads the lower count (acquire) sees our steals and tombstones. */
	atomic_fetch_sub_explicit(&g->active, 1, memory_order_release);
}

static struct ulp_dq_buf *buf_alloc(int64_t cap)
{
	size_t len = offsetof(struct ulp_dq_buf, slot) + (size_t)cap * sizeof(void *);
	struct ulp_dq_buf *a = ulp_raw_mmap(len, 0);

	if (!a)
		return NULL;
	a->mask = cap - 1;
	a->older = NULL;
	return a;
}

static void buf_free(struct ulp_dq_buf *a)
{
	size_t len = offsetof(struct ulp_dq_buf, slot) + (size_t)(a->mask + 1) * sizeof(void *);

	ulp_raw_munmap(a, len);
}

int ulp_deque_init(struct ulp_deque *d, struct ulp_steal_gate *g)
{
	struct ulp_dq_buf *a = buf_alloc(DEQUE_CAP0);

	if (!a)
		return -ENOMEM;
	atomic_store_explicit(&d->bottom, 0, memory_order_relaxed);
	atomic_store_explicit(&d->top, 0, memory_order_relaxed);
	atomic_store_explicit(&d->lock, 0, memory_order_relaxed);
	atomic_store_explicit(&d->buf, a, memory_order_relaxed);
	d->gate = g;
	return 0;
}

void ulp_deque_destroy(struct ulp_deque *d)
{
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed), *older;

	for (; a; a = older) {
		older = a->older;
		buf_free(a);
	}
	atomic_store_explicit(&d->buf, NULL, memory_order_relaxed);
}

static int lock_try(struct ulp_deque *d)
{
	return !atomic_load_explicit(&d->lock, memory_order_relaxed) &&
	       !atomic_exchange_explicit(&d->lock, 1, memory_order_acquire);
}

static void lock_take(struct ulp_deque *d)
{
	while (!lock_try(d))
		ulp_arch_relax();
}

static void lock_drop(struct ulp_deque *d)
{
	atomic_store_explicit(&d->lock, 0, memory_order_release);
}

/* Owner, from push, when full. Under the lock: no thief or remover is reading the old buffer
 * while we copy (one that read its address earlier and waits for the lock re-reads it). */
static struct ulp_dq_buf *grow(struct ulp_deque *d)
{
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed), *n;
	int64_t i, b = atomic_load_explicit(&d->bottom, memory_order_relaxed), top;

	lock_take(d);
	top = atomic_load_explicit(&d->top, memory_order_relaxed);
	n = buf_alloc((a->mask + 1) * 2);
	if (!n) /* out of memory with a full deque: nothing sane is left to do */
		__builtin_trap();
	for (i = top; i < b; i++)
		atomic_store_explicit(
		    &n->slot[i & n->mask],
		    atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed),
		    memory_order_relaxed);
	n->older = a;
	/* Release: a thief that loads the new address (acquire) sees the copied slots. */
	atomic_store_explicit(&d->buf, n, memory_order_release);
	lock_drop(d);
	return n;
}

void ulp_deque_push_grow(struct ulp_deque *d, struct ulp_task *t)
{
	struct ulp_dq_buf *a = grow(d);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);

	atomic_store_explicit(&a->slot[b & a->mask], t, memory_order_relaxed);
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

/*
 * Owner's pop while some worker may be stealing or removing: plain Chase-Lev from the fence on,
 * with slots claimed by exchange (a remover may CAS the same slot to a tombstone). bottom was
 * lowered by ulp_deque_pop_try already.
 */
struct ulp_task *ulp_deque_pop_fenced(struct ulp_deque *d)
{
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	struct ulp_task *t;
	int64_t top;

	for (;;) {
		/* The bottom store before the top load: pairs with the thief's fence between its
		 * top and bottom loads. */
		atomic_thread_fence(memory_order_seq_cst);
		top = atomic_load_explicit(&d->top, memory_order_relaxed);
		if (top > b) { /* empty */
			atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
			return NULL;
		}
		if (top == b) {
			/* The last task: a thief may be after it too; whoever moves top has it. */
			int won = atomic_compare_exchange_strong_explicit(
			    &d->top, &top, top + 1, memory_order_seq_cst, memory_order_relaxed);
			atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
			if (!won)
				return NULL;
			return atomic_exchange_explicit(&a->slot[b & a->mask], NULL,
							memory_order_relaxed);
		}
		/* No thief can reach index b (they see bottom = b now): only a remover. */
		t = atomic_exchange_explicit(&a->slot[b & a->mask], NULL, memory_order_relaxed);
		if (t)
			return t;
		b--; /* a tombstone: the next one down */
		atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
	}
}

struct ulp_task *ulp_deque_steal(struct ulp_deque *d)
{
	struct ulp_task *t = NULL;
	struct ulp_dq_buf *a;
	int64_t top, b;

	if (!ulp_deque_looks_nonempty(d) || !lock_try(d))
		return NULL; /* nothing, or another thief is at it: try another victim */
	for (;;) {
		top = atomic_load_explicit(&d->top, memory_order_acquire);
		/* Pairs with the owner's fence (or its membarrier-covered compiler barrier)
		 * between its bottom store and top load: one of us sees the other. */
		atomic_thread_fence(memory_order_seq_cst);
		/* Acquire: pairs with push's release, so the slot and the task are visible. */
		b = atomic_load_explicit(&d->bottom, memory_order_acquire);
		if (top >= b)
			break;
		a = atomic_load_explicit(&d->buf, memory_order_acquire);
		t = atomic_load_explicit(&a->slot[top & a->mask], memory_order_relaxed);
		/* Other thieves and removers wait for the lock: only the owner's pop of this
		 * same last task can move top under us. */
		if (!atomic_compare_exchange_strong_explicit(
			&d->top, &top, top + 1, memory_order_seq_cst, memory_order_relaxed)) {
			t = NULL;
			break;
		}
		if (t)
			break;
		/* We consumed a tombstone: look at the next one. */
	}
	lock_drop(d);
	return t;
}

int ulp_deque_may_hold(struct ulp_deque *d, struct ulp_task *t)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
	int64_t top = atomic_load_explicit(&d->top, memory_order_acquire);
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_acquire);

	for (; top < b; top++)
		if (atomic_load_explicit(&a->slot[top & a->mask], memory_order_relaxed) == t)
			return 1;
	return 0;
}

int ulp_deque_remove(struct ulp_deque *d, struct ulp_task *t)
{
	struct ulp_dq_buf *a;
	int64_t i, top, b;
	int found = 0;

	lock_take(d);
	/* The owner cannot pop concurrently with this scan unaware: either it is us, or we
	 * announced in the gate and its pops claim slots by exchange (or their bottom store is
	 * visible here). */
	top = atomic_load_explicit(&d->top, memory_order_acquire);
	atomic_thread_fence(memory_order_seq_cst);
	b = atomic_load_explicit(&d->bottom, memory_order_acquire);
	a = atomic_load_explicit(&d->buf, memory_order_acquire);
	for (i = b - 1; i >= top; i--) {
		struct ulp_task *expected = t;

		if (atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed) != t)
			continue;
		found = atomic_compare_exchange_strong_explicit(&a->slot[i & a->mask], &expected,
								NULL, memory_order_relaxed,
								memory_order_relaxed);
		break;
	}
	lock_drop(d);
	return found;
}
