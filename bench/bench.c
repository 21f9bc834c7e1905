/* SPDX-License-Identifier: MIT */
#include "bench.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulp.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bench_unpin(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bench_cpu(void)
{
	const char *s = getenv("BENCH_CPU");
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (s && *s)
		return atoi(s);
	return n > 0 ? (int)n - 1 : 0;
}

int bench_reps(int def)
{
	const char *s = getenv("BENCH_REPS");
	int n = s ? atoi(s) : 0;

	return n >= 1 && n <= 101 ? n : def;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

long bench_calibrate(bench_loop_fn fn, void *arg, uint64_t target_ns, long min_iters)
{
	long iters = min_iters;
	uint64_t t;

	/* Grow until one run takes a tenth of the target, so timer granularity does not matter. */
	for (;;) {
		t = fn(arg, iters);
		if (t >= target_ns / 10 || iters > (1L << 40))
			break;
		iters *= 4;
	}
	if (t == 0)
		t = 1;
	iters = (long)((double)iters * (double)target_ns / (double)t);
	return iters < min_iters ? min_iters : iters;
}

double bench_max(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

void bench_ir_mode(const char *prog, const struct bench_ir_variant *v, int n)
{
	const char *s = getenv("BENCH_IR"), *colon;
	long iters;
	int k;

	if (!s)
		return;
	colon = strchr(s, ':');
	iters = colon ? atol(colon + 1) : 0;
	for (k = 0; colon && iters > 0 && k < n; k++) {
		if (strlen(v[k].name) == (size_t)(colon - s) && !strncmp(v[k].name, s, colon - s)) {
			v[k].fn(NULL, iters);
			exit(0);
		}
	}
	fprintf(stderr, "%s: BENCH_IR=%s: expected NAME:ITERS with NAME one of", prog, s);
	for (k = 0; k < n; k++)
		fprintf(stderr, " %s", v[k].name);
	fprintf(stderr, "\n");
	exit(2);
}

const char *bench_met(double v, double limit, int is_max)
{
	return (is_max ? v <= limit : v >= limit) ? "yes" : "no";
}

void bench_give_up(const char *prog, const char *op, int err)
{
	fprintf(stderr, "%s: %s: %s; benchmark skipped\n", prog, op, strerror(err));
	exit(0);
}

/* ---- two ULTs yielding to each other (bench/switch.c, bench/ulp_yield.c) ---- */

struct ult_pingpong {
	long iters, warmup;
	atomic_int stop;
	uint64_t ns;
};

static void *ult_pong(void *arg)
{
	struct ult_pingpong *pp = arg;

	while (!atomic_load_explicit(&pp->stop, memory_order_relaxed))
		ulp_thread_yield();
	return NULL;
}

static void *ult_ping(void *arg)
{
	struct ult_pingpong *pp = arg;
	uint64_t t0;
	long i;

	for (i = 0; i < pp->warmup; i++)
		ulp_thread_yield();
	t0 = bench_now_ns();
	for (i = 0; i < pp->iters; i++)
		ulp_thread_yield(); /* pong runs and yields back: one round trip */
	pp->ns = bench_now_ns() - t0;
	atomic_store(&pp->stop, 1);
	return NULL;
}

uint64_t bench_ult_pingpong(const char *prog, long iters, long warmup)
{
	struct ult_pingpong pp = {.iters = iters, .warmup = warmup};
	ulp_thread_t a, b;
	int rc = ulp_thread_create(&a, ult_ping, &pp);

	if (!rc)
		rc = ulp_thread_create(&b, ult_pong, &pp);
	if (rc)
		bench_give_up(prog, "ulp_thread_create", -rc);
	ulp_thread_join(a, NULL);
	ulp_thread_join(b, NULL);
	return pp.ns;
}

/* ---- sched_yield token (bench/switch.c, bench/ulp_yield.c) ---- */

void bench_token_pong(struct bench_token *tk)
{
	long i;

	for (i = 0; i < tk->iters + tk->warmup; i++) {
		while (atomic_load_explicit(&tk->turn, memory_order_acquire) != 1)
			sched_yield();
		atomic_store_explicit(&tk->turn, 0, memory_order_release);
	}
}

uint64_t bench_token_ping(struct bench_token *tk)
{
	uint64_t t0 = 0;
	long i, yields = 0;

	for (i = 0; i < tk->iters + tk->warmup; i++) {
		if (i == tk->warmup) {
			t0 = bench_now_ns();
			yields = 0;
		}
		atomic_store_explicit(&tk->turn, 1, memory_order_release);
		while (atomic_load_explicit(&tk->turn, memory_order_acquire) != 0) {
			sched_yield();
			yields++;
		}
	}
	tk->yields = yields;
	return bench_now_ns() - t0;
}
