/* SPDX-License-Identifier: MIT */
/*
 * Guest of bench/fig7.c (the User-level Process paper's Fig. 7), a static-pie program:
 *
 *   fig7_guest SWITCHES FD
 *
 * Every ULP of the run (ULP_SIZE of them, on one worker) meets the others at a pvas_barrier, calls
 * pvas_yield SWITCHES times, and meets them again. The ULP that completes the first barrier writes
 * "0 <ns>" to FD, the one that completes the second "1 <ns>" (CLOCK_MONOTONIC; FD is a descriptor
 * of the launching process, which ULPs share). Barrier names carry ULP_SIZE, whose count must
 * agree across uses of a name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pvas.h"

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int meet(const char *what, int size, int fd, int which)
{
	char name[64];
	int rc;

	snprintf(name, sizeof(name), "fig7.%s.%d", what, size);
	rc = pvas_barrier(name, size);
	if (rc < 0) {
		fprintf(stderr, "fig7_guest: pvas_barrier %s: error %d\n", name, rc);
		return -1;
	}
	if (rc == 1 && dprintf(fd, "%d %llu\n", which, now_ns()) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *s = getenv("ULP_SIZE");
	long n = argc == 3 ? atol(argv[1]) : 0, i;
	int fd = argc == 3 ? atoi(argv[2]) : -1, size = s ? atoi(s) : 0;

	if (n < 1 || fd < 0 || size < 1) {
		fprintf(stderr, "usage: ULP_SIZE=P fig7_guest SWITCHES FD (run as P ULPs)\n");
		return 2;
	}
	if (meet("start", size, fd, 0))
		return 1;
	for (i = 0; i < n; i++)
		if (pvas_yield())
			return 1;
	return meet("end", size, fd, 1) ? 1 : 0;
}
