/* SPDX-License-Identifier: MIT */
/* Scheduler internals: the deque under concurrent steals, TLS swap on switch, stealing, sleeping.
 */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulp_sched.h"

/*
 * Deque stress: one owner pushing and popping (often down to the last task, where owner and
 * thieves race for the same slot, and past the initial capacity, so the buffer grows), thieves
 * that enter the steal gate, steal a few tasks and leave again (so the owner keeps switching
 * between its unfenced and its fenced pop, the asymmetric part of the protocol), and a remover
 * taking given tasks out from the side. Every task must be taken exactly once: a missing fence or
 * a too weak order shows up as a task taken twice (or lost). Run with the gate on membarrier (as
 * the runtime runs where the kernel allows it) and with the gate pinned open (always fenced).
 */
#define ITEMS 100000
#define MIN_STEALS 100000 /* rounds repeat until this many steals, or: */
#define MAX_NS (3 * 1000000000ull)
#define THIEVES 1
#define GROW_EVERY 4096 /* a burst past the initial 256 slots */

static struct ulp_steal_gate gate;
static struct ulp_deque dq;
static struct ulp_task *items;
static _Atomic unsigned char *taken;
static _Atomic int owner_done;
static _Atomic long stolen, removed;

static void take(struct ulp_task *t)
{
	size_t i = (size_t)(t - items);

	if (i < ITEMS)
		atomic_fetch_add_explicit(&taken[i], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&taken[0], 100, memory_order_relaxed); /* garbage */
}

static void *thief(void *arg)
{
	unsigned k = 0;

	while (!atomic_load(&owner_done) || ulp_deque_looks_nonempty(&dq)) {
		int n = 1 + (int)(k++ % 16), tries = 4096;
		ulp_gate_enter(&gate);
		while (n && tries--) {
			struct ulp_task *t = ulp_deque_steal(&dq);
			if (t) {
				take(t);
				atomic_fetch_add(&stolen, 1);
				n--;
			}
		}
		ulp_gate_leave(&gate);
	}
	return NULL;
}

static void *remover(void *arg)
{
	uint64_t x = 88172645463325252ull;

	while (!atomic_load(&owner_done)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		struct ulp_task *t = &items[x % ITEMS];
		if (!ulp_deque_may_hold(&dq, t))
			continue;
		ulp_gate_enter(&gate);
		if (ulp_deque_remove(&dq, t)) {
			take(t);
			atomic_fetch_add(&removed, 1);
		}
		ulp_gate_leave(&gate);
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One round: ITEMS tasks through the deque; returns how many were stolen. */
static long stress_round(int use_membarrier)
{
	pthread_t th[THIEVES + 1];
	struct ulp_task *t;
	size_t i, popped = 0;
	int k;

	memset(items, 0, ITEMS * sizeof(*items));
	memset((void *)taken, 0, ITEMS);
	atomic_store(&owner_done, 0);
	atomic_store(&stolen, 0);
	atomic_store(&removed, 0);
	ulp_gate_init(&gate, use_membarrier);
	assert_int_equal(ulp_deque_init(&dq, &gate), 0);
	for (k = 0; k < THIEVES; k++)
		assert_int_equal(pthread_create(&th[k], NULL, thief, NULL), 0);
	assert_int_equal(pthread_create(&th[THIEVES], NULL, remover, NULL), 0);
	for (i = 0; i < ITEMS;) {
		/* A few tasks (a burst now and then, past the initial capacity), a pause that
		 * lets a running thief in, then pop back down, mostly to empty: the last-task
		 * race. */
		size_t n = i % GROW_EVERY == 0 ? 600 : 1 + i % 4, d = 16 + (i * 7) % 256;
		long s0 = atomic_load_explicit(&stolen, memory_order_relaxed);

		for (; n && i < ITEMS; n--, i++)
			ulp_deque_push(&dq, &items[i]);
		while (d-- && atomic_load_explicit(&stolen, memory_order_relaxed) == s0)
			ulp_arch_relax();
		while ((t = ulp_deque_pop(&dq))) {
			take(t);
			popped++;
			if (i % 5 == 0)
				break;
		}
	}
	while ((t = ulp_deque_pop(&dq))) {
		take(t);
		popped++;
	}
	atomic_store(&owner_done, 1);
	for (k = 0; k <= THIEVES; k++)
		pthread_join(th[k], NULL);
	while ((t = ulp_deque_pop(&dq))) { /* behind the remover's last tombstones */
		take(t);
		popped++;
	}
	for (i = 0; i < ITEMS; i++)
		if (atomic_load(&taken[i]) != 1)
			fail_msg("task %zu taken %d times (membarrier=%d, popped %zu, stolen %ld, "
				 "removed %ld)",
				 i, atomic_load(&taken[i]), gate.membarrier, popped,
				 atomic_load(&stolen), atomic_load(&removed));
	assert_int_equal(popped + (size_t)atomic_load(&stolen) + (size_t)atomic_load(&removed),
			 ITEMS);
	ulp_deque_destroy(&dq);
	return atomic_load(&stolen);
}

static void stress_deque(int use_membarrier)
{
	uint64_t t0 = now_ns();
	long steals = 0, rounds = 0;

	items = calloc(ITEMS, sizeof(*items));
	taken = calloc(ITEMS, 1);
	assert_non_null(items);
	assert_non_null(taken);
	do {
		steals += stress_round(use_membarrier);
		rounds++;
	} while (steals < MIN_STEALS && now_ns() - t0 < MAX_NS);
	if (getenv("ULP_TEST_VERBOSE"))
		fprintf(stderr, "membarrier=%d rounds %ld steals %ld\n", gate.membarrier, rounds,
			steals);
	free(items);
	free((void *)taken);
}

static void deque_hands_out_each_task_once_with_the_gate_on_membarrier(void **state)
{
	stress_deque(1);
}

static void deque_hands_out_each_task_once_always_fenced(void **state)
{
	stress_deque(0);
}

/* LIFO for the owner, FIFO for thieves; removal leaves the others in order. */
static void deque_pops_newest_first_and_thieves_take_oldest(void **state)
{
	struct ulp_steal_gate g;
	struct ulp_deque d;
	struct ulp_task a, b, c, e;

	ulp_gate_init(&g, 1);
	assert_int_equal(ulp_deque_init(&d, &g), 0);
	ulp_deque_push(&d, &a);
	ulp_deque_push(&d, &b);
	ulp_deque_push(&d, &c);
	ulp_deque_push(&d, &e);
	assert_int_equal(ulp_deque_remove(&d, &b), 1);
	assert_int_equal(ulp_deque_remove(&d, &b), 0);
	ulp_gate_enter(&g);
	assert_ptr_equal(ulp_deque_steal(&d), &a);
	ulp_gate_leave(&g);
	assert_ptr_equal(ulp_deque_pop(&d), &e);
	assert_ptr_equal(ulp_deque_pop(&d), &c);
	assert_null(ulp_deque_pop(&d));
	ulp_gate_enter(&g);
	assert_null(ulp_deque_steal(&d));
	ulp_gate_leave(&g);
	ulp_deque_destroy(&d);
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
	int i;

	assert_int_equal(ulp_init(2), 0);
	/* waited for, not timed: on a loaded machine (load 10 on 2 CPUs, 27 Nov) the worker's
	 * thread did not get to its sleep within a fixed 200 ms */
	for (i = 0; i < 3000 && !__atomic_load_n(&ulp_rt.workers[1]->sleeps, __ATOMIC_RELAXED); i++)
		usleep(10 * 1000);
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
	    cmocka_unit_test(deque_pops_newest_first_and_thieves_take_oldest),
	    cmocka_unit_test(deque_hands_out_each_task_once_with_the_gate_on_membarrier),
	    cmocka_unit_test(deque_hands_out_each_task_once_always_fenced),
	    cmocka_unit_test(switch_loads_each_tasks_tls),
	    cmocka_unit_test(idle_worker_steals_queued_work),
	    cmocka_unit_test(idle_worker_sleeps),
	    cmocka_unit_test(init_refuses_bad_environment_and_double_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
