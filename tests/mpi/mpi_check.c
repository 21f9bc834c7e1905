/* SPDX-License-Identifier: MIT */
/*
 * An MPI program nobody here wrote against our runtime: hello, a ring pass, a halo exchange with a
 * closed-form check, allreduce, and large messages (64 KiB .. 16 MiB) with a content checksum.
 * Rank 0 prints one line per phase; the output must equal mpiexec.mpich's for the same binary.
 *   mpi_check [abort R CODE | crash R]   (rank R aborts / segfaults after MPI_Init)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const unsigned char *p, size_t n, uint64_t h)
{
	while (n--)
		h = (h ^ *p++) * 1099511628211ull;
	return h;
}

int main(int argc, char **argv)
{
	int rank, size, i, tok, left, right, halo[2];
	long sum = 0, want;
	size_t len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc == 4 && !strcmp(argv[1], "abort") && rank == atoi(argv[2]))
		MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "crash") && rank == atoi(argv[2]))
		*(volatile int *)16 = 1;
	if (rank == 0)
		printf("hello from %d ranks\n", size);
	left = (rank + size - 1) % size;
	right = (rank + 1) % size;
	/* ring: a token goes around, each rank adds its rank + 1 */
	tok = 0;
	if (size == 1) {
		printf("ring: 1 (want 1)\n");
	} else if (rank == 0) {
		MPI_Send(&tok, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
		MPI_Recv(&tok, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tok += 1;
		printf("ring: %d (want %d)\n", tok, size * (size + 1) / 2);
	} else {
		MPI_Recv(&tok, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tok += rank + 1;
		MPI_Send(&tok, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
	}
	/* halo: each rank sends its rank both ways; sum over ranks of left + right = 2 * sum(ranks)
	 */
	MPI_Sendrecv(&rank, 1, MPI_INT, right, 2, &halo[0], 1, MPI_INT, left, 2, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	MPI_Sendrecv(&rank, 1, MPI_INT, left, 3, &halo[1], 1, MPI_INT, right, 3, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	i = halo[0] + halo[1];
	MPI_Reduce(&i, &tok, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("halo: %d (want %d)\n", tok, size * (size - 1));
	/* allreduce of rank^2 */
	i = rank;
	for (tok = 0; tok < 3; tok++) {
		long v = (long)rank * rank;

		MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	want = (long)(size - 1) * size * (2 * size - 1) / 6;
	if (sum != want)
		printf("rank %d: allreduce %ld, want %ld\n", rank, sum, want);
	if (rank == 0)
		printf("allreduce: %ld (want %ld)\n", sum, want);
	/* large messages from rank 0 to the last rank, checksummed on both sides */
	for (len = 64 << 10; size > 1 && len <= (16u << 20); len <<= 2) {
		unsigned char *b = malloc(len);
		uint64_t h[2] = {0, 0};

		if (!b)
			MPI_Abort(MPI_COMM_WORLD, 3);
		if (rank == 0) {
			for (i = 0; (size_t)i < len; i++)
				b[i] = (unsigned char)(i * 31 + (int)(len >> 10));
			MPI_Send(b, (int)len, MPI_BYTE, size - 1, 4, MPI_COMM_WORLD);
			h[0] = fnv(b, len, 14695981039346656037ull);
			MPI_Recv(&h[1], 1, MPI_UINT64_T, size - 1, 5, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			printf("message %zu KiB: %s\n", len >> 10,
			       h[0] == h[1] ? "intact" : "CORRUPT");
		} else if (rank == size - 1) {
			MPI_Recv(b, (int)len, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			h[1] = fnv(b, len, 14695981039346656037ull);
			MPI_Send(&h[1], 1, MPI_UINT64_T, 0, 5, MPI_COMM_WORLD);
		}
		free(b);
	}
	MPI_Finalize();
	return 0;
}
