/* SPDX-License-Identifier: MIT */
/*
 * A ULP's current directory and umask. The kernel keeps both per thread (fs_struct), so each
 * worker thread has its own (unshare(CLONE_FS) at its start) and holds the cwd and umask of the
 * ULP it runs: every call of the ULP that takes a path (open, stat, *at(AT_FDCWD), execve...)
 * runs natively and resolves against the ULP's own directory.
 *
 * Switching: before a worker switches to a ULP's task (the scheduler's switch_in hook), it
 * compares the ULP's directory (device and inode) and umask with its own and changes only what
 * differs: no cost while the ULPs of a worker share a directory, a chdir when they do not.
 *
 * Where a ULP's directory is kept: in its placeholder process (ident.c), which has an fs_struct
 * of its own: "/proc/PID/cwd" of the ULP's PID is a reference to the directory itself, as a
 * process's cwd is (renaming it or a parent changes nothing). A chdir of the ULP runs on the
 * worker, then the placeholder follows the worker there. The path (getcwd) is kept as well, and
 * is what a worker goes to when the placeholder cannot be followed (stopped by SIGSTOP); both
 * are checked against the device and inode.
 */
#include "io.h"
#include "ulp_signal.h"

#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* The calling thread's current directory: device and inode. */
static int here(uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (sys(SYS_newfstatat, AT_FDCWD, (long)".", (long)&st, 0, 0, 0) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* chdir to path, kept only when it lands in cb's directory. */
static int go(const struct ulp_cb *cb, const char *path)
{
	uint64_t dev, ino;

	return sys(SYS_chdir, (long)path, 0, 0, 0, 0, 0) == 0 && here(&dev, &ino) == 0 &&
	       dev == cb->cwd_dev && ino == cb->cwd_ino;
}

/* The worker runs cb next: its directory and umask become cb's. */
static void load(struct ulp_io_worker *iw, const struct ulp_cb *cb)
{
	if (!iw->fs_known || iw->cwd_dev != cb->cwd_dev || iw->cwd_ino != cb->cwd_ino) {
		char path[64];

		iw->fs_known = 0;
		if ((cb->pid && !ulp_ident_proc_path(cb, "cwd", path, sizeof(path)) &&
		     go(cb, path)) ||
		    go(cb, cb->cwd)) {
			iw->cwd_dev = cb->cwd_dev;
			iw->cwd_ino = cb->cwd_ino;
			iw->fs_known = 1;
		}
	}
	if (iw->umask != cb->umask) {
		sys(SYS_umask, cb->umask, 0, 0, 0, 0, 0);
		iw->umask = cb->umask;
	}
}

void ulp_fs_switch_in(struct ulp_worker *w, struct ulp_task *t, void *arg)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);
	const struct ulp_cb *cb = t->owner;

	(void)arg;
	if (iw && cb->magic == ULP_CB_MAGIC && cb->cwd_dev | cb->cwd_ino)
		load(iw, cb);
}

void ulp_fs_worker_init(struct ulp_worker *w)
{
	struct ulp_io_worker *iw = ulp_io_worker(w);

	sys(SYS_unshare, CLONE_FS, 0, 0, 0, 0, 0);
	if (iw) {
		iw->fs_known = 0;
		iw->umask = (unsigned)sys(SYS_umask, 022, 0, 0, 0, 0, 0);
		sys(SYS_umask, iw->umask, 0, 0, 0, 0, 0);
	}
}

void ulp_fs_start(struct ulp_cb *cb)
{
	struct ulp_io_worker *iw = ulp_io_worker(ulp_worker_self());

	/* The directory its launcher was in when it loaded it, as a child inherits its parent's. */
	if (cb->cwd[0])
		sys(SYS_chdir, (long)cb->cwd, 0, 0, 0, 0, 0);
	sys(SYS_umask, cb->umask, 0, 0, 0, 0, 0);
	/* Not kept (0, 0): it runs in whatever directory its worker is in (ulp_fs_switch_in). */
	if (here(&cb->cwd_dev, &cb->cwd_ino) != 0)
		cb->cwd_dev = cb->cwd_ino = 0;
	if (iw) {
		iw->cwd_dev = cb->cwd_dev;
		iw->cwd_ino = cb->cwd_ino;
		iw->fs_known = 1;
		iw->umask = cb->umask;
	}
}

/* The worker went to the ULP's new directory: the ULP's record and its placeholder follow. */
static void moved(struct ulp_cb *cb)
{
	struct ulp_io_worker *iw = ulp_io_worker(ulp_worker_self());
	long n = sys(SYS_getcwd, (long)cb->cwd, sizeof(cb->cwd), 0, 0, 0, 0);

	if (n < 0)
		cb->cwd[0] = 0; /* too long, or removed: the placeholder alone keeps it */
	if (here(&cb->cwd_dev, &cb->cwd_ino) != 0)
		cb->cwd_dev = cb->cwd_ino = 0;
	ulp_ident_follow_cwd(cb);
	if (iw) {
		iw->cwd_dev = cb->cwd_dev;
		iw->cwd_ino = cb->cwd_ino;
		iw->fs_known = 1;
	}
}

/* chdir, fchdir: the kernel's, on the worker (it is in the ULP's directory), then recorded. */
long ulp_sys_chdir(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r = sys(s->nr, s->a[0], 0, 0, 0, 0, 0);

	if (r == 0 && !ulp_sys_in_child())
		moved(cb);
	return r;
}

long ulp_sys_umask(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r = sys(SYS_umask, s->a[0], 0, 0, 0, 0, 0);

	if (!ulp_sys_in_child()) {
		struct ulp_io_worker *iw = ulp_io_worker(ulp_worker_self());

		cb->umask = (unsigned)s->a[0] & 0777;
		if (iw)
			iw->umask = cb->umask;
	}
	return r;
}

/* chroot would move the worker's root, which every ULP it runs would then see: the ULP becomes a
 * process of its own, which makes the call (ulp_sys_as_child, as for a change of credentials or
 * namespaces: -EPERM for a ULP with other threads). Until 27 Nov (twelfth session) it was refused
 * with -EPERM, and `chroot DIR CMD` run as a ULP failed where a process's worked. A fork child's
 * is its own. */
long ulp_sys_chroot(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return sys(SYS_chroot, s->a[0], 0, 0, 0, 0, 0);
	return ulp_sys_as_child(cb, s);
}
