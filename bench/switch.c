/* SPDX-License-Identifier: MIT */
/*
 * Round trip (there and back) between two contexts, six ways:
 *   ulp_arch_switch      the bare libulp switch between two contexts
 *   ult_yield            two ulp threads on one worker passing control with ulp_thread_yield
 *   fcontext             Boost.Context jump_fcontext (the baseline)
 *   swapcontext          glibc ucontext (saves the signal mask: two system calls per switch)
 *   sched_yield_threads  two kernel threads pinned to one CPU handing a token over with sched_yield
 *   sched_yield_procs    the same between two processes
 * Everything runs pinned to one CPU (bench_cpu()); the ULT runtime runs with one worker, which is
 * the calling (pinned) thread.
 */
#include "arch.h"
#include "bench.h"
#include "ulp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define PEER_STACK (64 * 1024)
/* Short samples, many of them: on a shared machine a sample hit by preemption is an outlier the
 * median drops, where a long one would be hit every time. */
#define TARGET_NS (2 * 1000 * 1000)
#define REPS 21
#define WARMUP 1000

enum { ARCH, ULT, FCTX, UCTX, THREADS, PROCS, NIMPL };

static int cpu;

static void *peer_stack(void)
{
	void *p =
	    mmap(NULL, PEER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_give_up("bench/switch", "mmap of a peer stack", errno);
	return p;
}

/* ---- bare switch ---- */

static ulp_ctx_t arch_self, arch_peer;

static void arch_peer_main(void *arg)
{
	for (;;)
		ulp_arch_switch(&arch_peer, &arch_self);
}

static uint64_t arch_roundtrips(void *arg, long iters)
{
	uint64_t t0;
	long i;

	if (!arch_peer.sp)
		ulp_arch_ctx_init(&arch_peer, peer_stack(), PEER_STACK, arch_peer_main, NULL);
	t0 = bench_now_ns();
	for (i = 0; i < iters; i++)
		ulp_arch_switch(&arch_self, &arch_peer);
	return bench_now_ns() - t0;
}

/* ---- ULT yield ---- */

/* A fresh one-worker runtime per call: the ulp_init thread (pinned to cpu) is that worker. */
static uint64_t ult_roundtrips(void *arg, long iters)
{
	uint64_t ns;
	int rc = ulp_init(1);

	if (rc)
		bench_give_up("bench/switch", "ulp_init(1)", -rc);
	ns = bench_ult_pingpong("bench/switch", iters, WARMUP);
	ulp_fini();
	return ns;
}

/* ---- glibc ucontext ---- */

static ucontext_t uc_self, uc_peer;

static void uc_peer_main(void)
{
	for (;;)
		swapcontext(&uc_peer, &uc_self);
}

static uint64_t uc_roundtrips(void *arg, long iters)
{
	uint64_t t0;
	long i;

	if (!uc_peer.uc_stack.ss_sp) {
		getcontext(&uc_peer);
		uc_peer.uc_stack.ss_sp = peer_stack();
		uc_peer.uc_stack.ss_size = PEER_STACK;
		uc_peer.uc_link = NULL;
		makecontext(&uc_peer, uc_peer_main, 0);
	}
	t0 = bench_now_ns();
	for (i = 0; i < iters; i++)
		swapcontext(&uc_self, &uc_peer);
	return bench_now_ns() - t0;
}

/* ---- sched_yield between kernel threads / processes ---- */

static void *pong_thread(void *arg)
{
	bench_pin(cpu);
	bench_token_pong(arg);
	return NULL;
}

static double thread_yields_per_rt, proc_yields_per_rt;

static uint64_t thread_roundtrips(void *arg, long iters)
{
	struct bench_token tk = {.iters = iters, .warmup = WARMUP};
	pthread_t t;
	uint64_t ns;

	int rc = pthread_create(&t, NULL, pong_thread, &tk);

	if (rc)
		bench_give_up("bench/switch", "pthread_create", rc);
	ns = bench_token_ping(&tk);
	pthread_join(t, NULL);
	thread_yields_per_rt = (double)tk.yields / (double)iters;
	return ns;
}

static uint64_t proc_roundtrips(void *arg, long iters)
{
	struct bench_token *tk =
	    mmap(NULL, sizeof(*tk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t ns;
	pid_t pid;

	if (tk == MAP_FAILED)
		bench_give_up("bench/switch", "mmap of the shared token", errno);
	atomic_store(&tk->turn, 0);
	tk->iters = iters;
	tk->warmup = WARMUP;
	pid = fork(); /* inherits the CPU main pinned itself to */
	if (pid < 0)
		bench_give_up("bench/switch", "fork", errno);
	if (pid == 0) {
		bench_token_pong(tk);
		_exit(0);
	}
	ns = bench_token_ping(tk);
	waitpid(pid, NULL, 0);
	proc_yields_per_rt = (double)tk->yields / (double)iters;
	munmap(tk, sizeof(*tk));
	return ns;
}

/* ---- driver ---- */

/* min_iters keeps the calibration runs of the slow variants meaningful. */
static const struct impl {
	const char *name;
	bench_loop_fn fn;
	long min_iters;
} impls[NIMPL] = {
    [ARCH] = {"ulp_arch_switch", arch_roundtrips, 10000},
    [ULT] = {"ult_yield", ult_roundtrips, 10000},
    [FCTX] = {"fcontext", bench_fcontext_roundtrips, 10000},
    [UCTX] = {"swapcontext", uc_roundtrips, 1000},
    [THREADS] = {"sched_yield_threads", thread_roundtrips, 1000},
    [PROCS] = {"sched_yield_procs", proc_roundtrips, 1000},
};

int main(void)
{
	int reps = bench_reps(REPS), r, k, rc;
	long iters[NIMPL];
	double *ns[NIMPL], *ratio_fctx[NIMPL], *ratio_sy, med[NIMPL], lo[NIMPL], yt = 0, yp = 0;
	double a, b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cpu = bench_cpu();
	rc = bench_pin(cpu);
	if (rc)
		bench_give_up("bench/switch", "sched_setaffinity to BENCH_CPU", -rc);
	ulp_arch_init();
	{
		const struct bench_ir_variant ir[] = {
		    {"ulp_arch_switch", arch_roundtrips},
		    {"ult_yield", ult_roundtrips},
		    {"fcontext", bench_fcontext_roundtrips},
		};
		bench_ir_mode("bench/switch", ir, 3);
	}
	for (k = 0; k < NIMPL; k++) {
		ns[k] = calloc((size_t)reps, sizeof(double));
		ratio_fctx[k] = calloc((size_t)reps, sizeof(double));
		if (!ns[k] || !ratio_fctx[k])
			bench_give_up("bench/switch", "calloc", ENOMEM);
		iters[k] = bench_calibrate(impls[k].fn, NULL, TARGET_NS, impls[k].min_iters);
	}
	ratio_sy = calloc((size_t)reps, sizeof(double));
	if (!ratio_sy)
		bench_give_up("bench/switch", "calloc", ENOMEM);
	/* Interleaved: drift of the shared machine hits every variant of a repetition alike. */
	for (r = 0; r < reps; r++) {
		for (k = 0; k < NIMPL; k++)
			ns[k][r] = (double)impls[k].fn(NULL, iters[k]) / (double)iters[k];
		yt += thread_yields_per_rt;
		yp += proc_yields_per_rt;
		for (k = 0; k < NIMPL; k++)
			ratio_fctx[k][r] = ns[k][r] / ns[FCTX][r];
		ratio_sy[r] = ns[THREADS][r] / ns[ULT][r];
	}
	for (k = 0; k < NIMPL; k++) {
		lo[k] = bench_min(ns[k], reps);
		med[k] = bench_median(ns[k], reps);
	}
	printf("BENCH switch_env cpu=%d reps=%d workers=1 tls_method=%s\n", cpu, reps,
	       ulp_arch_tls_method());
	for (k = 0; k < NIMPL; k++) {
		printf("BENCH switch_roundtrip impl=%s ns=%.1f min_ns=%.1f ratio_vs_fcontext=%.2f "
		       "min_ratio_vs_fcontext=%.2f iters=%ld",
		       impls[k].name, med[k], lo[k], bench_median(ratio_fctx[k], reps),
		       lo[k] / lo[FCTX], iters[k]);
		if (k == THREADS)
			printf(" sched_yield_calls_per_rt=%.2f", yt / reps);
		if (k == PROCS)
			printf(" sched_yield_calls_per_rt=%.2f", yp / reps);
		printf("\n");
	}
	a = bench_median(ratio_fctx[ULT], reps);
	b = bench_median(ratio_sy, reps);
	printf("BENCH switch_target name=ult_yield_vs_fcontext ratio=%.2f min_ratio=%.2f "
	       "target_max=1.5 met=%s\n",
	       a, lo[ULT] / lo[FCTX], bench_met(a, 1.5, 1));
	printf(
	    "BENCH switch_target name=sched_yield_threads_vs_ult_yield ratio=%.1f min_ratio=%.1f "
	    "target_min=20 met=%s\n",
	    b, lo[THREADS] / lo[ULT], bench_met(b, 20, 0));
	return 0;
}
