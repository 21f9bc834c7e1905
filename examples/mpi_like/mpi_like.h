/* SPDX-License-Identifier: MIT */
/*
 * mpi_like: a small message-passing API with two implementations behind it:
 *   ml_ulp.c  ranks are ULPs in one address space (ulpexec, ulpspawn); mailboxes are exported
 *             with pvas_export and written directly by the senders;
 *   ml_mpi.c  ranks are MPI processes (MPICH, mpiexec).
 * A program written against this header runs unchanged on either (examples/mpi_like/
 * mpi_like_prog.c). One thread per rank calls these functions.
 *
 * Semantics (both implementations):
 * - ml_send/ml_recv are blocking. A receive matches exactly one source rank and one tag; messages
 *   of the same (source, tag) arrive in the order they were sent. Messages of different tags may
 *   be received in any order.
 * - A send of at most ML_EAGER_BYTES returns without waiting for the receiver (the message is
 *   buffered), so "both send, then both receive" is safe for such messages. Larger sends may wait
 *   until the receiver takes them, as in MPI.
 * - A send to oneself never waits (it is kept until received); a receive from oneself when
 *   nothing matching was sent fails with -EDEADLK instead of waiting forever.
 * - ml_allreduce_sum adds in rank order (rank 0 + rank 1 + ... + rank size-1, element by
 *   element), so both implementations give bit-identical results.
 *
 * Every function returns 0 (ml_recv: the received size) or a negative errno code, and prints
 * the reason on stderr the first time something is wrong with the set-up.
 */
#ifndef MPI_LIKE_H
#define MPI_LIKE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest message that never makes the sender wait for its receiver. */
#define ML_EAGER_BYTES 224

/* Join the job: rank and size from ULP_RANK/ULP_SIZE (ULPs) or from MPI. -ENOTSUP: ml_ulp.c
 * outside a ULP runtime; -EINVAL: ULP_RANK/ULP_SIZE missing or inconsistent. */
int ml_init(int *argc, char ***argv);
/* This rank (0..size-1) and the number of ranks; -1 before ml_init. */
int ml_rank(void);
int ml_size(void);
/* Send bytes bytes from buf to rank dest with tag (tag >= 0). -EINVAL: bad rank or tag. */
int ml_send(const void *buf, size_t bytes, int dest, int tag);
/* Receive the next message from src with tag into buf (room for bytes bytes). Returns its size.
 * -EMSGSIZE: the message was longer than bytes; it is consumed, buf holds its first bytes. */
long ml_recv(void *buf, size_t bytes, int src, int tag);
/* Return once every rank has called it. */
int ml_barrier(void);
/* Element-wise sum of inout[0..count) over all ranks, in rank order; every rank gets it. */
int ml_allreduce_sum(double *inout, int count);
/* Leave the job: waits for every rank (so no rank's memory goes away while another may read
 * it). No ml_* call after it. */
int ml_finalize(void);

#ifdef __cplusplus
}
#endif
#endif
