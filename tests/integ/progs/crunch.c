/* SPDX-License-Identifier: MIT */
/*
 * Computes without any system call (a linear congruential sequence, ITERATIONS steps), then
 * prints its last value: a ULP that only computes is preempted by its worker's tick, as a
 * spinner when others wait on the worker (tests/integ/traced.sh). The value depends only on the
 * count, so every rank and the process print the same line.
 *
 * Usage: crunch ITERATIONS
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n, i, x = 1;
	char *end;

	if (argc != 2 || (n = strtoul(argv[1], &end, 10), *end || !*argv[1])) {
		fprintf(stderr, "usage: crunch ITERATIONS\n");
		return 2;
	}
	for (i = 0; i < n; i++) /* no call: only the tick takes the worker back */
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	printf("crunch: %lu steps: %lu\n", n, x);
	return 0;
}
