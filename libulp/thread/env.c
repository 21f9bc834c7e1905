/* SPDX-License-Identifier: MIT */
/* ulp_init / ulp_fini: read the environment, start and stop the workers. */
#include "ulp_sched.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
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
	ulp_worker_run(arg);
	return NULL;
}

static void free_workers(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		ulp_worker_destroy(ulp_rt.workers[i], SCHED_STACK);
		free(ulp_rt.workers[i]);
	}
	free(ulp_rt.workers);
	ulp_rt.workers = NULL;
	free(threads);
	threads = NULL;
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
	if (*workers == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		*workers = n > 0 ? (unsigned)n : 1;
	}
	if (*workers > MAX_WORKERS)
		return -EINVAL;
	*stack = DEFAULT_STACK;
	s = getenv("ULP_STACK_SIZE");
	if (s) {
		v = ulp_parse_size(s);
		if (v < 16 * 1024 || v > (1LL << 30))
			return -EINVAL;
		*stack = ((size_t)v + ulp_rt.page_size - 1) & ~(ulp_rt.page_size - 1);
	}
	return 0;
}

int ulp_init(unsigned nworkers)
{
	struct ulp_worker *w0;
	unsigned i;
	size_t stack;
	int rc, expected = 0;

	ulp_arch_init();
	ulp_rt.page_size = (size_t)sysconf(_SC_PAGESIZE);
	rc = read_config(&nworkers, &stack);
	if (rc)
		return rc;
	if (!atomic_compare_exchange_strong(&ulp_rt.started, &expected, 2)) /* 2: starting */
		return -EBUSY;
	ulp_rt.stack_size = stack;
	ulp_rt.nworkers = nworkers;
	atomic_store(&ulp_rt.shutdown, 0);
	atomic_store(&ulp_rt.live_tasks, 0);
	ulp_rt.workers = calloc(nworkers, sizeof(*ulp_rt.workers));
	threads = calloc(nworkers, sizeof(*threads));
	if (!ulp_rt.workers || !threads)
		goto nomem;
	for (i = 0; i < nworkers; i++) {
		ulp_rt.workers[i] =
		    aligned_alloc(64, (sizeof(struct ulp_worker) + 63) & ~(size_t)63);
		if (!ulp_rt.workers[i])
			goto nomem_partial;
		memset(ulp_rt.workers[i], 0, sizeof(struct ulp_worker));
		if (ulp_worker_init(ulp_rt.workers[i], i, &ulp_rt) != 0) {
			free(ulp_rt.workers[i]);
			goto nomem_partial;
		}
	}
	w0 = ulp_rt.workers[0];
	if (ulp_worker0_sched_stack(w0, SCHED_STACK) != 0)
		goto nomem_all;
	memset(&main_task, 0, sizeof(main_task));
	main_task.kind = ULP_TASK_MAIN;
	main_task.state = ULP_RUNNING;
	main_task.worker = w0;
	main_task.home = w0;
	main_task.pinned =
	    1; /* its TLS state (errno, libc, the caller's __thread data) stays valid */
	ulp_worker_enter(w0);
	w0->cur = &main_task;
	atomic_store(&ulp_rt.started, 1);
	for (i = 1; i < nworkers; i++) {
		if (pthread_create(&threads[i], NULL, worker_main, ulp_rt.workers[i]) != 0) {
			ulp_rt.nworkers = i; /* run with the workers we got */
			break;
		}
	}
	return 0;

nomem_all:
	i = nworkers;
nomem_partial:
	free_workers(i);
	atomic_store(&ulp_rt.started, 0);
	return -ENOMEM;
nomem:
	free(ulp_rt.workers);
	free(threads);
	ulp_rt.workers = NULL;
	threads = NULL;
	atomic_store(&ulp_rt.started, 0);
	return -ENOMEM;
}

int ulp_fini(void)
{
	struct ulp_worker *w = ulp_worker_self();
	unsigned i, n = ulp_rt.nworkers;

	if (atomic_load(&ulp_rt.started) != 1)
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
	atomic_store(&ulp_rt.shutdown, 1);
	ulp_sched_wake_all(&ulp_rt);
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
	free_workers(n);
	ulp_rt.nworkers = 0;
	atomic_store(&ulp_rt.started, 0);
	return 0;
}

unsigned ulp_num_workers(void)
{
	return atomic_load(&ulp_rt.started) == 1 ? ulp_rt.nworkers : 0;
}
