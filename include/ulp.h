/* SPDX-License-Identifier: MIT */
/*
 * libulp lightweight threads (ULTs).
 *
 * Threads are scheduled by a work-stealing scheduler over a fixed set of workers (kernel threads):
 * work-first creation (the child runs at once, the creator is queued), LIFO local scheduling, yield
 * behind the ready work, random-victim stealing, idle workers sleep on a futex.
 *
 * Threads are never preempted. Blocking operations (join, mutex, cond, barrier) suspend only the
 * calling thread, so any number of threads may wait on one worker without deadlock.
 *
 * Every function returns 0 or a negative errno code (-EINVAL, -ENOMEM, ...), unless stated
 * otherwise.
 */
#ifndef ULP_H
#define ULP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ulp_task *ulp_thread_t;

/*
 * Start the runtime with `workers` kernel threads; the caller becomes a thread of worker 0 and
 * stays on it (it is never stolen), so its thread-local state stays valid. Other threads run on
 * whichever worker takes them and see that worker's thread-local storage.
 * workers == 0: take ULP_WORKERS from the environment, else ulp_cpus().
 * The stack size of new threads is ULP_STACK_SIZE (bytes; k/m suffixes allowed), default 64 KiB.
 * Returns -EBUSY when already started, -EINVAL for a bad ULP_WORKERS/ULP_STACK_SIZE.
 */
int ulp_init(unsigned workers);

/* Stop the workers. Call from the thread that called ulp_init, after every other thread ended.
 * Returns -EPERM from another thread, -EBUSY while other threads are still alive. */
int ulp_fini(void);

/* The CPUs the calling thread may run on (its affinity mask, as nproc counts them; under
 * taskset or a cpuset they are fewer than the online ones), at least 1: the default number of
 * workers of ulp_init, ulpexec and ulpspawn. */
unsigned ulp_cpus(void);

/* Number of workers, or 0 before ulp_init. */
unsigned ulp_num_workers(void);

/* Index of the worker running the caller (0..ulp_num_workers()-1). */
unsigned ulp_worker_id(void);

/*
 * Create a thread running fn(arg). Work-first: the new thread runs at once on this worker and the
 * caller is queued (and may be stolen by another worker). The ulp_init thread, which is never
 * stolen, queues the new thread instead and goes on (help-first), so the threads it creates spread
 * over the workers; with one worker there is nothing to spread over, and it creates work-first
 * like any thread. *out may be NULL for a detached thread.
 * Returns -ENOMEM when no stack can be had, -EINVAL before ulp_init.
 */
int ulp_thread_create(ulp_thread_t *out, void *(*fn)(void *), void *arg);

/* Wait for t to end; its return value (or ulp_thread_exit's) goes to *ret when ret != NULL.
 * Returns -EINVAL for a detached thread or one already joined, -EDEADLK for the caller itself. */
int ulp_thread_join(ulp_thread_t t, void **ret);

/* Let t's resources go when it ends; it can no longer be joined. */
int ulp_thread_detach(ulp_thread_t t);

/* Queue the caller behind the ready work of its worker and run something else, if anything. */
int ulp_thread_yield(void);

/* End the calling thread with return value ret. Never returns. Not for the ulp_init thread. */
void ulp_thread_exit(void *ret) __attribute__((noreturn));

/* The calling thread. */
ulp_thread_t ulp_thread_self(void);

/* Mutex: a thread that cannot take it is suspended (after a short spin), never busy-waits. */
typedef struct ulp_mutex {
	uint32_t lock;	   /* internal spin lock */
	uint32_t held;	   /* 1 while owned */
	void *owner;	   /* owning thread */
	void *head, *tail; /* waiting threads, FIFO */
} ulp_mutex_t;
#define ULP_MUTEX_INITIALIZER                                                                      \
	{                                                                                          \
		0, 0, NULL, NULL, NULL                                                             \
	}

int ulp_mutex_init(ulp_mutex_t *m);
int ulp_mutex_destroy(ulp_mutex_t *m); /* -EBUSY while held or waited on */
int ulp_mutex_lock(ulp_mutex_t *m);    /* -EDEADLK when the caller owns it already */
int ulp_mutex_trylock(ulp_mutex_t *m); /* -EBUSY when held */
int ulp_mutex_unlock(ulp_mutex_t *m);  /* -EPERM when the caller does not own it */

typedef struct ulp_cond {
	uint32_t lock;
	void *head, *tail;
} ulp_cond_t;
#define ULP_COND_INITIALIZER                                                                       \
	{                                                                                          \
		0, NULL, NULL                                                                      \
	}

int ulp_cond_init(ulp_cond_t *c);
int ulp_cond_destroy(ulp_cond_t *c); /* -EBUSY while waited on */
/* Atomically release m and wait; m is held again on return. -EPERM when m is not the caller's. */
int ulp_cond_wait(ulp_cond_t *c, ulp_mutex_t *m);
int ulp_cond_signal(ulp_cond_t *c);
int ulp_cond_broadcast(ulp_cond_t *c);

typedef struct ulp_barrier {
	uint32_t lock;
	unsigned count, waiting;
	unsigned long generation;
	void *head, *tail;
} ulp_barrier_t;

/* count must be > 0. */
int ulp_barrier_init(ulp_barrier_t *b, unsigned count);
int ulp_barrier_destroy(ulp_barrier_t *b); /* -EBUSY while threads wait */
/* Returns ULP_BARRIER_SERIAL_THREAD (1) in exactly one thread of each round, 0 in the others. */
int ulp_barrier_wait(ulp_barrier_t *b);
#define ULP_BARRIER_SERIAL_THREAD 1

/* Per-thread data. Up to ULP_KEYS_MAX keys. */
#define ULP_KEYS_MAX 64
typedef unsigned ulp_key_t;
/* dtor (may be NULL) runs at thread exit for each non-NULL value. -EAGAIN when keys run out. */
int ulp_key_create(ulp_key_t *key, void (*dtor)(void *));
int ulp_key_delete(ulp_key_t key);
int ulp_key_set(ulp_key_t key, const void *value);
void *ulp_key_get(ulp_key_t key); /* NULL for an unset or invalid key */

#ifdef __cplusplus
}
#endif
#endif
