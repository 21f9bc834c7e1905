/* SPDX-License-Identifier: MIT */
/* OpenMP with 4 threads: a reduction, a parallel section count, a barrier-heavy loop. Prints the
 * results; tests/integ/threads.sh compares them with the process's. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
	double sum = 0;
	long isum = 0;
	int team = 0, rounds = 0;

	omp_set_num_threads(4);
#pragma omp parallel for reduction(+ : sum, isum) schedule(static)
	for (long i = 1; i <= 4000000; i++) {
		sum += 1.0 / ((double)i * (double)i);
		isum += i % 7;
	}
#pragma omp parallel
	{
#pragma omp single
		team = omp_get_num_threads();
		for (int r = 0; r < 200; r++) {
#pragma omp barrier
#pragma omp atomic
			rounds++;
		}
	}
	printf("team=%d sum=%.15f isum=%ld rounds=%d\n", team, sum, isum, rounds);
	return !(team == 4 && rounds == 800);
}
