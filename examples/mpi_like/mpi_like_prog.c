/* SPDX-License-Identifier: MIT */
/*
 * mpi_like_prog: the oversubscribed-ranks example. The same source is linked with ml_ulp.c
 * (run it with ulpexec/ulpspawn -n N) and with ml_mpi.c (mpiexec -n N).
 *
 *   mpi_like_prog [STEPS [CELLS [LAPS]]]     (default 1000 20000 20: about a second for 64
 *                                            ranks as ULPs on 2 cores)
 *
 * 1. ring: a token, a hop count and a payload larger than ML_EAGER_BYTES go around the ring of
 *    ranks LAPS times; every rank checks what it gets (received in another order than sent, so
 *    tags are matched) and adds its part; rank 0 checks the closed form after each lap.
 * 2. halo: a 1-D domain of size*CELLS doubles, CELLS per rank, zero outside, is smoothed STEPS
 *    times with u[j] <- (u[j-1] + 2 u[j] + u[j+1]) / 4 after exchanging boundary cells with the
 *    neighbour ranks. The initial values are two of the operator's eigenvectors,
 *    sin(pi m j / (L+1)), so the result has a closed form: each mode times its eigenvalue
 *    cos^2(pi m / 2(L+1)) to the power STEPS. One mode is chosen to decay to about half in STEPS
 *    steps, so a stale or wrong boundary value shows far above rounding. checksum = the sum of
 *    all cells, rank by rank in rank order: the same bits under every implementation.
 * 3. allreduce: vectors with exactly representable sums, compared with the closed form.
 * Rank 0 prints one summary line; the exit status is 1 when any check failed anywhere.
 * No libm: the initial values come from our own sine, so every build computes the same bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ml_math.h"
#include "mpi_like.h"

#define TAG_TOKEN 1
#define TAG_HOP 2
#define TAG_PAYLOAD 3
#define TAG_HALO 4
#define PAYLOAD 512 /* doubles: 4 KiB, above ML_EAGER_BYTES */
#define AR_COUNT 64
#define AR_ITERS 8

static int rank, size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "mpi_like_prog: rank %d: %s: error %d\n", rank, what, rc);
		exit(2);
	}
	return rc;
}

/* --- 1. ring ---------------------------------------------------------------------------- */

struct token {
	long lap, sum;
};

static long ring(int laps)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, lap, i;
	static double payload[PAYLOAD];
	struct token tok;
	long bad = 0, hop;
	int reported = 0, got;

	for (lap = 0; lap < laps; lap++) {
		if (rank == 0) {
			tok.lap = lap;
			tok.sum = 1;
			hop = 1;
			for (i = 0; i < PAYLOAD; i++)
				payload[i] = i + lap;
			check(ml_send(&tok, sizeof(tok), next, TAG_TOKEN), "ring send");
			check(ml_send(&hop, sizeof(hop), next, TAG_HOP), "ring send");
			check(ml_send(payload, sizeof(payload), next, TAG_PAYLOAD), "ring send");
		}
		/* not the order they were sent in: tags must be matched */
		got = check(ml_recv(&hop, sizeof(hop), prev, TAG_HOP), "ring recv") == sizeof(hop);
		got +=
		    check(ml_recv(&tok, sizeof(tok), prev, TAG_TOKEN), "ring recv") == sizeof(tok);
		got += check(ml_recv(payload, sizeof(payload), prev, TAG_PAYLOAD), "ring recv") ==
		       sizeof(payload);
		bad += got != 3;
		/* visited ranks 0..r-1 so far (rank 0: all of them) */
		long r = rank ? rank : size;
		if (hop != r || tok.lap != lap || tok.sum != r * (r + 1) / 2)
			bad++;
		for (i = 0; i < PAYLOAD; i++)
			if (payload[i] != i + lap + (double)(r * (r - 1) / 2))
				bad++;
		if (bad && !reported) {
			fprintf(stderr, "mpi_like_prog: rank %d: ring lap %d: wrong token\n", rank,
				lap);
			reported = 1; /* and go on: the other ranks wait for the token */
		}
		if (rank != 0) {
			tok.sum += rank + 1;
			hop++;
			for (i = 0; i < PAYLOAD; i++)
				payload[i] += rank;
			check(ml_send(&tok, sizeof(tok), next, TAG_TOKEN), "ring send");
			check(ml_send(&hop, sizeof(hop), next, TAG_HOP), "ring send");
			check(ml_send(payload, sizeof(payload), next, TAG_PAYLOAD), "ring send");
		}
	}
	return bad;
}

/* --- 2. halo ---------------------------------------------------------------------------- */

/* Exchange u[1] and u[cells] with the neighbours' boundary cells into u[0] and u[cells+1].
 * Even ranks talk to the right first, odd ranks to the left: each pair of neighbours meets
 * in the same order, so this is safe even if sends waited for their receivers. */
static void exchange(double *u, int cells)
{
	int left = rank - 1, right = rank + 1 < size ? rank + 1 : -1, k;

	for (k = 0; k < 2; k++) {
		if ((rank % 2 == 0) == (k == 0)) {
			if (right >= 0) {
				check(ml_send(&u[cells], sizeof(*u), right, TAG_HALO), "halo");
				check(ml_recv(&u[cells + 1], sizeof(*u), right, TAG_HALO), "halo");
			}
		} else if (left >= 0) {
			check(ml_recv(&u[0], sizeof(*u), left, TAG_HALO), "halo");
			check(ml_send(&u[1], sizeof(*u), left, TAG_HALO), "halo");
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
		fprintf(stderr, "mpi_like_prog: rank %d: no memory for %d cells\n", rank, cells);
		exit(2);
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
				fprintf(stderr,
					"mpi_like_prog: rank %d: cell %ld: %.17g, want %.17g\n",
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

static long allreduce(void)
{
	double v[AR_COUNT];
	long bad = 0;
	int it, i;

	for (it = 0; it < AR_ITERS; it++) {
		for (i = 0; i < AR_COUNT; i++)
			v[i] = (double)rank * AR_COUNT + i + 0.5 * it;
		check(ml_allreduce_sum(v, AR_COUNT), "allreduce");
		for (i = 0; i < AR_COUNT; i++)
			if (v[i] != (double)AR_COUNT * size * (size - 1) / 2 + (double)size * i +
					0.5 * it * size)
				bad++;
	}
	if (bad)
		fprintf(stderr, "mpi_like_prog: rank %d: allreduce: %ld wrong sums\n", rank, bad);
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
			"usage: mpi_like_prog [STEPS [CELLS [LAPS]]] (positive numbers; "
			"'%s' is not)\n",
			argv[i]);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	int steps, cells, laps, rc;
	double r[4], t0, t;

	/* before ml_init: a rank that leaves early would leave the others waiting for it */
	steps = arg(argc, argv, 1, 1000);
	cells = arg(argc, argv, 2, 20000);
	laps = arg(argc, argv, 3, 20);
	if ((rc = ml_init(&argc, &argv)) != 0)
		return 2;
	rank = ml_rank();
	size = ml_size();
	check(ml_barrier(), "barrier");
	t0 = now();
	r[0] = ring(laps);
	r[1] = halo(steps, cells, &r[2]);
	r[3] = allreduce();
	check(ml_allreduce_sum(r, 4), "allreduce");
	check(ml_barrier(), "barrier");
	t = now() - t0;
	if (rank == 0)
		printf("mpi_like_prog: %d ranks, ring %s (%d laps), halo %d steps x %d cells %s "
		       "checksum=%.17g, allreduce %s, %.3f s\n",
		       size, r[0] ? "FAILED" : "ok", laps, steps, cells, r[1] ? "FAILED" : "ok",
		       r[2], r[3] ? "FAILED" : "ok", t);
	fflush(stdout);
	check(ml_finalize(), "finalize");
	return rank == 0 && (r[0] || r[1] || r[3]) ? 1 : 0;
}
