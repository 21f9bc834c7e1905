/* SPDX-License-Identifier: MIT */
/*
 * fib(30) with one thread per call (create a child for n-1, compute n-2 in place, join), on 1 and
 * 2 workers, against the plain recursive function. The root runs in a ulp thread created by the
 * ulp_init thread, so it can be stolen like any other (the ulp_init thread itself is pinned).
 * Nothing is pinned here: the workers need both CPUs.
 *
 * The machine is shared, so how much two CPUs can give is measured in the same run too: the plain
 * function run PAR_ROUNDS times on one kernel thread, then on each of two at once (the line
 * fib_machine). A ULT speedup can only be judged against that (vs_machine=). The CPU time the
 * process used is measured as well: work_inflation = CPU time on 2 workers / CPU time on 1 is
 * what sharing costs the runtime (cache lines moving between the CPUs, lock contention); ideal
 * is 1.00. It shows only while both workers run at once, so it understates when another job
 * holds a CPU (fib_machine speedup well below 2).
 *
 * BENCH_FIB_SCALE=1,2,4,...: also fib(FIB_SCALE_N) on each of these worker counts (fib_scale
 * lines), each with what as many kernel threads give on the same machine in the same run
 * (machine=, vs_machine=): for hosts with more CPUs than the development VM's two.
 */
#include "bench.h"
#include "ulp.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FIB_N 30
#define PAR_ROUNDS 16
#define FIB_SCALE_N 34

/* noipa: else gcc finds it const and computes fib(30) once for all repetitions. */
static long __attribute__((noipa)) fib_plain(long n)
{
	return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2);
}

static void *fib_ult(void *arg)
{
	intptr_t n = (intptr_t)arg;
	ulp_thread_t child;
	void *a, *b;
	int rc;

	if (n < 2)
		return (void *)n;
	rc = ulp_thread_create(&child, fib_ult, (void *)(n - 1));
	if (rc)
		bench_give_up("bench/fib", "ulp_thread_create", -rc);
	b = fib_ult((void *)(n - 2));
	ulp_thread_join(child, &a);
	return (void *)((intptr_t)a + (intptr_t)b);
}

static long expected;

static double run_plain(void)
{
	uint64_t t0 = bench_now_ns();
	long v = fib_plain(FIB_N);
	double ms = (double)(bench_now_ns() - t0) / 1e6;

	if (v != expected)
		fprintf(stderr, "bench/fib: plain fib(%d) = %ld?\n", FIB_N, v);
	return ms;
}

static void *plain_rounds(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < PAR_ROUNDS; i++)
		sum += fib_plain(FIB_N);
	return (void *)sum;
}

/* Speedup of two kernel threads doing the same work at once over one doing it alone. */
static double machine_speedup(void)
{
	pthread_t t;
	uint64_t t0, t1, t2;

	t0 = bench_now_ns();
	plain_rounds(NULL);
	t1 = bench_now_ns();
	if (pthread_create(&t, NULL, plain_rounds, NULL))
		return 0;
	plain_rounds(NULL);
	pthread_join(t, NULL);
	t2 = bench_now_ns();
	return 2.0 * (double)(t1 - t0) / (double)(t2 - t1);
}

/* Speedup of n kernel threads each doing PAR_ROUNDS at once over one doing it alone. */
static double machine_speedup_n(unsigned n)
{
	pthread_t t[256];
	uint64_t t0, t1, t2;
	unsigned i, made = 0;

	t0 = bench_now_ns();
	plain_rounds(NULL);
	t1 = bench_now_ns();
	for (i = 1; i < n && i < 256; i++)
		made += pthread_create(&t[i], NULL, plain_rounds, NULL) == 0;
	plain_rounds(NULL);
	for (i = 1; i <= made; i++)
		pthread_join(t[i], NULL);
	t2 = bench_now_ns();
	return (double)(made + 1) * (double)(t1 - t0) / (double)(t2 - t1);
}

static double run_ult_n(unsigned workers, long n, double *cpu_ms);

/* fib(FIB_N) in a fresh runtime of `workers` workers; wall ms returned, CPU ms in *cpu_ms,
 * start-up and shutdown excluded. */
static double run_ult(unsigned workers, double *cpu_ms)
{
	return run_ult_n(workers, FIB_N, cpu_ms);
}

/* Worker counts in BENCH_FIB_SCALE, each against kernel threads (file comment). */
static void run_scale(int reps)
{
	const char *list = getenv("BENCH_FIB_SCALE");
	double base = 0, *w, *m, cpu;
	long want = fib_plain(FIB_SCALE_N);
	char *end;
	int r;

	if (!list || !*list)
		return;
	w = calloc((size_t)reps, sizeof(double));
	m = calloc((size_t)reps, sizeof(double));
	if (!w || !m)
		bench_give_up("bench/fib", "calloc", ENOMEM);
	expected = want;
	while (*list) {
		unsigned long n = strtoul(list, &end, 10);
		double mw, mm, speedup;

		if (end == list || !n || n > 256) {
			fprintf(stderr, "bench/fib: BENCH_FIB_SCALE: bad worker count at '%s'\n", list);
			break;
		}
		for (r = 0; r < reps; r++) {
			m[r] = machine_speedup_n((unsigned)n);
			w[r] = run_ult_n((unsigned)n, FIB_SCALE_N, &cpu);
		}
		mw = bench_median(w, reps);
		mm = bench_median(m, reps);
		if (!base)
			base = mw * (double)n; /* the first count's time, as if on one worker */
		speedup = base / mw;
		printf("BENCH fib_scale n=%d workers=%lu ms=%.2f min_ms=%.2f speedup=%.2f machine=%.2f "
		       "vs_machine=%.2f\n",
		       FIB_SCALE_N, n, mw, bench_min(w, reps), speedup, mm, speedup / mm);
		list = *end == ',' ? end + 1 : end;
	}
	expected = fib_plain(FIB_N);
	free(w);
	free(m);
}

static double run_ult_n(unsigned workers, long n, double *cpu_ms)
{
	ulp_thread_t root;
	uint64_t t0, c0;
	void *v;
	double ms;
	int rc = ulp_init(workers);

	if (rc)
		bench_give_up("bench/fib", "ulp_init", -rc);
	c0 = bench_cpu_ns();
	t0 = bench_now_ns();
	rc = ulp_thread_create(&root, fib_ult, (void *)(intptr_t)n);
	if (rc)
		bench_give_up("bench/fib", "ulp_thread_create of the root", -rc);
	ulp_thread_join(root, &v);
	ms = (double)(bench_now_ns() - t0) / 1e6;
	*cpu_ms = (double)(bench_cpu_ns() - c0) / 1e6;
	if ((intptr_t)v != expected)
		fprintf(stderr, "bench/fib: fib(%ld) on %u workers = %ld, expected %ld\n", n,
			workers, (long)(intptr_t)v, expected);
	ulp_fini();
	return ms;
}

/* Instruction-count mode (bench/ir.sh): iters is n. */
static uint64_t ir_plain(void *arg, long n)
{
	return (uint64_t)fib_plain(n);
}

static uint64_t ir_ult(void *arg, long n)
{
	ulp_thread_t root;
	void *v;
	int rc = ulp_init(1);

	if (rc)
		bench_give_up("bench/fib", "ulp_init(1)", -rc);
	rc = ulp_thread_create(&root, fib_ult, (void *)(intptr_t)n);
	if (rc)
		bench_give_up("bench/fib", "ulp_thread_create of the root", -rc);
	ulp_thread_join(root, &v);
	ulp_fini();
	if ((intptr_t)v != fib_plain(n))
		fprintf(stderr, "bench/fib: fib(%ld) = %ld?\n", n, (long)(intptr_t)v);
	return 0;
}

int main(void)
{
	int reps = bench_reps(7), r;
	double *plain, *w1, *w2, *speedup, *ovh1, *ovh2, *mach, *c1, *c2, *infl, p, m1, m2, s, ms;
	double cpu;
	long threads;

	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		const struct bench_ir_variant ir[] = {{"plain", ir_plain}, {"ult", ir_ult}};
		bench_ir_mode("bench/fib", ir, 2);
	}
	bench_unpin();
	plain = calloc((size_t)reps, sizeof(double));
	w1 = calloc((size_t)reps, sizeof(double));
	w2 = calloc((size_t)reps, sizeof(double));
	speedup = calloc((size_t)reps, sizeof(double));
	ovh1 = calloc((size_t)reps, sizeof(double));
	ovh2 = calloc((size_t)reps, sizeof(double));
	mach = calloc((size_t)reps, sizeof(double));
	c1 = calloc((size_t)reps, sizeof(double));
	c2 = calloc((size_t)reps, sizeof(double));
	infl = calloc((size_t)reps, sizeof(double));
	if (!plain || !w1 || !w2 || !speedup || !ovh1 || !ovh2 || !mach || !c1 || !c2 || !infl)
		bench_give_up("bench/fib", "calloc", ENOMEM);
	expected = fib_plain(FIB_N);
	/* One thread per call with n >= 2: fib(n+1) - 1 of them. */
	threads = fib_plain(FIB_N + 1) - 1;
	run_ult(1, &cpu); /* warm-up: page in the code, the allocator, the stacks' first touches */
	for (r = 0; r < reps; r++) {
		mach[r] = machine_speedup();
		plain[r] = run_plain();
		w1[r] = run_ult(1, &c1[r]);
		w2[r] = run_ult(2, &c2[r]);
		infl[r] = c2[r] / c1[r];
		speedup[r] = w1[r] / w2[r];
		ovh1[r] = w1[r] / plain[r];
		ovh2[r] = w2[r] / plain[r];
	}
	p = bench_median(plain, reps);
	m1 = bench_median(w1, reps);
	m2 = bench_median(w2, reps);
	s = bench_median(speedup, reps);
	ms = bench_median(mach, reps);
	printf("BENCH fib n=%d impl=plain ms=%.2f min_ms=%.2f reps=%d\n", FIB_N, p,
	       bench_min(plain, reps), reps);
	printf("BENCH fib_machine threads=2 speedup=%.2f max_speedup=%.2f\n", ms,
	       bench_max(mach, reps));
	printf("BENCH fib n=%d impl=ult workers=1 ms=%.2f min_ms=%.2f threads=%ld "
	       "ns_per_thread=%.1f overhead_vs_plain=%.1f cpu_ms=%.2f\n",
	       FIB_N, m1, bench_min(w1, reps), threads, (m1 - p) * 1e6 / (double)threads,
	       bench_median(ovh1, reps), bench_median(c1, reps));
	printf("BENCH fib n=%d impl=ult workers=2 ms=%.2f min_ms=%.2f threads=%ld "
	       "overhead_vs_plain=%.1f speedup_vs_1w=%.2f max_speedup_vs_1w=%.2f "
	       "vs_machine=%.2f cpu_ms=%.2f work_inflation=%.2f target_min=1.8 met=%s\n",
	       FIB_N, m2, bench_min(w2, reps), threads, bench_median(ovh2, reps), s,
	       bench_max(speedup, reps), s / ms, bench_median(c2, reps), bench_median(infl, reps),
	       bench_met(s, 1.8, 0));
	run_scale(reps);
	return 0;
}
