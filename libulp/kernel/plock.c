/* SPDX-License-Identifier: MIT */
/* Spin locks shared by the processes of the address space, taken over from a dead holder
 * (plock.h). */
#include "plock.h"
#include "io.h"
#include "sys.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>

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

void ulp_plock_lock(uint32_t *l, uint32_t self)
{
	unsigned n = 0;
	uint32_t h;

	for (;;) {
		h = __atomic_load_n(l, __ATOMIC_RELAXED);
		if (!h &&
		    __atomic_compare_exchange_n(l, &h, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		/* Another process's holder that is gone: ours now (of several waiters, one). */
		if (++n % LOOK_EVERY == 0 && h > 1 && h != self && ulp_pid_ended(h) &&
		    __atomic_compare_exchange_n(l, &h, self, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		ulp_arch_relax();
	}
}
