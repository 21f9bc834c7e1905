/* SPDX-License-Identifier: MIT */
/*
 * libulp-mpiyield.so: an MPI rank that waits gives its CPU away, as Open MPI's ranks do with
 * mpi_yield_when_idle. ulpspawn --pmi preloads it into its ranks (docs/mpi.md, "Yield when idle";
 * ULP_MPI_YIELD=0 leaves it out).
 *
 * Why: Debian's MPICH (ch4:ucx) waits for a message, a barrier or a request by calling UCX's
 * ucp_worker_progress in a loop, with no system call and no yield (MPICH's yield is compiled to
 * nothing on Linux). Oversubscribed, a waiting rank then keeps its worker until the preemption
 * tick, while the rank it waits for is ready on the same worker.
 *
 * What: this library defines ucp_worker_progress. It calls UCX's, and when that progressed
 * nothing ULP_MPI_YIELD times in a row (default 1), it yields: as a ULP with pvas_yield, a
 * call into the runtime that switches to the next ULP of the worker (no trap, no kernel entry),
 * as a process with sched_yield. A poll that progressed returns at once. Nothing else changes:
 * the same result is returned, UCX's own function does the work.
 *
 * Only while one thread polls: under MPI_THREAD_MULTIPLE MPICH calls UCX with its lock held, so
 * a yield there leaves the rank's other threads waiting for that lock; each is woken by the
 * holder's unlock only to find it taken again, the holder never lets go, and ranks whose holders
 * wait for each other's threads never progress (4 ranks of 4 threads each hung for good). Once
 * a second thread calls ucp_worker_progress, this rank does not yield again (MPICH's own way).
 *
 * The constructor takes this library out of LD_PRELOAD again, so the program, and what it runs,
 * see the environment ulpspawn was asked to give them.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvas.h"

typedef unsigned (*progress_fn)(void *worker);

static progress_fn real_progress;
static unsigned yield_after = 1;    /* idle polls before a yield */
static unsigned idle;		    /* idle polls in a row (a hint: threads may race on it) */
static unsigned long polls, yields; /* ULP_MPI_YIELD_STATS=1: printed at exit */
static int stats;
static unsigned long poller; /* the thread that polls (pthread_self), 0 before the first poll */
static int several;	     /* another thread polled too: no more yields (see above) */

__attribute__((visibility("default"))) unsigned ucp_worker_progress(void *worker);

/* UCX's ucp_worker_progress: the next definition after ours, or, when libucp.so.0 was opened
 * without RTLD_GLOBAL (then it is not in the global scope that RTLD_NEXT searches), its own. */
static progress_fn find_real(void)
{
	progress_fn f = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
	void *h;

	if (!f && (h = dlopen("libucp.so.0", RTLD_NOW | RTLD_NOLOAD))) {
		f = (progress_fn)dlsym(h, "ucp_worker_progress");
		dlclose(h);
	}
	if (!f || f == ucp_worker_progress) {
		/* Only UCX's callers call this: UCX must be loaded. */
		fprintf(stderr, "libulp-mpiyield: ucp_worker_progress: UCX's definition not found "
				"(libucp.so.0 not loaded)\n");
		abort();
	}
	return f;
}

/* 1 while only the calling thread has ever polled. */
static int one_poller(void)
{
	unsigned long me = (unsigned long)pthread_self(), first = 0;

	if (__atomic_load_n(&several, __ATOMIC_RELAXED))
		return 0;
	if (__atomic_compare_exchange_n(&poller, &first, me, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED) ||
	    first == me)
		return 1;
	__atomic_store_n(&several, 1, __ATOMIC_RELAXED);
	return 0;
}

unsigned ucp_worker_progress(void *worker)
{
	progress_fn f = __atomic_load_n(&real_progress, __ATOMIC_ACQUIRE);
	unsigned n;

	if (!f) {
		f = find_real();
		__atomic_store_n(&real_progress, f, __ATOMIC_RELEASE);
	}
	n = f(worker);
	if (stats)
		__atomic_add_fetch(&polls, 1, __ATOMIC_RELAXED);
	if (n || !yield_after || !one_poller()) {
		__atomic_store_n(&idle, 0, __ATOMIC_RELAXED);
		return n;
	}
	if (__atomic_add_fetch(&idle, 1, __ATOMIC_RELAXED) >= yield_after) {
		__atomic_store_n(&idle, 0, __ATOMIC_RELAXED);
		if (stats)
			__atomic_add_fetch(&yields, 1, __ATOMIC_RELAXED);
		if (pvas_yield() != 0) /* not a ULP */
			sched_yield();
	}
	return n;
}

/* LD_PRELOAD without the entries naming this library (path as loaded). */
static void unpreload(void)
{
	const char *v = getenv("LD_PRELOAD");
	Dl_info info;
	char *out, *copy, *tok, *save = NULL;
	size_t k = 0;

	if (!v || !dladdr((void *)unpreload, &info) || !info.dli_fname)
		return;
	out = malloc(strlen(v) + 1);
	copy = strdup(v);
	if (!out || !copy) {
		free(out);
		free(copy);
		return;
	}
	/* ld.so separates entries with spaces or colons */
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (!strcmp(tok, info.dli_fname))
			continue;
		if (k)
			out[k++] = ':';
		memcpy(out + k, tok, strlen(tok));
		k += strlen(tok);
	}
	out[k] = 0;
	if (k)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(out);
	free(copy);
}

static void print_stats(void)
{
	const char *rank = getenv("PMI_RANK");

	fprintf(stderr, "libulp-mpiyield: rank %s: %lu polls, %lu yields%s\n", rank ? rank : "?",
		polls, yields, several ? " (then several threads polled: no yields)" : "");
}

__attribute__((constructor)) static void init(void)
{
	const char *e = getenv("ULP_MPI_YIELD"), *st = getenv("ULP_MPI_YIELD_STATS");
	char *end;
	unsigned long v;

	if (e && *e) {
		v = strtoul(e, &end, 10);
		if (!*end && v <= 1000000)
			yield_after = (unsigned)v;
		else
			fprintf(stderr,
				"libulp-mpiyield: ULP_MPI_YIELD=%s: not a number of polls (0 to "
				"1000000; 0: never yield); using %u\n",
				e, yield_after);
	}
	if (st && !strcmp(st, "1")) {
		stats = 1;
		atexit(print_stats);
	}
	unpreload();
}
