/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmarks: clock, CPU pinning, repetitions, medians, calibration.
 *
 * The benchmarks run on a shared VM where absolute times drift from run to run, so each one
 * measures its baseline in the same run, repeats every measurement (interleaving the variants so
 * drift hits them alike) and reports medians and ratios of same-repetition pairs.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

uint64_t bench_now_ns(void);

/* CPU time used so far by all threads of the process (CLOCK_PROCESS_CPUTIME_ID). */
uint64_t bench_cpu_ns(void);

/* Pin the calling thread (or process, before it starts threads) to one CPU; 0 or -errno. */
int bench_pin(int cpu);

/* Let the calling thread run on every online CPU again. */
int bench_unpin(void);

/* The CPU single-CPU measurements pin to: BENCH_CPU, else the last online CPU. */
int bench_cpu(void);

/* Repetitions of each measurement: BENCH_REPS (1..101), else def. */
int bench_reps(int def);

/* Median of n values (sorts v in place); min and max of n values. */
double bench_median(double *v, int n);
double bench_min(const double *v, int n);
double bench_max(const double *v, int n);

/* A measured loop: run `iters` iterations, return the elapsed nanoseconds. */
typedef uint64_t (*bench_loop_fn)(void *arg, long iters);

/* The iteration count that makes fn take about target_ns (at least min_iters). */
long bench_calibrate(bench_loop_fn fn, void *arg, uint64_t target_ns, long min_iters);

/* Print "<prog>: <op>: <strerror(err)>; benchmark skipped" and exit with status 0: a benchmark that
 * cannot run says why but never fails the build. err is a positive errno value. */
void bench_give_up(const char *prog, const char *op, int err) __attribute__((noreturn));

/* Two ULTs of the running libulp runtime yield to each other `iters` times (after `warmup`
 * round trips); returns the nanoseconds of the timed part. Gives up (prog) if they cannot be
 * created. */
uint64_t bench_ult_pingpong(const char *prog, long iters, long warmup);

#ifndef __cplusplus /* C11 atomics; bench/switch_fcontext.cpp does not need these */
/* A token passed back and forth between two kernel threads or processes (in shared memory for
 * processes): the side whose turn it is not calls sched_yield until it is. Both sides do warmup +
 * iters round trips; ping returns the nanoseconds of the last iters and sets yields. */
struct bench_token {
	atomic_int turn; /* 0: ping's turn, 1: pong's */
	long iters, warmup;
	long yields; /* sched_yield calls of ping while measuring */
};
void bench_token_pong(struct bench_token *tk);
uint64_t bench_token_ping(struct bench_token *tk);
#endif

/*
 * Instruction-count mode (bench/ir.sh runs the benchmarks under callgrind): when BENCH_IR is
 * "name:iters", run the variant called name once for iters iterations and exit; ir.sh takes the
 * difference of two such runs, so start-up costs cancel. Returns when BENCH_IR is unset; gives up
 * (exit 2, naming the variants) on an unknown name.
 */
struct bench_ir_variant {
	const char *name;
	bench_loop_fn fn;
};
void bench_ir_mode(const char *prog, const struct bench_ir_variant *v, int n);

/* "yes"/"no": v <= limit when is_max, v >= limit otherwise. */
const char *bench_met(double v, double limit, int is_max);

/* Boost.Context fcontext round trips (switch_fcontext.cpp): `iters` times jump to a peer context
 * and back; returns the elapsed nanoseconds. */
uint64_t bench_fcontext_roundtrips(void *arg, long iters);

#ifdef __cplusplus
}
#endif
#endif
