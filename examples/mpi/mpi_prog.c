/* SPDX-License-Identifier: MIT */
/*
 * mpi_prog: examples/mpi_like/mpi_like_prog's workload written against MPI itself (no mpi_like
 * layer), for running a real MPI program as ULPs (ulpspawn --pmi) and as processes (mpiexec):
 *
 *   mpi_prog [STEPS [CELLS [LAPS]]]          (defaults as mpi_like_prog: 1000 20000 20)
 *
 * Same ring, halo and allreduce, same checks, same summary line (named mpi_prog) and, for the
 * same number of ranks and arguments, the same checksum bit for bit as mpi_like_prog under
 * ulpexec, ulpspawn or MPICH. Three things keep the bits and the behaviour equal:
 * - the allreduce is a gather to rank 0, additions in rank order, a broadcast: MPI_Allreduce's
 *   order of additions depends on the algorithm the library picks;
 * - the ring's three messages are sent with MPI_Isend and received in another order (hop before
 *   token), so tags are matched; a blocking MPI_Send could wait for its receive (MPI allows it)
 *   and deadlock here, and rank 0 of a one-rank job sends to itself;
 * - the halo exchange pairs neighbours in the same order on both sides (even ranks right first),
 *   so blocking sends are safe there.
 * Rank 0 prints one summary line; the exit status is 1 when any check failed anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

#include "ml_math.h"

#define TAG_TOKEN 1
#define TAG_HOP 2
#define TAG_PAYLOAD 3
#define TAG_HALO 4
#define PAYLOAD 512 /* doubles: 4 KiB, as in mpi_like_prog */
#define AR_COUNT 64
#define AR_ITERS 8

static int rank, size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL: a failed call ends the job with MPI's message. */

/* --- 1. ring ---------------------------------------------------------------------------- */

struct token {
	long lap, sum;
};

static void send_token(struct token *tok, long *hop, double *payload, int next)
{
	MPI_Request rq[3];
	MPI_Status
	    st[3]; /* not MPI_STATUSES_IGNORE: MPICH's (pointer 1) trips gcc's bounds check */

	MPI_Isend(tok, sizeof(*tok), MPI_BYTE, next, TAG_TOKEN, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(hop, sizeof(*hop), MPI_BYTE, next, TAG_HOP, MPI_COMM_WORLD, &rq[1]);
	MPI_Isend(payload, PAYLOAD * sizeof(double), MPI_BYTE, next, TAG_PAYLOAD, MPI_COMM_WORLD,
		  &rq[2]);
	MPI_Waitall(3, rq, st);
}

static int recv_bytes(void *buf, int bytes, int src, int tag)
{
	MPI_Status st;
	int n;

	MPI_Recv(buf, bytes, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	return n == bytes;
}

static long ring(int laps)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, lap, i;
	static double payload[PAYLOAD];
	MPI_Request rq[3];
	MPI_Status st[3];
	struct token tok, out;
	long bad = 0, hop, hop_out;
	int reported = 0, got;

	for (lap = 0; lap < laps; lap++) {
		if (rank == 0) {
			/* rank 0 receives before its sends complete: with one rank it is its own
			 * receiver */
			static double first[PAYLOAD];

			out.lap = lap;
			out.sum = 1;
			hop_out = 1;
			for (i = 0; i < PAYLOAD; i++)
				first[i] = i + lap;
			MPI_Isend(&out, sizeof(out), MPI_BYTE, next, TAG_TOKEN, MPI_COMM_WORLD,
				  &rq[0]);
			MPI_Isend(&hop_out, sizeof(hop_out), MPI_BYTE, next, TAG_HOP,
				  MPI_COMM_WORLD, &rq[1]);
			MPI_Isend(first, sizeof(first), MPI_BYTE, next, TAG_PAYLOAD, MPI_COMM_WORLD,
				  &rq[2]);
		}
		/* not the order they were sent in: tags must be matched */
		got = recv_bytes(&hop, sizeof(hop), prev, TAG_HOP);
		got += recv_bytes(&tok, sizeof(tok), prev, TAG_TOKEN);
		got += recv_bytes(payload, sizeof(payload), prev, TAG_PAYLOAD);
		if (rank == 0)
			MPI_Waitall(3, rq, st);
		bad += got != 3;
		/* visited ranks 0..r-1 so far (rank 0: all of them) */
		long r = rank ? rank : size;
		if (hop != r || tok.lap != lap || tok.sum != r * (r + 1) / 2)
			bad++;
		for (i = 0; i < PAYLOAD; i++)
			if (payload[i] != i + lap + (double)(r * (r - 1) / 2))
				bad++;
		if (bad && !reported) {
			fprintf(stderr, "mpi_prog: rank %d: ring lap %d: wrong token\n", rank, lap);
			reported = 1; /* and go on: the other ranks wait for the token */
		}
		if (rank != 0) {
			tok.sum += rank + 1;
			hop++;
			for (i = 0; i < PAYLOAD; i++)
				payload[i] += rank;
			send_token(&tok, &hop, payload, next);
		}
	}
	return bad;
}

/* --- 2. halo ---------------------------------------------------------------------------- */

/* Exchange u[1] and u[cells] with the neighbours' boundary cells into u[0] and u[cells+1]. */
static void exchange(double *u, int cells)
{
	int left = rank - 1, right = rank + 1 < size ? rank + 1 : -1, k;

	for (k = 0; k < 2; k++) {
		if ((rank % 2 == 0) == (k == 0)) {
			if (right >= 0) {
				MPI_Send(&u[cells], 1, MPI_DOUBLE, right, TAG_HALO, MPI_COMM_WORLD);
				MPI_Recv(&u[cells + 1], 1, MPI_DOUBLE, right, TAG_HALO,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		} else if (left >= 0) {
			MPI_Recv(&u[0], 1, MPI_DOUBLE, left, TAG_HALO, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(&u[1], 1, MPI_DOUBLE, left, TAG_HALO, MPI_COMM_WORLD);
		}
	}
}

/* Returns the number of wrong cells; *sum = sum of this rank's cells, in order. */
static long halo(int steps, int cells, double *sum)
{
	long L = (long)size * cells, first = (long)rank * cells, bad = 0, m;
	double *u = calloc(cells + 2, sizeof(double)), *v = calloc(cells + 2, sizeof(double)), *t;
	double th1 = PI / (L + 1), thm, l1, lm, worst = 0;
	int s, i;

	if (!u || !v) {
		fprintf(stderr, "mpi_prog: rank %d: no memory for %d cells\n", rank, cells);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* mode m with lambda^steps ~ 1/2: lambda ~ exp(-theta^2/4), theta ~ sqrt(4 ln 2/steps) */
	m = (long)((L + 1) / PI * root2(4 * 0.6931471805599453 / steps) + 0.5);
	m = m < 1 ? 1 : m > L ? L : m;
	thm = PI * m / (L + 1);
	for (i = 1; i <= cells; i++)
		u[i] = sine(th1 * (first + i)) + 0.5 * sine(thm * (first + i));
	for (s = 0; s < steps; s++) {
		exchange(u, cells);
		for (i = 1; i <= cells; i++)
			v[i] = (u[i - 1] + 2.0 * u[i] + u[i + 1]) * 0.25;
		t = u, u = v, v = t; /* v's ghost cells are rewritten before they are read */
	}
	l1 = power((1 + sine(th1 + PI / 2)) / 2, steps);
	lm = power((1 + sine(thm + PI / 2)) / 2, steps);
	*sum = 0;
	for (i = 1; i <= cells; i++) {
		double want = l1 * sine(th1 * (first + i)) + 0.5 * lm * sine(thm * (first + i));
		double err = u[i] > want ? u[i] - want : want - u[i];

		*sum += u[i];
		if (err > 1e-9) {
			if (!bad || err > worst)
				fprintf(stderr, "mpi_prog: rank %d: cell %ld: %.17g, want %.17g\n",
					rank, first + i - 1, u[i], want);
			worst = err > worst ? err : worst;
			bad++;
		}
	}
	free(u);
	free(v);
	return bad;
}

/* --- 3. allreduce ----------------------------------------------------------------------- */

/* Element-wise sum over the ranks, added in rank order (the bits of mpi_like's allreduce). */
static void sum_in_rank_order(double *inout, int count)
{
	static double *all;
	int i, k;

	if (rank == 0 && !all && !(all = malloc(sizeof(double) * AR_COUNT * size))) {
		fprintf(stderr, "mpi_prog: rank 0: no memory for the allreduce\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Gather(inout, count, MPI_DOUBLE, all, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (i = 0; i < count; i++) {
			double s = all[i];

			for (k = 1; k < size; k++)
				s += all[(size_t)k * count + i];
			inout[i] = s;
		}
	MPI_Bcast(inout, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static long allreduce(void)
{
	double v[AR_COUNT];
	long bad = 0;
	int it, i;

	for (it = 0; it < AR_ITERS; it++) {
		for (i = 0; i < AR_COUNT; i++)
			v[i] = (double)rank * AR_COUNT + i + 0.5 * it;
		sum_in_rank_order(v, AR_COUNT);
		for (i = 0; i < AR_COUNT; i++)
			if (v[i] != (double)AR_COUNT * size * (size - 1) / 2 + (double)size * i +
					0.5 * it * size)
				bad++;
	}
	if (bad)
		fprintf(stderr, "mpi_prog: rank %d: allreduce: %ld wrong sums\n", rank, bad);
	return bad;
}

static int arg(int argc, char **argv, int i, int def)
{
	char *end;
	long v;

	if (argc <= i)
		return def;
	v = strtol(argv[i], &end, 10);
	if (*end || v < 1 || v > 1 << 30) {
		fprintf(stderr,
			"usage: mpi_prog [STEPS [CELLS [LAPS]]] (positive numbers; '%s' is not)\n",
			argv[i]);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	int steps, cells, laps;
	double r[4], t0, t;

	/* before MPI_Init: every rank sees the same arguments, so all leave here or none does */
	steps = arg(argc, argv, 1, 1000);
	cells = arg(argc, argv, 2, 20000);
	laps = arg(argc, argv, 3, 20);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now();
	r[0] = ring(laps);
	r[1] = halo(steps, cells, &r[2]);
	r[3] = allreduce();
	sum_in_rank_order(r, 4);
	MPI_Barrier(MPI_COMM_WORLD);
	t = now() - t0;
	if (rank == 0)
		printf("mpi_prog: %d ranks, ring %s (%d laps), halo %d steps x %d cells %s "
		       "checksum=%.17g, allreduce %s, %.3f s\n",
		       size, r[0] ? "FAILED" : "ok", laps, steps, cells, r[1] ? "FAILED" : "ok",
		       r[2], r[3] ? "FAILED" : "ok", t);
	fflush(stdout);
	MPI_Finalize();
	return rank == 0 && (r[0] || r[1] || r[3]) ? 1 : 0;
}
