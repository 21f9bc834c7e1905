/* SPDX-License-Identifier: MIT */
/*
 * Resource limits of a ULP: getrlimit, setrlimit, prlimit64.
 *
 * The kernel keeps limits per process, and the ULPs of a PVAS task are threads of one: until 27
 * Nov a ULP's setrlimit was its task's, so `ulimit -n 10` in one ULP was every ULP's, and
 * `ulimit -v` in one made every later mmap of the task fail (its address space holds the whole
 * PVAS reservation, far above any such limit): the other ULPs of the task crashed.
 *
 * A ULP's limits are its placeholder's (ident.c), a process the kernel keeps them for, checks
 * (a hard limit raised without CAP_SYS_RESOURCE: EPERM) and shows to others (`prlimit --pid`,
 * /proc/PID/limits). Its child processes start with them (ulp_rlimit_child), and there the
 * kernel enforces them all; RLIMIT_AS and RLIMIT_DATA from the child's execve on, because until
 * then the child is a copy of its task's address space, reservation included (ulp_rlimit_exec).
 * The ULP itself runs in its task, whose limits stay its launcher's, but for RLIMIT_NOFILE: the
 * ULPs share the task's descriptor table, which is raised to the highest soft limit one of them
 * asks for (a program that raises its own to open many files gets them), never lowered, and the
 * ULP's own is held to: a new descriptor numbered at or past it is closed again (EMFILE), a
 * dup2 or F_DUPFD onto such a number refused (EBADF, EINVAL), as the kernel does
 * (ulp_rlimit_fd_pre, ulp_rlimit_fd_post). The limit is read from the placeholder when a number
 * reaches the one last read: one lowered from outside (prlimit --pid) holds from then on only
 * where the ULP reads it back or sets its own.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"
#include "ulp_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

struct rlim {
	uint64_t cur, max;
};

/* The limits a fork child of a ULP defers to its execve, and their count. */
#define DEFERRED 2
static const int deferred_res[DEFERRED] = {RLIMIT_AS, RLIMIT_DATA};

/* In a fork child (memory of its own): its deferred limits as it sees them, set at the fork
 * from its ULP's and by its own setrlimit calls. Never written by a CLONE_VM child, whose
 * memory is its parent's. */
static struct rlim later[DEFERRED];

static long prl(long pid, long res, const struct rlim *set, struct rlim *old)
{
	return ulp_arch_syscall(SYS_prlimit64, pid, res, (long)set, (long)old, 0, 0);
}

/* Index of res in deferred_res, or -1. */
static int deferred(long res)
{
	int i;

	for (i = 0; i < DEFERRED; i++)
		if (deferred_res[i] == res)
			return i;
	return -1;
}

/* The call's target pid, resource, new (set) and old limits (getrlimit, setrlimit, prlimit64). */
static void args(const struct ulp_sys *s, long *pid, long *res, const struct rlim **set,
		 struct rlim **old)
{
	const long *a = s->a;

	*pid = 0;
	*set = NULL;
	*old = NULL;
	if (s->nr == SYS_prlimit64) {
		*pid = (int)a[0];
		*res = a[1];
		*set = (const struct rlim *)a[2];
		*old = (struct rlim *)a[3];
	} else {
		*res = a[0];
		if (s->nr == SYS_setrlimit)
			*set = (const struct rlim *)a[1];
		else
			*old = (struct rlim *)a[1];
	}
}

static long native(const struct ulp_sys *s)
{
	const long *a = s->a;

	return ulp_arch_syscall(s->nr, a[0], a[1], a[2], a[3], 0, 0);
}

/* The task's descriptor table can hold what a ULP's new soft limit allows: its own soft limit
 * raised (its hard one too if need be, which takes CAP_SYS_RESOURCE: else up to it). */
void ulp_rlimit_task_nofile(uint64_t want)
{
	struct rlim t;

	if (prl(0, RLIMIT_NOFILE, NULL, &t) < 0 || t.cur >= want)
		return;
	t.cur = want;
	if (t.max < want) {
		t.max = want;
		if (prl(0, RLIMIT_NOFILE, &t, NULL) == 0)
			return;
		prl(0, RLIMIT_NOFILE, NULL, &t);
		t.cur = t.max;
	}
	prl(0, RLIMIT_NOFILE, &t, NULL);
}

/* The calling process may raise a hard limit (CAP_SYS_RESOURCE in its effective set). */
static int may_raise(void);

/* The ULP's RLIMIT_AS or RLIMIT_DATA (deferred_res[i]) into *l: as it set it, else its
 * placeholder's (its task's, unless changed from outside). copy: in a fork child, whose copy
 * of the lock may have been taken by another thread of the ULP at the clone, and stays so. */
static long ulp_lim(struct ulp_cb *cb, int i, struct rlim *l, int copy)
{
	long r = 0;

	if (!copy)
		ulp_spin_lock(&cb->lim_lock);
	if (atomic_load(&cb->lim_set) & (1u << i)) {
		l->cur = cb->lim[i][0];
		l->max = cb->lim[i][1];
	} else {
		r = -ESRCH;
	}
	if (!copy)
		ulp_spin_unlock(&cb->lim_lock);
	if (r < 0)
		r = cb->pid > 0 ? prl(cb->pid, deferred_res[i], NULL, l) : -ESRCH;
	return r;
}

int ulp_rlimit_own(struct ulp_cb *cb, int res, uint64_t *cur, uint64_t *max)
{
	struct rlim l;
	int i = deferred(res);

	if (i < 0 || !(atomic_load(&cb->lim_set) & (1u << i)) || ulp_lim(cb, i, &l, 0) < 0)
		return 0;
	*cur = l.cur;
	*max = l.max;
	return 1;
}

/* setrlimit/getrlimit of the ULP's own RLIMIT_AS or RLIMIT_DATA, checked as the kernel checks
 * them. Kept in its control block: on its placeholder they were its fork children's (the
 * placeholder makes them), which are copies of the task's address space, the whole
 * reservation included, until their execve: `ulimit -v 500000` then a subshell's allocation
 * failed there (bash: "xrealloc: cannot allocate"), as `ulimit -d` did. */
static long own_deferred(struct ulp_cb *cb, int i, const struct rlim *set, struct rlim *old)
{
	struct rlim was;
	long r = ulp_lim(cb, i, &was, 0);

	if (r < 0)
		return r;
	if (set && set->cur > set->max)
		return -EINVAL;
	if (set && set->max > was.max && !may_raise())
		return -EPERM;
	if (set) {
		ulp_spin_lock(&cb->lim_lock);
		cb->lim[i][0] = set->cur;
		cb->lim[i][1] = set->max;
		atomic_fetch_or(&cb->lim_set, 1u << i);
		ulp_spin_unlock(&cb->lim_lock);
	}
	if (old)
		*old = was;
	return 0;
}

/* The ULP itself (pid 0 or its own): its placeholder's limits (RLIMIT_AS and RLIMIT_DATA: its
 * own, own_deferred); another pid's: the kernel's (another ULP's pid is that ULP's placeholder,
 * so its limits too). */
long ulp_sys_rlimit(struct ulp_cb *cb, struct ulp_sys *s)
{
	const struct rlim *set;
	struct rlim *old, n;
	long pid, res, r;

	args(s, &pid, &res, &set, &old);
	if (ulp_sys_in_child() || cb->pid <= 0 || (pid != 0 && pid != cb->pid))
		return native(s);
	/* read once: the ULP may change it meanwhile, the kernel reads it once too */
	if (set && !ulp_sys_range_ok(cb, (uintptr_t)set, sizeof(*set)))
		return -EFAULT;
	if (set)
		n = *set;
	if (deferred(res) >= 0) {
		if (old && !ulp_sys_range_ok(cb, (uintptr_t)old, sizeof(*old)))
			return -EFAULT;
		return own_deferred(cb, deferred(res), set ? &n : NULL, old);
	}
	r = prl(cb->pid, res, set ? &n : NULL, old);
	if (r == 0 && res == RLIMIT_NOFILE && set)
		ulp_rlimit_task_nofile(n.cur);
	if (r == 0 && res == RLIMIT_NOFILE && (set || old))
		atomic_store(&cb->nofile, set ? n.cur : old->cur);
	if (r == 0 && res == RLIMIT_CPU && set)
		ulp_cputime_limit_changed(cb);	       /* held to it by its ticks (cputime.c) */
	if (r == 0 && res == RLIMIT_SIGPENDING && set) /* the bound of its queued signals */
		ulp_sigq_set_limit(cb->pvid, n.cur > ULP_SIGQ_MAX ? ULP_SIGQ_MAX : (unsigned)n.cur);
	return r;
}

/* The ULP's soft RLIMIT_NOFILE: as last read, or read again when fd reaches it (raised from
 * outside meanwhile); no limit when it cannot be read. */
static uint64_t nofile(struct ulp_cb *cb, long fd)
{
	uint64_t n = atomic_load(&cb->nofile);
	struct rlim l;

	if (n && (uint64_t)fd < n)
		return n;
	if (cb->pid <= 0 || prl(cb->pid, RLIMIT_NOFILE, NULL, &l) < 0)
		return UINT64_MAX;
	atomic_store(&cb->nofile, l.cur);
	return l.cur;
}

long ulp_rlimit_fd_pre(struct ulp_cb *cb, const struct ulp_sys *s, ulp_sys_fn fn)
{
	long fd;

	if (fn == ulp_sys_dup2) {
		fd = (int)s->a[1];
		return fd >= 0 && (uint64_t)fd >= nofile(cb, fd) ? -EBADF : 0;
	}
	if (fn == ulp_sys_fcntl && ((int)s->a[1] == F_DUPFD || (int)s->a[1] == F_DUPFD_CLOEXEC)) {
		fd = (int)s->a[2];
		return fd >= 0 && (uint64_t)fd >= nofile(cb, fd) ? -EINVAL : 0;
	}
	return 0;
}

/* 1: call s (handler fn), which returned r >= 0, made descriptor r. */
static int makes_one(const struct ulp_sys *s, ulp_sys_fn fn, long r)
{
	if (fn == ulp_sys_fd_new)
		return ulp_fd_makes(s, r);
	if (fn == ulp_sys_fcntl)
		return (int)s->a[1] == F_DUPFD || (int)s->a[1] == F_DUPFD_CLOEXEC;
	return fn == ulp_sys_io_block && (s->nr == SYS_open || s->nr == SYS_openat ||
					  s->nr == SYS_accept || s->nr == SYS_accept4);
}

long ulp_rlimit_fd_post(struct ulp_cb *cb, const struct ulp_sys *s, ulp_sys_fn fn, long r)
{
	const int *two;

	if (r < 0)
		return r;
	if (fn == ulp_sys_fd_pair && r == 0) { /* pipe, pipe2, socketpair: int[2] */
		two = (const int *)(s->nr == SYS_socketpair ? s->a[3] : s->a[0]);
		if ((uint64_t)two[0] < nofile(cb, two[0]) && (uint64_t)two[1] < nofile(cb, two[1]))
			return r;
		ulp_fd_drop(cb, two[0]);
		ulp_fd_drop(cb, two[1]);
		return -EMFILE;
	}
	if (!makes_one(s, fn, r) || (uint64_t)r < nofile(cb, r))
		return r;
	ulp_fd_drop(cb, r);
	return -EMFILE;
}

/* The calling process may raise a hard limit (CAP_SYS_RESOURCE in its effective set). */
static int may_raise(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};

	if (ulp_arch_syscall(SYS_capget, (long)&h, (long)d, 0, 0, 0, 0) < 0)
		return 0;
	return (d[CAP_SYS_RESOURCE / 32].effective >> (CAP_SYS_RESOURCE % 32)) & 1;
}

long ulp_rlimit_child_call(struct ulp_cb *cb, struct ulp_sys *s, int forked)
{
	const struct rlim *set;
	struct rlim *old, n;
	long pid, res;
	int i;

	args(s, &pid, &res, &set, &old);
	i = deferred(res);
	if (!forked || i < 0 || (pid != 0 && pid != ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0)))
		return native(s);
	/* Its own RLIMIT_AS or RLIMIT_DATA, kept until its execve, checked as the kernel does. */
	if ((set && !ulp_sys_range_ok(cb, (uintptr_t)set, sizeof(*set))) ||
	    (old && !ulp_sys_range_ok(cb, (uintptr_t)old, sizeof(*old))))
		return -EFAULT;
	if (set) {
		n = *set;
		if (n.cur > n.max)
			return -EINVAL;
		if (n.max > later[i].max && !may_raise())
			return -EPERM;
	}
	if (old)
		*old = later[i];
	if (set)
		later[i] = n;
	return 0;
}

void ulp_rlimit_child(struct ulp_cb *cb, int forked, int inherited)
{
	struct rlim want, mine;
	long res;
	int i;

	/* The ULP's, kept for the execve; where they cannot be read (its placeholder gone), the
	 * child's own, the task's: its execve must not set limits of 0 (execve failing with
	 * ENOMEM, getrlimit saying 0). */
	for (i = 0; forked && i < DEFERRED; i++)
		if (ulp_lim(cb, i, &later[i], 1) < 0 &&
		    prl(0, deferred_res[i], NULL, &later[i]) < 0)
			later[i].cur = later[i].max = RLIM_INFINITY;
	/* A child its placeholder made has the others already, as a process's child has its
	 * parent's (33 system calls a fork saved) */
	if (cb->pid <= 0 || inherited)
		return;
	for (res = 0; res < RLIM_NLIMITS; res++) {
		if (deferred(res) >= 0 || prl(cb->pid, res, NULL, &want) < 0)
			continue;
		if (prl(0, res, NULL, &mine) == 0 && (mine.cur != want.cur || mine.max != want.max))
			prl(0, res, &want, NULL);
	}
}

void ulp_rlimit_exec(struct ulp_cb *cb, int forked, struct ulp_rlimit_saved *sv)
{
	struct rlim want, parent;
	long pp = ulp_arch_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0);
	int i;

	for (i = 0; i < DEFERRED; i++) {
		sv->set[i] = 0;
		if (prl(0, deferred_res[i], NULL, (struct rlim *)sv->old[i]) < 0)
			continue;
		if (forked) {
			want = later[i];
		} else {
			/* A CLONE_VM child (posix_spawn's): its ULP's, unless it set its own
			 * (then no longer what its parent's was) */
			if (ulp_lim(cb, i, &want, 0) < 0 ||
			    prl(pp, deferred_res[i], NULL, &parent) < 0 ||
			    parent.cur != sv->old[i][0] || parent.max != sv->old[i][1])
				continue;
		}
		if ((want.cur != sv->old[i][0] || want.max != sv->old[i][1]) &&
		    prl(0, deferred_res[i], &want, NULL) == 0)
			sv->set[i] = 1;
	}
}

void ulp_rlimit_exec_failed(const struct ulp_rlimit_saved *sv)
{
	int i;

	for (i = 0; i < DEFERRED; i++)
		if (sv->set[i])
			prl(0, deferred_res[i], (const struct rlim *)sv->old[i], NULL);
}
