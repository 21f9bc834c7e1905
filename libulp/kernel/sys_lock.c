/* SPDX-License-Identifier: MIT */
/*
 * Record locks of a ULP: fcntl F_SETLK, F_SETLKW, F_GETLK (lockf(3) too, which uses them).
 *
 * The kernel's record ("POSIX") locks belong to a process, by its descriptor table, and the ULPs
 * of a PVAS task share one: until 27 Nov two ULPs of a task that locked the same range of a file
 * both got it, silently (two sqlite3 ULPs writing one database, each sure of its lock). Then a
 * ULP's record lock was made an open file description lock (F_OFD_SETLK...) on the descriptor
 * it named, whose owner is the open file: ULPs sharing one open file (a descriptor inherited
 * from their launcher) still both got a lock, two opens of one file in one ULP conflicted, and
 * a close of one descriptor kept the locks taken through another.
 *
 * The kernel's owner of a record lock is the (process, inode) pair; here it is the (ULP, inode)
 * pair: each ULP holds one private open of each regular file it locks (its "private"), opened
 * again through /proc/self/fd/N, writable where it can be, at a number from LOCK_FD_MIN up
 * (else from PVAS_FD_HIGH up) that programs never get (the runtime's: a ULP's close of it is EBADF,
 * a dup2 onto it EBUSY, close_range stops below PVAS_FD_HIGH), close-on-exec. Every lock call of
 * the ULP on that file, through any descriptor, is an OFD call on its private, so its locks
 * conflict with other ULPs' and other processes' (the kernel checks OFD locks against POSIX ones)
 * and not with its own. A close of any descriptor of the file by the ULP (close, dup2 onto it,
 * close_range, execve's close-on-exec) closes the private, so its locks go, as POSIX says; so does
 * the ULP's end. A new child process closes every private of its copy of the table (sys_fork.c): it
 * holds none of its parent's locks. The task's privates are in one table (ulp_locks), looked up by
 * the ULP's pvid and the file's st_dev and st_ino (an fstat and an F_GETFL: which file, and whether
 * the descriptor's mode allows the lock), or, for the descriptor the ULP locked through last
 * time, unchanged since by fds.c's word, with no system call; the reopen comes at its first lock
 * of a file. F_GETLK finds another ULP of the task holding the conflicting lock among the
 * privates of that file and gives its pid.
 *
 * Where it cannot be the ULP's own (docs/syscalls.md, "Record locks"): a file it cannot open again
 * (not a regular file, no /proc, permissions since changed, a mode the private lacks, the table
 * full, no descriptor number left from PVAS_FD_HIGH up): the OFD call is made on the
 * program's descriptor, the behaviour before (its open file is the owner).
 *
 * F_SETLKW parks the ULP between tries, 1 ms then twice longer each time up to 50 ms: the kernel's
 * wait would hold the worker, and the ULP holding the lock may be one it has to run. A signal
 * ends the wait with EINTR, or runs its SA_RESTART handler and the wait goes on, as the kernel
 * restarts the call. A wait that would close a circle of waits between ULPs of the task ends with
 * EDEADLK, as the kernel ends one between processes (would_deadlock). In a fork child (a process
 * of its own) the kernel's record locks are right.
 */
#include "io.h"
#include "proc.h"
#include "pvas.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#define PAUSE_MAX_MS 50
#define DEADLK_STEPS 10 /* waits followed in a circle: the kernel's MAX_DEADLK_ITERATIONS */
/* Privates from here up: above the launcher's descriptors (PVAS_FD_HIGH), the ring's
 * (io_ring.c's RING_FD_MIN, 900) and the table size the task grew before its workers started
 * (1024 slots), so that the first ones take no table growth. Where the task's RLIMIT_NOFILE
 * keeps them below it, from PVAS_FD_HIGH up (move_high). */
#define LOCK_FD_MIN 968
#define LOCK_MAX 4096 /* privates per task */

/* One ULP's private open of one file. */
struct lock_ent {
	int fd;	  /* the private descriptor; 0: a free entry */
	int pvid; /* the ULP whose locks it holds */
	int mode; /* its access mode: O_RDONLY, O_WRONLY or O_RDWR */
	uint64_t dev, ino;
	/* The ULP's descriptor last looked up to it, while fds.c's word for that number stays
	 * word (a recorded descriptor, the same open file: no fstat), and its access mode; ufd
	 * -1: none. A close of ufd by the ULP forgets it (the word's generation wraps). */
	int ufd, umode;
	uint32_t uword;
};

/* A task's privates (struct ulp_fd_table's locks). busy is held for a look-up and the call made
 * on what it found, which never waits: no private is closed under a call that uses it. Entries
 * are made and closed inside a maker's window of fds.c as well, so that a fork's clone never
 * comes between a private's open and its entry (the child closes the ones it finds). */
struct ulp_locks {
	_Atomic int busy;
	int n; /* the entries in use are below n */
	struct lock_ent e[LOCK_MAX];
};

static long sys(long nr, long a, long b, long c)
{
	return ulp_arch_syscall(nr, a, b, c, 0, 0, 0);
}

/* The calling task's table; mapped at its first private when create is set. */
static struct ulp_locks *table(int create)
{
	struct ulp_fd_table *t = ulp_io_fd_table();
	struct ulp_locks *l, *none = NULL;

	if (!t)
		return NULL;
	l = atomic_load_explicit(&t->locks, memory_order_acquire);
	if (l || !create)
		return l;
	l = ulp_raw_mmap(sizeof(*l), MAP_NORESERVE);
	if (!l)
		return NULL;
	if (!atomic_compare_exchange_strong(&t->locks, &none, l)) { /* another worker's first */
		ulp_raw_munmap(l, sizeof(*l));
		l = none;
	}
	return l;
}

static void hold(struct ulp_locks *l)
{
	while (atomic_exchange_explicit(&l->busy, 1, memory_order_acquire))
		sys(SYS_sched_yield, 0, 0, 0);
}

static void release(struct ulp_locks *l)
{
	atomic_store_explicit(&l->busy, 0, memory_order_release);
}

/* pvid's private of the file st, held table; the ULP's last one first (cb->lock_hint). */
static struct lock_ent *find(struct ulp_locks *l, struct ulp_cb *cb, const struct stat *st)
{
	struct lock_ent *e;
	int i, h = cb->lock_hint;

	for (i = -1; i < l->n; i++) {
		e = &l->e[i < 0 ? h : i];
		if ((i >= 0 || h < l->n) && e->fd && e->pvid == cb->pvid &&
		    e->ino == (uint64_t)st->st_ino && e->dev == (uint64_t)st->st_dev) {
			cb->lock_hint = (int)(e - l->e);
			return e;
		}
	}
	return NULL;
}

int ulp_lock_is_private(long fd)
{
	struct ulp_locks *l;
	int i;

	if (fd < PVAS_FD_HIGH || !(l = table(0)))
		return 0;
	for (i = 0; i < l->n; i++)
		if (l->e[i].fd == fd)
			return 1;
	return 0;
}

/* "/proc/self/fd/N" */
static void fd_path(char *buf, long fd)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[24];
	int n = 0, i;

	for (i = 0; pre[i]; i++)
		buf[i] = pre[i];
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (n)
		buf[i++] = digits[--n];
	buf[i] = 0;
}

/* A copy of p, close-on-exec, at a number programs do not take: LOCK_FD_MIN or above, the
 * task's RLIMIT_NOFILE raised for it if need be (a ULP's own stays: sys_rlimit.c); else (a hard
 * limit of 1024: 56 numbers there) from PVAS_FD_HIGH up, where the launcher's are, which a
 * ULP's close_range never reaches. -errno: none. */
static long move_high(long p)
{
	long hi = sys(SYS_fcntl, p, F_DUPFD_CLOEXEC, LOCK_FD_MIN);

	if (hi == -EINVAL || hi == -EMFILE) {
		ulp_rlimit_task_nofile(LOCK_FD_MIN + LOCK_MAX);
		hi = sys(SYS_fcntl, p, F_DUPFD_CLOEXEC, LOCK_FD_MIN);
	}
	if (hi == -EINVAL || hi == -EMFILE)
		hi = sys(SYS_fcntl, p, F_DUPFD_CLOEXEC, PVAS_FD_HIGH);
	return hi;
}

/* The file of fd (st) opened again, writable where it can be (a later lock may want it), else
 * in fd's mode; O_NONBLOCK: a lease holder's break is not waited for. Moved to LOCK_FD_MIN or
 * above, close-on-exec; its mode in *mode. -errno: none. */
static long reopen(long fd, int fd_mode, const struct stat *st, int *mode)
{
	char path[40];
	struct stat st2;
	long p, hi;

	fd_path(path, fd);
	*mode = O_RDWR;
	p = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)path,
			     O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0, 0, 0);
	if (p < 0 && fd_mode != O_RDWR) {
		*mode = fd_mode;
		p = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)path,
				     fd_mode | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0, 0, 0);
	}
	if (p < 0)
		return p;
	/* fd may have been closed and made again meanwhile by a thread of the ULP */
	if (sys(SYS_fstat, p, (long)&st2, 0) < 0 || st2.st_dev != st->st_dev ||
	    st2.st_ino != st->st_ino)
		hi = -ESTALE;
	else
		hi = move_high(p);
	sys(SYS_close, p, 0, 0);
	return hi;
}

/* A new private of cb for fd (st, fd_mode), held table; NULL: none (the table full, the file
 * not opened again). */
static struct lock_ent *add(struct ulp_locks *l, struct ulp_cb *cb, long fd, int fd_mode,
			    const struct stat *st)
{
	struct lock_ent *e = NULL;
	int i, mode;
	long p;

	for (i = 0; i < l->n && !e; i++)
		if (!l->e[i].fd)
			e = &l->e[i];
	if (!e && l->n < LOCK_MAX)
		e = &l->e[l->n];
	if (!e || (p = reopen(fd, fd_mode, st, &mode)) < 0)
		return NULL;
	e->pvid = cb->pvid;
	e->mode = mode;
	e->dev = (uint64_t)st->st_dev;
	e->ino = (uint64_t)st->st_ino;
	e->ufd = -1;
	e->fd = (int)p;
	if (e == &l->e[l->n])
		l->n++;
	cb->lock_hint = (int)(e - l->e);
	atomic_fetch_add(&cb->nlocks, 1);
	return e;
}

/* Close e, cb's, held table: its locks go. */
static void drop(struct ulp_cb *cb, struct lock_ent *e)
{
	sys(SYS_close, e->fd, 0, 0);
	e->fd = 0;
	atomic_fetch_sub(&cb->nlocks, 1);
}

/* Whether a descriptor of access mode `mode` may take a lock of type `type`. */
static int mode_fits(int mode, int type)
{
	return !((type == F_WRLCK && mode == O_RDONLY) || (type == F_RDLCK && mode == O_WRONLY));
}

/* What a lock call goes through: the private (e, the table held), or the program's own
 * descriptor (e NULL); making: the maker's window (fds.c) it made a private in, NULL: none. */
struct use {
	struct ulp_locks *l;
	struct lock_ent *e;
	_Atomic int *making;
	struct stat st;
};

static void use_end(struct use *u)
{
	if (u->l)
		release(u->l);
	ulp_fd_make_end(u->making);
	u->l = NULL;
	u->making = NULL;
}

/* The private cb looked up last through fd, whose word in fds.c's table is word (0: none
 * kept), held table; NULL: not that one. */
static struct lock_ent *cached(struct ulp_locks *l, struct ulp_cb *cb, long fd, uint32_t word)
{
	struct lock_ent *e = &l->e[cb->lock_hint];

	if (word && cb->lock_hint < l->n && e->fd && e->pvid == cb->pvid && e->ufd == fd &&
	    e->uword == word)
		return e;
	return NULL;
}

/* u goes through e, whose file it is (held table), for a lock of type `type` through a
 * descriptor of mode fd_mode: 0, or -EBADF (the descriptor's mode does not allow it). */
static long use_cached(struct use *u, struct lock_ent *e, int fd_mode, int type)
{
	if (!mode_fits(fd_mode, type))
		return -EBADF;
	u->st.st_dev = e->dev;
	u->st.st_ino = e->ino;
	u->e = mode_fits(e->mode, type) ? e : NULL; /* else read-only (write access taken away) */
	return 0;
}

/* Find (create: or make) cb's private for a lock of type `type` through fd: 0 with u filled,
 * or -errno (EBADF: fd is not open, or not open for that type, as the kernel says). A
 * descriptor looked up last time, unchanged, is taken from its private's cache. */
static long use_begin(struct ulp_cb *cb, long fd, int type, int create, struct use *u)
{
	uint32_t word = ulp_fd_word(fd);
	struct lock_ent *e;
	long fl, r;

	u->l = NULL;
	u->e = NULL;
	u->making = NULL;
	if (ulp_lock_is_private(fd))
		return -EBADF; /* the runtime's */
	if (word && (u->l = table(0))) {
		hold(u->l);
		e = cached(u->l, cb, fd, word);
		if (e && (r = use_cached(u, e, e->umode, type)) < 0)
			use_end(u);
		if (e)
			return r;
		release(u->l);
		u->l = NULL;
	}
	if (sys(SYS_fstat, fd, (long)&u->st, 0) < 0 || (fl = sys(SYS_fcntl, fd, F_GETFL, 0)) < 0)
		return -EBADF;
	if ((fl & O_PATH) || !mode_fits((int)(fl & O_ACCMODE), type))
		return -EBADF;
	if (!S_ISREG(u->st.st_mode) || !(u->l = table(create)))
		return 0;
	hold(u->l);
	u->e = find(u->l, cb, &u->st);
	if (!u->e && create) {
		release(u->l); /* the window first, then the table: as every maker of a private */
		u->making = ulp_fd_make_begin();
		hold(u->l);
		u->e = find(u->l, cb, &u->st);
		if (!u->e)
			u->e = add(u->l, cb, fd, (int)(fl & O_ACCMODE), &u->st);
	}
	if (!(e = u->e))
		return 0;
	e->ufd = (int)fd;
	e->uword = word;
	e->umode = (int)(fl & O_ACCMODE);
	return use_cached(u, e, e->umode, type); /* fd's mode was checked above */
}

/* The ULP (pvid) of this task whose private of the file (dev, ino) holds `held`, a lock that
 * F_GETLK found in the way of ULP me's (table l held); -1 when none can be told. Through
 * another ULP's private, the kernel reports any lock in held's range but that private's own:
 * none there, or (held being a write lock) no write lock, and held is that ULP's. Held read
 * locks that others' locks overlap too stay unknown. */
static int holder_pvid(const struct ulp_locks *l, int me, uint64_t dev, uint64_t ino,
		       const struct flock *held)
{
	const struct lock_ent *c;
	struct flock q;
	int i;

	for (i = 0; l && i < l->n; i++) {
		c = &l->e[i];
		if (!c->fd || c->pvid == me || c->dev != dev || c->ino != ino)
			continue;
		q = *held;
		q.l_type = held->l_type == F_WRLCK ? F_RDLCK : F_WRLCK;
		q.l_whence = SEEK_SET;
		q.l_pid = 0;
		if (sys(SYS_fcntl, c->fd, F_OFD_GETLK, (long)&q) == 0 && q.l_type == F_UNLCK)
			return c->pvid;
	}
	return -1;
}

/* The pid of the ULP holding `held`, in the way of cb's lock of u's file; -1: none known. */
static int holder(struct ulp_cb *cb, const struct use *u, const struct flock *held)
{
	int p = holder_pvid(u->l, cb->pvid, (uint64_t)u->st.st_dev, (uint64_t)u->st.st_ino, held);
	const struct ulp_cb *o = p >= 0 ? pvas_cb(cb->region, p) : NULL;

	return o && o->pid > 0 ? o->pid : -1;
}

/* pvid's private of the file (dev, ino), held table l; NULL: none. */
static const struct lock_ent *entry_of(const struct ulp_locks *l, int pvid, uint64_t dev,
				       uint64_t ino)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].fd && l->e[i].pvid == pvid && l->e[i].dev == dev && l->e[i].ino == ino)
			return &l->e[i];
	return NULL;
}

/* Whether cb waiting for `want` through its private e closes a circle of waits (EDEADLK, as
 * the kernel finds it between processes): the ULP holding the lock in its way is parked in
 * F_SETLKW for a lock whose holder ... is cb. Each wait is looked at as it is now (F_OFD_GETLK
 * through the waiter's private), not as recorded, so one that ended meanwhile breaks the
 * circle; a holder that cannot be told (read locks others overlap) too. Held table l. */
static int would_deadlock(struct ulp_cb *cb, const struct ulp_locks *l, const struct lock_ent *e,
			  const struct flock *want)
{
	struct flock q = *want;
	const struct ulp_cb *o;
	int i, p;

	for (i = 0; e && i < DEADLK_STEPS; i++) {
		q.l_pid = 0;
		if (sys(SYS_fcntl, e->fd, F_OFD_GETLK, (long)&q) < 0 || q.l_type == F_UNLCK)
			return 0;
		p = holder_pvid(l, e->pvid, e->dev, e->ino, &q);
		if (p == cb->pvid)
			return 1;
		o = p >= 0 ? pvas_cb(cb->region, p) : NULL;
		if (!o || !o->lock_waiting)
			return 0;
		q.l_type = o->lock_wait_type;
		q.l_whence = SEEK_SET;
		q.l_start = o->lock_wait_start;
		q.l_len = o->lock_wait_len;
		e = entry_of(l, p, o->lock_wait_dev, o->lock_wait_ino);
	}
	return 0;
}

/* After a try of F_SETLKW that found fl in the way through private e (held table): -EDEADLK
 * when waiting would close a circle, else r, and cb's wait recorded for the others' look. */
static long wait_or_deadlock(struct ulp_cb *cb, const struct use *u, const struct flock *fl, long r)
{
	if (would_deadlock(cb, u->l, u->e, fl)) {
		cb->lock_waiting = 0;
		return -EDEADLK;
	}
	cb->lock_wait_type = fl->l_type;
	cb->lock_wait_start = fl->l_start;
	cb->lock_wait_len = fl->l_len;
	cb->lock_wait_dev = u->e->dev;
	cb->lock_wait_ino = u->e->ino;
	cb->lock_waiting = 1;
	return r;
}

/* cb waits no longer (its lock got, a signal, an error). */
static void wait_end(struct ulp_cb *cb)
{
	struct ulp_locks *l = cb->lock_waiting ? table(0) : NULL;

	if (!l)
		return;
	hold(l);
	cb->lock_waiting = 0;
	release(l);
}

/* A lock from the position of fd (l_whence SEEK_CUR: lockf's) made one from the start of the
 * file: the private open's position is not fd's. 0, or -EBADF. */
static long from_start(long fd, struct flock *fl)
{
	long off;

	if (fl->l_whence != SEEK_CUR)
		return 0;
	off = sys(SYS_lseek, fd, 0, SEEK_CUR);
	if (off == -EBADF)
		return off;
	if (off < 0) /* not seekable (a pipe): its position is 0 for the kernel too */
		off = 0;
	fl->l_start += off;
	fl->l_whence = SEEK_SET;
	return 0;
}

/* F_GETLK as F_OFD_GETLK: the conflicting lock, or only l_type F_UNLCK, as the kernel writes. */
static long get_lock(struct ulp_cb *cb, long fd, struct flock *user)
{
	struct flock fl = *user;
	struct use u;
	long r;

	fl.l_pid = 0; /* an OFD call refuses any other */
	if ((r = from_start(fd, &fl)) < 0)
		return r;
	r = use_begin(cb, fd, F_UNLCK, 0, &u);
	if (r < 0)
		return r;
	r = sys(SYS_fcntl, u.e ? u.e->fd : fd, F_OFD_GETLK, (long)&fl);
	if (r == 0 && fl.l_type != F_UNLCK && fl.l_pid == -1)
		fl.l_pid = holder(cb, &u, &fl);
	use_end(&u);
	if (r < 0)
		return r;
	if (fl.l_type == F_UNLCK)
		user->l_type = F_UNLCK;
	else
		*user = fl;
	return r;
}

/* One try of lock fl through fd's private (cmd F_OFD_SETLK, or F_OFD_SETLKW where there is no
 * ring to park on: the table is let go first, and a thread of the ULP that closes the file
 * meanwhile may make the number another's before the kernel reads it). An unlock of a file
 * without a private goes to the program's descriptor (locks taken there when it had none). */
static long try_lock(struct ulp_cb *cb, long fd, struct flock *fl, int cmd, int wait)
{
	struct use u;
	long r, pfd;

	r = use_begin(cb, fd, fl->l_type, fl->l_type != F_UNLCK, &u);
	if (r < 0)
		return r;
	pfd = u.e ? u.e->fd : fd;
	if (cmd == F_OFD_SETLKW)
		use_end(&u);
	r = sys(SYS_fcntl, pfd, cmd, (long)fl);
	if (wait && u.e && (r == -EAGAIN || r == -EACCES))
		r = wait_or_deadlock(cb, &u, fl, r);
	else if (u.l)
		cb->lock_waiting = 0;
	use_end(&u);
	return r;
}

/* F_SETLK, F_SETLKW as F_OFD_SETLK; F_SETLKW tries again until it gets the lock. */
static long set_lock(struct ulp_cb *cb, long fd, int wait, const struct flock *user)
{
	struct flock fl = *user;
	int pause = 1;
	long r, w;

	fl.l_pid = 0;
	if ((r = from_start(fd, &fl)) < 0)
		return r;
	for (;;) {
		r = try_lock(cb, fd, &fl, F_OFD_SETLK, wait);
		if (!wait || (r != -EAGAIN && r != -EACCES)) {
			if (wait)
				wait_end(cb); /* an error without the table (use_begin's) */
			return r;
		}
		w = ulp_io_wait_fds(cb, NULL, 0, 0, pause, 1);
		if (w == -ENOSYS) { /* no ring: the kernel's wait */
			wait_end(cb);
			return try_lock(cb, fd, &fl, F_OFD_SETLKW, 0);
		}
		if (w == -EINTR) {
			wait_end(cb);
			return -EINTR;
		}
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
		return get_lock(cb, s->a[0], user);
	return set_lock(cb, s->a[0], cmd == F_SETLKW, user);
}

/* flock: its locks belong to the open file, which the kernel gets right between ULPs too, but
 * its wait (LOCK_SH or LOCK_EX without LOCK_NB; the filter traps only those and calls on 0-2)
 * would hold the worker, and the holder may be a ULP that worker has to run: two ULPs of one
 * worker locking one file waited for ever (a perl holding it across a sleep). So it tries with
 * LOCK_NB and parks between tries, as F_SETLKW; a signal ends the wait with EINTR, or runs its
 * SA_RESTART handler and the wait goes on, as the kernel restarts flock. A fork child waits in
 * the kernel, a process of its own. */
long ulp_sys_flock(struct ulp_cb *cb, struct ulp_sys *s)
{
	long op = s->a[1], r, w;
	int pause = 1;

	if ((op != LOCK_SH && op != LOCK_EX) || ulp_sys_in_child())
		return ulp_sys_std_call(cb, s);
	for (;;) {
		s->a[1] = op | LOCK_NB;
		r = ulp_sys_std_call(cb, s);
		s->a[1] = op;
		if (r != -EWOULDBLOCK)
			return r;
		w = ulp_io_wait_fds(cb, NULL, 0, 0, pause, 1);
		if (w == -ENOSYS) /* no ring: the kernel's wait */
			return ulp_sys_std_call(cb, s);
		if (w == -EINTR)
			return -EINTR;
		if (pause < PAUSE_MAX_MS)
			pause = pause * 2 < PAUSE_MAX_MS ? pause * 2 : PAUSE_MAX_MS;
	}
}

/* ---- the ends of a ULP's locks ---- */

void ulp_lock_closing(struct ulp_cb *cb, long fd)
{
	struct ulp_locks *l;
	_Atomic int *making;
	struct lock_ent *e;
	struct stat st;

	if (!atomic_load_explicit(&cb->nlocks, memory_order_relaxed) || fd < 0 || !(l = table(0)) ||
	    ulp_lock_is_private(fd) || sys(SYS_fstat, fd, (long)&st, 0) < 0)
		return;
	making = ulp_fd_make_begin();
	hold(l);
	e = find(l, cb, &st);
	if (e)
		drop(cb, e);
	for (e = l->e; e < l->e + l->n; e++) /* fd's cache: its number may be another file's */
		if (e->fd && e->pvid == cb->pvid && e->ufd == fd)
			e->ufd = -1;
	release(l);
	ulp_fd_make_end(making);
}

void ulp_lock_closing_range(struct ulp_cb *cb, long lo, long hi)
{
	long fd;

	for (fd = lo; fd <= hi && atomic_load_explicit(&cb->nlocks, memory_order_relaxed); fd++)
		ulp_lock_closing(cb, fd);
}

void ulp_lock_end(struct ulp_cb *cb)
{
	struct ulp_locks *l;
	_Atomic int *making;
	int i;

	if (!atomic_load(&cb->nlocks) || !(l = table(0)))
		return;
	making = ulp_fd_make_begin();
	hold(l);
	for (i = 0; i < l->n; i++)
		if (l->e[i].fd && l->e[i].pvid == cb->pvid)
			drop(cb, &l->e[i]);
	release(l);
	ulp_fd_make_end(making);
}

/* In a new child process, whose table the fork holds still (no maker at work: fds.c), and
 * whose memory may be its parent's (posix_spawn): only its descriptors are closed. */
void ulp_lock_child(void)
{
	const struct ulp_locks *l = table(0);
	int i;

	for (i = 0; l && i < l->n; i++)
		if (l->e[i].fd)
			sys(SYS_close, l->e[i].fd, 0, 0);
}
