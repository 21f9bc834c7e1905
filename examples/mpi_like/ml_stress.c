/* SPDX-License-Identifier: MIT */
/*
 * ml_stress: the mpi_like API under load, for the tests. Every pair of ranks exchanges MSGS
 * messages each way (round k pairs a with b when a + b = k mod size, so every pair meets once and
 * the pairs of a round are disjoint). The messages come in groups of three with tags 0, 1, 2: two
 * small ones and one that is larger than ML_EAGER_BYTES every other group; the receiver takes
 * each group in reverse tag order, so tags are matched out of order, large messages go by
 * rendezvous, and more messages than a ring holds are in flight (flow control). Every byte says
 * who sent it and which message it belongs to, so a lost, duplicated, reordered or torn message
 * is found. A barrier closes each round and an allreduce adds up the errors.
 *
 *   ml_stress [MSGS]     (default 60, rounded up to a multiple of 3)
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_like.h"

#define BIG 1000

static int rank, size;

static unsigned char byte_of(int src, int dst, int j, size_t i)
{
	return (unsigned char)(src * 131 + dst * 71 + j * 29 + i * 7 + 1);
}

static size_t size_of(int src, int dst, int j)
{
	if (j % 3 == 2 && (j / 3) % 2 == 0)
		return BIG + (src + dst + j) % 64;
	return (size_t)(src * 3 + dst * 5 + j) % (ML_EAGER_BYTES + 1);
}

static long send_all(int to, int msgs, unsigned char *buf)
{
	long bad = 0;
	size_t i, n;
	int j;

	for (j = 0; j < msgs; j++) {
		n = size_of(rank, to, j);
		for (i = 0; i < n; i++)
			buf[i] = byte_of(rank, to, j, i);
		if (ml_send(buf, n, to, j % 3) != 0)
			bad++;
	}
	return bad;
}

static long recv_all(int from, int msgs, unsigned char *buf)
{
	long bad = 0, got;
	size_t i, n;
	int g, k, j;

	for (g = 0; g < msgs; g += 3) {
		for (k = 2; k >= 0; k--) {
			j = g + k;
			n = size_of(from, rank, j);
			got = ml_recv(buf, BIG + 64, from, k);
			if (got != (long)n) {
				fprintf(stderr,
					"ml_stress: rank %d: message %d from %d: %ld bytes\n", rank,
					j, from, got);
				bad++;
				continue;
			}
			for (i = 0; i < n; i++)
				if (buf[i] != byte_of(from, rank, j, i)) {
					fprintf(stderr,
						"ml_stress: rank %d: %d from %d: byte %zu\n", rank,
						j, from, i);
					bad++;
					break;
				}
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	static unsigned char sbuf[BIG + 64], rbuf[BIG + 64];
	int msgs, k, p;
	double bad = 0;

	if (ml_init(&argc, &argv) != 0)
		return 2;
	rank = ml_rank();
	size = ml_size();
	msgs = argc > 1 ? atoi(argv[1]) : 60;
	msgs = msgs < 3 ? 3 : (msgs + 2) / 3 * 3;
	for (k = 0; k < size; k++) {
		p = ((k - rank) % size + size) % size;
		if (p == rank) {
			/* to oneself: everything is buffered, send all first */
			bad += send_all(p, msgs, sbuf);
			bad += recv_all(p, msgs, rbuf);
		} else if (rank < p) {
			bad += send_all(p, msgs, sbuf);
			bad += recv_all(p, msgs, rbuf);
		} else {
			bad += recv_all(p, msgs, rbuf);
			bad += send_all(p, msgs, sbuf);
		}
		if (ml_barrier() != 0)
			bad++;
	}
	if (ml_allreduce_sum(&bad, 1) != 0)
		return 2;
	if (rank == 0)
		printf("ml_stress: %d ranks, %d messages per pair and direction: %s\n", size, msgs,
		       bad ? "FAILED" : "ok");
	ml_finalize();
	return bad ? 1 : 0;
}
