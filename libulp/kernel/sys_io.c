/* SPDX-License-Identifier: MIT */
/* I/O syscalls of a ULP. Descriptors are per process, so shared by every ULP of a task; fds.c
 * records which ULP made each one. The calls that may block are in io_calls.c (ulp_sys_io_block),
 * parked on the task's io_uring (io_ring.c).
 */
#include "io.h"
#include "pvas.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>

/* Descriptors the program does not see as its own, ascending (-1: none): the runtime's (the
 * task's io_uring, the host's end-of-ULP eventfd, the backend's) and the ULP's own copies of
 * 0-2 (stdfds.c), which it knows as 0-2. A program may not close them by these numbers. */
#define NKEPT 6
static void kept_fds(const struct ulp_cb *cb, int fds[NKEPT])
{
	int i, j, x;

	fds[0] = ulp_io_fd();
	fds[1] = cb->region->end_efd;
	fds[2] = cb->region->backend_fd;
	for (i = 0; i < 3; i++)
		fds[3 + i] = cb->std_own[i] ? cb->std_own[i] : -1;
	for (i = 0; i < NKEPT; i++)
		for (j = i + 1; j < NKEPT; j++)
			if (fds[j] < fds[i]) {
				x = fds[i];
				fds[i] = fds[j];
				fds[j] = x;
			}
}

static int is_kept_fd(const struct ulp_cb *cb, long fd)
{
	int fds[NKEPT], i;

	kept_fds(cb, fds);
	for (i = 0; i < NKEPT; i++)
		if (fds[i] >= 0 && fd == fds[i])
			return 1;
	return ulp_lock_is_private(fd); /* a ULP's private open of a file it locks */
}

/* close of a number no ULP recorded: once no call of another ULP is between making that number
 * and recording it (fds.c's claim), which the ULP's own double close would otherwise close. */
static long close_nobodys(struct ulp_cb *cb, long fd)
{
	int owner = ulp_fd_claim(fd);
	long r = owner ? -EBADF : ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);

	ulp_fd_claim_end();
	if (owner == cb->pvid + 1) { /* made meanwhile by a thread of its own */
		r = ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
		ulp_fd_forget(cb, fd);
	}
	return r;
}

/* A ULP that closes stdin, stdout or stderr at exit (coreutils' close_stdout) must not close them
 * for the others: it sees them closed, they stay open. */
long ulp_sys_close(struct ulp_cb *cb, struct ulp_sys *s)
{
	long fd = s->a[0];
	long r;
	int owner;

	if (fd >= 0 && fd <= 2) {
		r = cb->std_closed & (1u << fd) ? -EBADF : 0;
		if (!r)
			ulp_lock_closing(cb, ulp_std_fd(cb, fd));
		cb->std_closed |= 1u << fd;
		ulp_std_close(cb, fd);
		return r;
	}
	if (is_kept_fd(cb, fd))
		return -EBADF; /* the runtime's, not the program's */
	owner = ulp_fd_owner(fd);
	if (owner && owner != cb->pvid + 1)
		return -EBADF; /* another ULP's, as another process's is not in this one's table */
	ulp_lock_closing(cb, fd); /* its record locks on the file go (sys_lock.c) */
	if (!owner) /* the launcher's, an ioctl's; or a neighbour's being made (fds.c) */
		return close_nobodys(cb, fd);
	r = ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	ulp_fd_forget(cb, fd); /* its own until closed: a double close elsewhere sees so */
	return r;
}

/*
 * fn(cb, a, b, arg) on each gap [a, b] of [lo, last] left around the kept descriptors (kept_fds,
 * ascending) that skip says to keep out; the first non-zero result of fn ends the walk and is
 * its result. The walk of both close_range's steps below.
 */
static long gaps(struct ulp_cb *cb, unsigned lo, unsigned last,
		 int (*skip)(const struct ulp_cb *cb, long fd),
		 long (*fn)(struct ulp_cb *cb, unsigned a, unsigned b, long arg), long arg)
{
	int fds[NKEPT], i;
	long r;

	kept_fds(cb, fds);
	for (i = 0; i < NKEPT && lo <= last; i++) {
		if (fds[i] < 0 || (unsigned)fds[i] < lo || (unsigned)fds[i] > last ||
		    !skip(cb, fds[i]))
			continue;
		if ((unsigned)fds[i] > lo && (r = fn(cb, lo, (unsigned)fds[i] - 1, arg)) != 0)
			return r;
		lo = (unsigned)fds[i] + 1;
		if (!lo) /* it was the last number there is */
			return 0;
	}
	return lo <= last ? fn(cb, lo, last, arg) : 0;
}

static int any_kept(const struct ulp_cb *cb, long fd)
{
	(void)cb;
	(void)fd;
	return 1;
}

/* The ULP's own descriptors in [a, b] closed, or marked close-on-exec (arg). */
static long own_gap(struct ulp_cb *cb, unsigned a, unsigned b, long cloexec)
{
	ulp_fd_range_owned(cb, a, b, (int)cloexec);
	return 0;
}

/* The ULP's record locks on the files of [a, b] go, as these are closed (sys_lock.c). */
static long lock_gap(struct ulp_cb *cb, unsigned a, unsigned b, long arg)
{
	(void)arg;
	ulp_lock_closing_range(cb, a, b);
	return 0;
}

/* The kernel's close_range of [a, b] with flags arg. */
static long native_gap(struct ulp_cb *cb, unsigned a, unsigned b, long flags)
{
	(void)cb;
	return ulp_arch_syscall(SYS_close_range, a, b, flags, 0, 0, 0);
}

/* close_range (glibc's closefrom): 0-2 as close does them (for this ULP only); the rest natively,
 * around the runtime's own descriptors. CLOSE_RANGE_UNSHARE would give the worker, which runs
 * every ULP of the task, an fd table of its own: refused. */
long ulp_sys_close_range(struct ulp_cb *cb, struct ulp_sys *s)
{
	unsigned first = (unsigned)s->a[0], last = (unsigned)s->a[1], flags = (unsigned)s->a[2];
	unsigned fd, lo;
	int i;

	if (first > last || (flags & ~(unsigned)(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)))
		return -EINVAL;
	if (flags & CLOSE_RANGE_UNSHARE)
		return -EINVAL;
	/* CLOEXEC on the task's 0-2 would reach every ULP's children: left alone (fork children
	 * are processes of their own and may set it there); on the ULP's own, set. */
	for (fd = first; fd <= last && fd <= 2; fd++) {
		if (!(flags & CLOSE_RANGE_CLOEXEC)) {
			if (!(cb->std_closed & (1u << fd)))
				ulp_lock_closing(cb, ulp_std_fd(cb, fd));
			cb->std_closed |= 1u << fd;
			ulp_std_close(cb, fd);
		} else if (cb->std_own[fd]) {
			ulp_arch_syscall(SYS_fcntl, cb->std_own[fd], F_SETFD, FD_CLOEXEC, 0, 0, 0);
		}
	}
	if (last < 3)
		return 0;
	lo = first < 3 ? 3 : first;
	/* The ULP's own descriptors, wherever they are; the others only when it is alone in its
	 * task, and below the launcher's and the runtime's (PVAS_FD_HIGH): another ULP's are not
	 * in its table (closing them failed that ULP: ulpexec's ranks share the launcher's). */
	gaps(cb, lo, last, ulp_std_is_own, own_gap, flags & CLOSE_RANGE_CLOEXEC); /* its 0-2 stay */
	if (ulp_proc_count_task(cb->region, ulp_proc_task(cb)) != 1 || lo >= PVAS_FD_HIGH)
		return 0;
	if (last >= PVAS_FD_HIGH)
		last = PVAS_FD_HIGH - 1;
	if (!(flags & CLOSE_RANGE_CLOEXEC)) {
		gaps(cb, lo, last, any_kept, lock_gap, 0);
		ulp_fd_disown(lo, last);
		for (i = 0; i < 3; i++) /* its own 0-2 stay, and stay its own */
			if (cb->std_own[i])
				ulp_fd_own(cb, cb->std_own[i]);
	}
	return gaps(cb, lo, last, any_kept, native_gap, flags); /* never the runtime's */
}

/* dup2/dup3 of from onto newfd, a number no ULP recorded: it closes what is there, so it waits as
 * a close does (close_nobodys) and makes the descriptor within that claim. A free newfd is taken
 * with F_DUPFD, which takes it only while it is free: a FIFO open the ring runs may make it any
 * time (fds.c), and dup2 would close that one. */
static long dup_nobodys(struct ulp_cb *cb, const struct ulp_sys *s, long from, long newfd)
{
	int owner = ulp_fd_claim(newfd), cloexec = s->nr == SYS_dup3 && (s->a[2] & O_CLOEXEC);
	long r = -EBUSY;

	if (owner == -EBADF && newfd != from && !(s->nr == SYS_dup3 && (s->a[2] & ~O_CLOEXEC))) {
		r = ulp_arch_syscall(SYS_fcntl, from, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, newfd, 0,
				     0, 0);
		if (r >= 0 && r != newfd) { /* made meanwhile */
			ulp_arch_syscall(SYS_close, r, 0, 0, 0, 0, 0);
			r = -EBUSY;
		} else if (r == -EINVAL) { /* newfd past the descriptor limit: as dup2 says */
			r = -EBADF;
		}
	} else if (owner <= 0 || owner == cb->pvid + 1) { /* its own: made meanwhile by a thread */
		r = ulp_arch_syscall(s->nr, from, newfd, s->a[2], 0, 0, 0);
	}
	if (r >= 0 && newfd != from)
		ulp_fd_own(cb, newfd);
	ulp_fd_claim_end();
	return r;
}

/* dup2(oldfd, newfd) closes newfd, open: the ULP's record locks on its file go (sys_lock.c),
 * unless the call fails first (oldfd not open) or changes nothing (dup2(fd, fd)). */
static void dup_closing(struct ulp_cb *cb, long oldfd, long newfd)
{
	if (!atomic_load_explicit(&cb->nlocks, memory_order_relaxed) || oldfd == newfd ||
	    (oldfd >= 0 && oldfd <= 2 && (cb->std_closed & (1u << oldfd))) ||
	    (newfd >= 0 && newfd <= 2 && (cb->std_closed & (1u << newfd))) ||
	    ulp_arch_syscall(SYS_fcntl, ulp_std_fd(cb, oldfd), F_GETFD, 0, 0, 0, 0) < 0)
		return;
	ulp_lock_closing(cb, ulp_std_fd(cb, newfd));
}

/* dup2, dup3 onto 0-2: this ULP's own (stdfds.c), open again for it if it had closed it (a
 * shell's `close(1); dup2(2, 1)` around a redirected builtin); the task's 0-2, every other
 * ULP's, stay. Onto another one: the new descriptor is the caller's. Onto one of the runtime's
 * descriptors, the ULP's own copies of 0-2, or one another ULP of the task made (fds.c):
 * -EBUSY, the error dup2 gives when the number is being opened. The number is not this ULP's to
 * take: a process's dup2 reaches only its own table, and before, a shell's `exec 5<file` in one
 * ULP silently closed another ULP's descriptor 5 and left it reading this file. From 0-2: the
 * ULP's. */
long ulp_sys_dup2(struct ulp_cb *cb, struct ulp_sys *s)
{
	long oldfd = s->a[0], newfd = s->a[1];
	int owner = ulp_fd_owner(newfd);
	long r;

	if (is_kept_fd(cb, newfd) || (owner && owner != cb->pvid + 1))
		return -EBUSY;
	dup_closing(cb, oldfd, newfd);
	/* 0-2: kept for this ULP, its task's other ULPs keep theirs */
	if (newfd >= 0 && newfd <= 2)
		return ulp_std_dup(cb, s);
	if (oldfd >= 0 && oldfd <= 2 && (cb->std_closed & (1u << oldfd)))
		return -EBADF; /* closed for this ULP */
	if (!owner)
		return dup_nobodys(cb, s, ulp_std_fd(cb, oldfd), newfd);
	r = ulp_arch_syscall(s->nr, ulp_std_fd(cb, oldfd), newfd, s->a[2], 0, 0, 0);
	if (r >= 0 && newfd != oldfd) /* dup2(fd, fd) changes nothing */
		ulp_fd_own(cb, newfd);
	return r;
}

/* What execve does to descriptors, for this ULP. 0-2 are every ULP's: one marked close-on-exec is
 * closed for this ULP only (std_closed). Of the others, those it made (fds.c) are closed when
 * marked close-on-exec, also in a task shared with other ULPs, whose own stay; when the ULP is
 * its task's only one, every close-on-exec descriptor but the runtime's goes (the launcher's too,
 * as in the process it stands for; docs/syscalls.md, execve). */
void ulp_io_exec_fds(struct ulp_cb *cb, int sole)
{
	char buf[4096];
	long fd, dir, n, off, f;

	for (fd = 0; fd <= 2; fd++) {
		if (atomic_load_explicit(&cb->nlocks, memory_order_relaxed) &&
		    !(cb->std_closed & (1u << fd))) { /* its record locks there go (sys_lock.c) */
			f = ulp_arch_syscall(SYS_fcntl, ulp_std_fd(cb, fd), F_GETFD, 0, 0, 0, 0);
			if (f > 0 && (f & FD_CLOEXEC))
				ulp_lock_closing(cb, ulp_std_fd(cb, fd));
		}
		if (ulp_std_exec(cb, fd))
			continue; /* its own */
		f = ulp_arch_syscall(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
		if (f > 0 && (f & FD_CLOEXEC))
			cb->std_closed |= 1u << fd;
	}
	ulp_fd_close_owned(cb, 1);
	if (!sole)
		return;
	dir = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)"/proc/self/fd",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	if (dir < 0)
		return;
	while ((n = ulp_arch_syscall(SYS_getdents64, dir, (long)buf, sizeof(buf), 0, 0, 0)) > 0) {
		for (off = 0; off < n;) {
			const struct dirent64 {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (const void *)(buf + off);
			const char *c = d->name;

			off += d->reclen;
			for (fd = 0; *c >= '0' && *c <= '9'; c++)
				fd = fd * 10 + (*c - '0');
			if (*c || c == d->name || fd <= 2 || fd == dir || is_kept_fd(cb, fd))
				continue;
			f = ulp_arch_syscall(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
			if (f > 0 && (f & FD_CLOEXEC)) {
				ulp_lock_closing(cb, fd);
				ulp_fd_disown(fd, fd);
				ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
			}
		}
	}
	ulp_arch_syscall(SYS_close, dir, 0, 0, 0, 0, 0);
}

/* A call on descriptors that the filter traps only when one is 0-2: those are the ULP's own
 * (ulp_trap_call gave them: stdfds.c) or the task's, which the ULP may have closed for itself. */
long ulp_sys_std_call(struct ulp_cb *cb, struct ulp_sys *s)
{
	unsigned fds = ulp_sys_fd_args[s->nr];
	long *a = s->a;
	int i;

	for (i = 0; i < 6; i++)
		if ((fds >> i & 1) && a[i] >= 0 && a[i] <= 2 && (cb->std_closed & (1u << a[i])))
			return -EBADF;
	return ulp_arch_syscall(s->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
