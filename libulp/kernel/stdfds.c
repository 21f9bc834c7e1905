/* SPDX-License-Identifier: MIT */
/*
 * A ULP's own standard descriptors (docs/syscalls.md, "Standard descriptors").
 *
 * The ULPs of a task share its descriptor table, 0, 1 and 2 included. A process that redirects
 * its own output (`sort -o FILE` does dup2(fd, 1); a shell does it around every builtin with a
 * redirection, `echo x >>log`, and for `exec >FILE`) changes only its own table; a ULP doing it
 * natively changed stdout for every ULP of its task: another ULP's lines went into that file
 * (ulpexec -n 2: 1074 of 3000 lines of one rank landed in the other's log).
 *
 * So a dup2/dup3 onto 0-2 from a ULP is kept for that ULP: the
 * descriptor goes to a number of its own (from ULP_STD_LOW up, recorded as the ULP's in fds.c, so
 * closed at its end and at execve when close-on-exec), and the calls that ULP makes on 0-2 are
 * given that number instead (ulp_std_args, before a trapped call runs: every call the filter
 * traps for it, and the calls on descriptors that it traps when their descriptor is 0-2,
 * ulp_sys_arg0_std in sys_table.c). A fork or posix_spawn child is a process of its own: its table
 * gets the ULP's 0-2 (ulp_std_child) before it goes on, so a command run by a redirected shell
 * writes where the shell would.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

int ulp_std_fd(const struct ulp_cb *cb, long fd)
{
	if (fd >= 0 && fd <= 2 && cb->std_own[fd])
		return cb->std_own[fd];
	return (int)fd;
}

int ulp_std_is_own(const struct ulp_cb *cb, long fd)
{
	return fd > 2 && (fd == cb->std_own[0] || fd == cb->std_own[1] || fd == cb->std_own[2]);
}

/* Give call s the ULP's own descriptors for the 0-2 among its descriptor arguments. */
void ulp_std_args(const struct ulp_cb *cb, struct ulp_sys *s)
{
	unsigned mask = (unsigned long)s->nr < ULP_SYS_NR_MAX ? ulp_sys_fd_args[s->nr] : 0;
	int i;

	for (i = 0; mask; i++, mask >>= 1)
		if ((mask & 1) && s->a[i] >= 0 && s->a[i] <= 2)
			s->a[i] = ulp_std_fd(cb, s->a[i]);
}

/* dup2/dup3(oldfd, newfd) with newfd 0-2, for this ULP only (see above). Also when the ULP is
 * alone in its task now: others may start later (ulpexec's ranks start one after the other, and
 * the first one's `exec >F` took the others' stdout with it). */
long ulp_std_dup(struct ulp_cb *cb, const struct ulp_sys *s)
{
	long oldfd = s->a[0], newfd = s->a[1], flags = s->nr == SYS_dup3 ? s->a[2] : 0;
	long from, fd, r;

	if (oldfd >= 0 && oldfd <= 2 && (cb->std_closed & (1u << oldfd)))
		return -EBADF;
	from = ulp_std_fd(cb, oldfd);
	if (oldfd == newfd) { /* dup2 of itself: says whether it is open; dup3: EINVAL */
		r = s->nr == SYS_dup3 ? -EINVAL : sys(SYS_fcntl, from, F_GETFD, 0, 0, 0, 0);
		return r < 0 ? r : newfd;
	}
	if (flags & ~(long)O_CLOEXEC)
		return -EINVAL;
	if (cb->std_own[newfd]) {
		fd = sys(SYS_dup3, from, cb->std_own[newfd], flags, 0, 0, 0);
	} else {
		_Atomic int *making = ulp_fd_make_begin(); /* a new descriptor (fds.c) */

		fd = sys(SYS_fcntl, from, flags ? F_DUPFD_CLOEXEC : F_DUPFD, ULP_STD_LOW, 0, 0, 0);
		if (fd == -EINVAL) /* a descriptor limit below ULP_STD_LOW */
			fd = sys(SYS_fcntl, from, flags ? F_DUPFD_CLOEXEC : F_DUPFD, 3, 0, 0, 0);
		if (fd >= 0) {
			ulp_fd_own(cb, fd);
			cb->std_own[newfd] = (int)fd;
		}
		ulp_fd_make_end(making);
	}
	if (fd < 0)
		return fd;
	cb->std_closed &= ~(1u << newfd);
	return newfd;
}

/* close(fd) of 0-2 that the ULP has its own of: that one goes. */
void ulp_std_close(struct ulp_cb *cb, long fd)
{
	int own = cb->std_own[fd];

	if (!own)
		return;
	cb->std_own[fd] = 0;
	sys(SYS_close, own, 0, 0, 0, 0, 0);
	ulp_fd_forget(cb, own); /* after: its own until closed (fds.c) */
}

/* execve: its own 0-2 marked close-on-exec are closed for it (ulp_fd_close_owned closes them);
 * 1 when fd was one (the task's fd is not looked at). */
int ulp_std_exec(struct ulp_cb *cb, long fd)
{
	long f;

	if (!cb->std_own[fd])
		return 0;
	f = sys(SYS_fcntl, cb->std_own[fd], F_GETFD, 0, 0, 0, 0);
	if (f >= 0 && (f & FD_CLOEXEC)) {
		cb->std_own[fd] = 0;
		cb->std_closed |= 1u << fd;
	}
	return 1;
}

/*
 * An MPI launcher gives the job's standard input to rank 0 only; mpiexec's other ranks read
 * nothing of it. The ULPs of a task share its 0, so a rank given std_null_in gets a 0 of its
 * own, /dev/null (EOF at once, as Open MPI's ranks other than 0 get), as if it had done
 * dup2(open("/dev/null"), 0): its children inherit it. Where /dev/null cannot be opened it has
 * no stdin (EBADF) rather than the job's.
 */
void ulp_std_start(struct ulp_cb *cb)
{
	struct ulp_sys d = {.nr = SYS_dup2};
	long fd;

	if (!cb->std_null_in)
		return;
	fd = ulp_fd_make_own(cb, SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDONLY, 0);
	d.a[0] = fd;
	if (fd < 0 || ulp_std_dup(cb, &d) < 0)
		cb->std_closed |= 1u;
	if (fd >= 0)
		ulp_fd_drop(cb, fd);
}

/*
 * In a new child process of the ULP (fork, posix_spawn's CLONE_VM child, the child that runs a
 * non-PIE exec): its table is a copy of the task's; make 0-2 the ULP's, close those the ULP
 * closed, and drop the ULP's own copies. Only the child's table changes (raw calls; a CLONE_VM
 * child shares the ULP's memory, so nothing is written there).
 */
void ulp_std_child(const struct ulp_cb *cb)
{
	long fd, f;

	for (fd = 0; fd <= 2; fd++) {
		if (cb->std_closed & (1u << fd)) {
			sys(SYS_close, fd, 0, 0, 0, 0, 0);
		} else if (cb->std_own[fd]) {
			f = sys(SYS_fcntl, cb->std_own[fd], F_GETFD, 0, 0, 0, 0);
			sys(SYS_dup3, cb->std_own[fd], fd,
			    f > 0 && (f & FD_CLOEXEC) ? O_CLOEXEC : 0, 0, 0, 0);
		}
	}
	for (fd = 0; fd <= 2; fd++)
		if (cb->std_own[fd])
			sys(SYS_close, cb->std_own[fd], 0, 0, 0, 0, 0);
}

/* The standard descriptor that path names through /proc (the links /dev/stdin, /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N of its own
 * pid; N 0-2), or -1. */
static int std_path(const struct ulp_cb *cb, const char *path)
{
	static const char *const dev[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
	static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
	const char *p = NULL;
	long pid = 0;
	unsigned i;

	for (i = 0; i < 3; i++)
		if (!strcmp(path, dev[i]))
			return (int)i;
	for (i = 0; i < 3 && !p; i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			p = path + strlen(dirs[i]);
	if (!p && !strncmp(path, "/proc/", 6)) {
		for (p = path + 6; *p >= '0' && *p <= '9'; p++)
			pid = pid * 10 + (*p - '0');
		p = pid == cb->pid && pid > 0 && !strncmp(p, "/fd/", 4) ? p + 4 : NULL;
	}
	return p && p[0] >= '0' && p[0] <= '2' && !p[1] ? p[0] - '0' : -1;
}

/* "/proc/self/fd/P" of the ULP's own copy that path names (std_path) into buf (32 bytes): 1; 0
 * when path names none of its own; -ENOENT when it names one the ULP closed. */
static int own_link(const struct ulp_cb *cb, const char *path, char *buf)
{
	static const char head[] = "/proc/self/fd/";
	int n = std_path(cb, path), own, i = 0, k = 0;
	char digits[12];

	if (n < 0 || !(cb->std_own[n] || (cb->std_closed & (1u << n))))
		return 0;
	if (cb->std_closed & (1u << n))
		return -ENOENT; /* closed for it: no such entry in its table */
	while (head[i]) {
		buf[i] = head[i];
		i++;
	}
	for (own = cb->std_own[n]; own; own /= 10)
		digits[k++] = (char)('0' + own % 10);
	while (k)
		buf[i++] = digits[--k];
	buf[i] = 0;
	return 1;
}

/* open of a path that names one of the ULP's own 0-2 (std_path): the kernel would follow the
 * link to the task's descriptor (bash's `exec 2>log; echo x >/dev/stderr` wrote to the task's
 * stderr), so the ULP's own copy is opened again, as the kernel reopens the file of a process's
 * descriptor. 1 when path is such a one (result in *ret), 0 otherwise. */
int ulp_std_open(const struct ulp_cb *cb, const char *path, int flags, long *ret)
{
	char buf[32];
	int r = own_link(cb, path, buf);

	if (r)
		*ret = r < 0 ? r : sys(SYS_openat, AT_FDCWD, (long)buf, flags, 0, 0, 0);
	return r != 0;
}

/* readlink of such a path: what the ULP's own copy is (ttyname, `ls -l /proc/self/fd`). */
int ulp_std_readlink(const struct ulp_cb *cb, const char *path, char *out, long size, long *ret)
{
	char buf[32];
	int r = own_link(cb, path, buf);

	if (r)
		*ret = r < 0 ? r : sys(SYS_readlinkat, AT_FDCWD, (long)buf, (long)out, size, 0, 0);
	return r != 0;
}

/* The first thing a posix_spawn (CLONE_VM) child does, on its own stack before it resumes the
 * ULP's code (clone_sigreturn.S): it runs on the ULP's worker, whose current ULP it is. */
void ulp_std_vfork_child(void)
{
	ulp_std_child(ulp_current_cb());
}

/* ---- descriptors in memory: poll's array, select's sets ---- */

struct std_pollfd {
	int fd;
	short events, revents;
};

#define SET_BITS (8 * sizeof(unsigned long))

static int set_has(const unsigned long *set, long fd)
{
	return set[fd / SET_BITS] >> (fd % SET_BITS) & 1;
}

static void set_put(unsigned long *set, long fd, int on)
{
	if (on)
		set[fd / SET_BITS] |= 1ul << (fd % SET_BITS);
	else
		set[fd / SET_BITS] &= ~(1ul << (fd % SET_BITS));
}

static int is_poll(long nr)
{
	return nr == SYS_ppoll || nr == ULP_ARCH_SYS_POLL;
}

static int is_select(long nr)
{
	return nr == SYS_pselect6 || nr == ULP_ARCH_SYS_SELECT;
}

/* select's sets (arguments 1-3) as copies with the ULP's own descriptors for 0-2. */
static void select_in(const struct ulp_cb *cb, struct ulp_sys *s, struct ulp_std_undo *u)
{
	long n = s->a[0], fd, words;
	int i;

	for (fd = 0; fd <= 2 && fd < n; fd++)
		if (cb->std_own[fd] && cb->std_own[fd] < 1024)
			u->sel_own[fd] = cb->std_own[fd];
	if (!(u->sel_own[0] | u->sel_own[1] | u->sel_own[2]) || n > 1024)
		return;
	u->sel_n = n;
	words = (n + SET_BITS - 1) / SET_BITS;
	for (i = 0; i < 3; i++) {
		unsigned long *user = (unsigned long *)s->a[1 + i];

		u->sel_user[i] = user;
		if (!user)
			continue;
		memset(u->sel_set[i], 0, sizeof(u->sel_set[i]));
		memcpy(u->sel_set[i], user, (size_t)words * sizeof(long));
		for (fd = 0; fd <= 2; fd++)
			if (fd < n && u->sel_own[fd] && set_has(u->sel_set[i], fd)) {
				set_put(u->sel_set[i], fd, 0);
				set_put(u->sel_set[i], u->sel_own[fd], 1);
			}
		s->a[1 + i] = (long)u->sel_set[i];
	}
	for (fd = 0; fd <= 2; fd++)
		if (u->sel_own[fd] >= s->a[0])
			s->a[0] = u->sel_own[fd] + 1;
}

/* The results back into the program's sets, at its numbers, as the kernel writes them: only when
 * the call succeeded, every bit below its nfds. */
static void select_out(const struct ulp_std_undo *u, long r)
{
	long n = u->sel_n, fd, words = (n + SET_BITS - 1) / SET_BITS;
	int i;

	if (r < 0)
		return;
	for (i = 0; i < 3; i++) {
		unsigned long *user = u->sel_user[i], set[ULP_STD_SET_LONGS];

		if (!user)
			continue;
		memcpy(set, u->sel_set[i], sizeof(set));
		for (fd = 0; fd <= 2; fd++)
			if (u->sel_own[fd])
				set_put(set, fd, set_has(set, u->sel_own[fd]));
		for (fd = n; fd < words * (long)SET_BITS; fd++)
			set_put(set, fd, 0);
		memcpy(user, set, (size_t)words * sizeof(long));
	}
}

void ulp_std_mem_in(const struct ulp_cb *cb, struct ulp_sys *s, struct ulp_std_undo *undo)
{
	undo->npoll = 0;
	undo->sel_n = 0;
	undo->sel_own[0] = undo->sel_own[1] = undo->sel_own[2] = 0;
	if (is_poll(s->nr) && s->a[0]) {
		struct std_pollfd *p = (struct std_pollfd *)s->a[0];
		unsigned long i, n = (unsigned long)s->a[1];

		for (i = 0; i < n && i < 65536 && undo->npoll < 8; i++) {
			if (p[i].fd < 0 || p[i].fd > 2 || !cb->std_own[p[i].fd])
				continue;
			undo->poll_at[undo->npoll] = (unsigned short)i;
			undo->poll_fd[undo->npoll++] = (unsigned char)p[i].fd;
			p[i].fd = cb->std_own[p[i].fd];
		}
	} else if (is_select(s->nr)) {
		select_in(cb, s, undo);
	}
}

void ulp_std_mem_out(const struct ulp_sys *s, const struct ulp_std_undo *undo, long r)
{
	int i;

	if (undo->npoll) {
		struct std_pollfd *p = (struct std_pollfd *)s->a[0];

		for (i = 0; i < undo->npoll; i++)
			p[undo->poll_at[i]].fd = undo->poll_fd[i];
	}
	if (undo->sel_n)
		select_out(undo, r);
}
