/* SPDX-License-Identifier: MIT */
/* Scheduler internals: the deque under concurrent steals, TLS swap on switch, stealing, sleeping.
 */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulp_sched.h"

#define ITEMS 200000
#define THIEVES 3

static struct ulp_deque dq;
static struct ulp_task *items;
static unsigned char *taken;
static _Atomic int owner_done;
static _Atomic long stolen;

static void take(struct ulp_task *t)
{
	size_t i = (size_t)(t - items);

	assert_true(i < ITEMS);
	assert_int_equal(__atomic_fetch_add(&taken[i], 1, __ATOMIC_RELAXED), 0);
}

static void *thief(void *arg)
{
	struct ulp_task *t;

	while (!atomic_load(&owner_done) || atomic_load(&dq.size)) {
		t = ulp_deque_steal_top(&dq);
		if (t) {
			take(t);
			atomic_fetch_add(&stolen, 1);
		}
	}
	return NULL;
}

/* Every pushed task is taken exactly once, whether the owner pops it or a thief steals it, while
 * the deque grows and the owner mixes bottom pushes, top pushes and pops. */
static void deque_hands_out_each_task_once_under_concurrent_steals(void **state)
{
	pthread_t th[THIEVES];
	size_t i;
	int k;

	items = calloc(ITEMS, sizeof(*items));
	taken = calloc(ITEMS, 1);
	assert_non_null(items);
	assert_non_null(taken);
	assert_int_equal(ulp_deque_init(&dq), 0);
	for (k = 0; k < THIEVES; k++)
		assert_int_equal(pthread_create(&th[k], NULL, thief, NULL), 0);
	for (i = 0; i < ITEMS; i++) {
		if (i % 3 == 2)
			ulp_deque_push_top(&dq, &items[i]);
		else
			ulp_deque_push_bottom(&dq, &items[i]);
		if (i % 5 == 4) {
			struct ulp_task *t = ulp_deque_pop_bottom(&dq);
			if (t)
				take(t);
		}
	}
	for (;;) {
		struct ulp_task *t = ulp_deque_pop_bottom(&dq);
		if (!t)
			break;
		take(t);
	}
	atomic_store(&owner_done, 1);
	for (k = 0; k < THIEVES; k++)
		pthread_join(th[k], NULL);
	for (i = 0; i < ITEMS; i++)
		assert_int_equal(taken[i], 1);
	free(items);
	free(taken);
}

/* LIFO at the bottom, yielders behind the ready work at the top. */
static void deque_pops_newest_first_and_top_pushes_last(void **state)
{
	struct ulp_deque d;
	struct ulp_task a, b, c;

	assert_int_equal(ulp_deque_init(&d), 0);
	ulp_deque_push_bottom(&d, &a);
	ulp_deque_push_bottom(&d, &b);
	ulp_deque_push_top(&d, &c);
	assert_ptr_equal(ulp_deque_pop_bottom(&d), &b);
	assert_ptr_equal(ulp_deque_pop_bottom(&d), &a);
	assert_ptr_equal(ulp_deque_pop_bottom(&d), &c);
	assert_null(ulp_deque_pop_bottom(&d));
}

#define FAKE_TLS ((uintptr_t)0x5a5a5a5a5000ull)
static volatile uintptr_t seen_before, seen_after;

/* Runs with a TLS value that is not a real TLS block: touches no TLS (no libc, no cmocka) until
 * the host TLS is back. */
static void *fake_tls_thread(void *arg)
{
	struct ulp_task *self = ulp_thread_self();
	struct ulp_worker *w;
	int i;

	ulp_task_set_tls(self, FAKE_TLS);
	seen_before = ulp_arch_tls_get();
	for (i = 0; i < 10; i++)
		ulp_task_yield(self); /* the other thread runs with the host TLS meanwhile */
	seen_after = ulp_arch_tls_get();
	w = self->worker;
	self->own_tls = 0;
	ulp_arch_tls_set(w->host_tls);
	w->cur_tls = w->host_tls;
	return NULL;
}

static volatile uintptr_t other_tls;
static void *host_tls_thread(void *arg)
{
	int i;

	for (i = 0; i < 10; i++) {
		other_tls = ulp_arch_tls_get();
		ulp_thread_yield();
	}
	return NULL;
}

/* A task with its own TLS gets it loaded whenever it runs; others keep their worker's. */
static void switch_loads_each_tasks_tls(void **state)
{
	ulp_thread_t a, b;
	uintptr_t host;

#ifdef ULP_SANITIZE
	skip(); /* ASan's fiber-switch hooks read TLS themselves: a fake TLS value crashes them */
#endif
	assert_int_equal(ulp_init(0), 0);
	host = ulp_arch_tls_get();
	assert_int_equal(ulp_thread_create(&b, host_tls_thread, NULL), 0);
	assert_int_equal(ulp_thread_create(&a, fake_tls_thread, NULL), 0);
	assert_int_equal(ulp_thread_join(a, NULL), 0);
	assert_int_equal(ulp_thread_join(b, NULL), 0);
	assert_true(seen_before == FAKE_TLS);
	assert_true(seen_after == FAKE_TLS);
	assert_true(other_tls != FAKE_TLS && other_tls != 0);
	assert_true(ulp_arch_tls_get() == host);
	assert_int_equal(ulp_fini(), 0);
}

static _Atomic int ran_on[2];
static void *spin_work(void *arg)
{
	volatile unsigned long x = 0;
	unsigned long i;

	atomic_fetch_add(&ran_on[ulp_worker_id() ? 1 : 0], 1);
	for (i = 0; i < 2000000; i++)
		x += i;
	return NULL;
}

/* With two workers, queued work is stolen by the idle one. */
static void idle_worker_steals_queued_work(void **state)
{
	ulp_thread_t t[16];
	int i;

	assert_int_equal(ulp_init(0), 0);
	if (ulp_num_workers() < 2) {
		assert_int_equal(ulp_fini(), 0);
		return; /* nothing to steal with one worker */
	}
	for (i = 0; i < 16; i++)
		assert_int_equal(ulp_thread_create(&t[i], spin_work, NULL), 0);
	for (i = 0; i < 16; i++)
		assert_int_equal(ulp_thread_join(t[i], NULL), 0);
	assert_true(atomic_load(&ran_on[1]) > 0);
	assert_true(ulp_rt.workers[1]->steals + ulp_rt.workers[0]->steals > 0);
	assert_int_equal(ulp_fini(), 0);
}

/* An idle worker goes to sleep instead of spinning forever. */
static void idle_worker_sleeps(void **state)
{
	assert_int_equal(ulp_init(2), 0);
	usleep(200 * 1000);
	assert_true(ulp_rt.workers[1]->sleeps > 0);
	assert_int_equal(ulp_fini(), 0);
}

static void init_refuses_bad_environment_and_double_start(void **state)
{
	setenv("ULP_STACK_SIZE", "12", 1);
	assert_int_equal(ulp_init(0), -EINVAL);
	setenv("ULP_STACK_SIZE", "128k", 1);
	assert_int_equal(ulp_init(1), 0);
	assert_int_equal(ulp_rt.stack_size, 128 * 1024);
	assert_int_equal(ulp_init(1), -EBUSY);
	assert_int_equal(ulp_fini(), 0);
	assert_int_equal(ulp_fini(), -EINVAL);
	unsetenv("ULP_STACK_SIZE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(deque_pops_newest_first_and_top_pushes_last),
	    cmocka_unit_test(deque_hands_out_each_task_once_under_concurrent_steals),
	    cmocka_unit_test(switch_loads_each_tasks_tls),
	    cmocka_unit_test(idle_worker_steals_queued_work),
	    cmocka_unit_test(idle_worker_sleeps),
	    cmocka_unit_test(init_refuses_bad_environment_and_double_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
