/* SPDX-License-Identifier: MIT */
/*
 * Scheduler instances: creating, starting, stopping and destroying one, its hooks and its
 * references. The layers above (ulp_init, PVAS tasks) go through these functions; none of them
 * writes a field of struct ulp_runtime or struct ulp_worker itself.
 */
#include "ulp_sched.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_STACK (64 * 1024)

struct ulp_runtime ulp_rt;

static size_t page_size = 4096;

/* Before main: trap handlers read the page size with a ULP's TLS loaded (no sysconf there). */
__attribute__((constructor)) static void page_size_init(void)
{
	long v = sysconf(_SC_PAGESIZE);

	if (v > 0)
		page_size = (size_t)v;
}

size_t ulp_page_size(void)
{
	return page_size;
}

static void free_workers(struct ulp_runtime *rt, unsigned n)
{
	unsigned i;

	for (i = 0; rt->workers && i < n; i++) {
		if (!rt->workers[i])
			continue;
		ulp_worker_destroy(rt->workers[i], rt->sched_stack);
		free(rt->workers[i]);
	}
	free(rt->workers);
	rt->workers = NULL;
}

int ulp_sched_create(struct ulp_runtime *rt, const struct ulp_sched_attr *attr)
{
	size_t wsize = (sizeof(struct ulp_worker) + 63) & ~(size_t)63;
	struct ulp_sched_hooks hooks = {0};
	int expected = 0;
	unsigned i;

	if (!attr || !attr->nworkers || (attr->stack_size & (page_size - 1)))
		return -EINVAL;
	if (!atomic_compare_exchange_strong(&rt->started, &expected, 2)) /* 2: being set up */
		return -EBUSY;
	rt->nworkers = attr->nworkers;
	rt->stack_size = attr->stack_size ? attr->stack_size : DEFAULT_STACK;
	rt->accounting = attr->accounting;
	rt->no_libc = attr->no_libc;
	rt->sched_stack = attr->sched_stack;
	if (attr->hooks) /* may be rt's own hooks (kept across ulp_init/ulp_fini) */
		hooks = *attr->hooks;
	rt->hooks = hooks;
	atomic_store(&rt->shutdown, 0);
	atomic_store(&rt->live_tasks, 0);
	atomic_store(&rt->sleepers, 0);
	rt->workers = calloc(rt->nworkers, sizeof(*rt->workers));
	if (!rt->workers)
		goto nomem;
	for (i = 0; i < rt->nworkers; i++) {
		rt->workers[i] = aligned_alloc(64, wsize);
		if (!rt->workers[i])
			goto nomem;
		memset(rt->workers[i], 0, wsize);
		if (ulp_worker_init(rt->workers[i], i, rt) != 0) {
			free(rt->workers[i]);
			rt->workers[i] = NULL;
			goto nomem;
		}
	}
	if (rt->sched_stack && ulp_worker0_sched_stack(rt->workers[0], rt->sched_stack) != 0)
		goto nomem;
	return 0;
nomem:
	free_workers(rt, rt->nworkers);
	rt->nworkers = 0;
	atomic_store(&rt->started, 0);
	return -ENOMEM;
}

int ulp_sched_set_hooks(struct ulp_runtime *rt, const struct ulp_sched_hooks *hooks)
{
	if (atomic_load(&rt->started) == 1)
		return -EBUSY;
	memset(&rt->hooks, 0, sizeof(rt->hooks));
	if (hooks)
		rt->hooks = *hooks;
	return 0;
}

int ulp_sched_set_ctx(struct ulp_runtime *rt, void *ctx)
{
	void *none = NULL;

	return atomic_compare_exchange_strong(&rt->ctx, &none, ctx) ? 0 : -EBUSY;
}

void ulp_sched_start(struct ulp_runtime *rt)
{
	atomic_store_explicit(&rt->started, 1, memory_order_release);
}

void ulp_sched_stop(struct ulp_runtime *rt)
{
	atomic_store(&rt->shutdown, 1);
	ulp_sched_wake_all(rt);
}

void ulp_sched_destroy(struct ulp_runtime *rt)
{
	free_workers(rt, rt->nworkers);
	rt->nworkers = 0;
	atomic_store(&rt->started, 0);
}

void ulp_sched_trim(struct ulp_runtime *rt, unsigned nworkers)
{
	if (nworkers && nworkers < rt->nworkers)
		rt->nworkers = nworkers; /* the rest stay allocated: destroy frees all of them */
}

void ulp_sched_worker_run(struct ulp_runtime *rt, unsigned i)
{
	ulp_worker_run(rt->workers[i]);
}

int ulp_sched_adopt_caller(struct ulp_runtime *rt, struct ulp_task *main)
{
	struct ulp_worker *w0 = rt->workers[0];

	if (!rt->sched_stack)
		return -EINVAL; /* worker 0's loop needs a stack of its own */
	main->kind = ULP_TASK_MAIN;
	main->state = ULP_RUNNING;
	main->worker = w0;
	main->home = w0;
	/* Pinned: its TLS state (errno, libc, the caller's __thread data) stays valid. */
	main->pinned = 1;
	ulp_worker_enter(w0);
	w0->cur = main;
	return 0;
}

void ulp_sched_ref(struct ulp_runtime *rt)
{
	atomic_fetch_add(&rt->live_tasks, 1);
}

int ulp_sched_tryref(struct ulp_runtime *rt)
{
	long n = atomic_load(&rt->live_tasks);

	while (n > 0)
		if (atomic_compare_exchange_weak(&rt->live_tasks, &n, n + 1))
			return 0;
	return -ESRCH;
}

long ulp_sched_unref(struct ulp_runtime *rt)
{
	return atomic_fetch_sub(&rt->live_tasks, 1) - 1;
}

long ulp_sched_refs(struct ulp_runtime *rt)
{
	return atomic_load(&rt->live_tasks);
}

struct ulp_worker *ulp_sched_worker(struct ulp_runtime *rt, unsigned i)
{
	return rt->workers[i % rt->nworkers];
}

void ulp_task_place(struct ulp_task *t, struct ulp_worker *w)
{
	t->worker = w;
}

void *ulp_worker_altstack(struct ulp_worker *w)
{
	if (!w->altstack)
		w->altstack = ulp_raw_mmap(ULP_ALTSTACK_SIZE, 0);
	return w->altstack;
}
