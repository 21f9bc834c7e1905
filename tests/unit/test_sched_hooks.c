/* SPDX-License-Identifier: MIT */
/* The scheduler instance's hooks: worker start, idle (woken by new work), and their contract. */
#include "check.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ulp_sched.h"

static _Atomic int started_on[64];
static _Atomic int idle_calls;
static _Atomic int bad_word;

static void count_start(struct ulp_worker *w, void *arg)
{
	if (w->id < 64 && arg == &started_on)
		atomic_fetch_add(&started_on[w->id], 1);
}

/* What an io_uring engine would do, reduced to its core: wait until the word moves. Raw system
 * calls only (the hook may run with a ULP's TLS loaded). */
static void futex_idle(struct ulp_worker *w, const _Atomic uint32_t *word, uint32_t seq, void *arg)
{
	(void)w;
	if (arg != &started_on)
		atomic_store(&bad_word, 1);
	atomic_fetch_add(&idle_calls, 1);
	ulp_arch_syscall(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, seq, 0, 0, 0);
}

static const struct ulp_sched_hooks hooks = {
    .worker_start = count_start,
    .idle = futex_idle,
    .arg = &started_on,
};

static _Atomic int child_worker = -1;

static void *record_worker(void *arg)
{
	(void)arg;
	atomic_store(&child_worker, (int)ulp_worker_id());
	return NULL;
}

static void wait_until(_Atomic int *v, int not_value)
{
	int i;

	for (i = 0; i < 5000 && atomic_load(v) == not_value; i++)
		usleep(1000);
}

/* Every worker's kernel thread runs the worker-start hook once, with the hooks' argument. */
static void worker_start_hook_runs_once_on_each_worker(void **state)
{
	unsigned i, n;

	memset(started_on, 0, sizeof(started_on));
	assert_int_equal(ulp_sched_set_hooks(&ulp_rt, &hooks), 0);
	assert_int_equal(ulp_init(2), 0);
	n = ulp_num_workers();
	for (i = 0; i < n; i++)
		wait_until(&started_on[i], 0);
	for (i = 0; i < n; i++)
		assert_int_equal(atomic_load(&started_on[i]), 1);
	assert_int_equal(ulp_sched_set_hooks(&ulp_rt, NULL), -EBUSY); /* running: refused */
	assert_int_equal(ulp_fini(), 0);
	assert_int_equal(ulp_sched_set_hooks(&ulp_rt, NULL), 0);
}

/* An idle worker waits in the idle hook, not in the scheduler's own futex sleep, and the hook's
 * wait ends when work is pushed: with worker 0's kernel thread blocked in usleep, only worker 1
 * can run the new thread, and it does so only if the push woke it out of the hook. */
static void idle_hook_is_woken_by_new_work(void **state)
{
	ulp_thread_t t;

	atomic_store(&idle_calls, 0); /* before the workers start: they may go idle at once */
	if (ulp_sched_set_hooks(&ulp_rt, &hooks) != 0 || ulp_init(2) != 0)
		fail_msg("ulp_init with hooks failed");
	if (ulp_num_workers() < 2) {
		assert_int_equal(ulp_fini(), 0);
		ulp_sched_set_hooks(&ulp_rt, NULL);
		skip();
	}
	wait_until(&idle_calls, 0);
	assert_true(atomic_load(&idle_calls) > 0);
	atomic_store(&child_worker, -1);
	/* ulp_init's thread is pinned: the child is queued on worker 0 (help-first), not run. */
	assert_int_equal(ulp_thread_create(&t, record_worker, NULL), 0);
	wait_until(&child_worker, -1); /* blocks this kernel thread: worker 0 cannot run it */
	assert_int_equal(atomic_load(&child_worker), 1);
	assert_int_equal(ulp_thread_join(t, NULL), 0);
	assert_false(atomic_load(&bad_word));
	assert_int_equal(ulp_fini(), 0);
	ulp_sched_set_hooks(&ulp_rt, NULL);
}

/* References: tryref refuses once the count reached zero (a PVAS task ending). */
static void tryref_fails_once_references_reached_zero(void **state)
{
	struct ulp_runtime rt;
	struct ulp_sched_attr a = {.nworkers = 1};

	memset(&rt, 0, sizeof(rt));
	assert_int_equal(ulp_sched_create(&rt, &a), 0);
	assert_int_equal(ulp_sched_create(&rt, &a), -EBUSY);
	assert_int_equal(ulp_sched_tryref(&rt), -ESRCH);
	ulp_sched_ref(&rt);
	assert_int_equal(ulp_sched_tryref(&rt), 0);
	assert_int_equal(ulp_sched_refs(&rt), 2);
	assert_int_equal(ulp_sched_unref(&rt), 1);
	assert_int_equal(ulp_sched_unref(&rt), 0);
	assert_int_equal(ulp_sched_tryref(&rt), -ESRCH);
	ulp_sched_destroy(&rt);
	a.nworkers = 0;
	assert_int_equal(ulp_sched_create(&rt, &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(worker_start_hook_runs_once_on_each_worker),
	    cmocka_unit_test(idle_hook_is_woken_by_new_work),
	    cmocka_unit_test(tryref_fails_once_references_reached_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
