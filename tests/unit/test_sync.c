/* SPDX-License-Identifier: MIT */
/* Mutex, condition variable and barrier with many more threads than workers. */
#include "check.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ulp.h"

#define NTHREADS 1000

static int setup(void **state)
{
	return ulp_init(0) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	return ulp_fini() == 0 ? 0 : -1;
}

static ulp_mutex_t mtx = ULP_MUTEX_INITIALIZER;
static long counter;
static int inside;

static void *add_many(void *arg)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (ulp_mutex_lock(&mtx) != 0)
			return (void *)1;
		if (inside++)
			return (void *)2; /* two owners at once */
		counter++;
		if (i % 16 == 0)
			ulp_thread_yield(); /* sleep while holding: others must block, not spin */
		inside--;
		ulp_mutex_unlock(&mtx);
	}
	return NULL;
}

static void mutex_excludes_1000_threads(void **state)
{
	static ulp_thread_t t[NTHREADS];
	void *r;
	int i;

	counter = 0;
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(ulp_thread_create(&t[i], add_many, NULL), 0);
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(ulp_thread_join(t[i], &r), 0);
		assert_null(r);
	}
	assert_int_equal(counter, NTHREADS * 200);
	assert_int_equal(ulp_mutex_destroy(&mtx), 0);
}

static void mutex_reports_misuse(void **state)
{
	ulp_mutex_t m;

	assert_int_equal(ulp_mutex_init(&m), 0);
	assert_int_equal(ulp_mutex_unlock(&m), -EPERM);
	assert_int_equal(ulp_mutex_lock(&m), 0);
	assert_int_equal(ulp_mutex_lock(&m), -EDEADLK);
	assert_int_equal(ulp_mutex_trylock(&m), -EBUSY);
	assert_int_equal(ulp_mutex_destroy(&m), -EBUSY);
	assert_int_equal(ulp_mutex_unlock(&m), 0);
	assert_int_equal(ulp_mutex_trylock(&m), 0);
	assert_int_equal(ulp_mutex_unlock(&m), 0);
}

/* Bounded buffer: producers and consumers meet through two condition variables. */
#define SLOTS 8
#define ITEMS_EACH 500
#define PAIRS 100
static ulp_mutex_t bm = ULP_MUTEX_INITIALIZER;
static ulp_cond_t not_full = ULP_COND_INITIALIZER, not_empty = ULP_COND_INITIALIZER;
static long buf[SLOTS];
static int nbuf;
static long consumed_sum;

static void *producer(void *arg)
{
	int i;

	for (i = 1; i <= ITEMS_EACH; i++) {
		ulp_mutex_lock(&bm);
		while (nbuf == SLOTS)
			ulp_cond_wait(&not_full, &bm);
		buf[nbuf++] = i;
		ulp_cond_signal(&not_empty);
		ulp_mutex_unlock(&bm);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	int i;

	for (i = 0; i < ITEMS_EACH; i++) {
		ulp_mutex_lock(&bm);
		while (nbuf == 0)
			ulp_cond_wait(&not_empty, &bm);
		consumed_sum += buf[--nbuf];
		ulp_cond_signal(&not_full);
		ulp_mutex_unlock(&bm);
	}
	return NULL;
}

static void cond_passes_every_item_from_producers_to_consumers(void **state)
{
	static ulp_thread_t t[2 * PAIRS];
	int i;

	consumed_sum = 0;
	for (i = 0; i < PAIRS; i++) {
		assert_int_equal(ulp_thread_create(&t[2 * i], consumer, NULL), 0);
		assert_int_equal(ulp_thread_create(&t[2 * i + 1], producer, NULL), 0);
	}
	for (i = 0; i < 2 * PAIRS; i++)
		assert_int_equal(ulp_thread_join(t[i], NULL), 0);
	assert_int_equal(consumed_sum, (long)PAIRS * ITEMS_EACH * (ITEMS_EACH + 1) / 2);
	assert_int_equal(ulp_cond_destroy(&not_full), 0);
}

static ulp_mutex_t gm = ULP_MUTEX_INITIALIZER;
static ulp_cond_t go = ULP_COND_INITIALIZER;
static int gate_open;
static _Atomic int woken;

static void *gate_waiter(void *arg)
{
	ulp_mutex_lock(&gm);
	while (!gate_open)
		ulp_cond_wait(&go, &gm);
	ulp_mutex_unlock(&gm);
	atomic_fetch_add(&woken, 1);
	return NULL;
}

static void cond_broadcast_wakes_all_waiters(void **state)
{
	static ulp_thread_t t[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(ulp_thread_create(&t[i], gate_waiter, NULL), 0);
	ulp_mutex_lock(&gm);
	gate_open = 1;
	ulp_cond_broadcast(&go);
	ulp_mutex_unlock(&gm);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(ulp_thread_join(t[i], NULL), 0);
	assert_int_equal(atomic_load(&woken), NTHREADS);
}

static ulp_barrier_t bar;
static _Atomic int phase_count[5];
static _Atomic int serials;

static void *barrier_rounds(void *arg)
{
	int round;

	for (round = 0; round < 5; round++) {
		atomic_fetch_add(&phase_count[round], 1);
		if (ulp_barrier_wait(&bar) == ULP_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serials, 1);
		/* everyone of this round arrived before anyone left */
		if (atomic_load(&phase_count[round]) != NTHREADS)
			return (void *)1;
	}
	return NULL;
}

/* 1000 threads meet at one barrier five times, on 1 or 2 workers, without hanging. */
static void barrier_of_1000_threads_does_not_hang(void **state)
{
	static ulp_thread_t t[NTHREADS];
	void *r;
	int i;

	assert_int_equal(ulp_barrier_init(&bar, NTHREADS), 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(ulp_thread_create(&t[i], barrier_rounds, NULL), 0);
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(ulp_thread_join(t[i], &r), 0);
		assert_null(r);
	}
	assert_int_equal(atomic_load(&serials), 5);
	assert_int_equal(ulp_barrier_destroy(&bar), 0);
	assert_int_equal(ulp_barrier_init(&bar, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mutex_excludes_1000_threads),
	    cmocka_unit_test(mutex_reports_misuse),
	    cmocka_unit_test(cond_passes_every_item_from_producers_to_consumers),
	    cmocka_unit_test(cond_broadcast_wakes_all_waiters),
	    cmocka_unit_test(barrier_of_1000_threads_does_not_hang),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
