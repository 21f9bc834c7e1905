/* SPDX-License-Identifier: MIT */
/* ulp_init / ulp_fini: read the environment, start and stop the workers. */
#include "ulp_sched.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_STACK (64 * 1024)
#define SCHED_STACK (64 * 1024)
#define MAX_WORKERS 1024
#define FINI_WAIT_ROUNDS 200

static struct ulp_task main_task;
static pthread_t *threads;

unsigned ulp_cpus(void)
{
	cpu_set_t *set;
	size_t size;
	int n = 0, ncpu;
	long online = sysconf(_SC_NPROCESSORS_CONF);

	/* sized for every CPU the kernel may have: a fixed cpu_set_t (1024) fails with EINVAL
	 * on a kernel built for more */
	ncpu = online > 1024 ? (int)online : 1024;
	set = CPU_ALLOC((size_t)ncpu);
	if (set) {
		size = CPU_ALLOC_SIZE((size_t)ncpu);
		CPU_ZERO_S(size, set);
		if (sched_getaffinity(0, size, set) == 0)
			n = CPU_COUNT_S(size, set);
		CPU_FREE(set);
	}
	if (n <= 0) {
		online = sysconf(_SC_NPROCESSORS_ONLN);
		n = online > 0 ? (int)online : 1;
	}
	return (unsigned)n;
}

/* Parse a size with an optional k/m/g suffix. -1 on a malformed value. */
long long ulp_parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end | 0x20) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	}
	end += shift != 0;
	if (*end == 'b' || *end == 'B')
		end++;
	/* 8589934592g shifted would wrap around to a small or negative size */
	if (*end || v > ((unsigned long long)LLONG_MAX >> shift))
		return -1;
	return (long long)(v << shift);
}

static void *worker_main(void *arg)
{
	ulp_sched_worker_run(&ulp_rt, (unsigned)(uintptr_t)arg);
	return NULL;
}

static int read_config(unsigned *workers, size_t *stack)
{
	const char *s = getenv("ULP_WORKERS");
	long long v;

	if (*workers == 0 && s) {
		v = ulp_parse_size(s);
		if (v <= 0 || v > MAX_WORKERS)
			return -EINVAL;
		*workers = (unsigned)v;
	}
	if (*workers == 0)
		*workers = ulp_cpus();
	if (*workers > MAX_WORKERS)
		return -EINVAL;
	*stack = DEFAULT_STACK;
	s = getenv("ULP_STACK_SIZE");
	if (s) {
		v = ulp_parse_size(s);
		if (v < 16 * 1024 || v > (1LL << 30))
			return -EINVAL;
		*stack = ((size_t)v + ulp_page_size() - 1) & ~(ulp_page_size() - 1);
	}
	return 0;
}

int ulp_init(unsigned nworkers)
{
	struct ulp_sched_attr attr = {0};
	unsigned i;
	int rc;

	ulp_arch_init();
	rc = read_config(&nworkers, &attr.stack_size);
	if (rc)
		return rc;
	attr.nworkers = nworkers;
	attr.sched_stack = SCHED_STACK;
	/* The hooks set on ulp_rt before (ulp_sched_set_hooks) stay. */
	attr.hooks = &ulp_rt.hooks;
	rc = ulp_sched_create(&ulp_rt, &attr);
	if (rc)
		return rc;
	threads = calloc(nworkers, sizeof(*threads));
	if (!threads) {
		ulp_sched_destroy(&ulp_rt);
		return -ENOMEM;
	}
	memset(&main_task, 0, sizeof(main_task));
	ulp_sched_adopt_caller(&ulp_rt, &main_task);
	ulp_sched_start(&ulp_rt);
	for (i = 1; i < nworkers; i++) {
		if (pthread_create(&threads[i], NULL, worker_main, (void *)(uintptr_t)i) != 0) {
			ulp_sched_trim(&ulp_rt, i); /* run with the workers we got */
			break;
		}
	}
	return 0;
}

int ulp_fini(void)
{
	struct ulp_worker *w = ulp_worker_self();
	unsigned i, n = ulp_rt.nworkers;

	if (!ulp_sched_running(&ulp_rt))
		return -EINVAL;
	if (!w || w->cur != &main_task)
		return -EPERM;
	/* A thread that returned is counted until its worker has switched off its stack: give
	 * threads that are ending a moment (bounded, so a blocked thread still gives -EBUSY). */
	for (i = 0; ulp_live_count(&ulp_rt) != 0 && i < FINI_WAIT_ROUNDS; i++) {
		ulp_task_yield(&main_task);
		if (i > FINI_WAIT_ROUNDS / 2)
			usleep(1000);
	}
	if (ulp_live_count(&ulp_rt) != 0)
		return -EBUSY;
	ulp_sched_stop(&ulp_rt);
	for (i = 1; i < n; i++)
		pthread_join(threads[i], NULL);
	free(main_task.keys);
	main_task.keys = NULL;
	ulp_stacks_drain(main_task.home);
	if (main_task.home->altstack) {
		stack_t off = {.ss_flags = SS_DISABLE};
		sigaltstack(&off, NULL);
	}
	ulp_arch_self_set(NULL);
	ulp_sched_destroy(&ulp_rt);
	free(threads);
	threads = NULL;
	return 0;
}

unsigned ulp_num_workers(void)
{
	return ulp_sched_running(&ulp_rt) ? ulp_rt.nworkers : 0;
}
