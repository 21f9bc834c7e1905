/* SPDX-License-Identifier: MIT */
/*
 * Two ranks play ping-pong through two flags in a shared file, each waiting for the other in a
 * pure busy-wait loop with no call, as MPICH's ranks do (tests/integ/spinyield.sh). Rank 0 writes
 * round i into ping and waits for pong == i; rank 1 waits for ping == i, adds what it read, and
 * answers in pong. Each prints its sum of the values passed, which must be ROUNDS*(ROUNDS+1)/2.
 *
 * Usage: spinwait FILE ROUNDS [RANK]   (RANK: else ULP_RANK; as processes, start rank 0 and 1)
 * SPINWAIT_THREAD=1: each rank has a second thread, blocked in a read meanwhile (as MPICH ranks
 * have UCX's); SPINWAIT_FOREVER=1: after the rounds, both wait for a round that never comes;
 * SPINWAIT_SHORT=1: the waits read through a pointer held in a register (a loop of short
 * instructions only); SPINWAIT_SIGNAL=1: after the rounds, both wait until a SIGUSR1 handler
 * (in either rank) writes the flags.
 *
 * SPINWAIT_BARRIER=N (N <= 64 ranks, RANK 0..N-1): instead of the ping-pong, ROUNDS barriers of
 * N ranks, each waiting in a pure loop for the barrier's generation to reach the round (the last
 * rank to arrive sets it); before each barrier every rank writes a value into its slot, after it
 * every rank adds all the slots of the round, which must be the round's sum (a rank let through
 * too early finds a slot not yet written); SPINWAIT_LATE_US=us: rank 0 sleeps that long before
 * it arrives, each round; SPINWAIT_LATE_YIELDS=k: it calls sched_yield k times first. With SPINWAIT_FOREVER=1 they then wait for a round that never comes. Many ranks waiting on one worker at once: what the scheduler's probes of waiting
 * threads are for (libulp/kernel/spinyield.c).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Read through pointers that are themselves reloaded at each iteration, like MPICH's barrier
 * (mov ptr(%rip),%rax; mov (%rax),%eax; cmp; jcc): loops with a 7-byte load to rewrite, at the
 * start of a 16-byte aligned function, so that one atomic store can change it (what a ULP with
 * several threads needs: docs/syscalls.md). */
static volatile int *volatile ping, *volatile pong;

__attribute__((noinline, aligned(16))) static int wait_ping(int v)
{
	for (;;) {
		int x = *ping;

		if (x == v)
			return x;
	}
}

__attribute__((noinline, aligned(16))) static int wait_pong(int v)
{
	for (;;) {
		int x = *pong;

		if (x == v)
			return x;
		__builtin_ia32_pause();
	}
}

/* The same through a pointer in a register (SPINWAIT_SHORT=1): no instruction of 5 bytes, so
 * the jmp covers several (rewritten only while the ULP has one thread). */
__attribute__((noinline, aligned(16))) static int wait_short(volatile int *p, int v)
{
	for (;;) {
		int x = *p;

		if (x == v)
			return x;
		__builtin_ia32_pause();
	}
}

static volatile int *volatile gen;

__attribute__((noinline, aligned(16))) static int wait_gen(int v)
{
	for (;;) {
		int x = *gen;

		if (x == v)
			return x;
	}
}

/* SPINWAIT_BARRIER=n: the barriers; 0 when every round's sum was right. */
static int barriers(char *m, int n, int rank, long rounds)
{
	volatile int *arrived = (volatile int *)(m + 128), *slot = (volatile int *)(m + 256);
	const char *late = getenv("SPINWAIT_LATE_US"), *yields = getenv("SPINWAIT_LATE_YIELDS");
	long i, y, bad = 0, late_us = late ? atol(late) : 0, late_yields = yields ? atol(yields) : 0;
	int r;

	gen = (volatile int *)(m + 192);
	for (i = 1; i <= rounds; i++) {
		volatile int *mine = slot + (i & 1) * 64; /* two sets: round i+1 writes the other */
		long sum = 0, want = 0;

		mine[rank] = (int)(i * 1000 + rank);
		if (rank == 0 && late_us)
			usleep(late_us); /* the others wait meanwhile */
		for (y = 0; rank == 0 && y < late_yields; y++)
			sched_yield();
		if (__atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST) == (int)(i * n))
			*gen = (int)i;
		else
			wait_gen((int)i);
		for (r = 0; r < n; r++) {
			sum += mine[r];
			want += i * 1000 + r;
		}
		bad += sum != want;
	}
	printf("rank %d: %ld barriers of %d, %ld wrong sums (%s)\n", rank, rounds, n, bad,
	       bad ? "WRONG" : "right");
	fflush(stdout);
	if (getenv("SPINWAIT_FOREVER") && getenv("SPINWAIT_FOREVER")[0] == '1')
		wait_gen(-1);
	return bad != 0;
}

static int pipefd[2];

static void *blocked(void *arg)
{
	char c;

	return read(pipefd[0], &c, 1) == 1 ? NULL : (void *)1;
}

/* SPINWAIT_SIGNAL=1: the waits after the rounds end when a SIGUSR1 handler writes both flags. */
static void on_usr1(int sig)
{
	*ping = -2;
	*pong = -2;
}

static int env_on(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] == '1';
}

int main(int argc, char **argv)
{
	const char *r = argc > 3 ? argv[3] : getenv("ULP_RANK");
	long rounds, i, sum = 0;
	int fd, rank, shorts = env_on("SPINWAIT_SHORT");
	pthread_t th;
	char *m;

	if (argc < 3 || !r) {
		fprintf(stderr, "usage: spinwait FILE ROUNDS [RANK]\n");
		return 2;
	}
	rounds = atol(argv[2]);
	rank = atoi(r);
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ping = (volatile int *)m;
	pong = (volatile int *)(m + 64);
	if (env_on("SPINWAIT_THREAD") &&
	    (pipe(pipefd) != 0 || pthread_create(&th, NULL, blocked, NULL) != 0)) {
		perror("spinwait: thread");
		return 1;
	}
	if (getenv("SPINWAIT_BARRIER")) {
		int n = atoi(getenv("SPINWAIT_BARRIER"));

		if (n < 1 || n > 64 || rank < 0 || rank >= n) {
			fprintf(stderr, "spinwait: SPINWAIT_BARRIER=%d with rank %d\n", n, rank);
			return 2;
		}
		sum = barriers(m, n, rank, rounds);
		if (env_on("SPINWAIT_THREAD")) {
			void *ret;

			if (write(pipefd[1], "x", 1) != 1 || pthread_join(th, &ret) != 0 || ret)
				return 1;
		}
		return (int)sum;
	}
	for (i = 1; i <= rounds; i++) {
		if (rank == 0) {
			*ping = (int)i;
			sum += shorts ? wait_short(pong, (int)i) : wait_pong((int)i);
		} else {
			sum += shorts ? wait_short(ping, (int)i) : wait_ping((int)i);
			*pong = (int)i;
		}
	}
	printf("rank %d: %ld rounds, sum %ld (%s)\n", rank, rounds, sum,
	       sum == rounds * (rounds + 1) / 2 ? "right" : "WRONG");
	fflush(stdout);
	if (env_on("SPINWAIT_FOREVER"))
		rank == 0 ? wait_pong(-1) : wait_ping(-1);
	if (env_on("SPINWAIT_SIGNAL")) {
		signal(SIGUSR1, on_usr1);
		printf("rank %d: waiting for SIGUSR1\n", rank);
		fflush(stdout);
		rank == 0 ? wait_pong(-2) : wait_ping(-2);
		printf("rank %d: woken by SIGUSR1\n", rank);
	}
	if (env_on("SPINWAIT_THREAD")) {
		void *ret;

		if (write(pipefd[1], "x", 1) != 1 || pthread_join(th, &ret) != 0 || ret) {
			perror("spinwait: thread end");
			return 1;
		}
	}
	return sum == rounds * (rounds + 1) / 2 ? 0 : 1;
}
