/* SPDX-License-Identifier: MIT */
/*
 * Guest of the ULP yield benchmark (bench/ulp_yield.c), a static-pie program:
 *
 *   ulp_guest_yield pingpong ITERS FD
 *	two ULPs on one worker: rank 0 (ULP_RANK) yields WARMUP times, then times ITERS calls of
 *	pvas_yield; each one runs rank 1 up to its next pvas_yield and back: one round trip. Rank 1
 *	yields a few more times than rank 0, so it is always there to answer. Rank 0 writes
 *	"<ns>\n" to FD (a descriptor of the process: ULPs share them).
 *   ulp_guest_yield trap ITERS FD
 *	one ULP alone: times ITERS sched_yield calls (trapped by the seccomp filter, emulated by the
 *	SIGSYS handler, which finds nothing else to run and returns), then ITERS getppid calls (not
 *	trapped: they run natively, through the filter), and writes "<trap_ns> <native_ns>\n".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pvas.h"

#define WARMUP 200

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int yield_loop(long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (pvas_yield())
			return 1;
	return 0;
}

static int pingpong(long iters, int fd)
{
	const char *rank = getenv("ULP_RANK");
	uint64_t t0;

	if (!rank || strcmp(rank, "0"))
		return yield_loop(iters + WARMUP + 4);
	if (yield_loop(WARMUP))
		return 1;
	t0 = now_ns();
	if (yield_loop(iters))
		return 1;
	return dprintf(fd, "%llu\n", (unsigned long long)(now_ns() - t0)) < 0;
}

static int trap(long iters, int fd)
{
	uint64_t t0, t1, t2;
	long i;

	for (i = 0; i < WARMUP; i++)
		sched_yield();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		sched_yield();
	t1 = now_ns();
	for (i = 0; i < iters; i++)
		syscall(SYS_getppid);
	t2 = now_ns();
	return dprintf(fd, "%llu %llu\n", (unsigned long long)(t1 - t0),
		       (unsigned long long)(t2 - t1)) < 0;
}

int main(int argc, char **argv)
{
	long iters = argc == 4 ? atol(argv[2]) : 0;
	int fd = argc == 4 ? atoi(argv[3]) : -1;

	if (iters < 1 || fd < 0) {
		fprintf(stderr, "usage: ulp_guest_yield pingpong|trap ITERS FD\n");
		return 2;
	}
	if (!strcmp(argv[1], "pingpong"))
		return pingpong(iters, fd);
	if (!strcmp(argv[1], "trap"))
		return trap(iters, fd);
	fprintf(stderr, "ulp_guest_yield: unknown mode '%s'\n", argv[1]);
	return 2;
}
