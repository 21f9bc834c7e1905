/* SPDX-License-Identifier: MIT */
/*
 * Work-stealing deque: Chase-Lev (Chase and Lev, SPAA 2005; C11 orders after Le, Pop, Cohen and
 * Zappa Nardelli, PPoPP 2013) with an asymmetric barrier on the owner's side.
 *
 * The owner pushes and pops at the bottom; thieves take the oldest task at the top. In the plain
 * algorithm the owner's pop needs a full fence between its store of `bottom` and its load of
 * `top` (Dekker: a thief does the mirror image), on every pop. Here that fence is paid only while
 * some worker of the scheduler instance may be stealing or removing: such a worker first
 * announces itself in the instance's steal gate (`active`, below) and then runs
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which executes a full barrier on every CPU that
 * runs a thread of this address space. The owner stores `bottom`, then reads `active` after a
 * compiler barrier only:
 *   - it reads 0: that load came, in the owner's program order, before the barrier the membarrier
 *     of any announcing worker ran on the owner's CPU (else it would see the announcement, made
 *     before the membarrier), so the `bottom` store before it is visible to that worker before it
 *     looks at this deque. Workers that announced earlier have left the gate again (the acquire
 *     load pairs with their release decrement, so their steals are visible). Nobody else can be
 *     looking at this deque: the pop needs no fence, no CAS, not even for the last task.
 *   - it reads more than 0: the plain Chase-Lev pop follows (fence, CAS for the last task).
 * Without membarrier (old kernel, seccomp), `active` is pinned at 1: always the plain algorithm.
 * On one worker nobody ever announces: push and pop are plain loads and stores.
 *
 * Removal of a given task (directed switches) writes a tombstone (NULL) into its slot with a CAS;
 * pops and steals skip tombstones. A remover that is not the deque's owner must announce itself in
 * the gate like a thief, so that the owner's pops claim slots with an exchange while it works.
 * Thieves, removers and the owner's buffer growth are serialised by a small per-deque lock (never
 * taken by the owner's push or pop): the top CAS then races only with the owner's pop of the last
 * task, as in Chase-Lev, and a slot is never read from a buffer being replaced.
 *
 * Indices are 64-bit and only grow (no ABA on `top`). Buffers grow by doubling; replaced buffers
 * stay mapped until the deque is destroyed (a thief may still read an old one).
 */
#ifndef ULP_DEQUE_H
#define ULP_DEQUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ulp_task;

/* One per scheduler instance: who may touch another worker's deque right now. */
struct ulp_steal_gate {
	_Atomic unsigned active; /* workers between enter and leave (+1 when no membarrier) */
	int membarrier;		 /* entering runs membarrier (else active never drops to 0) */
};

struct ulp_dq_buf {
	int64_t mask; /* capacity - 1, capacity a power of two */
	struct ulp_dq_buf *older;
	_Atomic(struct ulp_task *) slot[];
};

struct ulp_deque {
	/* The owner's: written on every push and pop, read by thieves. */
	_Atomic int64_t bottom;
	_Atomic(struct ulp_dq_buf *) buf;
	struct ulp_steal_gate *gate;
	char pad_owner[64 - 24];
	/* The thieves': written on each steal. */
	_Atomic int64_t top;
	_Atomic uint32_t lock;
	char pad_thieves[64 - 12];
};

/* Gate set-up: registers for membarrier once per process; use_membarrier=0 pins active at 1
 * (the fenced algorithm everywhere; also what happens when the kernel refuses membarrier). */
void ulp_gate_init(struct ulp_steal_gate *g, int use_membarrier);
/* Announce / withdraw a worker that will steal or remove from deques it does not own. */
void ulp_gate_enter(struct ulp_steal_gate *g);
void ulp_gate_leave(struct ulp_steal_gate *g);

/* May a worker be stealing now? Callers that need the answer to order an earlier store (push
 * then check for sleepers) put a compiler barrier before it: see wake_idle in sched.c. */
static inline unsigned ulp_gate_active(struct ulp_steal_gate *g)
{
	return atomic_load_explicit(&g->active, memory_order_acquire);
}

int ulp_deque_init(struct ulp_deque *d, struct ulp_steal_gate *g);
void ulp_deque_destroy(struct ulp_deque *d);

/* Out of line parts. */
void ulp_deque_push_grow(struct ulp_deque *d, struct ulp_task *t) __attribute__((cold));
struct ulp_task *ulp_deque_pop_fenced(struct ulp_deque *d);

/* Owner only: is the buffer full? A stale top is smaller than the real one (it only grows): at
 * worst we grow early, never overwrite a slot a thief may still take. */
static inline int ulp_deque_full(struct ulp_deque *d)
{
	return atomic_load_explicit(&d->bottom, memory_order_relaxed) -
		   atomic_load_explicit(&d->top, memory_order_relaxed) >
	       atomic_load_explicit(&d->buf, memory_order_relaxed)->mask;
}

/* Owner only: push t at the bottom, the buffer known not to be full (callers that keep calls off
 * their fast path test ulp_deque_full first). */
static inline void ulp_deque_push_room(struct ulp_deque *d, struct ulp_task *t)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);

	atomic_store_explicit(&a->slot[b & a->mask], t, memory_order_relaxed);
	/* Release: whoever reads the new bottom (acquire) sees the slot and the task's fields. */
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

/* Owner only: push t at the bottom unless the buffer is full (then 0, nothing pushed: callers
 * that keep calls off their fast path grow it elsewhere). One load of each index. */
static inline int ulp_deque_push_try(struct ulp_deque *d, struct ulp_task *t)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);

	/* A stale top is smaller than the real one: at worst "full" early (ulp_deque_full). */
	if (__builtin_expect(b - atomic_load_explicit(&d->top, memory_order_relaxed) > a->mask, 0))
		return 0;
	atomic_store_explicit(&a->slot[b & a->mask], t, memory_order_relaxed);
	/* Release: whoever reads the new bottom (acquire) sees the slot and the task's fields. */
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
	return 1;
}

/* Owner only: push t at the bottom. */
static inline void ulp_deque_push(struct ulp_deque *d, struct ulp_task *t)
{
	if (__builtin_expect(!ulp_deque_push_try(d, t), 0))
		ulp_deque_push_grow(d, t);
}

/* What ulp_deque_pop_try returns when a worker may be stealing: finish with pop_fenced. */
#define ULP_DQ_FENCE ((struct ulp_task *)1)

/* Owner only: the newest task, NULL when empty, or ULP_DQ_FENCE (bottom is lowered already:
 * call ulp_deque_pop_fenced next). The split keeps callers' fast paths free of calls. */
static inline __attribute__((always_inline)) struct ulp_task *ulp_deque_pop_try(struct ulp_deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed), top;
	struct ulp_dq_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
	struct ulp_task *t;

	/* Empty: top only grows and only we raise bottom, so a stale top can only say "not
	 * empty"; nothing is written then (idle loops poll here). */
	if (atomic_load_explicit(&d->top, memory_order_relaxed) >= b)
		return NULL;
	for (;;) {
		b--;
		atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
		/* Compiler barrier only: the asymmetric half of the Dekker pair (see the top). */
		atomic_signal_fence(memory_order_seq_cst);
		if (ulp_gate_active(d->gate))
			return ULP_DQ_FENCE;
		top = atomic_load_explicit(&d->top, memory_order_relaxed);
		if (top > b) {
			atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
			return NULL;
		}
		t = atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
		if (t)
			return t;
		/* A tombstone (removed task): the next one down. */
	}
}

/* Owner only: the newest task, or NULL when empty. */
static inline struct ulp_task *ulp_deque_pop(struct ulp_deque *d)
{
	struct ulp_task *t = ulp_deque_pop_try(d);

	return t == ULP_DQ_FENCE ? ulp_deque_pop_fenced(d) : t;
}

/* Thief (announced in the gate): the oldest task, or NULL (empty, or the deque is busy with
 * another thief: try another victim). */
struct ulp_task *ulp_deque_steal(struct ulp_deque *d);

/* Take t out of d if it is there (pointer comparison only: t need not be valid memory). The
 * owner may call it at any time; anyone else only while announced in the gate. 1 when taken. */
int ulp_deque_remove(struct ulp_deque *d, struct ulp_task *t);

/* Racy hints (relaxed loads), for deciding whether to look closer. */
static inline int ulp_deque_looks_nonempty(struct ulp_deque *d)
{
	return atomic_load_explicit(&d->bottom, memory_order_relaxed) >
	       atomic_load_explicit(&d->top, memory_order_relaxed);
}
int ulp_deque_may_hold(struct ulp_deque *d, struct ulp_task *t);

#endif
