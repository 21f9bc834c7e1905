/* SPDX-License-Identifier: MIT */
/* Rank 0 dereferences NULL, rank 1 overflows its stack, rank 2 aborts, others finish. */
#include <stdio.h>
#include <stdlib.h>

#include "pvas.h"

static int recurse(volatile char *p)
{
	volatile char big[4096];

	big[0] = p ? p[0] : 0;
	return recurse(big) + big[1];
}

int main(void)
{
	int rank = atoi(getenv("ULP_RANK"));
	int i;

	for (i = 0; i < 3; i++)
		pvas_yield();
	if (rank == 0)
		return *(volatile int *)16;
	if (rank == 1)
		return recurse(NULL);
	if (rank == 2)
		abort();
	for (i = 0; i < 10; i++)
		pvas_yield();
	printf("rank %d survived\n", rank);
	return 0;
}
