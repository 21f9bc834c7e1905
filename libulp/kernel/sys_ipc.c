/* SPDX-License-Identifier: MIT */
/*
 * The waits of System V message queues and semaphores (msgsnd, msgrcv, semop, semtimedop) and of
 * POSIX message queues (mq_timedsend, mq_timedreceive) of a ULP.
 *
 * Made natively, a wait held the worker, and the ULP that would send the message or post the
 * semaphore may be one that worker has to run: two ULPs of one worker talking through a SysV
 * queue waited until the preemption tick ended the receiver's msgrcv with EINTR, which the kernel
 * never restarts (signal(7)), so the program saw an EINTR no process would (perl died there,
 * found 28 Nov). Now each is tried without waiting (IPC_NOWAIT; a POSIX queue's receive or send
 * with a deadline already passed) and, when it would wait, the worker's ready ULPs run once (a
 * partner there may answer) and then the ULP parks: on the ring's poll of a POSIX queue's
 * descriptor (which says when there is a message or room), and for a SysV queue or semaphore,
 * which no descriptor stands for, for 50 us, then twice as long each time up to 20 ms, trying
 * again after each. A signal ends the wait with EINTR: always for the SysV calls, which the kernel
 * never restarts, and for the POSIX ones unless the handler has SA_RESTART, when the handler runs
 * and the wait goes on. semtimedop's timeout gives EAGAIN, mq_*'s ETIMEDOUT, a SysV queue or set
 * removed meanwhile EIDRM, as the kernel's.
 * Calls with IPC_NOWAIT (a POSIX queue opened O_NONBLOCK) are the kernel's alone, and so is a
 * semop whose operations mix IPC_NOWAIT with waiting ones (which operation would wait decides
 * whether the kernel waits: the wait stays native there). A fork child waits in the kernel, a
 * process of its own.
 */
#include "io.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>

#define PAUSE_MIN_US 50
#define PAUSE_MAX_US 20000
#define SEMOPS_MAX 500 /* the kernel's SEMOPM default; more: native (E2BIG or the limit's) */

static long native(const struct ulp_sys *s)
{
	const long *a = s->a;

	return ulp_arch_syscall(s->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Between two tries: the worker's ready ULPs once (yielded: 1 in *turned), then a park of *pause
 * us (doubling, PAUSE_MIN_US to PAUSE_MAX_US; pause NULL: until fd has events, a second at most),
 * or until deadline (ns of CLOCK_MONOTONIC; 0: none). 0: try again; -EINTR; -ENOSYS: no ring (the
 * caller waits the kernel's way). */
static long between(struct ulp_cb *cb, int *turned, long long *pause, long long deadline, int fd,
		    unsigned events, int restart)
{
	long long left, us = pause ? *pause : 1000000;
	long w;

	if (!*turned && ulp_io_yield_before_park()) {
		*turned = 1;
		return 0;
	}
	*turned = 0;
	if (deadline) {
		left = deadline - ulp_raw_clock_ns(CLOCK_MONOTONIC);
		if (left <= 0)
			return 0; /* the caller's try says so */
		if (left < us * 1000)
			us = (left + 999) / 1000;
	}
	w = ulp_io_wait_fds_us(cb, fd >= 0 ? &fd : NULL, fd >= 0, events, us, restart ? 1 : 2);
	if (w < 0)
		return w;
	if (pause && *pause < PAUSE_MAX_US)
		*pause = *pause * 2 < PAUSE_MAX_US ? *pause * 2 : PAUSE_MAX_US;
	return 0;
}

static long sysv_wait(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct sembuf ops[SEMOPS_MAX];
	struct ulp_sys t = *s;
	long long deadline = 0;
	int flg_arg = s->nr == SYS_msgsnd ? 3 : 4, turned = 0, tries = 0;
	long long pause = PAUSE_MIN_US;
	long r, w, i, nsops = (long)s->a[2];
	/* what IPC_NOWAIT says for "would wait": msgrcv ENOMSG, the others EAGAIN */
	long would = s->nr == SYS_msgrcv ? -ENOMSG : -EAGAIN;

	if (s->nr == SYS_msgsnd || s->nr == SYS_msgrcv) {
		if (s->a[flg_arg] & IPC_NOWAIT)
			return native(s);
		t.a[flg_arg] |= IPC_NOWAIT;
	} else {
		const struct sembuf *u = (const struct sembuf *)s->a[1];
		const struct timespec *ts = s->nr == SYS_semtimedop ? (void *)s->a[3] : NULL;

		if (nsops <= 0 || nsops > SEMOPS_MAX ||
		    !ulp_sys_range_ok(cb, (uintptr_t)u, (size_t)nsops * sizeof(*u)))
			return native(s); /* the kernel's error */
		for (i = 0; i < nsops; i++) {
			ops[i] = u[i];
			if (ops[i].sem_flg & IPC_NOWAIT)
				return native(s);
			ops[i].sem_flg |= IPC_NOWAIT;
		}
		if (ts) {
			if (!ulp_sys_range_ok(cb, (uintptr_t)ts, sizeof(*ts)))
				return -EFAULT;
			if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
				return -EINVAL;
			deadline = ulp_raw_clock_ns(CLOCK_MONOTONIC) +
				   (long long)ts->tv_sec * 1000000000 + ts->tv_nsec;
		}
		t.nr = SYS_semtimedop;
		t.a[1] = (long)ops;
		t.a[3] = 0;
	}
	for (;; tries++) {
		r = native(&t);
		/* an id that was good at the first try and is not now: removed meanwhile, which
		 * ends a waiting call with EIDRM in the kernel (a new one would have a new id) */
		if (r == -EINVAL && tries)
			return -EIDRM;
		if (r != would)
			return r;
		if (deadline && ulp_raw_clock_ns(CLOCK_MONOTONIC) >= deadline)
			return -EAGAIN; /* semtimedop's timeout */
		w = between(cb, &turned, &pause, deadline, -1, 0, 0);
		if (w == -ENOSYS)
			return native(s);
		if (w < 0)
			return w;
	}
}

/* mq_timedsend(mqd, msg, len, prio, abs), mq_timedreceive(mqd, msg, len, prio *, abs): abs is
 * CLOCK_REALTIME, as the kernel's. */
static long mq_wait(struct ulp_cb *cb, struct ulp_sys *s)
{
	static const struct timespec passed = {0, 0};
	const struct timespec *abs = (const struct timespec *)s->a[4];
	struct ulp_sys t = *s;
	struct mq_attr attr;
	long long deadline = 0, left;
	int turned = 0, recv = s->nr == SYS_mq_timedreceive;
	long r, w;

	if (ulp_arch_syscall(SYS_mq_getsetattr, s->a[0], 0, (long)&attr, 0, 0, 0) < 0 ||
	    (attr.mq_flags & O_NONBLOCK))
		return native(s); /* not a queue (the kernel's EBADF), or one that never waits */
	if (abs) {
		if (!ulp_sys_range_ok(cb, (uintptr_t)abs, sizeof(*abs)))
			return -EFAULT;
		if (abs->tv_sec < 0 || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)
			return -EINVAL;
	}
	t.a[4] = (long)&passed;
	for (;;) {
		r = native(&t);
		if (r != -ETIMEDOUT)
			return r;
		if (abs) {
			left = (long long)abs->tv_sec * 1000000000 + abs->tv_nsec -
			       ulp_raw_clock_ns(CLOCK_REALTIME);
			if (left <= 0)
				return -ETIMEDOUT;
			deadline = ulp_raw_clock_ns(CLOCK_MONOTONIC) + left;
		}
		w = between(cb, &turned, NULL, deadline, (int)s->a[0], recv ? POLLIN : POLLOUT, 1);
		if (w == -ENOSYS)
			return native(s);
		if (w < 0)
			return w;
	}
}

long ulp_sys_ipc_wait(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return native(s);
	if (s->nr == SYS_mq_timedsend || s->nr == SYS_mq_timedreceive)
		return mq_wait(cb, s);
	return sysv_wait(cb, s);
}
