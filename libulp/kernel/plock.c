/* SPDX-License-Identifier: MIT */
/* Spin locks shared by the processes of the address space, taken over from a dead holder
 * (plock.h). */
#include "plock.h"
#include "io.h"
#include "sys.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include "ulp_sched.h"

#define LOOK_EVERY 1024 /* spins between two looks at the holder (three system calls) */

int ulp_pid_ended(uint32_t pid)
{
	long fd = ulp_arch_syscall(SYS_pidfd_open, pid, 0, 0, 0, 0, 0), r;

	/* No such process: reaped. Another failure (out of descriptors): again later. */
	if (fd < 0)
		return fd == -ESRCH;
	/* Readable once it has exited: a zombie. */
	r = ulp_io_poll0((int)fd, POLLIN);
	ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	return r > 0;
}

/* *l held by h, another process's holder that is gone: ours now (of several waiters, one). */
static int take_over(uint32_t *l, uint32_t h, uint32_t self)
{
	return h > 1 && h != self && ulp_pid_ended(h) &&
	       __atomic_compare_exchange_n(l, &h, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void ulp_plock_lock(uint32_t *l, uint32_t self)
{
	unsigned n = 0;
	uint32_t h;

	for (;;) {
		h = __atomic_load_n(l, __ATOMIC_RELAXED);
		if (!h &&
		    __atomic_compare_exchange_n(l, &h, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		if (++n % LOOK_EVERY == 0 && take_over(l, h, self))
			return;
		ulp_arch_relax();
	}
}

void ulp_spin_or_yield(unsigned *n)
{
	if (++*n % 128)
		ulp_arch_relax();
	else
		ulp_arch_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

void ulp_plock_lock_sleep(uint32_t *l, _Atomic unsigned *waiters)
{
	uint32_t self = (uint32_t)ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0), h;
	struct timespec ts = {0, 2 * 1000 * 1000};
	long rc;

	for (;;) {
		h = 0;
		if (__atomic_compare_exchange_n(l, &h, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		atomic_fetch_add(waiters, 1);
		rc = ulp_arch_syscall(SYS_futex, (long)l, FUTEX_WAIT_PRIVATE, h, (long)&ts, 0, 0);
		atomic_fetch_sub(waiters, 1);
		if (rc == -ETIMEDOUT && take_over(l, h, self))
			return;
	}
}

void ulp_plock_unlock_wake(uint32_t *l, _Atomic unsigned *waiters)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
	if (atomic_load(waiters))
		ulp_arch_syscall(SYS_futex, (long)l, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}
