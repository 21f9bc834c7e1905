/* SPDX-License-Identifier: MIT */
/*
 * Create+join overhead per thread on one worker: a loop of ulp_thread_create + ulp_thread_join of
 * an empty function, compared with one Boost fcontext switch (half a round trip) measured in the
 * same run.
 *
 * creator=ult: the loop runs in a ulp thread, the normal case: work-first, so the child runs at
 * once and the creator is queued and picked up again when the child ends (two switches).
 * creator=main: the loop runs in the ulp_init thread, which is pinned and creates help-first: the
 * child is queued, and the join suspends the creator until the child has run.
 */
#include "bench.h"
#include "ulp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Short samples, many of them: on a shared machine a sample hit by preemption is an outlier the
 * median drops, where a long one would be hit every time. */
#define TARGET_NS (2 * 1000 * 1000)
#define REPS 21
#define WARMUP 1000

enum { FCTX, FROM_ULT, FROM_MAIN, NVAR };

static void *empty(void *arg)
{
	return arg;
}

static uint64_t create_join_loop(long iters)
{
	ulp_thread_t t;
	uint64_t t0 = 0;
	long i;
	int rc;

	for (i = 0; i < iters + WARMUP; i++) {
		if (i == WARMUP)
			t0 = bench_now_ns();
		rc = ulp_thread_create(&t, empty, NULL);
		if (rc)
			bench_give_up("bench/create", "ulp_thread_create", -rc);
		rc = ulp_thread_join(t, NULL);
		if (rc)
			bench_give_up("bench/create", "ulp_thread_join", -rc);
	}
	return bench_now_ns() - t0;
}

struct loop_arg {
	long iters;
	uint64_t ns;
};

static void *creator(void *arg)
{
	struct loop_arg *la = arg;

	la->ns = create_join_loop(la->iters);
	return NULL;
}

static uint64_t from_ult(void *arg, long iters)
{
	struct loop_arg la = {.iters = iters};
	ulp_thread_t t;
	int rc = ulp_thread_create(&t, creator, &la);

	if (rc)
		bench_give_up("bench/create", "ulp_thread_create of the creating thread", -rc);
	ulp_thread_join(t, NULL);
	return la.ns;
}

static uint64_t from_main(void *arg, long iters)
{
	return create_join_loop(iters);
}

static const struct variant {
	const char *name;
	bench_loop_fn fn;
} vars[NVAR] = {
    [FCTX] = {"fcontext", bench_fcontext_roundtrips},
    [FROM_ULT] = {"ult", from_ult},
    [FROM_MAIN] = {"main", from_main},
};

int main(void)
{
	int reps = bench_reps(REPS), cpu = bench_cpu(), r, k, rc;
	long iters[NVAR];
	double *ns[NVAR], *x[NVAR], fsw, flo;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = bench_pin(cpu);
	if (rc)
		bench_give_up("bench/create", "sched_setaffinity to BENCH_CPU", -rc);
	rc = ulp_init(1);
	if (rc)
		bench_give_up("bench/create", "ulp_init(1)", -rc);
	{
		const struct bench_ir_variant ir[] = {
		    {"fcontext", bench_fcontext_roundtrips},
		    {"ult", from_ult},
		    {"main", from_main},
		};
		bench_ir_mode("bench/create", ir, 3);
	}
	for (k = 0; k < NVAR; k++) {
		ns[k] = calloc((size_t)reps, sizeof(double));
		x[k] = calloc((size_t)reps, sizeof(double));
		if (!ns[k] || !x[k])
			bench_give_up("bench/create", "calloc", ENOMEM);
		iters[k] = bench_calibrate(vars[k].fn, NULL, TARGET_NS, 10000);
	}
	for (r = 0; r < reps; r++) {
		for (k = 0; k < NVAR; k++)
			ns[k][r] = (double)vars[k].fn(NULL, iters[k]) / (double)iters[k];
		/* One fcontext switch is half a round trip. */
		for (k = 0; k < NVAR; k++)
			x[k][r] = ns[k][r] / (ns[FCTX][r] / 2);
	}
	ulp_fini();
	flo = bench_min(ns[FCTX], reps) / 2;
	fsw = bench_median(ns[FCTX], reps) / 2;
	printf("BENCH create_env cpu=%d reps=%d workers=1 fcontext_switch_ns=%.1f "
	       "fcontext_switch_min_ns=%.1f\n",
	       cpu, reps, fsw, flo);
	for (k = FROM_ULT; k < NVAR; k++) {
		double m = bench_median(x[k], reps), lo = bench_min(ns[k], reps);

		printf("BENCH create_join creator=%s workers=1 ns=%.1f min_ns=%.1f "
		       "x_fcontext_switch=%.2f min_x_fcontext_switch=%.2f iters=%ld",
		       vars[k].name, bench_median(ns[k], reps), lo, m, lo / flo, iters[k]);
		if (k == FROM_ULT)
			printf(" target_max=5 met=%s", bench_met(m, 5, 1));
		/* Issue 11's target, against a whole fcontext round trip, for both creators. */
		printf(" x_fcontext_rt=%.2f min_x_fcontext_rt=%.2f target_rt_max=4 met_rt=%s\n",
		       m / 2, lo / flo / 2, bench_met(m / 2, 4, 1));
	}
	return 0;
}
