/* SPDX-License-Identifier: MIT */
/*
 * Record locks of a ULP: fcntl F_SETLK, F_SETLKW, F_GETLK (lockf(3) too, which uses them).
 *
 * The kernel's record ("POSIX") locks belong to a process, by its descriptor table, and the ULPs
 * of a PVAS task share one: until 27 Nov two ULPs of a task that locked the same range of a file
 * both got it, silently (two sqlite3 ULPs writing one database, each sure of its lock). A ULP's
 * record lock is made an open file description lock (F_OFD_SETLK...) instead, whose owner is the
 * open file: ULPs that open a file each hold their own locks on it, which conflict as processes'
 * do, with each other and with other processes' (the kernel checks OFD locks against POSIX ones).
 * Where it differs from a process's (docs/syscalls.md, "Record locks"): two opens of one file in
 * the same ULP conflict with each other; closing one descriptor of the file keeps the locks taken
 * through another open of it; a fork child shares the open file, and so the lock, while it keeps
 * the descriptor; F_GETLK gives another ULP's conflicting lock with l_pid -1.
 *
 * F_SETLKW parks the ULP between tries, 1 ms then twice longer each time up to 50 ms: the kernel's
 * wait would hold the worker, and the ULP holding the lock may be one it has to run. A signal
 * ends the wait with EINTR, or runs its SA_RESTART handler and the wait goes on, as the kernel
 * restarts the call. In a fork child (a process of its own) the kernel's record locks are right.
 */
#include "io.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>

#define PAUSE_MAX_MS 50

static long sys(long nr, long a, long b, long c)
{
	return ulp_arch_syscall(nr, a, b, c, 0, 0, 0);
}

/* F_GETLK as F_OFD_GETLK: the conflicting lock, or only l_type F_UNLCK, as the kernel writes. */
static long get_lock(long fd, struct flock *user)
{
	struct flock fl = *user;
	long r;

	fl.l_pid = 0; /* an OFD call refuses any other */
	r = sys(SYS_fcntl, fd, F_OFD_GETLK, (long)&fl);
	if (r < 0)
		return r;
	if (fl.l_type == F_UNLCK)
		user->l_type = F_UNLCK;
	else
		*user = fl;
	return r;
}

/* F_SETLK, F_SETLKW as F_OFD_SETLK; F_SETLKW tries again until it gets the lock. */
static long set_lock(struct ulp_cb *cb, long fd, int wait, const struct flock *user)
{
	struct flock fl = *user;
	int pause = 1;
	long r, w;

	fl.l_pid = 0;
	for (;;) {
		r = sys(SYS_fcntl, fd, F_OFD_SETLK, (long)&fl);
		if (!wait || (r != -EAGAIN && r != -EACCES))
			return r;
		w = ulp_io_wait_fds(cb, NULL, 0, 0, pause, 1);
		if (w == -ENOSYS) /* no ring: the kernel's wait */
			return sys(SYS_fcntl, fd, F_OFD_SETLKW, (long)&fl);
		if (w == -EINTR)
			return -EINTR;
		if (pause < PAUSE_MAX_MS)
			pause = pause * 2 < PAUSE_MAX_MS ? pause * 2 : PAUSE_MAX_MS;
	}
}

/* fcntl: record locks here, the rest is ulp_sys_fd_new's (F_DUPFD; the fast path may bring any
 * command, which runs natively there). */
long ulp_sys_fcntl(struct ulp_cb *cb, struct ulp_sys *s)
{
	int cmd = (int)s->a[1];
	struct flock *user = (struct flock *)s->a[2];

	if ((cmd != F_SETLK && cmd != F_SETLKW && cmd != F_GETLK) || ulp_sys_in_child())
		return ulp_sys_fd_new(cb, s);
	if (!ulp_sys_range_ok(cb, (uintptr_t)user, sizeof(*user)))
		return -EFAULT;
	if (cmd == F_GETLK)
		return get_lock(s->a[0], user);
	return set_lock(cb, s->a[0], cmd == F_SETLKW, user);
}
