/* SPDX-License-Identifier: MIT */
/*
 * mpi_like over MPI (built with MPICH's mpicc). Sends of at most ML_EAGER_BYTES rely on MPI's
 * eager protocol (MPICH sends messages far larger than that eagerly). The allreduce gathers to
 * rank 0, adds in rank order and broadcasts, rather than MPI_Allreduce, whose order of additions
 * depends on the algorithm MPI picks: the result is bit-identical to ml_ulp.c's. Messages to
 * oneself stay in ml_self.c (MPI_Send to oneself may wait for the receive, MPICH's does).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "mpi_like.h"
#include "ml_self.h"

static int me = -1, nranks = -1;

static double *gathered; /* rank 0: size * count contributions */
static int gathered_count;

static int fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(err, msg, &len);
	fprintf(stderr, "ml_mpi: rank %d: %s: %s\n", me, what, msg);
	return -EIO;
}

int ml_init(int *argc, char ***argv)
{
	int err = MPI_Init(argc, argv);

	if (err != MPI_SUCCESS)
		return fail("MPI_Init", err);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	return 0;
}

int ml_rank(void)
{
	return me;
}

int ml_size(void)
{
	return nranks;
}

int ml_send(const void *buf, size_t bytes, int dest, int tag)
{
	int err;

	if (dest < 0 || dest >= nranks || tag < 0 || bytes > (size_t)INT32_MAX || (!buf && bytes))
		return -EINVAL;
	if (dest == me)
		return ml_self_put(buf, bytes, tag);
	err = MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? 0 : fail("MPI_Send", err);
}

long ml_recv(void *buf, size_t bytes, int src, int tag)
{
	MPI_Status st;
	int err, n;

	if (src < 0 || src >= nranks || tag < 0 || bytes > (size_t)INT32_MAX || (!buf && bytes))
		return -EINVAL;
	if (src == me)
		return ml_self_take(buf, bytes, tag);
	err = MPI_Recv(buf, (int)bytes, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
	if (err == MPI_ERR_TRUNCATE ||
	    (err == MPI_ERR_IN_STATUS && st.MPI_ERROR == MPI_ERR_TRUNCATE))
		return -EMSGSIZE;
	if (err != MPI_SUCCESS)
		return fail("MPI_Recv", err);
	MPI_Get_count(&st, MPI_BYTE, &n);
	return n;
}

int ml_barrier(void)
{
	int err = MPI_Barrier(MPI_COMM_WORLD);

	return err == MPI_SUCCESS ? 0 : fail("MPI_Barrier", err);
}

int ml_allreduce_sum(double *inout, int count)
{
	int err, i, k;

	if (count < 0 || (!inout && count))
		return -EINVAL;
	if (me == 0 && count > gathered_count) {
		free(gathered);
		if (!(gathered = malloc((size_t)count * nranks * sizeof(*gathered))))
			return -ENOMEM;
		gathered_count = count;
	}
	err = MPI_Gather(inout, count, MPI_DOUBLE, gathered, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS)
		return fail("MPI_Gather", err);
	if (me == 0) {
		for (i = 0; i < count; i++) {
			double s = gathered[i];

			for (k = 1; k < nranks; k++)
				s += gathered[(size_t)k * count + i];
			inout[i] = s;
		}
	}
	err = MPI_Bcast(inout, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? 0 : fail("MPI_Bcast", err);
}

int ml_finalize(void)
{
	int err = MPI_Finalize();

	free(gathered);
	gathered = NULL;
	return err == MPI_SUCCESS ? 0 : fail("MPI_Finalize", err);
}
