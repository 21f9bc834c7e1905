/* SPDX-License-Identifier: MIT */
/*
 * Guest of bench/fastcall.sh: an unmodified-program view of the calls the fast path covers.
 *
 *   fastcall_guest yield ITERS     two ULPs (ULP_RANK 0 and 1) on one worker handing control over
 *                                  with sched_yield (libc's, as any program calls it); rank 0
 *                                  prints "<ns per round trip>"
 *   fastcall_guest pvas ITERS      the same through pvas_yield (the guest API)
 *   fastcall_guest read ITERS      one program: ITERS 1-byte reads from a pipe that holds the
 *                                  bytes already; prints "<ns per read>" (as a ULP or a process)
 *   fastcall_guest close ITERS     ITERS close(-1) (EBADF: the emulation adds nothing but the
 *                                  way in and out); prints "<ns per call>"
 */
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pvas.h"

#define WARMUP 1000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int yields(long n, int pvas)
{
	long i;

	for (i = 0; i < n; i++)
		if (pvas ? pvas_yield() : sched_yield())
			return 1;
	return 0;
}

static int pingpong(long iters, int pvas)
{
	const char *rank = getenv("ULP_RANK");
	uint64_t t0;

	if (!rank || strcmp(rank, "0"))
		return yields(iters + WARMUP + 4, pvas); /* always there to answer */
	if (yields(WARMUP, pvas))
		return 1;
	t0 = now_ns();
	if (yields(iters, pvas))
		return 1;
	printf("%.1f\n", (double)(now_ns() - t0) / (double)iters);
	return 0;
}

static int reads(long iters)
{
	static char buf[1 << 16];
	int p[2];
	long i, chunk, done = 0;
	uint64_t t = 0, t0;
	char c;

	if (pipe(p))
		return 1;
	memset(buf, 'x', sizeof(buf));
	while (done < iters) {
		chunk = iters - done < (long)sizeof(buf) ? iters - done : (long)sizeof(buf);
		if (write(p[1], buf, (size_t)chunk) != chunk)
			return 1;
		t0 = now_ns();
		for (i = 0; i < chunk; i++)
			if (read(p[0], &c, 1) != 1)
				return 1;
		t += now_ns() - t0;
		done += chunk;
	}
	printf("%.1f\n", (double)t / (double)iters);
	return 0;
}

static int closes(long iters)
{
	uint64_t t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++)
		if (close(-1) != -1)
			return 1;
	printf("%.1f\n", (double)(now_ns() - t0) / (double)iters);
	return 0;
}

int main(int argc, char **argv)
{
	long iters = argc > 2 ? atol(argv[2]) : 100000;

	if (argc > 1 && !strcmp(argv[1], "yield"))
		return pingpong(iters, 0);
	if (argc > 1 && !strcmp(argv[1], "pvas"))
		return pingpong(iters, 1);
	if (argc > 1 && !strcmp(argv[1], "read"))
		return reads(iters);
	if (argc > 1 && !strcmp(argv[1], "close"))
		return closes(iters);
	fprintf(stderr, "usage: fastcall_guest yield|pvas|read|close [ITERS]\n");
	return 2;
}
