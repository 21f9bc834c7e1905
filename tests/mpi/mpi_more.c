/* SPDX-License-Identifier: MIT */
/*
 * What a demanding MPI user's programs do beyond mpi_check (tests/mpi/mpi_more.sh runs it under
 * mpiexec.mpich and as ULP ranks and compares). Rank 0 prints one line per part, with the count of
 * wrong values the ranks found (0 when right); the lines must equal mpiexec's.
 *   mpi_more io DIR   MPI-IO (ROMIO) on DIR/mpi_more.io.PID: collective writes and reads, a file
 *                     view, the shared file pointer (write_shared, write_ordered), atomic mode
 *                     (alone, and readers beside writers)
 *   mpi_more win      one-sided: Win_allocate_shared + shared_query, Put/Get/Accumulate in fence
 *                     epochs on Win_create'd malloc memory, lock/unlock, compare-and-swap
 *   mpi_more thread   MPI_THREAD_MULTIPLE: 2 pthreads per rank in concurrent Sendrecv, then 4 that
 *                     take messages from any source while the main thread runs Allreduce
 *   mpi_more comm     Comm_split/dup, Ialltoallv, Waitany + Cancel, derived datatypes,
 *                     Probe/Mprobe, Get_processor_name, Wtime
 *   mpi_more stdin    each rank reads its stdin once (rank order): what it got
 *   mpi_more env N... each rank's cwd and these variables
 *   mpi_more exit R C | return R | abort R C   rank R exits with C without MPI_Finalize, returns
 *                     from main without it, or calls MPI_Abort(C); the others wait in MPI_Recv
 *   mpi_more finalize R C   after MPI_Finalize rank R returns C at once, the others 0 later
 *   mpi_more spawn | port   MPI_Comm_spawn of 2 more / MPI_Open_port
 *   mpi_more topo OUT each rank's hwloc variables before and after MPI_Init, the hwloc plugins
 *                     mapped after it, and a copy of its HWLOC_XMLFILE in OUT.RANK (ulpspawn's
 *                     topology, launch/topo.h)
 */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* The sum over ranks of the wrong values each found, printed by rank 0. */
static void report(const char *what, int err)
{
	MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d wrong\n", what, err);
}

/* Each rank writes 16 ints at its own offset, collectively, then reads its right neighbour's. */
static int io_at_all(MPI_File fh)
{
	int buf[16], got[16], i, err = 0, right = (rank + 1) % size;

	for (i = 0; i < 16; i++)
		buf[i] = rank * 100 + i;
	MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof(buf), buf, 16, MPI_INT,
			      MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	MPI_File_read_at_all(fh, (MPI_Offset)right * sizeof(buf), got, 16, MPI_INT,
			     MPI_STATUS_IGNORE);
	for (i = 0; i < 16; i++)
		err += got[i] != right * 100 + i;
	return err;
}

/* A strided view: rank r owns ints r, r + size, ...; rank 0 reads the interleaved whole. */
static int io_view(MPI_File fh)
{
	MPI_Datatype vec, ft;
	int buf[16], i, err = 0;

	for (i = 0; i < 16; i++)
		buf[i] = rank * 100 + i;
	MPI_Type_vector(16, 1, size, MPI_INT, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)(16 * size * sizeof(int)), &ft);
	MPI_Type_commit(&ft);
	MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(int)), MPI_INT, ft, "native",
			  MPI_INFO_NULL);
	MPI_File_write_all(fh, buf, 16, MPI_INT, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	if (rank == 0) {
		int *all = malloc(16 * size * sizeof(int));

		MPI_File_read_at(fh, 0, all, 16 * size, MPI_INT, MPI_STATUS_IGNORE);
		for (i = 0; i < 16 * size; i++)
			err += all[i] != (i % size) * 100 + i / size;
		free(all);
	}
	MPI_Type_free(&ft);
	MPI_Type_free(&vec);
	return err;
}

/* The shared file pointer (ROMIO keeps it in a second file, under fcntl locks): 4 writes per
 * rank land somewhere, each once; write_ordered puts them in rank order. */
static int io_shared(MPI_File fh)
{
	int v = 1000 + rank, i, err = 0;

	MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
	for (i = 0; i < 4; i++)
		MPI_File_write_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	if (rank == 0) {
		int *all = calloc(4 * size, sizeof(int)), *cnt = calloc(size, sizeof(int));

		MPI_File_read_at(fh, 0, all, 4 * size, MPI_INT, MPI_STATUS_IGNORE);
		for (i = 0; i < 4 * size; i++)
			if (all[i] >= 1000 && all[i] < 1000 + size)
				cnt[all[i] - 1000]++;
		for (i = 0; i < size; i++)
			err += cnt[i] != 4;
		free(all);
		free(cnt);
	}
	MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
	v = 2000 + rank;
	MPI_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	if (rank == 0) {
		int *all = calloc(size, sizeof(int));

		MPI_File_read_at(fh, 0, all, size, MPI_INT, MPI_STATUS_IGNORE);
		for (i = 0; i < size; i++)
			err += all[i] != 2000 + i;
		free(all);
	}
	return err;
}

/* Atomic mode: ROMIO locks each access (fcntl F_SETLKW). */
static int io_atomic(MPI_File fh)
{
	int v = 3000 + rank, w = -1, on = 0, right = (rank + 1) % size;

	MPI_File_set_atomicity(fh, 1);
	MPI_File_get_atomicity(fh, &on);
	MPI_File_write_at(fh, 4096 + rank * sizeof(int), &v, 1, MPI_INT, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_read_at(fh, 4096 + right * sizeof(int), &w, 1, MPI_INT, MPI_STATUS_IGNORE);
	MPI_File_set_atomicity(fh, 0);
	return !on + (w != 3000 + right);
}

/* Atomic mode under contention: even ranks rewrite a 4 MiB block with their own value while odd
 * ranks read it; every read must find one writer's block whole. Without atomic mode about one
 * read in ten is torn here (processes and ULPs alike), so this needs the ranks' F_SETLKW locks
 * to exclude each other, ULPs of one task included. */
static int io_atomic_torn(MPI_File fh)
{
	int n = 1 << 20, *b = malloc(n * sizeof(int)), i, it, torn = 0;
	MPI_Offset at = 8192;

	MPI_File_set_atomicity(fh, 1);
	for (i = 0; i < n; i++)
		b[i] = rank + 1;
	if (rank == 0)
		MPI_File_write_at(fh, at, b, n, MPI_INT, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	for (it = 0; it < 20; it++) {
		if (rank % 2 == 0) {
			MPI_File_write_at(fh, at, b, n, MPI_INT, MPI_STATUS_IGNORE);
			continue;
		}
		MPI_File_read_at(fh, at, b, n, MPI_INT, MPI_STATUS_IGNORE);
		for (i = 1; i < n && b[i] == b[0]; i++)
			;
		torn += i < n || b[0] < 1 || b[0] > size || b[0] % 2 == 0;
	}
	MPI_File_set_atomicity(fh, 0);
	free(b);
	return torn;
}

static void t_io(const char *dir)
{
	char path[4096];
	MPI_File fh;
	MPI_Offset sz = 0;
	int pid = getpid(), rc;

	MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD); /* one name per job */
	snprintf(path, sizeof(path), "%s/mpi_more.io.%d", dir, pid);
	rc = MPI_File_open(MPI_COMM_WORLD, path,
			   MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
			   MPI_INFO_NULL, &fh);
	if (rc != MPI_SUCCESS) {
		printf("rank %d: MPI_File_open %s failed (%d)\n", rank, path, rc);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	report("io write_at_all/read_at_all", io_at_all(fh));
	report("io set_view write_all", io_view(fh));
	report("io write_shared/write_ordered", io_shared(fh));
	report("io atomic", io_atomic(fh));
	report("io atomic: torn reads beside writers", io_atomic_torn(fh));
	MPI_File_get_size(fh, &sz);
	MPI_File_close(&fh);
	if (rank == 0)
		printf("io: size %lld, %s after close: %s\n", (long long)sz, "file",
		       access(path, F_OK) ? "gone" : "left");
}

/* Shared memory between the ranks of a node: each writes its part, reads everyone's. */
static int win_shared(void)
{
	MPI_Comm node;
	MPI_Win w;
	int *base, nr, ns, r, i, err = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &nr);
	MPI_Comm_size(node, &ns);
	MPI_Win_allocate_shared(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &w);
	MPI_Win_lock_all(0, w);
	for (i = 0; i < 64; i++)
		base[i] = nr * 1000 + i;
	MPI_Win_sync(w);
	MPI_Barrier(node);
	MPI_Win_sync(w);
	for (r = 0; r < ns; r++) {
		MPI_Aint sz;
		int du, *p;

		MPI_Win_shared_query(w, r, &sz, &du, &p);
		err += sz != 64 * sizeof(int) || du != sizeof(int);
		for (i = 0; i < 64; i++)
			err += p[i] != r * 1000 + i;
	}
	MPI_Win_unlock_all(w);
	MPI_Win_free(&w);
	MPI_Comm_free(&node);
	return err;
}

/* Win_create on malloc'd memory: Put, Accumulate, Get in fence epochs, then a counter at rank 0
 * under exclusive locks. */
static int win_malloc(void)
{
	int *mem = malloc(2 * size * sizeof(int)), i, r, err = 0, one = rank + 1, g = -5, cnt = 0;
	MPI_Win w;

	for (i = 0; i < 2 * size; i++)
		mem[i] = i < size ? -1 : 0;
	MPI_Win_create(mem, 2 * size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	MPI_Win_fence(0, w);
	for (r = 0; r < size; r++) {
		int v = rank * 10 + r;

		MPI_Put(&v, 1, MPI_INT, r, rank, 1, MPI_INT, w);
		MPI_Win_fence(0, w); /* v goes out of scope */
	}
	for (i = 0; i < size; i++)
		err += mem[i] != i * 10 + rank;
	MPI_Win_fence(0, w);
	for (r = 0; r < size; r++)
		MPI_Accumulate(&one, 1, MPI_INT, r, size, 1, MPI_INT, MPI_SUM, w);
	MPI_Win_fence(0, w);
	err += mem[size] != size * (size + 1) / 2;
	MPI_Get(&g, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, w);
	MPI_Win_fence(0, w);
	err += g != (rank + 1) % size;
	for (i = 0; i < 10; i++) {
		int inc = 1, old;

		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
		MPI_Fetch_and_op(&inc, &old, MPI_INT, 0, size + 1, MPI_SUM, w);
		MPI_Win_unlock(0, w);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
	MPI_Get(&cnt, 1, MPI_INT, 0, size + 1, 1, MPI_INT, w);
	MPI_Win_unlock(0, w);
	err += cnt != 10 * size;
	MPI_Win_free(&w);
	free(mem);
	return err;
}

/* Win_allocate: every rank tries to swap 0 for its rank + 1 at rank 0; exactly one wins. */
static int win_cas(void)
{
	int *wb, res = -1, cmp = 0, nv = rank + 1, won;
	MPI_Win w;

	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wb, &w);
	*wb = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT, 0, 0, w);
	MPI_Win_flush(0, w);
	MPI_Win_unlock_all(w);
	won = res == 0;
	MPI_Allreduce(MPI_IN_PLACE, &won, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Win_free(&w);
	return rank == 0 && won != 1;
}

static void t_win(void)
{
	report("win allocate_shared/shared_query", win_shared());
	report("win create put/accumulate/get/lock", win_malloc());
	report("win allocate compare_and_swap", win_cas());
}

static void *pair_thread(void *arg)
{
	long t = (long)arg, err = 0;
	int i, v, peer = rank ^ 1;

	for (i = 0; i < 200; i++) {
		int s = rank * 100000 + (int)t * 1000 + i;

		MPI_Sendrecv(&s, 1, MPI_INT, peer, (int)t, &v, 1, MPI_INT, peer, (int)t,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		err += v != peer * 100000 + (int)t * 1000 + i;
	}
	return (void *)err;
}

#define ANY_THREADS 4
#define ANY_ITERS 10
static MPI_Comm any_comm[ANY_THREADS];

/* Thread t sends to every other rank on its own communicator and takes what comes from any
 * source with any tag (Probe, then Recv), ANY_ITERS rounds: the values it got must add up. */
static void *any_thread(void *arg)
{
	long t = (long)arg, got = 0, want = 0, err = 0;
	int i, r;

	for (i = 0; i < ANY_ITERS; i++) {
		MPI_Request rq[64];
		MPI_Status sts[64];
		int n = 0, v = rank * 1000000 + (int)t * 10000 + i, x;

		for (r = 0; r < size; r++)
			if (r != rank)
				MPI_Isend(&v, 1, MPI_INT, r, i % 7, any_comm[t], &rq[n++]);
		for (r = 0; r < size - 1; r++) {
			MPI_Status st;

			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, any_comm[t], &st);
			MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, any_comm[t],
				 MPI_STATUS_IGNORE);
			err += x / 1000000 != st.MPI_SOURCE || x / 10000 % 100 != t ||
			       x % 10000 % 7 != st.MPI_TAG;
			got += x;
		}
		MPI_Waitall(n, rq, sts);
		for (r = 0; r < size; r++)
			if (r != rank)
				want += r * 1000000 + (int)t * 10000 + i;
	}
	return (void *)(err + (got != want));
}

/* ANY_THREADS threads in any_thread while the main thread runs Allreduce: every thread of a rank
 * waits in MPI at once. libulp-mpiyield's yield in UCX's progress, inside MPICH's lock, hung
 * this for good before 27 Nov. */
static int thread_any(void)
{
	pthread_t th[ANY_THREADS];
	long t, err = 0;
	void *r;
	int i, one = 1, sum;

	for (t = 0; t < ANY_THREADS; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &any_comm[t]);
	for (t = 0; t < ANY_THREADS; t++)
		pthread_create(&th[t], NULL, any_thread, (void *)t);
	for (i = 0; i < 10; i++) {
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		err += sum != size;
	}
	for (t = 0; t < ANY_THREADS; t++) {
		pthread_join(th[t], &r);
		err += (long)r;
		MPI_Comm_free(&any_comm[t]);
	}
	return (int)err;
}

/* Ranks in pairs (an even count), two threads each, tags by thread. */
static void t_thread(int provided)
{
	pthread_t th[2];
	long t, err = 0;
	void *r;

	if (rank == 0)
		printf("thread: MPI_THREAD_MULTIPLE %s\n",
		       provided == MPI_THREAD_MULTIPLE ? "provided" : "refused");
	for (t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, pair_thread, (void *)t);
	for (t = 0; t < 2; t++) {
		pthread_join(th[t], &r);
		err += (long)r;
	}
	report("thread 2x200 Sendrecv", (int)err);
	report("thread 4xAny_source beside Allreduce", thread_any());
}

static int comm_split(void)
{
	MPI_Comm half, dup;
	int sum, want = 0, i, cmp, err = 0;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	for (i = rank % 2; i < size; i += 2)
		want += i;
	err += sum != want;
	MPI_Comm_dup(half, &dup);
	MPI_Comm_compare(half, dup, &cmp);
	err += cmp != MPI_CONGRUENT;
	MPI_Comm_rank(half, &i); /* key -rank: the higher ranks of its parity come first */
	err += i != (size - 1 - rank) / 2;
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
	return err;
}

/* Rank r sends d + 1 ints of value r * 100 + d to rank d. */
static int comm_alltoallv(void)
{
	int *sc = calloc(size, sizeof(int)), *sd = calloc(size, sizeof(int));
	int *rc = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
	int *sb, *rb, tot = 0, i, k, err = 0;
	MPI_Request rq;

	for (i = 0; i < size; i++) {
		sc[i] = i + 1;
		sd[i] = tot;
		tot += i + 1;
		rc[i] = rank + 1;
		rd[i] = i * (rank + 1);
	}
	sb = malloc(tot * sizeof(int));
	rb = malloc(size * (rank + 1) * sizeof(int));
	for (i = 0; i < size; i++)
		for (k = 0; k < sc[i]; k++)
			sb[sd[i] + k] = rank * 100 + i;
	MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	for (i = 0; i < size; i++)
		for (k = 0; k < rank + 1; k++)
			err += rb[rd[i] + k] != i * 100 + rank;
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(sb);
	free(rb);
	return err;
}

/* Waitany finds the receive that matched; the one nobody sends to is cancelled. */
static int comm_cancel(void)
{
	int x = -1, y = 7, idx, canc = 0, left = (rank + size - 1) % size;
	MPI_Request r[2];
	MPI_Status st;

	MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r[0]);
	MPI_Irecv(&y, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[1]);
	MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD);
	MPI_Waitany(2, r, &idx, &st);
	MPI_Cancel(&r[0]);
	MPI_Wait(&r[0], &st);
	MPI_Test_cancelled(&st, &canc);
	return (idx != 1) + (y != left) + !canc + (x != -1);
}

struct pt {
	double d;
	int i;
	char c;
};

/* A struct type and a column of a matrix (vector type) around the ring. */
static int comm_types(void)
{
	int bl[3] = {1, 1, 1}, i, err = 0, left = (rank + size - 1) % size;
	int right = (rank + 1) % size;
	MPI_Aint dp[3] = {offsetof(struct pt, d), offsetof(struct pt, i), offsetof(struct pt, c)};
	MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, st, pt_t, col_t;
	struct pt pts[4], got[4];
	double mat[4][4], col[4];

	MPI_Type_create_struct(3, bl, dp, ty, &st);
	MPI_Type_create_resized(st, 0, sizeof(struct pt), &pt_t);
	MPI_Type_commit(&pt_t);
	for (i = 0; i < 4; i++)
		pts[i] = (struct pt){rank + i * 0.5, rank * 7 + i, (char)('a' + i)};
	MPI_Sendrecv(pts, 4, pt_t, right, 6, got, 4, pt_t, left, 6, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		err +=
		    got[i].d != left + i * 0.5 || got[i].i != left * 7 + i || got[i].c != 'a' + i;
	for (i = 0; i < 16; i++)
		mat[i / 4][i % 4] = rank * 16 + i;
	MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &col_t);
	MPI_Type_commit(&col_t);
	MPI_Sendrecv(&mat[0][2], 1, col_t, right, 8, col, 4, MPI_DOUBLE, left, 8, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		err += col[i] != left * 16 + i * 4 + 2;
	MPI_Type_free(&col_t);
	MPI_Type_free(&pt_t);
	MPI_Type_free(&st);
	return err;
}

/* Probe learns source and size before the receive; Mprobe takes the message it probed. */
static int comm_probe(void)
{
	int msg[3] = {rank, rank, rank}, rcv[3], cnt, err = 0, left = (rank + size - 1) % size;
	int right = (rank + 1) % size;
	MPI_Message m;
	MPI_Status st;

	MPI_Send(msg, 1 + rank % 3, MPI_INT, right, 9, MPI_COMM_WORLD);
	MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &cnt);
	err += st.MPI_SOURCE != left || cnt != 1 + left % 3;
	MPI_Recv(rcv, 3, MPI_INT, st.MPI_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Send(msg, 2, MPI_INT, right, 10, MPI_COMM_WORLD);
	MPI_Mprobe(left, 10, MPI_COMM_WORLD, &m, &st);
	MPI_Get_count(&st, MPI_INT, &cnt);
	MPI_Mrecv(rcv, 2, MPI_INT, &m, &st);
	return err + (cnt != 2) + (rcv[1] != left);
}

/* The processor name is the host's name; MPI_Wtime never goes back. */
static int comm_misc(void)
{
	char name[MPI_MAX_PROCESSOR_NAME], host[256] = "";
	int len, i, err = 0;
	double t0 = MPI_Wtime(), t1;

	MPI_Get_processor_name(name, &len);
	gethostname(host, sizeof(host) - 1);
	err += strcmp(name, host) != 0 || len != (int)strlen(host);
	for (i = 0; i < 10000; i++) {
		t1 = MPI_Wtime();
		err += t1 < t0;
		t0 = t1;
	}
	return err + (MPI_Wtick() <= 0);
}

static void t_comm(void)
{
	report("comm split/dup", comm_split());
	report("comm ialltoallv", comm_alltoallv());
	report("comm waitany/cancel", comm_cancel());
	report("comm struct/vector types", comm_types());
	report("comm probe/mprobe", comm_probe());
	report("comm processor_name/wtime", comm_misc());
}

/* One after the other, in rank order, so the lines come in order. */
static void t_stdin(void)
{
	char b[256] = "";
	ssize_t n = read(0, b, sizeof(b) - 1);
	int r;

	for (r = 0; r < size; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (r == rank)
			printf("rank %d read %zd bytes '%.*s'\n", rank, n,
			       n > 0 ? (int)strcspn(b, "\n") : 0, b);
		fflush(stdout);
	}
}

static void t_env(int argc, char **argv)
{
	char cwd[4096] = "?";
	int r, k;

	if (!getcwd(cwd, sizeof(cwd)))
		perror("getcwd");
	for (r = 0; r < size; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (r != rank)
			continue;
		printf("rank %d cwd %s", rank, cwd);
		for (k = 2; k < argc; k++)
			printf(" %s=%s", argv[k], getenv(argv[k]) ? getenv(argv[k]) : "(unset)");
		printf("\n");
		fflush(stdout);
	}
}

static const char *const topo_vars[] = {"HWLOC_XMLFILE", "HWLOC_THISSYSTEM", "HWLOC_PLUGINS_PATH",
					"ULP_MPI_TOPO_GATE", "ULP_MPI_TOPO_XML"};
#define NTOPO (sizeof(topo_vars) / sizeof(topo_vars[0]))

static void env_line(char *out, size_t size)
{
	size_t k, n = 0;

	for (k = 0; k < NTOPO; k++)
		n += (size_t)snprintf(out + n, n < size ? size - n : 0, " %s=%s", topo_vars[k],
				      getenv(topo_vars[k]) ? getenv(topo_vars[k]) : "(unset)");
}

/* hwloc's plugins (its directory's hwloc_*.so) in this process's or ULP's mappings. */
static int hwloc_plugins(void)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "/hwloc/hwloc_") != NULL && strstr(line, "r-xp") != NULL;
	if (f)
		fclose(f);
	return n;
}

static void t_topo(const char *before, const char *out)
{
	char after[1024], path[4096], buf[4096];
	const char *x = getenv("HWLOC_XMLFILE");
	FILE *in, *o;
	size_t n;
	int r;

	env_line(after, sizeof(after));
	if (x && (in = fopen(x, "r"))) {
		snprintf(path, sizeof(path), "%s.%d", out, rank);
		if ((o = fopen(path, "w"))) {
			while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
				fwrite(buf, 1, n, o);
			fclose(o);
		}
		fclose(in);
	}
	for (r = 0; r < size; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (r != rank)
			continue;
		printf("rank %d before:%s\nrank %d after:%s\nrank %d plugins %d\n", rank, before,
		       rank, after, rank, hwloc_plugins());
		fflush(stdout);
	}
}

/* Rank R leaves (how) while the others wait for a message from it that never comes. */
static int t_leave(const char *how, int r, int code)
{
	int x;

	if (rank == r) {
		usleep(200000); /* the others are in MPI_Recv by now */
		if (!strcmp(how, "exit"))
			exit(code);
		if (!strcmp(how, "abort"))
			MPI_Abort(MPI_COMM_WORLD, code);
		return 1; /* return from main */
	}
	MPI_Recv(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return 0;
}

static void t_spawn(char *prog)
{
	MPI_Comm parent, ic;
	int errs[2], rc, rs = -1;

	MPI_Comm_get_parent(&parent);
	if (parent != MPI_COMM_NULL) {
		printf("spawned child %d of %d\n", rank, size);
		MPI_Comm_disconnect(&parent);
		return;
	}
	rc = MPI_Comm_spawn(prog, (char *[]){"spawn", NULL}, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
			    &ic, errs);
	if (rc == MPI_SUCCESS) {
		MPI_Comm_remote_size(ic, &rs);
		MPI_Comm_disconnect(&ic);
	}
	if (rank == 0)
		printf("spawn: rc %d, %d children\n", rc, rs);
}

static void t_port(void)
{
	char port[MPI_MAX_PORT_NAME];
	int rc = MPI_Open_port(MPI_INFO_NULL, port);

	if (rank == 0)
		printf("open_port: rc %d\n", rc);
	if (rc == MPI_SUCCESS)
		MPI_Close_port(port);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	int provided = MPI_THREAD_SINGLE;
	char before[1024];

	env_line(before, sizeof(before));
	if (!strcmp(m, "thread"))
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(m, "io") && argc == 3) {
		t_io(argv[2]);
	} else if (!strcmp(m, "win")) {
		t_win();
	} else if (!strcmp(m, "thread") && size % 2 == 0) {
		t_thread(provided);
	} else if (!strcmp(m, "comm")) {
		t_comm();
	} else if (!strcmp(m, "stdin")) {
		t_stdin();
	} else if (!strcmp(m, "env")) {
		t_env(argc, argv);
	} else if ((!strcmp(m, "exit") || !strcmp(m, "abort")) && argc == 4) {
		t_leave(m, atoi(argv[2]), atoi(argv[3]));
	} else if (!strcmp(m, "return") && argc == 3) {
		if (t_leave(m, atoi(argv[2]), 0))
			return 0;
	} else if (!strcmp(m, "finalize") && argc == 4) {
		MPI_Finalize(); /* rank R returns C at once, the others a moment later with 0 */
		if (rank == atoi(argv[2]))
			return atoi(argv[3]);
		usleep(300000);
		return 0;
	} else if (!strcmp(m, "topo") && argc == 3) {
		t_topo(before, argv[2]);
	} else if (!strcmp(m, "spawn")) {
		t_spawn(argv[0]);
	} else if (!strcmp(m, "port")) {
		t_port();
	} else {
		if (rank == 0)
			fprintf(stderr,
				"usage: mpi_more io DIR | win | thread (even ranks) | comm | "
				"stdin | env NAME... | exit R C | return R | abort R C | finalize "
				"R C | "
				"spawn | port | topo OUT\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Finalize();
	return 0;
}
