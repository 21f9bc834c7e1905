/* SPDX-License-Identifier: MIT */
/*
 * ULP yield round trip, everything pinned to one CPU (bench_cpu()), one worker:
 *   ulp_yield             two ULPs of bench/ulp_guest_yield.c passing control with pvas_yield,
 *                         run by this process through libulp's internal API, as ulpexec runs them
 *   ulp_yield_arch_prctl  the same with the TLS register written by arch_prctl, forced
 *                         (ulp_arch_tls_force_syscall: the PiP way)
 *   ulpexec_yield         the same two ULPs under `ulpexec -w 1 -n 2` (started by the helper
 *                         process): a check that this harness measures what the tool does
 *   ult_yield             two ulp threads passing control with ulp_thread_yield (the baseline)
 *   sched_yield_procs     two processes handing a token over with sched_yield
 * and, to explain them, the cost of one write of the TLS register each way (arch_prctl, and
 * wrfsbase where the instruction executes) and of one system call made by a ULP, trapped
 * (sched_yield through the seccomp filter and the SIGSYS handler) and native (getppid).
 *
 * A round trip between two ULPs writes the TLS register twice (each has its own TLS: the switch
 * loads the target's fs when it differs, libulp/sched/sched.c switch_to), so where the method is
 * arch_prctl, ulp_yield is two arch_prctl calls plus the ULT path, and forcing arch_prctl changes
 * nothing.
 */
#include "bench.h"
#include "ulp_common.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "bench/ulp_yield"
/* Short samples, many of them (see bench/README.md). */
#define TARGET_NS (2 * 1000 * 1000)
#define REPS 21
#define WARMUP 200
#define FIRST_ITERS 100 /* calibration run */

enum { ULP, ULP_PRCTL, ULPEXEC, ULT, PROCS, ULP_WRFS, NIMPL };
enum { C_PRCTL, C_WRFS, C_TRAP, C_NATIVE, NCOST };
enum { OP_PROCS = 1, OP_ULPEXEC };

extern char **environ;

static char *guest, *ulpexec;
static int res_rd, res_wr; /* the pipe the ULPs write their results to */
static int wrfsbase_works;
/*
 * BENCH_ULP_UNSAFE_WRFSBASE=1 adds ulp_yield_wrfsbase_unsafe: the ULP pair with the TLS register
 * written by wrfsbase although AT_HWCAP2 says the kernel does not support it (libulp's x86_64 flag
 * set by hand). It shows what ulp_yield costs where the kernel enables FSGSBASE; here a ULP whose
 * base the kernel puts back at a context switch crashes, and the benchmark with it. Never by
 * default.
 */
static int unsafe_wrfsbase;
static double procs_yields_per_rt;

/* ---- reading what the guests wrote ---- */

/* One line of up to two numbers from fd (non-blocking; the writer has ended). */
static int read_result(int fd, double v[2])
{
	char buf[128];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	v[1] = 0;
	return sscanf(buf, "%lf %lf", &v[0], &v[1]) >= 1 ? 0 : -1;
}

/* ---- two ULPs, pvas_yield ---- */

/* How the TLS register is written during a ULP pair run. */
enum { TLS_DEFAULT, TLS_SYSCALL, TLS_WRFSBASE_UNSAFE };

static double ulp_pair(long iters, int tls)
{
	char it[32], fd[16];
	char *argv[] = {guest, "pingpong", it, fd, NULL};
	struct ulp_cb *a, *b;
	double v[2];
	int ra, rb;

	snprintf(it, sizeof(it), "%ld", iters);
	snprintf(fd, sizeof(fd), "%d", res_wr);
	ulp_arch_tls_force_syscall(tls == TLS_SYSCALL);
	if (tls == TLS_WRFSBASE_UNSAFE)
		ulp_x86_fsgsbase = 1; /* see unsafe_wrfsbase above */
	a = ulpb_ulp_start(PROG, argv, 0, 2);
	b = ulpb_ulp_start(PROG, argv, 1, 2);
	ra = ulpb_ulp_reap(PROG, a);
	rb = ulpb_ulp_reap(PROG, b);
	ulp_arch_tls_force_syscall(0); /* back to what AT_HWCAP2 says */
	if (ra || rb || read_result(res_rd, v))
		bench_give_up(PROG, "the pingpong guests did not report", EIO);
	return v[0] / (double)iters;
}

/* One ULP alone: v[0] trapped, v[1] native syscall, ns each. */
static void ulp_trap(long iters, double v[2])
{
	char it[32], fd[16];
	char *argv[] = {guest, "trap", it, fd, NULL};

	snprintf(it, sizeof(it), "%ld", iters);
	snprintf(fd, sizeof(fd), "%d", res_wr);
	if (ulpb_ulp_reap(PROG, ulpb_ulp_start(PROG, argv, 0, 1)) || read_result(res_rd, v))
		bench_give_up(PROG, "the trap guest did not report", EIO);
	v[0] /= (double)iters;
	v[1] /= (double)iters;
}

/* ---- two ULTs, ulp_thread_yield ---- */

/* The caller is the pinned ulp_init thread: it queues both (help-first) and waits. */
static double ult_pair(long iters)
{
	return (double)bench_ult_pingpong(PROG, iters, WARMUP) / (double)iters;
}

/* ---- one write of the TLS register ---- */

/* The same value it holds, so nothing changes: only the cost of the write is seen. */
static double tls_write_prctl(long iters)
{
	uintptr_t v = ulp_arch_tls_get();
	uint64_t t0;
	long i;

	ulp_arch_tls_force_syscall(1);
	t0 = bench_now_ns();
	for (i = 0; i < iters; i++)
		ulp_arch_tls_set(v);
	t0 = bench_now_ns() - t0;
	ulp_arch_tls_force_syscall(0);
	return (double)t0 / (double)iters;
}

/*
 * wrfsbase, which libulp uses when AT_HWCAP2 has FSGSBASE. x86_64 only, like every ULP benchmark
 * (bench/module.mk builds them for x86_64 alone). Writing the value the register holds is safe
 * even where the kernel does not preserve such writes: it puts back that same value.
 */
static double tls_write_wrfsbase(long iters)
{
	uintptr_t v = ulp_arch_tls_get();
	uint64_t t0 = bench_now_ns();
	long i;

	for (i = 0; i < iters; i++)
		__asm__ volatile("wrfsbase %0" ::"r"(v) : "memory");
	return (double)(bench_now_ns() - t0) / (double)iters;
}

static sigjmp_buf probe_env;

static void probe_sigill(int sig)
{
	siglongjmp(probe_env, 1);
}

/* Whether wrfsbase executes (before the trap owns SIGILL). */
static int probe_wrfsbase(void)
{
	struct sigaction sa, old;
	volatile int ok = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_sigill;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old))
		return 0;
	if (sigsetjmp(probe_env, 1) == 0) {
		tls_write_wrfsbase(1);
		ok = 1;
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

/* ---- the helper process: sched_yield between processes, ulpexec ---- */

static void serve_procs(long iters, struct ulpb_rep *rep)
{
	struct bench_token *tk =
	    mmap(NULL, sizeof(*tk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	if (tk == MAP_FAILED) {
		rep->err = errno;
		return;
	}
	tk->iters = iters;
	tk->warmup = WARMUP;
	pid = fork(); /* inherits the helper's CPU: pinned with it */
	if (pid < 0) {
		rep->err = errno;
		munmap(tk, sizeof(*tk));
		return;
	}
	if (pid == 0) {
		bench_token_pong(tk);
		_exit(0);
	}
	rep->v[0] = (double)bench_token_ping(tk) / (double)iters;
	rep->v[1] = (double)tk->yields / (double)iters;
	waitpid(pid, NULL, 0);
	munmap(tk, sizeof(*tk));
}

static void serve_ulpexec(long iters, struct ulpb_rep *rep)
{
	posix_spawn_file_actions_t fa;
	char it[32];
	char *argv[] = {ulpexec, "-w", "1", "-n", "2", guest, "pingpong", it, "3", NULL};
	int p[2], w, st;
	double v[2];
	pid_t pid;

	snprintf(it, sizeof(it), "%ld", iters);
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		rep->err = errno;
		return;
	}
	w = fcntl(p[1], F_DUPFD_CLOEXEC, 10); /* never 3 itself: dup2 onto 3 clears CLOEXEC */
	close(p[1]);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, w, 3);
	rep->err = posix_spawn(&pid, ulpexec, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(w);
	if (!rep->err) {
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) || read_result(p[0], v))
			rep->err = EIO;
		else
			rep->v[0] = v[0] / (double)iters;
	}
	close(p[0]);
}

static void serve(const struct ulpb_req *req, struct ulpb_rep *rep)
{
	if (req->op == OP_PROCS)
		serve_procs(req->iters, rep);
	else
		serve_ulpexec(req->iters, rep);
}

static double helper(int op, long iters)
{
	struct ulpb_req q = {.op = op, .iters = iters};
	struct ulpb_rep a;

	ulpb_helper_ask(PROG, &q, &a);
	if (op == OP_PROCS)
		procs_yields_per_rt = a.v[1];
	return a.v[0];
}

/* ---- driver ---- */

static const char *const names[NIMPL] = {
    [ULP] = "ulp_yield",	   [ULP_PRCTL] = "ulp_yield_arch_prctl",
    [ULPEXEC] = "ulpexec_yield",   [ULT] = "ult_yield",
    [PROCS] = "sched_yield_procs", [ULP_WRFS] = "ulp_yield_wrfsbase_unsafe",
};

static double run(int k, long iters)
{
	switch (k) {
	case ULP:
		return ulp_pair(iters, TLS_DEFAULT);
	case ULP_PRCTL:
		return ulp_pair(iters, TLS_SYSCALL);
	case ULP_WRFS:
		return ulp_pair(iters, TLS_WRFSBASE_UNSAFE);
	case ULPEXEC:
		return helper(OP_ULPEXEC, iters);
	case ULT:
		return ult_pair(iters);
	default:
		return helper(OP_PROCS, iters);
	}
}

/* cost[C_TRAP] and cost[C_NATIVE] come from one run of the trap guest. */
static void run_costs(const long *iters, double *cost)
{
	double v[2];

	cost[C_PRCTL] = tls_write_prctl(iters[C_PRCTL]);
	cost[C_WRFS] = wrfsbase_works ? tls_write_wrfsbase(iters[C_WRFS]) : 0;
	ulp_trap(iters[C_TRAP], v);
	cost[C_TRAP] = v[0];
	cost[C_NATIVE] = v[1];
}

static long iters_for(double ns_per_iter, long min)
{
	long n = (long)((double)TARGET_NS / (ns_per_iter > 0.1 ? ns_per_iter : 0.1));

	return n < min ? min : n;
}

static double *alloc_reps(int reps)
{
	double *v = calloc((size_t)reps, sizeof(double));

	if (!v)
		bench_give_up(PROG, "calloc", ENOMEM);
	return v;
}

static void print_target(const char *name, double *ratio, int reps, double min_ratio, double limit,
			 int is_max)
{
	double m = bench_median(ratio, reps);

	printf("BENCH ulp_yield_target name=%s ratio=%.2f min_ratio=%.2f target_%s=%g met=%s\n",
	       name, m, min_ratio, is_max ? "max" : "min", limit, bench_met(m, limit, is_max));
}

int main(void)
{
	int reps = bench_reps(REPS), cpu = bench_cpu(), r, k, rc, p[2];
	long iters[NIMPL], citers[NCOST];
	double *ns[NIMPL], *cost[NCOST], *vs_ulp[NIMPL], *ult_ratio, *prctl_ratio;
	double lo[NIMPL], clo[NCOST], c[NCOST], yields = 0, *wrfs_ratio;
	int nimpl = NIMPL - 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = bench_pin(cpu);
	if (rc)
		bench_give_up(PROG, "sched_setaffinity to BENCH_CPU", -rc);
	guest = ulpb_sibling(PROG, "ulp_guest_yield");
	ulpexec = getenv("ULPEXEC") ? getenv("ULPEXEC") : ulpb_sibling(PROG, "../bin/ulpexec");
	if (access(guest, X_OK) || access(ulpexec, X_OK))
		bench_give_up(PROG, access(guest, X_OK) ? guest : ulpexec, ENOENT);
	wrfsbase_works = probe_wrfsbase();
	unsafe_wrfsbase = wrfsbase_works && getenv("BENCH_ULP_UNSAFE_WRFSBASE") &&
			  !strcmp(getenv("BENCH_ULP_UNSAFE_WRFSBASE"), "1");
	if (unsafe_wrfsbase)
		nimpl = NIMPL;
	ulpb_helper_start(PROG, serve); /* pinned like us */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		bench_give_up(PROG, "pipe", errno);
	res_rd = p[0];
	res_wr = p[1];
	ulpb_runtime_start(PROG, 1);

	for (k = 0; k < nimpl; k++) {
		ns[k] = alloc_reps(reps);
		vs_ulp[k] = alloc_reps(reps);
		run(k, FIRST_ITERS); /* warm-up: first loads, the first ulpexec start */
		iters[k] = iters_for(run(k, FIRST_ITERS), FIRST_ITERS);
	}
	citers[C_PRCTL] = iters_for(tls_write_prctl(FIRST_ITERS), FIRST_ITERS);
	citers[C_WRFS] = wrfsbase_works ? iters_for(tls_write_wrfsbase(10000), 10000) : 0;
	ulp_trap(FIRST_ITERS, c);
	citers[C_TRAP] = citers[C_NATIVE] = iters_for(c[0] + c[1], FIRST_ITERS);
	for (k = 0; k < NCOST; k++)
		cost[k] = alloc_reps(reps);
	ult_ratio = alloc_reps(reps);
	prctl_ratio = alloc_reps(reps);
	wrfs_ratio = alloc_reps(reps);

	/* Interleaved: drift of the shared machine hits every variant of a repetition alike. */
	for (r = 0; r < reps; r++) {
		for (k = 0; k < nimpl; k++)
			ns[k][r] = run(k, iters[k]);
		yields += procs_yields_per_rt;
		run_costs(citers, c);
		for (k = 0; k < NCOST; k++)
			cost[k][r] = c[k];
		for (k = 0; k < nimpl; k++)
			vs_ulp[k][r] = ns[k][r] / ns[ULP][r];
		ult_ratio[r] = ns[ULP][r] / ns[ULT][r];
		prctl_ratio[r] = ns[ULP_PRCTL][r] / ns[ULP][r];
		if (unsafe_wrfsbase)
			wrfs_ratio[r] = ns[ULP_WRFS][r] / ns[ULT][r];
	}
	for (k = 0; k < nimpl; k++)
		lo[k] = bench_min(ns[k], reps);
	for (k = 0; k < NCOST; k++)
		clo[k] = bench_min(cost[k], reps);

	printf("BENCH ulp_yield_env cpu=%d reps=%d workers=1 tls_method=%s wrfsbase_executes=%s\n",
	       cpu, reps, ulp_arch_tls_method(), wrfsbase_works ? "yes" : "no");
	for (k = 0; k < nimpl; k++) {
		printf("BENCH ulp_yield_roundtrip impl=%s ns=%.1f min_ns=%.1f "
		       "ratio_vs_ulp_yield=%.2f iters=%ld",
		       names[k], bench_median(ns[k], reps), lo[k], bench_median(vs_ulp[k], reps),
		       iters[k]);
		if (k == PROCS)
			printf(" sched_yield_calls_per_rt=%.2f", yields / reps);
		if (k == ULP_WRFS)
			printf(" ratio_vs_ult_yield=%.2f", bench_median(wrfs_ratio, reps));
		printf("\n");
	}
	printf("BENCH ulp_yield_cost op=tls_write_arch_prctl ns=%.1f min_ns=%.1f iters=%ld\n",
	       bench_median(cost[C_PRCTL], reps), clo[C_PRCTL], citers[C_PRCTL]);
	if (wrfsbase_works)
		printf("BENCH ulp_yield_cost op=tls_write_wrfsbase ns=%.1f min_ns=%.1f iters=%ld\n",
		       bench_median(cost[C_WRFS], reps), clo[C_WRFS], citers[C_WRFS]);
	printf("BENCH ulp_yield_cost op=trapped_syscall ns=%.1f min_ns=%.1f iters=%ld\n",
	       bench_median(cost[C_TRAP], reps), clo[C_TRAP], citers[C_TRAP]);
	printf("BENCH ulp_yield_cost op=native_syscall_from_ulp ns=%.1f min_ns=%.1f iters=%ld\n",
	       bench_median(cost[C_NATIVE], reps), clo[C_NATIVE], citers[C_NATIVE]);
	print_target("ulp_yield_vs_ult_yield", ult_ratio, reps, lo[ULP] / lo[ULT], 1.3, 1);
	print_target("arch_prctl_vs_ulp_yield", prctl_ratio, reps, lo[ULP_PRCTL] / lo[ULP], 5, 0);

	ulpb_runtime_stop();
	ulpb_helper_stop();
	return 0;
}
