/* SPDX-License-Identifier: MIT */
/*
 * Spawn: N (256) copies of a static-pie program that only exits 0, from the first start to the
 * last one reaped, three ways:
 *   ulp          this process loads, starts, waits for and releases N ULPs through libulp's
 *                internal API, as ulpexec does (one loader thread; the workers, one per online
 *                CPU, run the ULPs meanwhile)
 *   ulpexec      `ulpexec -n N PROG` as a whole, started and reaped by the helper process: what a
 *                user sees, one process start and the PVAS set-up included
 *   posix_spawn  the helper process posix_spawns the N processes all at once, then waitpids them
 *                all (the kernel runs them on every CPU); the baseline
 * each with two guests: `glibc` (bench/ulp_guest_true.c: main returns 0, after glibc's start-up)
 * and `nolibc` (bench/ulp_guest_nolibc.c: the entry point exits at once), which separates the
 * cost of creating and ending a ULP or process from the program's own start-up.
 * Nothing is pinned. The helper was forked before the syscall trap was installed, so its
 * processes run without the seccomp filter.
 */
#include "bench.h"
#include "ulp_common.h"

#include <cpuid.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "bench/ulp_spawn"
#define N_DEFAULT 256
#define REPS 7

enum { ULP, ULPEXEC, SPAWN, NIMPL };
enum { GLIBC, NOLIBC, NGUEST };
enum { OP_SPAWN = 1, OP_ULPEXEC };

extern char **environ;

static const char *const impl_names[NIMPL] = {"ulp", "ulpexec", "posix_spawn"};
static const char *const guest_names[NGUEST] = {"glibc", "nolibc"};
static char *guests[NGUEST], *ulpexec;
static struct ulp_cb **cbs;

struct sample {
	double ns, cpu_ns, load_ns, release_ns;
};

/* Load and start all, wait for all, release all: the same work as ulpexec, which waits for and
 * releases one rank after the other, in phases that can be timed apart. */
static struct sample run_ulps(const char *guest, long n)
{
	char *argv[] = {(char *)guest, NULL};
	uint64_t t0 = bench_now_ns(), c0 = bench_cpu_ns(), t1, t2;
	struct sample s;
	long i;
	int bad = 0;

	for (i = 0; i < n; i++)
		cbs[i] = ulpb_ulp_start(PROG, argv, (int)i, (int)n);
	t1 = bench_now_ns();
	for (i = 0; i < n; i++)
		bad |= ulpb_ulp_wait(PROG, cbs[i]);
	t2 = bench_now_ns();
	for (i = 0; i < n; i++)
		ulp_proc_release(cbs[i], NULL, NULL);
	if (bad)
		bench_give_up(PROG, "a ULP did not exit 0", EIO);
	s.ns = (double)(bench_now_ns() - t0);
	s.cpu_ns = (double)(bench_cpu_ns() - c0); /* idle workers' spinning included */
	s.load_ns = (double)(t1 - t0);
	s.release_ns = s.ns - (double)(t2 - t0);
	return s;
}

/* ---- the helper process ---- */

static double cpu_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* Start argv with posix_spawn n times, then wait for all; 0 or an errno value. */
static int spawn_all(char *const argv[], long n, pid_t *pids)
{
	long i, started;
	int rc = 0, st;

	for (started = 0; started < n; started++) {
		rc = posix_spawn(&pids[started], argv[0], NULL, NULL, argv, environ);
		if (rc)
			break;
	}
	for (i = 0; i < started; i++)
		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = rc ? rc : EIO;
	return rc;
}

/* req->path: the guest. v[0]: wall ns; v[1]: CPU ns of the helper and its children. */
static void serve(const struct ulpb_req *req, struct ulpb_rep *rep)
{
	char n[32], *guest = (char *)req->path;
	char *spawn_argv[] = {guest, NULL};
	char *ulpexec_argv[] = {ulpexec, "-n", n, guest, NULL};
	pid_t *pids = calloc((size_t)req->n, sizeof(pid_t)), one;
	double c0 = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN);
	uint64_t t0 = bench_now_ns();

	if (!pids) {
		rep->err = ENOMEM;
		return;
	}
	snprintf(n, sizeof(n), "%ld", req->n);
	if (req->op == OP_SPAWN)
		rep->err = spawn_all(spawn_argv, req->n, pids);
	else
		rep->err = spawn_all(ulpexec_argv, 1, &one);
	rep->v[0] = (double)(bench_now_ns() - t0);
	rep->v[1] = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN) - c0;
	free(pids);
}

static struct sample helper(int op, const char *guest, long n)
{
	struct ulpb_req q = {.op = op, .n = n};
	struct ulpb_rep a;

	snprintf(q.path, sizeof(q.path), "%s", guest);
	ulpb_helper_ask(PROG, &q, &a);
	return (struct sample){.ns = a.v[0], .cpu_ns = a.v[1]};
}

/* ---- context: one cpuid instruction (glibc's start-up runs it dozens of times) ---- */

/* x86_64 only, like every ULP benchmark (bench/module.mk builds them for x86_64 alone). */
static double cpuid_ns(void)
{
	unsigned a, b, c, d, i, n = 2000;
	uint64_t t0 = bench_now_ns();

	for (i = 0; i < n; i++)
		__cpuid_count(4, 0, a, b, c, d);
	(void)a, (void)b, (void)c, (void)d;
	return (double)(bench_now_ns() - t0) / n;
}

/* ---- driver ---- */

static struct sample run(int k, int g, long n)
{
	switch (k) {
	case ULP:
		return run_ulps(guests[g], n);
	case ULPEXEC:
		return helper(OP_ULPEXEC, guests[g], n);
	default:
		return helper(OP_SPAWN, guests[g], n);
	}
}

static double *alloc_reps(int reps)
{
	double *v = calloc((size_t)reps, sizeof(double));

	if (!v)
		bench_give_up(PROG, "calloc", ENOMEM);
	return v;
}

int main(void)
{
	const char *s = getenv("BENCH_SPAWN_N");
	long n = s && atol(s) > 0 && atol(s) <= 4096 ? atol(s) : N_DEFAULT;
	int reps = bench_reps(REPS), r, k, g;
	double *ns[NGUEST][NIMPL], *cpu[NGUEST][NIMPL], *speedup[NGUEST][NIMPL], *load[NGUEST];
	double *release[NGUEST];
	double *cpuid, lo, m;
	struct sample sm;

	setvbuf(stdout, NULL, _IOLBF, 0);
	guests[GLIBC] = ulpb_sibling(PROG, "ulp_guest_true");
	guests[NOLIBC] = ulpb_sibling(PROG, "ulp_guest_nolibc");
	ulpexec = getenv("ULPEXEC") ? getenv("ULPEXEC") : ulpb_sibling(PROG, "../bin/ulpexec");
	for (g = 0; g < NGUEST; g++)
		if (access(guests[g], X_OK))
			bench_give_up(PROG, guests[g], ENOENT);
	if (access(ulpexec, X_OK))
		bench_give_up(PROG, ulpexec, ENOENT);
	cbs = calloc((size_t)n, sizeof(*cbs));
	if (!cbs)
		bench_give_up(PROG, "calloc", ENOMEM);
	for (g = 0; g < NGUEST; g++) {
		load[g] = alloc_reps(reps);
		release[g] = alloc_reps(reps);
		for (k = 0; k < NIMPL; k++) {
			ns[g][k] = alloc_reps(reps);
			cpu[g][k] = alloc_reps(reps);
			speedup[g][k] = alloc_reps(reps);
		}
	}
	cpuid = alloc_reps(reps);
	ulpb_helper_start(PROG, serve);
	ulpb_runtime_start(PROG, 0);

	for (g = 0; g < NGUEST; g++) /* warm-up: page cache, the helper's first fork */
		for (k = 0; k < NIMPL; k++)
			run(k, g, n);
	/* Interleaved: drift of the shared machine hits every variant of a repetition alike. */
	for (r = 0; r < reps; r++) {
		for (g = 0; g < NGUEST; g++) {
			for (k = 0; k < NIMPL; k++) {
				sm = run(k, g, n);
				ns[g][k][r] = sm.ns;
				cpu[g][k][r] = sm.cpu_ns;
				if (k == ULP) {
					load[g][r] = sm.load_ns;
					release[g][r] = sm.release_ns;
				}
			}
			for (k = 0; k < NIMPL; k++)
				speedup[g][k][r] = ns[g][SPAWN][r] / ns[g][k][r];
		}
		cpuid[r] = cpuid_ns();
	}

	printf("BENCH ulp_spawn_env n=%ld reps=%d workers=%u procs=all_at_once\n", n, reps,
	       ulp_num_workers());
	for (g = 0; g < NGUEST; g++) {
		for (k = 0; k < NIMPL; k++) {
			lo = bench_min(ns[g][k], reps);
			m = bench_median(ns[g][k], reps);
			printf("BENCH ulp_spawn impl=%s guest=%s ms=%.2f min_ms=%.2f us_each=%.1f "
			       "cpu_us_each=%.1f speedup_vs_posix_spawn=%.2f",
			       impl_names[k], guest_names[g], m / 1e6, lo / 1e6,
			       m / 1e3 / (double)n, bench_median(cpu[g][k], reps) / 1e3 / (double)n,
			       bench_median(speedup[g][k], reps));
			if (k == ULP)
				printf(" load_start_us_each=%.1f release_us_each=%.1f",
				       bench_median(load[g], reps) / 1e3 / (double)n,
				       bench_median(release[g], reps) / 1e3 / (double)n);
			printf("\n");
		}
	}
	printf("BENCH ulp_spawn_cost op=cpuid ns=%.1f min_ns=%.1f\n", bench_median(cpuid, reps),
	       bench_min(cpuid, reps));
	lo = bench_min(ns[GLIBC][SPAWN], reps) / bench_min(ns[GLIBC][ULP], reps);
	m = bench_median(speedup[GLIBC][ULP], reps);
	printf("BENCH ulp_spawn_target name=posix_spawn_vs_ulp guest=glibc ratio=%.2f "
	       "min_ratio=%.2f target_min=5 met=%s\n",
	       m, lo, bench_met(m, 5, 0));

	ulpb_runtime_stop();
	ulpb_helper_stop();
	return 0;
}
