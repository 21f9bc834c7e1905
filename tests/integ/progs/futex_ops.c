/* SPDX-License-Identifier: MIT */
/*
 * The futex operations glibc's pthreads do not all use, made raw between threads of one program:
 * WAIT/WAKE_BITSET, REQUEUE, CMP_REQUEUE, WAKE_OP, relative and absolute (realtime) timeouts, a
 * stale value, PI. Run as a process and as a ULP (tests/integ/threads.sh): same "ok" lines.
 * A waiter is known to be queued when FUTEX_REQUEUE of its word onto itself counts it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(name, cond, ...)                                                                     \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok %s\n", name);                                                   \
		} else {                                                                           \
			printf("FAIL %s: ", name);                                                 \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

static long fx(uint32_t *a, int op, uint32_t v, long t, uint32_t *a2, uint32_t v3)
{
	long r = syscall(SYS_futex, a, op, v, t, a2, v3);

	return r < 0 ? -errno : r;
}

/* Waiters queued on a (counted without waking anyone), waiting up to ~10 s for n of them. */
static int queued(uint32_t *a, int n)
{
	long k = 0;

	for (int i = 0; i < 200000 && k < n; i++) {
		k = fx(a, FUTEX_REQUEUE_PRIVATE, 0, INT_MAX, a, 0);
		if (k < n)
			sched_yield();
		if (i > 1000)
			usleep(50);
	}
	return (int)k;
}

struct waiter {
	uint32_t *word, val, bits;
	long result;
	int done;
};

static void *wait_fn(void *p)
{
	struct waiter *w = p;

	w->result = fx(w->word, FUTEX_WAIT_BITSET_PRIVATE, w->val, 0, NULL, w->bits);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void start(pthread_t *t, struct waiter *w, uint32_t *word, uint32_t bits)
{
	w->word = word;
	w->val = *word;
	w->bits = bits;
	w->done = 0;
	pthread_create(t, NULL, wait_fn, w);
}

static double ms_since(struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static uint32_t A, B;

int main(void)
{
	struct waiter w[3];
	pthread_t t[3];
	struct timespec t0, ts;
	long r, r2;
	double el;
	int ulp = getenv("ULP_RANK") != NULL;

	/* WAKE_BITSET wakes only the waiters whose bits match */
	start(&t[0], &w[0], &A, 1);
	start(&t[1], &w[1], &A, 2);
	queued(&A, 2);
	r = fx(&A, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, 0, NULL, 2);
	pthread_join(t[1], NULL);
	r2 = fx(&A, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, 0, NULL, 1);
	pthread_join(t[0], NULL);
	CHECK("wake-bitset", r == 1 && r2 == 1 && w[0].result == 0 && w[1].result == 0,
	      "woke %ld then %ld", r, r2);

	/* CMP_REQUEUE: one woken, two moved to B, then woken there; a wrong value: EAGAIN */
	for (int i = 0; i < 3; i++)
		start(&t[i], &w[i], &A, FUTEX_BITSET_MATCH_ANY);
	queued(&A, 3);
	r2 = fx(&A, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &B, A + 1);
	r = fx(&A, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &B, A);
	int moved = queued(&B, 2);
	long woken = fx(&B, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK("cmp-requeue", r2 == -EAGAIN && r == 3 && moved == 2 && woken == 2,
	      "stale %ld, requeue %ld, on B %d, woken there %ld", r2, r, moved, woken);

	/* REQUEUE (no compare) */
	for (int i = 0; i < 2; i++)
		start(&t[i], &w[i], &A, FUTEX_BITSET_MATCH_ANY);
	queued(&A, 2);
	r = fx(&A, FUTEX_REQUEUE_PRIVATE, 0, 2, &B, 0);
	woken = fx(&B, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK("requeue", r == 2 && woken == 2, "requeued %ld, woken on B %ld", r, woken);

	/* WAKE_OP: B = 5 (it was 0: the compare "old == 0" holds), one waiter woken on each */
	B = 0;
	start(&t[0], &w[0], &A, FUTEX_BITSET_MATCH_ANY);
	start(&t[1], &w[1], &B, FUTEX_BITSET_MATCH_ANY);
	queued(&A, 1);
	queued(&B, 1);
	r = fx(&A, FUTEX_WAKE_OP_PRIVATE, 1, 1, &B, FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0));
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK("wake-op", r == 2 && B == 5, "woke %ld, B=%u", r, B);
	/* and when the compare fails (old 5 != 0), only the first word's waiter */
	start(&t[0], &w[0], &A, FUTEX_BITSET_MATCH_ANY);
	queued(&A, 1);
	r = fx(&A, FUTEX_WAKE_OP_PRIVATE, 1, 1, &B, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
	pthread_join(t[0], NULL);
	CHECK("wake-op-cmp-false", r == 1 && B == 6, "woke %ld, B=%u", r, B);

	/* timeouts: relative (FUTEX_WAIT), absolute realtime and monotonic (WAIT_BITSET) */
	ts.tv_sec = 0;
	ts.tv_nsec = 30000000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = fx(&A, FUTEX_WAIT_PRIVATE, A, (long)&ts, NULL, 0);
	el = ms_since(&t0);
	CHECK("wait-relative-timeout", r == -ETIMEDOUT && el >= 29, "%ld after %.1f ms", r, el);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 30000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = fx(&A, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, A, (long)&ts, NULL,
	       FUTEX_BITSET_MATCH_ANY);
	el = ms_since(&t0);
	CHECK("wait-realtime-deadline", r == -ETIMEDOUT && el >= 29, "%ld after %.1f ms", r, el);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = fx(&A, FUTEX_WAIT_BITSET_PRIVATE, A, (long)&ts, NULL, FUTEX_BITSET_MATCH_ANY);
	CHECK("wait-past-deadline", r == -ETIMEDOUT, "%ld", r);
	r = fx(&A, FUTEX_WAIT_PRIVATE, A + 1, 0, NULL, 0);
	CHECK("wait-stale-value", r == -EAGAIN, "%ld", r);
	r = fx(&A, FUTEX_WAIT_BITSET_PRIVATE, A, 0, NULL, 0);
	CHECK("wait-bitset-zero", r == -EINVAL, "%ld", r);
	r = fx((uint32_t *)((char *)&A + 1), FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
	CHECK("unaligned", r == -EINVAL, "%ld", r);

	/* PI: a process locks; a ULP says ENOSYS (not emulated) */
	uint32_t pi = 0;
	r = fx(&pi, FUTEX_LOCK_PI_PRIVATE, 0, 0, NULL, 0);
	CHECK("lock-pi", ulp ? r == -ENOSYS : r == 0, "%ld", r);
	printf("%s\n", failures ? "FAILED" : "all ok");
	return failures != 0;
}
