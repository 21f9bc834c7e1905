/* SPDX-License-Identifier: MIT */
/*
 * fork, vfork, clone without CLONE_THREAD, execve and wait from a ULP.
 *
 * A ULP is no kernel process, but its children are: fork makes a real process that continues that
 * ULP alone (one thread), in a copy of the address space less the other ULPs' partitions
 * (fork_copy.c). The child's runtime is in "child mode" from then on: there is no scheduler (the
 * other workers do not exist in the child), so the trap answers almost every call natively; what
 * stays emulated is what a real process needs the runtime for: brk (the kernel's heap of that
 * process is the launcher's, the ULP's heap lives in its partition), and the signals the runtime
 * owns (SIGSYS stays the trap's). Ending the ULP ends the child process. execve in the child is
 * the kernel's: any program, PIE or not.
 *
 *   fork, vfork, clone(flags without CLONE_VM):  a fork; vfork becomes a fork (allowed by POSIX:
 *       a vfork child on the parent's stack would overwrite the parent's trap frame);
 *   clone(CLONE_VM|CLONE_VFORK, stack)  (glibc's posix_spawn, hence system() and popen()):
 *       a real CLONE_VM child that resumes the ULP's code on `stack` through a copy of the trap's
 *       signal frame (clone_sigreturn.S) while its parent waits in clone, as vfork does; the
 *       parent's worker is suspended until the child execs or exits, like the kernel's vfork;
 *   execve from a ULP that is not such a child: the new program replaces the ULP in its partition
 *   (exec.c); one the loader cannot run (ET_EXEC) runs as a child process, the ULP waits for it
 *   and ends with its status;
 *   wait4, waitid: only the ULP's own children, as a process sees only its own.
 *
 * Waiting for children (wait4, waitid, and the ULP waiting for the child that runs its non-PIE
 * exec) parks the ULP on the task's ring, on the children's pidfds: the other ULPs of its worker
 * run meanwhile. The kernel's parent of the ULP's children is its placeholder (ph_clone, below):
 * when the ULP ends, they are reparented as a dead process's are.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "sys_fork_arch.h"
#include "ulp_signal.h"
#include "syscall.h"
#include "uthread.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* 1 in a fork child (its own copy of this variable: the parent's stays 0). */
static int forked;
/* This process is the ULP itself gone on as one (ulp_sys_as_child), not a child of it. */
static int became;

/* Workers whose kernel thread waits in clone for a CLONE_VM child: the child shares this memory
 * and runs on the same worker struct (same gs base), the parent does not run until it execs. */
#define MAX_VFORKING 64
static struct ulp_worker *_Atomic vforking[MAX_VFORKING];
static _Atomic int nvforking;
/* The table's words before each of those clones (fds.c), for the child that closes the other
 * ULPs' descriptors: by slot, on the parent's stack, which stays while it waits. */
static struct ulp_fd_fork *vfork_fds[MAX_VFORKING];

/* The slot of the calling worker's CLONE_VM clone, -1: none (not such a child). */
static int vfork_slot(void)
{
	struct ulp_worker *w;
	int i;

	if (!__atomic_load_n(&nvforking, __ATOMIC_ACQUIRE))
		return -1;
	w = ulp_worker_self();
	for (i = 0; i < MAX_VFORKING; i++)
		if (__atomic_load_n(&vforking[i], __ATOMIC_ACQUIRE) == w)
			return i;
	return -1;
}

int ulp_sys_forked(void)
{
	return forked;
}

int ulp_sys_in_child(void)
{
	return forked || vfork_slot() >= 0;
}

static long raw(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* ---- the ULP's children ---- */

/* The list is the ULP's, not one thread's: threads of one ULP on two workers fork and wait at
 * once, and an unguarded add beside a drop lost a child (its waitpid said ECHILD). */
static int kid_add(struct ulp_cb *cb, int pid)
{
	int r = -EAGAIN;

	ulp_spin_lock(&cb->kids_lock);
	if (cb->nkids < ULP_MAX_KIDS) {
		cb->kids[cb->nkids++] = pid;
		r = 0;
	}
	ulp_spin_unlock(&cb->kids_lock);
	return r;
}

static int kid_find(struct ulp_cb *cb, int pid)
{
	int i, r = -1;

	ulp_spin_lock(&cb->kids_lock);
	for (i = 0; i < cb->nkids && r < 0; i++)
		if (cb->kids[i] == pid)
			r = i;
	ulp_spin_unlock(&cb->kids_lock);
	return r;
}

static void kid_drop(struct ulp_cb *cb, int pid)
{
	int i;

	ulp_spin_lock(&cb->kids_lock);
	for (i = 0; i < cb->nkids; i++)
		if (cb->kids[i] == pid) {
			cb->kids[i] = cb->kids[--cb->nkids];
			break;
		}
	ulp_spin_unlock(&cb->kids_lock);
}

/* A copy of the list to walk (the calls made for each child may drop or add some meanwhile). */
static int kids_copy(struct ulp_cb *cb, int *kids)
{
	int n;

	ulp_spin_lock(&cb->kids_lock);
	n = cb->nkids;
	memcpy(kids, cb->kids, (size_t)n * sizeof(*kids));
	ulp_spin_unlock(&cb->kids_lock);
	return n;
}

/* Block until one of the ULP's children may have changed state (a pidfd turns readable when its
 * process ends), or for `ms` milliseconds when it has children we cannot watch that way. */
static long wait_kids(struct ulp_cb *cb)
{
	struct pollfd {
		int fd;
		short events, revents;
	} pfd[ULP_MAX_KIDS];
	int fds[ULP_MAX_KIDS] = {0}, kids[ULP_MAX_KIDS];
	int i, n = 0, nk = kids_copy(cb, kids);
	long r;

	for (i = 0; i < nk; i++) {
		long fd = ulp_fd_make_own(cb, SYS_pidfd_open, kids[i], 0, 0, 0);

		if (fd >= 0) {
			fds[n] = (int)fd;
			pfd[n].fd = (int)fd;
			pfd[n].events = 1; /* POLLIN */
			pfd[n++].revents = 0;
		}
	}
	/* Stopped and continued children do not make a pidfd readable: look again every 50 ms.
	 * Parked on the task's ring, so the worker runs other ULPs meanwhile; a signal of the ULP
	 * ends the wait with EINTR, as the kernel's wait4 does. */
	r = ulp_io_wait_fds(cb, fds, n, 1 /* POLLIN */, 50, 1);
	if (r == -ENOSYS) {
		raw(SYS_poll, (long)pfd, n, 50, 0, 0, 0);
		r = 0;
	}
	for (i = 0; i < n; i++)
		ulp_fd_drop(cb, pfd[i].fd);
	return r;
}

/* A system call made by the ULP's placeholder: the kernel's parent of the children it made
 * (ph_clone). */
struct ph_sys {
	long nr, a[5];
};

static long ph_sys_fn(void *arg)
{
	const struct ph_sys *c = arg;

	return raw(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], 0);
}

long ulp_sys_as_parent(struct ulp_cb *cb, long nr, long a, long b, long c, long d, long e)
{
	long r = raw(nr, a, b, c, d, e, 0), p;
	struct ph_sys call = {nr, {a, b, c, d, e}};

	/* not the task's child: the placeholder's, maybe (wait4, waitid: ECHILD; setpgid: ESRCH) */
	if (r != -ECHILD && r != -ESRCH)
		return r;
	p = ulp_ident_parent_call(cb, ph_sys_fn, &call);
	if (p == -ETIMEDOUT && nr != SYS_setpgid)
		return 0; /* a stopped placeholder: no news of its children yet (never ECHILD) */
	return p == -ENOSYS || p == -ETIMEDOUT ? r : p;
}

/* After the kernel's ECHILD for child pid: whether it is gone (reaped behind our back: SIGCHLD
 * ignored), rather than not one the wait's options name (a clone child whose exit signal is not
 * SIGCHLD waits for __WCLONE or __WALL): until 27 Nov such a child left the list at a plain
 * wait, and its __WALL wait said ECHILD. */
static int kid_gone(struct ulp_cb *cb, int pid)
{
	siginfo_t si;

	return ulp_sys_as_parent(cb, SYS_waitid, P_PID, pid, (long)&si,
				 WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT | __WALL,
				 0) == -ECHILD;
}

/* The kernel's wait4 on one child; a reaped child leaves the ULP's list. */
static long wait_one(struct ulp_cb *cb, int pid, long status, int options, long rusage)
{
	struct rusage ru;
	int st = 0;
	long r = ulp_sys_as_parent(cb, SYS_wait4, pid, (long)&st, options,
				   rusage ? rusage : (long)&ru, 0);

	if (r > 0) {
		if (status)
			*(int *)status = st;
		if (WIFSIGNALED(st) && cb->pgid)
			ulp_ident_settle(cb); /* the ULP's own share of its group's kill first */
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			kid_drop(cb, (int)r);
			ulp_sys_kid_usage(cb, rusage ? (const struct rusage *)rusage : &ru);
		}
	} else if (r == -ECHILD && kid_gone(cb, pid)) {
		kid_drop(cb, pid);
	}
	return r;
}

int ulp_sys_is_kid(struct ulp_cb *cb, int pid)
{
	return pid > 0 && kid_find(cb, pid) >= 0;
}

/* Whether child kid is in the group wait4's pid (0: the ULP's, -pgid) names, as the ULP sees
 * its children's groups (sys_pgrp.c). */
static int pgid_matches(struct ulp_cb *cb, int kid, long want)
{
	long g = ulp_pgrp_kid_view(cb, SYS_getpgid, raw(SYS_getpgid, kid, 0, 0, 0, 0, 0));

	if (want == 0)
		return g == ulp_pgrp_of(cb);
	return g == -want;
}

/* A pass over the children found none to report (any: some matched): what wait4/waitid return
 * now, or 1 to look again once wait_kids saw a change. An interrupted wait takes one more look
 * first, for the child whose end sent the signal (the kernel's wait reports a child that is ready
 * before a pending signal). */
static long wait_next(struct ulp_cb *cb, int any, int options, int *intr)
{
	if (!any)
		return -ECHILD;
	if (*intr)
		return -EINTR;
	if (options & WNOHANG)
		return 0;
	*intr = wait_kids(cb) < 0;
	return 1;
}

/* wait4(pid, status, options, rusage), scoped to the ULP's children. */
long ulp_sys_wait4(struct ulp_cb *cb, struct ulp_sys *s)
{
	/* pid_t arguments are ints: the register's upper half is not the caller's to set */
	long pid = (int)s->a[0], status = s->a[1], rusage = s->a[3];
	int options = (int)s->a[2], i, any, intr = 0, kids[ULP_MAX_KIDS];
	long r;

	if (ulp_sys_in_child())
		return raw(SYS_wait4, pid, status, options, rusage, 0, 0);
	if (pid > 0 && kid_find(cb, (int)pid) < 0)
		return -ECHILD;
	/* Never the kernel's blocking wait, even for one child: the worker would stop running
	 * other ULPs, and a signal meant for this ULP might go to another worker and leave the
	 * call waiting. WNOHANG looks, the ring waits. */
	for (;;) {
		any = 0;
		for (i = kids_copy(cb, kids) - 1; i >= 0; i--) {
			int kid = kids[i];

			if (pid > 0 && kid != pid)
				continue;
			if (pid < -1 || pid == 0) {
				if (!pgid_matches(cb, kid, pid))
					continue;
			}
			r = wait_one(cb, kid, status, options | WNOHANG, rusage);
			if (r == -ECHILD)
				continue; /* gone, or not one the options name */
			any = 1;
			if (r != 0)
				return r;
		}
		r = wait_next(cb, any, options, &intr);
		if (r != 1)
			return r;
	}
}

/* waitid reaped the child it reports: it ended, and WNOWAIT did not leave it waitable. */
static int ended(const siginfo_t *si, int options)
{
	return !(options & WNOWAIT) && (si->si_code == CLD_EXITED || si->si_code == CLD_KILLED ||
					si->si_code == CLD_DUMPED);
}

/* waitid(idtype, id, infop, options, rusage), scoped the same way. */
long ulp_sys_waitid(struct ulp_cb *cb, struct ulp_sys *s)
{
	long type = (int)s->a[0], id = (int)s->a[1], info = s->a[2], rusage = s->a[4];
	int options = (int)s->a[3], i, any, intr = 0, kids[ULP_MAX_KIDS];
	siginfo_t *si = (siginfo_t *)info;
	struct rusage ru;
	long r;

	if (ulp_sys_in_child())
		return raw(SYS_waitid, type, id, info, options, rusage, 0);
	if (type == P_PIDFD) { /* the ULP opened that pidfd on a process it was allowed to see */
		int fd = (int)id;

		for (;;) {
			if (si)
				si->si_pid = 0;
			r = ulp_sys_as_parent(cb, SYS_waitid, type, id, info, options | WNOHANG,
					      rusage ? rusage : (long)&ru);
			if (r == 0 && si && si->si_pid && ended(si, options))
				ulp_sys_kid_usage(cb, rusage ? (const struct rusage *)rusage : &ru);
			if (r < 0 || (si && si->si_pid) || (options & WNOHANG) || intr)
				return r < 0 || !intr || (si && si->si_pid) ? r : -EINTR;
			if (!si) /* nothing to tell "not yet" by: the kernel's wait */
				return raw(SYS_waitid, type, id, info, options, rusage, 0);
			r = ulp_io_wait_fds(cb, &fd, 1, 1 /* POLLIN */, 50, 1);
			if (r == -ENOSYS)
				return raw(SYS_waitid, type, id, info, options, rusage, 0);
			intr = r < 0;
		}
	}
	if (type == P_PID) {
		if (kid_find(cb, (int)id) < 0)
			return -ECHILD;
	}
	for (;;) {
		any = 0;
		for (i = kids_copy(cb, kids) - 1; i >= 0; i--) {
			int kid = kids[i];

			if (type == P_PID && kid != id)
				continue;
			if (type == P_PGID && !pgid_matches(cb, kid, id ? -id : 0))
				continue;
			if (si)
				si->si_pid = 0;
			r = ulp_sys_as_parent(cb, SYS_waitid, P_PID, kid, info, options | WNOHANG,
					      rusage ? rusage : (long)&ru);
			if (r == -ECHILD) { /* gone, or not one the options name */
				if (kid_gone(cb, kid))
					kid_drop(cb, kid);
				continue;
			}
			any = 1;
			if (r < 0)
				return r;
			if (si && si->si_pid) {
				if ((si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED) &&
				    cb->pgid)
					ulp_ident_settle(cb);
				if (ended(si, options)) {
					kid_drop(cb, kid);
					ulp_sys_kid_usage(cb, rusage ? (const struct rusage *)rusage
								     : &ru);
				}
				return 0;
			}
		}
		r = wait_next(cb, any, options, &intr);
		if (r != 1)
			return r;
	}
}

/* ---- signals to the ULP's process group ---- */

/*
 * The children of a ULP in its task's process group (or one that leads a session: sys_pgrp.c)
 * are in the task's group, with the launcher and the task's other ULPs
 * (a terminal's Ctrl-C reaches them all, and they may read the terminal). So kill(0, sig) from
 * the ULP, which for a process means its group, its children and theirs that stayed in it
 * (bash's `kill 0`, `trap 'kill 0' EXIT`), cannot be the kernel's: that would reach the launcher
 * and every ULP. It is the ULP itself (the caller posts that) and its descendants that are still
 * in the group: found through /proc/PID/task/TID/children, all of them first, then signalled, so
 * that a parent that dies first does not hide its children.
 */
#define MAX_DESC 1024

/* "/proc/PID/task", or with a tid "/proc/PID/task/TID/children", into buf (96 bytes). */
static void task_path(char *buf, long pid, long tid)
{
	static const char head[] = "/proc/", mid[] = "/task", tail[] = "/children";
	long parts[2] = {pid, tid}, v;
	char digits[24];
	int i = 0, k, j, n;

	for (j = 0; head[j]; j++)
		buf[i++] = head[j];
	for (k = 0; k < 2 && parts[k]; k++) {
		if (k)
			buf[i++] = '/';
		n = 0;
		v = parts[k];
		do
			digits[n++] = (char)('0' + v % 10);
		while ((v /= 10) > 0);
		while (n)
			buf[i++] = digits[--n];
		for (j = 0; !k && mid[j]; j++)
			buf[i++] = mid[j];
	}
	for (j = 0; tid && tail[j]; j++)
		buf[i++] = tail[j];
	buf[i] = 0;
}

/* The pids in /proc/PID/task/TID/children of each thread TID of pid, added to d[*n..]. */
static void add_children(long pid, int *d, int *n)
{
	char path[96], buf[4096];
	long dir, f, r, off, v;
	int k;

	task_path(path, pid, 0);
	dir = raw(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	if (dir < 0)
		return;
	while ((r = raw(SYS_getdents64, dir, (long)buf, sizeof(buf), 0, 0, 0)) > 0) {
		for (off = 0; off < r;) {
			const struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *e = (const void *)(buf + off);
			char kids[4096], cpath[96];
			long tid = 0, got;
			const char *c;

			off += e->reclen;
			for (c = e->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (*c || !tid)
				continue;
			task_path(cpath, pid, tid);
			f = raw(SYS_openat, AT_FDCWD, (long)cpath, O_RDONLY | O_CLOEXEC, 0, 0, 0);
			if (f < 0)
				continue;
			got = raw(SYS_read, f, (long)kids, sizeof(kids) - 1, 0, 0, 0);
			raw(SYS_close, f, 0, 0, 0, 0, 0);
			for (k = 0, v = 0; k < got; k++) {
				if (kids[k] >= '0' && kids[k] <= '9') {
					v = v * 10 + (kids[k] - '0');
				} else if (v) {
					if (*n < MAX_DESC)
						d[(*n)++] = (int)v;
					v = 0;
				}
			}
		}
	}
	raw(SYS_close, dir, 0, 0, 0, 0, 0);
}

void ulp_sys_kill_kids(struct ulp_cb *cb, int sig)
{
	int d[MAX_DESC], n = 0, i, kids[ULP_MAX_KIDS], nk = kids_copy(cb, kids);
	long group = raw(SYS_getpgid, 0, 0, 0, 0, 0, 0);

	for (i = 0; i < nk && n < MAX_DESC; i++)
		d[n++] = kids[i];
	for (i = 0; i < n; i++) /* breadth first: d grows as it is walked */
		add_children(d[i], d, &n);
	/* the deepest first: a parent still alive reaps its child's end, as after the kernel's
	 * group kill, and orphans are not left to init */
	for (i = n - 1; i >= 0; i--)
		if (raw(SYS_getpgid, d[i], 0, 0, 0, 0, 0) == group)
			raw(SYS_kill, d[i], sig, 0, 0, 0, 0);
}

/* ---- fork ---- */

/* A fork child's table gets the ULP's own 0-2 (stdfds.c); its copy of the ULP forgets them, the
 * child's descriptors being its own now (nothing is kept per ULP in child mode). */
static void child_std(struct ulp_cb *cb)
{
	ulp_std_child(cb);
	cb->std_own[0] = cb->std_own[1] = cb->std_own[2] = 0;
	cb->std_closed = 0;
}

/* The kernel's flags a fork of a ULP may pass on: tid stores for the child's libc, the exit
 * signal. Sharing (CLONE_FILES, CLONE_FS, CLONE_SIGHAND...) with a process that is not one the
 * program knows about would be a lie: refused. */
#define FORK_OK                                                                                    \
	(CSIGNAL | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_VFORK | \
	 CLONE_VM)

/* A fork child of the ULP starts in the ULP's process group, as a process's child in its
 * parent's: the kernel put it in the task's (sys_pgrp.c). pid: the child (in the parent), 0 in
 * the child. A child that exec'd already refuses (EACCES): it moved itself first. A fork child's
 * own children (of: 1) are the kernel's, in their parent's group already. */
static void join_group(const struct ulp_cb *cb, int pid, int of_child)
{
	int g = ulp_pgrp_kids(cb);

	if (g && !of_child)
		raw(SYS_setpgid, pid, g, 0, 0, 0, 0);
}

/* The group a child the placeholder made starts in: the ULP's (its placeholder sits in a group
 * of its own while the ULP is in its task's, where the child belongs; a ULP leading a session
 * has its placeholder lead it, and the child is in its group already: 0). */
static int ph_kids_group(const struct ulp_cb *cb)
{
	if (cb->sid)
		return 0;
	return cb->pgid ? cb->pgid : (int)raw(SYS_getpgid, 0, 0, 0, 0, 0, 0);
}

/* A child process of the ULP (fork, posix_spawn's CLONE_VM child, a non-PIE execve's child)
 * takes what the ULP keeps apart from its task: scheduling settings, resource limits (own_memory:
 * a fork child's, whose deferred ones are its own copy), no_new_privs, and only the ULP's
 * descriptors of the table copied at the clone (fds: its words before the clone, or NULL).
 * by_ph: the placeholder made it, whose scheduling settings and limits are the ULP's: the
 * child has them, and the rest comes from its copy of memory, so the descriptors go first (the
 * parent's fork waits for them: ulp_fd_fork_end); else the settings are read from the
 * placeholder before the parent goes on and may change them. */
static void child_takes_ulp(struct ulp_cb *cb, struct ulp_fd_fork *fds, int own_memory, int by_ph)
{
	if (!by_ph) {
		ulp_sys_sched_child(cb, 0);
		ulp_rlimit_child(cb, own_memory, 0);
	}
	ulp_lock_child(); /* before close_others lowers the fork's closing flag */
	ulp_fd_close_others(cb, fds);
	if (by_ph) {
		ulp_sys_sched_child(cb, 1);
		ulp_rlimit_child(cb, own_memory, 1);
	}
	ulp_cred_child(cb);
}

/* The first thing a posix_spawn (CLONE_VM) child does, before it resumes the ULP's code: its
 * standard descriptors (stdfds.c), its group; its parent can no longer move it once it exec'd. */
static void vfork_child(void)
{
	int slot = forked ? -1 : vfork_slot();

	join_group(ulp_current_cb(), 0, forked); /* forked: a fork child's own posix_spawn */
	if (!forked)
		child_takes_ulp(ulp_current_cb(), slot >= 0 ? vfork_fds[slot] : NULL, 0, 0);
	ulp_std_vfork_child();
}

/*
 * The kernel's parent of a ULP's child is the process that made the clone. Made by the worker,
 * it was the task, so that once the child had exec'd a program, its getppid() (a shell's
 * $PPID), `ps -o ppid`, `pgrep -P` and PR_SET_PDEATHSIG named the task, and a `kill $PPID`
 * reached every ULP of it (SIGKILL and SIGSTOP included). The ULP's placeholder holds its pid
 * and shares the task's memory and descriptor table (ident.c): it makes the clone instead, with
 * the worker's fs and gs bases, so that the child is a copy of the trap in progress. A fork's
 * child then goes on in the trap's frame (ulp_arch_jmp_resume) as a child the worker made would.
 * posix_spawn's CLONE_VM child is the worker's (do_fork says why). The ULP's waits for a child,
 * and its setpgid of it, are the placeholder's calls too (wait_one, waitid, sys_pgrp.c).
 */
struct ph_clone {
	unsigned long flags;
	long ptid, ctid;
	uintptr_t fs, gs;
	struct ulp_arch_jmp j; /* where the child goes on */
	int group;	       /* ph_kids_group */
	unsigned umask;	       /* the ULP's (the placeholder's cwd is the ULP's already: ident.c) */
	int cleared;	       /* the child's copied handlers are SIG_DFL (CLONE_CLEAR_SIGHAND) */
};

/* The kernel's clone of flags (fork flags: no CLONE_VM), with the handlers the child copies
 * reset to SIG_DFL (clone3's CLONE_CLEAR_SIGHAND, Linux 5.5) where the kernel can: *cleared
 * says so, set before the clone, so that the child's copy of it tells the child. The child
 * then sets the ULP's actions over far fewer of them (ulp_sig_fork_child). */
static long clone_cleared(unsigned long flags, long ptid, long ctid, int *cleared)
{
	struct clone_args ca;
	long pid;

	memset(&ca, 0, sizeof(ca));
	ca.flags = (flags & ~(unsigned long)CSIGNAL) | CLONE_CLEAR_SIGHAND;
	ca.exit_signal = flags & CSIGNAL;
	ca.parent_tid = (uint64_t)ptid;
	ca.child_tid = (uint64_t)ctid;
	*cleared = 1;
	pid = raw(SYS_clone3, (long)&ca, sizeof(ca), 0, 0, 0, 0);
	if (pid != -ENOSYS && pid != -EINVAL && pid != -E2BIG)
		return pid;
	*cleared = 0;
	return raw(SYS_clone, (long)flags, 0, ptid, ctid, 0, 0);
}

/* In the placeholder. */
static long ph_clone_fn(void *arg)
{
	struct ph_clone *c = arg;
	long pid;

	ulp_arch_self_set((void *)c->gs);
	ulp_arch_tls_set(c->fs);
	raw(SYS_umask, c->umask, 0, 0, 0, 0, 0);
	/* do_fork: the child's copy of the parked calls is whole; held as this placeholder's, which
	 * the child may kill before it lets go (io_ring.c, holder_gone) */
	ulp_io_fork_hold((int)raw(SYS_getpid, 0, 0, 0, 0, 0, 0));
	pid = clone_cleared(c->flags, c->ptid, c->ctid, &c->cleared);
	if (pid == 0)
		ulp_arch_jmp_resume(&c->j, 1);
	ulp_io_fork_hold(0);
	if (pid > 0 && c->group) /* as the child does: whichever runs first */
		raw(SYS_setpgid, pid, c->group, 0, 0, 0, 0);
	return pid;
}

/* A fork (no CLONE_VM) made by the ULP's placeholder; -ENOSYS when it cannot (none, stopped).
 * In the child, 0 with *group the group it joins and *cleared whether its handlers are SIG_DFL
 * (clone_cleared). */
static long ph_clone(struct ulp_cb *cb, unsigned long flags, long ptid, long ctid, int *group,
		     int *cleared)
{
	struct ph_clone c = {.flags = flags,
			     .ptid = ptid,
			     .ctid = ctid,
			     .fs = ulp_arch_tls_get(),
			     .gs = (uintptr_t)ulp_arch_self_get(),
			     .umask = cb->umask};
	long r;

	if (!ulp_ph_fork)
		return -ENOSYS;
	c.group = *group = ph_kids_group(cb);
	if (ulp_arch_jmp_save(&c.j)) {
		*cleared = c.cleared;
		return 0; /* the placeholder's child, on this frame of its copy of memory */
	}
	r = ulp_ident_parent_call(cb, ph_clone_fn, &c);
	return r == -ETIMEDOUT ? -ENOSYS : r; /* not taken: the worker makes it */
}

/* The children the kernel reaped as they ended (the ULP ignores SIGCHLD or set SA_NOCLDWAIT:
 * its placeholder does too, ident.c) leave the ULP's list, which would else fill up: a perl
 * ULP with $SIG{CHLD} = "IGNORE" got EAGAIN from its 257th fork (a process never does). */
static void prune_kids(struct ulp_cb *cb)
{
	int i, kids[ULP_MAX_KIDS];

	for (i = kids_copy(cb, kids) - 1; i >= 0; i--)
		if (kid_gone(cb, kids[i]))
			kid_drop(cb, kids[i]);
}

static long do_fork(struct ulp_cb *cb, struct ulp_sys *s, unsigned long flags, uintptr_t stack,
		    long ptid, long ctid, int by_ph)
{
	long pid;
	int slot = -1, i, of_child = ulp_sys_in_child(), group = -1, cleared = 0;
	struct ulp_fd_fork fds; /* the table's words before the clone (fds.c) */

	if (flags & ~(unsigned long)FORK_OK)
		return -EINVAL;
	/* The list is the ULP's: a fork child's children are the kernel's to wait for (its wait4 is
	 * the kernel's), and its copy of the list holds its siblings. Before 28 Nov the child added
	 * to its copy and never dropped: a subshell's 256th fork said EAGAIN (bash's loop in a
	 * pipeline lost its lines, the pipeline's status 0). */
	if (cb->nkids >= ULP_MAX_KIDS && !of_child)
		prune_kids(cb);
	if (cb->nkids >= ULP_MAX_KIDS && !of_child)
		return -EAGAIN;
	if ((flags & CLONE_VM) && !(flags & CLONE_VFORK))
		return -EINVAL; /* a process sharing memory with a running ULP: not supported */
	if ((flags & CLONE_VM) && stack) {
		struct ulp_worker *w = ulp_worker_self();

		/* before the slot: a worker holding one counts as in a child (ulp_sys_in_child) */
		ulp_fd_fork_begin(cb, &fds);
		for (i = 0; i < MAX_VFORKING && slot < 0; i++) {
			struct ulp_worker *none = NULL;

			if (__atomic_compare_exchange_n(&vforking[i], &none, w, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				slot = i;
		}
		if (slot < 0) {
			ulp_fd_fork_end(&fds, -EAGAIN);
			return -EAGAIN;
		}
		vfork_fds[slot] = &fds;
		__atomic_fetch_add(&nvforking, 1, __ATOMIC_ACQ_REL);
		/* Made by the worker: the task is its parent. Through the placeholder (ph_clone)
		 * the worker held the fork's descriptor guard (ulp_fd_fork_begin) for as long as
		 * the placeholder took to run, and a FIFO pair beside a ULP spawning /bin/true
		 * reported a wrong close (CI at 976239a; once in the locks helper's runs). */
		pid = ulp_arch_clone_sigreturn(flags, (void *)ulp_arch_fork_frame(s->uc, stack),
					       (int *)ptid, (int *)ctid, 0, vfork_child);
		ulp_fd_fork_end(&fds, pid);
		__atomic_store_n(&vforking[slot], NULL, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&nvforking, 1, __ATOMIC_ACQ_REL);
	} else {
		/* No CLONE_VM (or vfork on the caller's own stack, made a fork): the child gets a
		 * copy of everything, this frame included, and returns from this handler. */
		unsigned long all = ~0ul, old;
		int marked;

		/* The child is born with every signal blocked, until it has become a process
		 * with the ULP's dispositions (the trap's sigreturn restores the mask that
		 * ulp_sig_fork_child sets): one sent to it earlier (a kill of its new group right
		 * after the fork) was taken by the relay for the task's, and lost. */
		raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, ULP_KSIGSET_SIZE, 0,
		    0);
		flags &= ~(unsigned long)(CLONE_VM | CLONE_VFORK);
		/* the child gets this partition, not the other ULPs' (fork_copy.c); before the
		 * table's guard: the marks may read /proc/self/maps */
		marked = of_child ? 0 : ulp_fork_copy_begin(cb);
		ulp_fd_fork_begin(cb, &fds); /* nothing in a fork child's fork */
		/* The parked calls are held across the clone (the child reads the FIFO opens in
		 * flight among them, copied out for it: ulp_io_fork_hold):
		 * by the placeholder around its own clone, not for as long as the worker waits for
		 * it to run, which stalled the task's other workers' parks and reaps. */
		pid = by_ph && !of_child ? ph_clone(cb, flags, ptid, ctid, &group, &cleared)
					 : -ENOSYS;
		if (pid == -ENOSYS) {
			group = -1;
			if (!of_child)
				ulp_io_fork_hold(1);
			pid = raw(SYS_clone, (long)flags, 0, ptid, ctid, 0, 0);
			if (!of_child)
				ulp_io_fork_hold(0); /* in the child: its copy */
		} else if (pid == 0) {
			ulp_io_fork_hold(0); /* its copy, held by the placeholder at the clone */
		}
		if (pid == 0) {
			if (cleared) /* first: the trap's handler before any trap */
				ulp_trap_own_actions();
			forked = 1;
			became = 0;
			if (group > 0) /* the placeholder's child */
				raw(SYS_setpgid, 0, group, 0, 0, 0, 0);
			else if (group < 0)
				join_group(cb, 0, of_child);
			if (!of_child) /* in a fork child, these are the kernel's already */
				child_takes_ulp(cb, &fds, 1, group >= 0);
			ulp_fd_fork_child_end(&fds);
			child_std(cb);
			ulp_sig_fork_child(cb, s->uc, cleared);
			if (stack)
				ulp_arch_trap_set_sp(s->uc, stack);
			return 0;
		}
		ulp_fd_fork_end(&fds, pid);
		ulp_fork_copy_end(cb, marked);
		raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, ULP_KSIGSET_SIZE, 0, 0);
	}
	if (pid > 0) {
		if (group < 0) /* the placeholder's child joined in the placeholder */
			join_group(cb, (int)pid, of_child); /* as well: whichever runs first */
		if (!of_child) /* a fork child's SIGCHLD is the kernel's */
			ulp_sig_child_new((int)pid);
		if (!of_child && kid_add(cb, (int)pid) == 0)
			ulp_sig_child_added(cb, (int)pid);
	}
	return pid;
}

long ulp_sys_fork(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (s->nr == SYS_clone)
		return do_fork(cb, s, (unsigned long)s->a[0], (uintptr_t)s->a[1], s->a[2], s->a[3],
			       1);
	return do_fork(cb, s, SIGCHLD, 0, 0, 0, 1); /* fork, vfork */
}

/* ---- execve ---- */

/*
 * Whether child pid has ended (the caller reaps it): its pidfd fd is readable, or, with no pidfd
 * (fd < 0), waitid finds it ended and leaves it waitable. A signal that reaches the worker
 * during the zero-timeout poll fails it with EINTR (the preemption tick on a loaded machine):
 * that is asked again, not taken for an end. Before 27 Nov it was, and the caller went on to a
 * blocking wait4 that held the worker while the program wrote into a FIFO that another ULP of
 * that worker was to read: integ-fallback hung now and then (here 2 runs in 38 under nice 19,
 * 1 group run in 40 in a PID namespace; fallback.sh case 11 injects the EINTR).
 */
static int program_ended(long fd, long pid)
{
	siginfo_t si;
	long r;

	if (fd < 0) {
		si.si_pid = 0;
		do
			r = raw(SYS_waitid, P_PID, pid, (long)&si, WEXITED | WNOHANG | WNOWAIT, 0,
				0);
		while (r == -EINTR);
		return r < 0 || si.si_pid != 0;
	}
	/* readable, or a poll that fails for good: wait4 tells */
	return ulp_io_poll0((int)fd, 1 /* POLLIN */) != 0;
}

/*
 * Wait, parked on the task's ring, for the child that runs a non-PIE program in the ULP's stead
 * (its pidfd turns readable when it ends; then the caller reaps it): the worker runs the task's
 * other ULPs meanwhile, one of which may be what the program waits for (the reader of its FIFO:
 * a blocking wait4 here held the worker, and that job never ended on -w 1). Without a pidfd
 * (pidfd_open failed: EMFILE), the same wait looks every 100 ms. The wait is not
 * interruptible: signals sent to the ULP (kill of its PID, SIGKILL included, which its
 * placeholder turns into a pending SIGKILL) are the program's now, and go on to the child
 * (SIGCHLD, the child's own end, aside). Natively, the blocking way, without a ring.
 */
static void wait_program(struct ulp_cb *cb, long pid)
{
	long fd = ulp_fd_make_own(cb, SYS_pidfd_open, pid, 0, 0, 0);
	unsigned long want = ~(1ul << (SIGCHLD - 1));
	siginfo_t si;
	int sig, f = (int)fd;

	while (!program_ended(fd, pid)) {
		if (ulp_io_wait_fds(cb, fd >= 0 ? &f : NULL, fd >= 0, 1 /* POLLIN */, 100, 0) ==
		    -ENOSYS)
			break;
		while ((sig = ulp_sig_take(cb, want, &si)) > 0)
			raw(SYS_kill, pid, sig, 0, 0, 0, 0);
	}
	if (fd >= 0)
		ulp_fd_drop(cb, fd);
}

/* The kernel's execve in a child process of the ULP, with the limits kept for it (sys_rlimit.c);
 * they go back when it failed. */
static long child_execve(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct ulp_rlimit_saved sv;
	unsigned long m, prog;
	long r;

	/* The program gets the child's mask without the runtime's signals, which the child blocks
	 * as the worker it was copied from did (ULP_SIG_WAKE: before 27 Nov every child program
	 * of a ULP started with signal 62 blocked, which a process's children do not). */
	r = raw(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&m, ULP_KSIGSET_SIZE, 0, 0);
	prog = m & ~ULP_RT_SIGMASK;
	if (r == 0 && prog != m)
		raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&prog, 0, ULP_KSIGSET_SIZE, 0, 0);
	ulp_rlimit_exec(cb, forked, &sv);
	r = raw(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	ulp_rlimit_exec_failed(&sv);
	if (prog != m) /* failed: the child goes on as it was */
		raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, ULP_KSIGSET_SIZE, 0, 0);
	return r;
}

/*
 * execve of a program that cannot replace the ULP in place (exec.c says which): it runs as a child
 * process (fork, then the kernel's execve), and the ULP ends with its status once it has ended. A
 * failed execve returns its error to the ULP, as the kernel would: the child reports it through a
 * close-on-exec pipe, which closes without a word when the exec succeeds.
 */
/* A close-on-exec pipe of the ULP's, for a child to report its call's error through. */
static long own_pipe(struct ulp_cb *cb, int p[2])
{
	_Atomic int *making = ulp_fd_make_begin(); /* the ULP's, while the runtime uses them */
	long r = raw(SYS_pipe2, (long)p, 02000000 /* O_CLOEXEC */, 0, 0, 0, 0);

	if (r == 0) {
		ulp_fd_own(cb, p[0]);
		ulp_fd_own(cb, p[1]);
	}
	ulp_fd_make_end(making);
	return r;
}

/* The ULP goes on in child process pid: its descriptors are the child's copies now (the task's
 * go, as the image they belonged to did: a reader sees EOF when the child closes its copy; not
 * while other threads of the ULP may still use them). It waits for the child and ends with its
 * status. */
static _Noreturn void end_as(struct ulp_cb *cb, long pid)
{
	int st = 0;
	long r;

	if (!cb->tg || cb->tg->nlive <= 1)
		ulp_fd_close_owned(cb, 0);
	wait_program(cb, pid);
	do
		r = raw(SYS_wait4, pid, (long)&st, 0, 0, 0, 0);
	while (r == -EINTR);
	if (r < 0)
		ulp_sys_end(cb, 127, 0);
	if (WIFSIGNALED(st))
		ulp_sys_end(cb, 0, WTERMSIG(st));
	ulp_sys_end(cb, WEXITSTATUS(st), 0);
}

/* The parent's side of child pid's report through pipe p (own_pipe): its error in *err and 1, or
 * 0 when the pipe closed without a word; -1, the pipe gone, when there is no child (pid < 0). */
static int child_report(struct ulp_cb *cb, const int p[2], long pid, int *err)
{
	long r;

	ulp_fd_drop(cb, p[1]);
	if (pid >= 0) {
		do
			r = raw(SYS_read, p[0], (long)err, sizeof(*err), 0, 0, 0);
		while (r == -EINTR);
	}
	ulp_fd_drop(cb, p[0]);
	return pid < 0 ? -1 : r == sizeof(*err);
}

static void reap(long pid)
{
	int st;

	while (raw(SYS_wait4, pid, (long)&st, 0, 0, 0, 0) == -EINTR)
		;
}

static long exec_as_child(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct ulp_fd_fork fds; /* the table's words before the clone (fds.c) */
	unsigned long all = ~0ul, old;
	int p[2], err = 0, marked;
	long pid, r;

	r = own_pipe(cb, p);
	if (r < 0)
		return r;
	marked = ulp_fork_copy_begin(cb); /* this partition only (fork_copy.c) */
	ulp_fd_fork_begin(cb, &fds);
	/* no handler runs while the parked calls are held: one may look at them */
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, ULP_KSIGSET_SIZE, 0, 0);
	ulp_io_fork_hold(1);
	pid = raw(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
	ulp_io_fork_hold(0); /* in the child: its copy */
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, ULP_KSIGSET_SIZE, 0, 0);
	if (pid)
		ulp_fork_copy_end(cb, marked);
	if (pid == 0) {
		forked = 1;
		child_takes_ulp(cb, &fds, 1, 0);
		ulp_fd_fork_child_end(&fds);
		child_std(cb);
		ulp_sig_exec_child(cb);
		raw(SYS_close, p[0], 0, 0, 0, 0, 0);
		r = child_execve(cb, s);
		err = (int)-r;
		raw(SYS_write, p[1], (long)&err, sizeof(err), 0, 0, 0);
		raw(SYS_exit_group, 127, 0, 0, 0, 0, 0);
	}
	ulp_fd_fork_end(&fds, pid);
	if (child_report(cb, p, pid, &err) < 0)
		return pid;
	if (err) { /* the exec failed: the ULP goes on, as after a failed execve */
		reap(pid);
		return -err;
	}
	end_as(cb, pid); /* the program runs in the child now */
}

long ulp_sys_as_child(struct ulp_cb *cb, struct ulp_sys *s)
{
	int p[2], err = 0;
	long pid, r;

	if (cb->tg && cb->tg->nlive > 1)
		return -EPERM; /* its other threads would not go on in the child: refused */
	r = own_pipe(cb, p);
	if (r < 0)
		return r;
	pid = do_fork(cb, s, SIGCHLD, 0, 0, 0, 0); /* the ULP itself: the task's child, as before */
	if (pid == 0) {				   /* the ULP, a process of its own from here on */
		became = 1;
		raw(SYS_close, p[0], 0, 0, 0, 0, 0);
		r = raw(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
		if (r >= 0) {
			raw(SYS_close, p[1], 0, 0, 0, 0, 0); /* no word: it went through */
			return r;
		}
		err = (int)-r;
		raw(SYS_write, p[1], (long)&err, sizeof(err), 0, 0, 0);
		raw(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	}
	r = child_report(cb, p, pid, &err);
	if (r < 0)
		return pid;
	if (r == 0) /* the call went through there */
		end_as(cb, pid);
	reap(pid); /* it failed there: the ULP goes on, as after the kernel's failed call */
	kid_drop(cb, (int)pid);
	return -err;
}

long ulp_sys_execve(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r;

	if (ulp_sys_in_child())
		return raw(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	r = ulp_proc_exec(cb, s->nr, s->a); /* returns only when the old program goes on */
	return r == ULP_EXEC_CHILD ? exec_as_child(cb, s) : r;
}

/* ---- the trap in a fork child ---- */

/*
 * A thread of a fork child (pthread_create there: Python's multiprocessing starts one to feed a
 * Queue): a kernel thread of that process, which is what a thread of a process is; the child has no
 * scheduler to run ULP threads. The kernel's clone would start it here, on the handler's code with
 * the caller's stack pointer: it starts instead on the stack the caller gave, through a copy of
 * the trap's signal frame (rt_sigreturn, as a posix_spawn child does), where clone returns 0. Its
 * traps find the same worker (the gs base is inherited) and are answered natively, as the
 * caller's are: the runtime keeps no per-thread state in child mode.
 */
static long child_thread(struct ulp_sys *s)
{
	unsigned long flags = (unsigned long)s->a[0];
	uintptr_t stack = (uintptr_t)s->a[1];

	if (!stack || !(flags & CLONE_VM) || !(flags & CLONE_SIGHAND))
		return -EINVAL;
	return ulp_arch_clone_sigreturn(flags, (void *)ulp_arch_thread_frame(s->uc, stack),
					(int *)s->a[2], (int *)s->a[3], (unsigned long)s->a[4],
					NULL);
}

/*
 * In a fork or CLONE_VM child the ULP is a process of its own: its calls are the kernel's, except
 * its /proc/self/exe, cmdline and environ (the program's, not the launcher's: sys_proc.c,
 * ulp_sys_child_self), brk (its heap is in the partition), getppid (the ULP's pid), RLIMIT_AS and
 * RLIMIT_DATA until its execve (sys_rlimit.c), the signals the runtime owns (the trap stays
 * installed: SIGSYS must stay ours, and not be blocked), fork itself (the grandchild resumes
 * through the trap frame too), and clone of a thread (a kernel thread, started on its own stack:
 * child_thread).
 */
long ulp_sys_child(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a, r;
	const char *exe = NULL;

	if (ulp_sys_child_self(cb, s, &exe, &r))
		return r; /* its /proc/self/exe, cmdline, environ: the program's */
	if (exe)	  /* an execve of /proc/self/exe: the program's file */
		a[s->nr == SYS_execveat] = (long)exe;
	switch (s->nr) {
	case SYS_brk:
		return ulp_sys_brk(cb, s);
	case SYS_rt_sigaction:
	case SYS_rt_sigprocmask:
		return ulp_sys_table[s->nr](cb, s);
	case SYS_clone:
		if (a[0] & CLONE_THREAD)
			return child_thread(s);
		return ulp_sys_fork(cb, s);
	case SYS_clone3:
		return -ENOSYS; /* glibc falls back to clone */
	case SYS_getppid: /* the ULP, while it is its parent; the ULP's own, if it is the ULP */
		return became ? ulp_ident_ppid() : ulp_sys_getppid(cb, s);
	case SYS_capset:
		return ulp_sys_cred(cb, s); /* of the ULP's pid: of itself */
	case SYS_getrlimit:
	case SYS_setrlimit:
	case SYS_prlimit64:
		return ulp_rlimit_child_call(cb, s, forked);
	case SYS_execve:
	case SYS_execveat:
		return child_execve(cb, s);
	default:
		if (s->nr == ULP_ARCH_SYS_FORK || s->nr == ULP_ARCH_SYS_VFORK)
			return ulp_sys_fork(cb, s);
		return raw(s->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}
