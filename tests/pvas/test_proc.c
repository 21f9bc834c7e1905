/* SPDX-License-Identifier: MIT */
/*
 * The ULP process object's state machine (libulp/kernel/proc.c): lookups by pvid, release of a
 * ULP never started, waiting for a zombie, refused transitions. The guest programs come from
 * $ULP_TEST_PROGS.
 */
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "pvas.h"

static char probe[4096];
static char *env0[] = {NULL};
static char err[512];

static void paths(void)
{
	const char *d = getenv("ULP_TEST_PROGS");

	snprintf(probe, sizeof(probe), "%s/probe", d ? d : "build/tests/integ");
}

static void wait_for_state(struct pvas_region *r, int pvid, int state)
{
	int i;

	for (i = 0; i < 5000 && ulp_proc_state(r, pvid) != state; i++)
		usleep(1000);
}

static void lookups_of_a_free_pvid_give_esrch(void **state)
{
	struct pvas_region *r;
	struct ulp_cb *cb = NULL;

	assert_int_equal(pvas_region_create(&r, 0, 0, 0), 0);
	assert_int_equal(ulp_proc_state(r, 7), ULP_PROC_FREE);
	assert_int_equal(ulp_proc_find(r, 7, &cb), -ESRCH);
	assert_null(cb);
	assert_int_equal(ulp_proc_find(r, -1, &cb), -EINVAL);
	assert_int_equal(ulp_proc_find(r, (int)r->nparts, &cb), -EINVAL);
	assert_int_equal(ulp_proc_next(r, -1, 0), -1);
	assert_int_equal(ulp_proc_next(r, -1, 1), -1);
	pvas_region_destroy(r);
}

/* Loaded and never started: released at once, the partition free and loadable again. */
static void release_of_a_never_started_ulp_frees_its_partition(void **state)
{
	char *argv[] = {probe, "exit", "3", NULL};
	struct pvas_region *r;
	struct ulp_cb *cb, *low;

	assert_int_equal(pvas_region_create(&r, 0, 0, 0), 0);
	/* pvid 70: past the first word of the partition bitmaps */
	assert_int_equal(ulp_proc_load(r, 70, probe, argv, env0, &cb, err, sizeof(err)), 0);
	assert_int_equal(cb->pvid, 70);
	assert_int_equal(ulp_proc_find(r, 70, NULL), ULP_PROC_LOADED);
	assert_int_equal(ulp_proc_next(r, -1, 0), 70);
	assert_int_equal(ulp_proc_next(r, 70, 0), -1);
	assert_int_equal(ulp_proc_next(r, -1, 1), -1);
	assert_int_equal(ulp_proc_load(r, 70, probe, argv, env0, &low, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "already in use"));
	assert_int_equal(ulp_proc_wait(cb), -EINVAL); /* never started */
	assert_null(ulp_proc_task(cb));
	ulp_proc_release(cb, NULL, NULL);
	assert_int_equal(ulp_proc_find(r, 70, NULL), -ESRCH);
	assert_int_equal(ulp_proc_next(r, -1, 0), -1);
	/* free again: loadable, and the lowest free partition is 0 */
	assert_int_equal(ulp_proc_load(r, 70, probe, argv, env0, &cb, err, sizeof(err)), 0);
	assert_int_equal(ulp_proc_load(r, -1, probe, argv, env0, &low, err, sizeof(err)), 0);
	assert_int_equal(low->pvid, 0);
	assert_int_equal(ulp_proc_next(r, -1, 0), 0);
	assert_int_equal(ulp_proc_next(r, 0, 0), 70);
	ulp_proc_release(low, NULL, NULL);
	ulp_proc_release(cb, NULL, NULL);
	assert_int_equal(ulp_proc_next(r, -1, 0), -1);
	pvas_region_destroy(r);
}

/* Started and ended: a zombie keeps its status, is waited for at once (again too), refuses to
 * start again, and is freed by its release. */
static void a_zombie_is_waited_for_at_once_and_keeps_its_status(void **state)
{
	char *argv[] = {probe, "exit", "3", NULL};
	struct pvas_region *r;
	struct ulp_cb *cb;

	assert_int_equal(pvas_region_create(&r, 0, 0, 0), 0);
	assert_int_equal(ulp_trap_install(r), 0);
	assert_int_equal(ulp_sched_set_hooks(&ulp_rt, ulp_proc_sched_hooks()), 0);
	assert_int_equal(ulp_init(1), 0);
	assert_int_equal(ulp_proc_load(r, 5, probe, argv, env0, &cb, err, sizeof(err)), 0);
	assert_int_equal(ulp_proc_start(cb), 0);
	assert_int_equal(ulp_proc_start(cb), -EINVAL); /* RUNNING already */
	assert_int_equal(ulp_proc_wait(cb), 0);
	wait_for_state(r, 5, ULP_PROC_ZOMBIE);
	assert_int_equal(ulp_proc_find(r, 5, NULL), ULP_PROC_ZOMBIE);
	assert_int_equal(ulp_proc_next(r, -1, 1), 5);
	assert_int_equal(ulp_proc_wait(cb), 0); /* a zombie: at once */
	assert_int_equal(ulp_proc_exit_code(cb), 3);
	assert_int_equal(ulp_proc_set_running(cb, NULL), -EINVAL);
	assert_int_equal(ulp_proc_start(cb), -EINVAL);
	ulp_proc_release(cb, NULL, NULL);
	assert_int_equal(ulp_proc_find(r, 5, NULL), -ESRCH);
	assert_int_equal(ulp_proc_next(r, -1, 1), -1);
	assert_int_equal(ulp_fini(), 0);
	ulp_sched_set_hooks(&ulp_rt, NULL);
	pvas_region_destroy(r);
}

/* The one partition layout (include/uapi/pvas_ioctl.h), in the smallest partition the API takes:
 * brk heap to 3/16, mmap area from 1/4, the program below; and a program runs there. */
static void the_smallest_partition_follows_the_one_layout(void **state)
{
	char *argv[] = {probe, "exit", "7", NULL};
	struct pvas_attr pa = {.partition_size = PVAS_PARTITION_MIN};
	struct pvas_task_attr ta = {.workers = 1};
	size_t s = pa.partition_size;
	struct pvas_region *r;
	struct ulp_cb *cb;
	pvd_t pvd;
	int st;

	assert_int_equal(pvas_region_create(&r, 0, 0, s), 0);
	assert_int_equal(ulp_proc_load(r, 2, probe, argv, env0, &cb, err, sizeof(err)), 0);
	assert_true(cb->brk_max == cb->part_lo + s / 16 * 3 && cb->mmap_lo == cb->part_lo + s / 4);
	assert_true(cb->entry > cb->part_lo && cb->entry < cb->part_lo + s / 4);
	ulp_proc_release(cb, NULL, NULL);
	pvas_region_destroy(r);
	/* and it runs there */
	assert_int_equal(pvas_create_attr(&pvd, &pa), 0);
	assert_true(pvas_spawn_attr(pvd, 2, probe, argv, env0, &ta) > 0);
	assert_int_equal(pvas_wait(pvd, 2, &st), 2);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	assert_int_equal(pvas_destroy(pvd), 0);
}

/* Through the pvas_* API: a ULP that ended is waited for with its status, after which its pvid
 * is free: stats and a second wait find nothing. */
static void pvas_wait_on_a_zombie_then_its_pvid_is_free(void **state)
{
	char *argv[] = {probe, "exit", "5", NULL};
	struct pvas_task_attr a = {.workers = 1, .hold = 1};
	struct pvas_ulp_stats st;
	pvd_t pvd;
	pid_t t;
	int s, i;

	assert_int_equal(pvas_create(&pvd), 0);
	t = pvas_spawn_attr(pvd, 9, probe, argv, env0, &a);
	assert_true(t > 0);
	for (i = 0; i < 5000; i++) {
		assert_int_equal(pvas_stats(pvd, 9, &st), 0);
		if (st.ended)
			break;
		usleep(1000);
	}
	assert_true(st.ended);
	assert_int_equal(pvas_wait(pvd, -1, &s), 9);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 5);
	assert_int_equal(pvas_stats(pvd, 9, &st), -ESRCH);
	assert_int_equal(pvas_wait(pvd, 9, &s), -ECHILD);
	assert_int_equal(pvas_task_release(pvd, t), 0);
	assert_int_equal(pvas_task_wait(pvd, t, &s), t);
	assert_int_equal(pvas_destroy(pvd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(lookups_of_a_free_pvid_give_esrch),
	    cmocka_unit_test(release_of_a_never_started_ulp_frees_its_partition),
	    cmocka_unit_test(a_zombie_is_waited_for_at_once_and_keeps_its_status),
	    cmocka_unit_test(the_smallest_partition_follows_the_one_layout),
	    cmocka_unit_test(pvas_wait_on_a_zombie_then_its_pvid_is_free),
	};

	paths();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
