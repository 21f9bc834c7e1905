/* SPDX-License-Identifier: MIT */
/* ulp_thread_* behaviour; run with ULP_WORKERS=1 and 2 by make check. */
#include "check.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ulp.h"

static int setup(void **state)
{
	return ulp_init(0) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	return ulp_fini() == 0 ? 0 : -1;
}

static void *ret_arg(void *arg)
{
	return arg;
}

static void create_join_100k_threads_returns_each_value(void **state)
{
	long i;

	for (i = 0; i < 100000; i++) {
		ulp_thread_t t;
		void *r = NULL;
		assert_int_equal(ulp_thread_create(&t, ret_arg, (void *)i), 0);
		assert_int_equal(ulp_thread_join(t, &r), 0);
		assert_true(r == (void *)i);
	}
}

static long fib_seq(int n)
{
	return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void *fib(void *arg)
{
	intptr_t n = (intptr_t)arg;
	ulp_thread_t a;
	void *x, *y;

	if (n < 2)
		return (void *)n;
	if (ulp_thread_create(&a, fib, (void *)(n - 1)) != 0)
		abort();
	y = fib((void *)(n - 2));
	if (ulp_thread_join(a, &x) != 0)
		abort();
	return (void *)((intptr_t)x + (intptr_t)y);
}

static void fib25_with_a_thread_per_call_is_right(void **state)
{
	assert_int_equal((intptr_t)fib((void *)25), fib_seq(25));
}

static _Atomic int detached_done, release_gate;
static void *detached_fn(void *arg)
{
	do
		ulp_thread_yield();
	while (arg && !atomic_load(&release_gate));
	atomic_fetch_add(&detached_done, 1);
	return NULL;
}

static void detached_threads_run_to_completion(void **state)
{
	ulp_thread_t t;
	int i;

	for (i = 0; i < 1000; i++)
		assert_int_equal(ulp_thread_create(NULL, detached_fn, NULL), 0);
	assert_int_equal(ulp_thread_create(&t, detached_fn, &release_gate), 0);
	assert_int_equal(ulp_thread_detach(t), 0);
	assert_int_equal(ulp_thread_join(t, NULL), -EINVAL); /* detached and alive: not joinable */
	atomic_store(&release_gate, 1);
	while (atomic_load(&detached_done) < 1001)
		ulp_thread_yield();
}

static void *exit_early(void *arg)
{
	ulp_thread_exit((void *)0x1234);
	return NULL;
}

static void thread_exit_value_reaches_joiner(void **state)
{
	ulp_thread_t t;
	void *r;

	assert_int_equal(ulp_thread_create(&t, exit_early, NULL), 0);
	assert_int_equal(ulp_thread_join(t, &r), 0);
	assert_true(r == (void *)0x1234);
}

static void join_self_is_deadlock_and_bad_args_are_einval(void **state)
{
	assert_int_equal(ulp_thread_join(ulp_thread_self(), NULL), -EDEADLK);
	assert_int_equal(ulp_thread_join(NULL, NULL), -EINVAL);
	assert_int_equal(ulp_thread_create(NULL, NULL, NULL), -EINVAL);
}

static int order[4], norder;
static void *yielder(void *arg)
{
	order[norder++] = (int)(intptr_t)arg;
	ulp_thread_yield();
	order[norder++] = (int)(intptr_t)arg + 10;
	return NULL;
}

static void *create_from_thread(void *arg)
{
	ulp_thread_t t;

	norder = 0;
	if (ulp_thread_create(&t, yielder, (void *)1) != 0)
		return (void *)1;
	/* work-first: the child ran until its yield, which queued it behind us */
	if (norder != 1 || order[0] != 1)
		return (void *)2;
	if (ulp_thread_join(t, NULL) != 0 || norder != 2 || order[1] != 11)
		return (void *)3;
	return NULL;
}

/* Work-first: a new thread runs before create returns; yield lets the queued creator go first.
 * The ulp_init thread is pinned and creates help-first on several workers, so run the check
 * from a thread. */
static void create_runs_child_first_and_yield_goes_behind_ready_work(void **state)
{
	ulp_thread_t t;
	void *r;

	if (ulp_num_workers() != 1)
		return; /* with a second worker the creator may be stolen: order is not fixed */
	assert_int_equal(ulp_thread_create(&t, create_from_thread, NULL), 0);
	assert_int_equal(ulp_thread_join(t, &r), 0);
	assert_null(r);
}

static void *note_ran(void *arg)
{
	*(int *)arg = 1;
	return NULL;
}

/* On one worker the ulp_init thread has nobody to spread work to: it creates work-first too. */
static void init_thread_creates_work_first_on_one_worker(void **state)
{
	ulp_thread_t t;
	int ran = 0;

	if (ulp_num_workers() != 1)
		return; /* help-first: the child may run here later or on the other worker now */
	assert_int_equal(ulp_thread_create(&t, note_ran, &ran), 0);
	assert_int_equal(ran, 1);
	assert_int_equal(ulp_thread_join(t, NULL), 0);
}

#define MANY_STACKS 300 /* well over the per-worker stack cache (ULP_MAX_FREE_STACKS, 64) */
static _Atomic int many_gate;

/* Fills part of its stack, waits for the gate, checks nothing overwrote it, ends: all of them
 * end together, so most exits find the stack cache full and unmap a cached stack first. */
static void *stack_holder(void *arg)
{
	volatile unsigned char buf[4096];
	unsigned char v = (unsigned char)(uintptr_t)arg;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(v + i);
	while (!atomic_load(&many_gate))
		ulp_thread_yield();
	for (i = 0; i < sizeof(buf); i++)
		if (buf[i] != (unsigned char)(v + i))
			return NULL;
	return arg;
}

static void more_threads_end_at_once_than_the_stack_cache_holds(void **state)
{
	static ulp_thread_t t[MANY_STACKS];
	int round, i;
	void *r;

	for (round = 0; round < 3; round++) { /* later rounds reuse cached stacks */
		atomic_store(&many_gate, 0);
		for (i = 0; i < MANY_STACKS; i++)
			assert_int_equal(
			    ulp_thread_create(&t[i], stack_holder, (void *)(uintptr_t)(i + 1)), 0);
		atomic_store(&many_gate, 1);
		for (i = 0; i < MANY_STACKS; i++) {
			assert_int_equal(ulp_thread_join(t[i], &r), 0);
			assert_true(r == (void *)(uintptr_t)(i + 1));
		}
	}
}

static ulp_key_t key;
static _Atomic int dtor_calls;
static void dtor(void *v)
{
	atomic_fetch_add(&dtor_calls, 1);
	free(v);
}

static void *key_user(void *arg)
{
	int *p = malloc(sizeof(int));

	*p = (int)(intptr_t)arg;
	ulp_key_set(key, p);
	ulp_thread_yield();
	return (void *)(intptr_t)(*(int *)ulp_key_get(key) == (int)(intptr_t)arg);
}

static void keys_are_per_thread_and_destructors_run_at_exit(void **state)
{
	ulp_thread_t t[50];
	void *r;
	int i;

	assert_int_equal(ulp_key_create(&key, dtor), 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(ulp_thread_create(&t[i], key_user, (void *)(intptr_t)i), 0);
	for (i = 0; i < 50; i++) {
		assert_int_equal(ulp_thread_join(t[i], &r), 0);
		assert_true(r == (void *)1);
	}
	assert_int_equal(atomic_load(&dtor_calls), 50);
	assert_null(ulp_key_get(key));
	assert_int_equal(ulp_key_delete(key), 0);
	assert_int_equal(ulp_key_set(key, NULL), -EINVAL);
}

static ulp_mutex_t held = ULP_MUTEX_INITIALIZER;
static void *wait_for_held(void *arg)
{
	ulp_mutex_lock(&held);
	ulp_mutex_unlock(&held);
	return NULL;
}

/* A thread that cannot end (blocked on a mutex we hold) keeps ulp_fini from stopping. */
static void fini_refuses_while_threads_live(void **state)
{
	ulp_thread_t t;

	assert_int_equal(ulp_mutex_lock(&held), 0);
	assert_int_equal(ulp_thread_create(&t, wait_for_held, NULL), 0);
	assert_int_equal(ulp_fini(), -EBUSY);
	assert_int_equal(ulp_mutex_unlock(&held), 0);
	assert_int_equal(ulp_thread_join(t, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(create_join_100k_threads_returns_each_value),
	    cmocka_unit_test(fib25_with_a_thread_per_call_is_right),
	    cmocka_unit_test(detached_threads_run_to_completion),
	    cmocka_unit_test(thread_exit_value_reaches_joiner),
	    cmocka_unit_test(join_self_is_deadlock_and_bad_args_are_einval),
	    cmocka_unit_test(create_runs_child_first_and_yield_goes_behind_ready_work),
	    cmocka_unit_test(init_thread_creates_work_first_on_one_worker),
	    cmocka_unit_test(more_threads_end_at_once_than_the_stack_cache_holds),
	    cmocka_unit_test(keys_are_per_thread_and_destructors_run_at_exit),
	    cmocka_unit_test(fini_refuses_while_threads_live),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
