/* SPDX-License-Identifier: MIT */
/* The ulp_thread_* API over the scheduler's tasks. */
#include "ulp_sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void ulp_keys_run_dtors(struct ulp_task *t);

static struct ulp_task *current(void)
{
	struct ulp_worker *w =
	    atomic_load_explicit(&ulp_rt.started, memory_order_acquire) ? ulp_worker_self() : NULL;
	return w ? w->cur : NULL;
}

static void __attribute__((noreturn)) thread_end(struct ulp_task *self, void *ret)
{
	if (self->keys)
		ulp_keys_run_dtors(self);
	ulp_task_exit(self, ret);
}

static void ult_entry(void *arg)
{
	struct ulp_task *self = arg;

	ulp_task_arrive(self);
	thread_end(self, self->fn(self->arg));
}

/* Set up t (a descriptor and a stack taken for it) as a thread running fn(arg), and start it. */
static inline __attribute__((always_inline)) int thread_start(struct ulp_task *self,
							      struct ulp_task *t, ulp_thread_t *out,
							      void *(*fn)(void *), void *arg)
{
	/* Every field a ULT reads before writing it (the descriptor is not cleared). */
	t->kind = ULP_TASK_ULT;
	t->pinned = 0;
	t->detached = 0;
	t->fn = fn;
	t->arg = arg;
	/* Threads created inside a ULP live in that ULP: its TLS, its libc. */
	t->own_tls = self->own_tls;
	t->tls = self->tls;
	t->owner = self->owner;
	t->keys = NULL;
	t->cpu_ns = 0;
	atomic_store_explicit(&t->joiner, out ? NULL : ULP_JOIN_DETACHED, memory_order_relaxed);
	ulp_worker_live_add(self->worker, 1);
	if (out)
		*out = t;
	ulp_task_run_first(self, t, ult_entry);
	return 0;
}

/* A free list is empty: map a descriptor or a stack (calls: kept out of the fast path, which
 * then needs no callee-saved register). */
static __attribute__((noinline, cold)) int create_slow(struct ulp_task *self, ulp_thread_t *out,
						       void *(*fn)(void *), void *arg)
{
	struct ulp_worker *w = self->worker;
	struct ulp_task *t = ulp_task_alloc(w);

	if (!t)
		return -ENOMEM;
	if (ulp_stack_alloc(w, t) != 0) {
		ulp_task_free(w, t);
		return -ENOMEM;
	}
	return thread_start(self, t, out, fn, arg);
}

int ulp_thread_create(ulp_thread_t *out, void *(*fn)(void *), void *arg)
{
	struct ulp_task *self = current(), *t;
	struct ulp_worker *w;

	if (!self || !fn)
		return -EINVAL;
	w = self->worker;
	if (__builtin_expect(!w->free_tasks || !w->free_stacks, 0))
		return create_slow(self, out, fn, arg);
	t = ulp_task_alloc(w);
	ulp_stack_alloc(w, t);
	return thread_start(self, t, out, fn, arg);
}

struct join_wait {
	struct ulp_task *self, *target;
};

/* Runs once the joiner is saved: register it, unless the target ended meanwhile. */
static void after_join(void *arg)
{
	struct join_wait *jw = arg;
	struct ulp_task *expected = NULL;

	/* Solo (the only worker): nothing else can end the target now, a plain check will do. */
	if (jw->self->worker->solo &&
	    atomic_load_explicit(&jw->target->joiner, memory_order_relaxed) == NULL) {
		atomic_store_explicit(&jw->target->joiner, jw->self, memory_order_relaxed);
		return;
	}
	if (!atomic_compare_exchange_strong(&jw->target->joiner, &expected, jw->self))
		ulp_task_resume(jw->self); /* ULP_JOIN_DONE: it ended, go on */
}

int ulp_task_wait(struct ulp_task *self, struct ulp_task *t)
{
	struct ulp_task *j = atomic_load(&t->joiner);

	if (t == self)
		return -EDEADLK;
	if (j != ULP_JOIN_DONE) {
		struct join_wait jw = {self, t};

		if (j) /* detached, or somebody waits for it already */
			return -EINVAL;
		ulp_task_suspend(self, after_join, &jw);
	}
	return 0;
}

/* t ended and was waited for: its value, then its descriptor back to the free list. */
static inline void join_finish(struct ulp_task *self, struct ulp_task *t, void **ret)
{
	if (ret)
		*ret = t->ret;
	ulp_task_free(self->worker, t);
}

static __attribute__((noinline)) int join_wait(struct ulp_task *self, struct ulp_task *t,
					       void **ret)
{
	int rc = ulp_task_wait(self, t);

	if (rc)
		return rc;
	join_finish(self, t, ret);
	return 0;
}

int ulp_thread_join(ulp_thread_t t, void **ret)
{
	struct ulp_task *self = current();

	if (!self || !t || t->kind != ULP_TASK_ULT)
		return t == self && t ? -EDEADLK : -EINVAL;
	/* Ended already (work-first: the usual case): nothing to wait for. */
	if (atomic_load_explicit(&t->joiner, memory_order_acquire) != ULP_JOIN_DONE)
		return join_wait(self, t, ret);
	join_finish(self, t, ret);
	return 0;
}

int ulp_thread_detach(ulp_thread_t t)
{
	struct ulp_task *self = current(), *expected = NULL;

	if (!self || !t || t->kind != ULP_TASK_ULT)
		return -EINVAL;
	if (atomic_compare_exchange_strong(&t->joiner, &expected, ULP_JOIN_DETACHED))
		return 0;
	if (expected == ULP_JOIN_DONE) { /* ended already: nobody else will free it */
		ulp_task_free(self->worker, t);
		return 0;
	}
	return -EINVAL;
}

int ulp_thread_yield(void)
{
	struct ulp_task *self = current();

	if (!self)
		return -EINVAL;
	ulp_task_yield(self);
	return 0;
}

void ulp_thread_exit(void *ret)
{
	struct ulp_task *self = current();

	if (!self || self->kind != ULP_TASK_ULT) {
		fprintf(stderr,
			"libulp: ulp_thread_exit: called from %s; only threads made by "
			"ulp_thread_create can exit\n",
			self ? "the ulp_init thread" : "outside the runtime");
		abort();
	}
	thread_end(self, ret);
}

ulp_thread_t ulp_thread_self(void)
{
	return current();
}

unsigned ulp_worker_id(void)
{
	struct ulp_task *self = current();

	return self ? self->worker->id : 0;
}
