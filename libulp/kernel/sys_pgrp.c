/* SPDX-License-Identifier: MIT */
/*
 * A ULP's process group and session: setpgid, getpgid, getpgrp, setsid, getsid, and kill or
 * wait aimed at a group.
 *
 * The kernel's group and session belong to the ULP's task, which holds the launcher's workers
 * and every other ULP of it: the kernel's setpgid(0, 0) or setsid() from a ULP would move them
 * all. A ULP starts in its task's group and session, as a rank started by mpiexec does in its
 * launcher's (cb->pgid and cb->sid 0), and leaves them as a process does:
 *   - setpgid(0, 0) makes it lead a group whose id is its pid. Its placeholder process, which
 *     holds that pid (ident.c), is then a member of that group in the kernel: kill(-pgid) from
 *     anywhere on the machine reaches it, and it forwards the signal to the ULP; setpgid(0, pgid)
 *     of another group of the session (another ULP's, or a real one) moves the placeholder there;
 *   - its fork children start in its group (sys_fork.c moves them there: the kernel puts them in
 *     their parent's, the placeholder's own group, or the task's);
 *   - setsid() has the placeholder lead a session of its own (ident.c), so that ps, getsid(pid)
 *     and kill(-pid) from anywhere see the ULP's session and group. The children the placeholder
 *     makes (sys_fork.c, ph_clone) are in it; one the task made (the placeholder could not) stays
 *     in its task's group and session, which the ULP sees as its own (getpgid, getsid and wait
 *     of its children, kill of its group).
 * Terminal job control stays the task's: the ULP's I/O is its worker's, in the task's group, so
 * the terminal's foreground is the task's group whenever a ULP makes its own group the
 * foreground (tcsetpgrp), and tcgetpgrp answers the caller's group while the task's is there
 * (an interactive shell as a ULP: docs/syscalls.md).
 */
#include "proc.h"
#include "syscall.h"
#include "ulp_signal.h"

#include <errno.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

static long raw(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* The kernel's group and session of the calling task. */
static long task_pgid(void)
{
	return raw(SYS_getpgid, 0, 0, 0, 0, 0, 0);
}

static long task_sid(void)
{
	return raw(SYS_getsid, 0, 0, 0, 0, 0, 0);
}

long ulp_pgrp_of(const struct ulp_cb *cb)
{
	return cb->pgid ? cb->pgid : task_pgid();
}

int ulp_pgrp_kids(const struct ulp_cb *cb)
{
	return cb->sid ? 0 : cb->pgid;
}

long ulp_pgrp_kid_view(const struct ulp_cb *cb, long nr, long id)
{
	if (!cb->sid || id < 0)
		return id;
	if (nr == SYS_getpgid && id == task_pgid())
		return cb->pgid;
	if (nr == SYS_getsid && id == task_sid())
		return cb->sid;
	return id;
}

/* getpgid or getsid (nr) of pid, as the ULP sees it: another ULP's is that ULP's (its
 * placeholder's kernel group is its own while it is in its task's), a child's as the ULP's own
 * when the ULP leads a session (ulp_pgrp_kid_view); any other process's, the kernel's. */
static long id_of(struct ulp_cb *cb, long nr, int pid)
{
	const struct ulp_cb *o;
	int pvid, task = ulp_ident_task_of(pid, &pvid);
	long own;

	if (task && (o = pvas_cb(cb->region, pvid)) && o->pid == pid) {
		own = nr == SYS_getpgid ? o->pgid : o->sid;
		return own ? own : raw(nr, task, 0, 0, 0, 0, 0);
	}
	if (ulp_sys_is_kid(cb, pid))
		return ulp_pgrp_kid_view(cb, nr, raw(nr, pid, 0, 0, 0, 0, 0));
	return raw(nr, pid, 0, 0, 0, 0, 0);
}

long ulp_sys_getpgid(struct ulp_cb *cb, struct ulp_sys *s)
{
	int pid = (int)s->a[0];

	if (pid == 0 || pid == cb->pid)
		return ulp_pgrp_of(cb);
	return id_of(cb, SYS_getpgid, pid);
}

long ulp_sys_getpgrp(struct ulp_cb *cb, struct ulp_sys *s)
{
	return ulp_pgrp_of(cb);
}

long ulp_sys_getsid(struct ulp_cb *cb, struct ulp_sys *s)
{
	int pid = (int)s->a[0];

	if (pid == 0 || pid == cb->pid)
		return cb->sid ? cb->sid : task_sid();
	return id_of(cb, SYS_getsid, pid);
}

/* setpgid of one of the ULP's children: the kernel's, made by its parent: the ULP's placeholder
 * (sys_fork.c, ph_clone) or the task. A child the task made of a ULP leading a session is in
 * the task's session: the ULP's own group is the task's there. */
static long kid_setpgid(struct ulp_cb *cb, int pid, int pgid)
{
	long r;

	/* neither the ULP nor a child of it (another ULP's child included) */
	if (!ulp_sys_is_kid(cb, pid))
		return -ESRCH;
	r = ulp_sys_as_parent(cb, SYS_setpgid, pid, pgid, 0, 0, 0);
	if (r == -EPERM && cb->sid && pgid == cb->pgid)
		r = raw(SYS_setpgid, pid, task_pgid(), 0, 0, 0, 0);
	return r;
}

/* setpgid(pid, pgid): of the ULP itself (pid 0 or its own), its placeholder moves (ident.c);
 * the kernel's checks are the placeholder's (a group of another session: EPERM). */
long ulp_sys_setpgid(struct ulp_cb *cb, struct ulp_sys *s)
{
	int pid = (int)s->a[0], pgid = (int)s->a[1];
	long r;

	if (pgid < 0)
		return -EINVAL;
	if (pid != 0 && pid != cb->pid)
		return kid_setpgid(cb, pid, pgid);
	if (!cb->pid)
		return -EPERM; /* no placeholder to hold a group */
	if (cb->sid == cb->pid)
		return -EPERM; /* a session's leader stays in its group, as in the kernel */
	if (pgid == 0)
		pgid = cb->pid;
	if (pgid == cb->pgid)
		return 0;
	if (pgid == task_pgid()) {
		/* back in the task's group: the placeholder in a group of its own again, so that
		 * a signal to the task's group reaches the ULP once (through its task) */
		r = ulp_ident_setpgid(cb, 0);
		if (r == 0)
			cb->pgid = 0;
		return r;
	}
	r = ulp_ident_setpgid(cb, pgid);
	if (r == 0)
		cb->pgid = pgid;
	return r;
}

/* setsid: the ULP leads a new session and its group (EPERM when it leads a group already). */
long ulp_sys_setsid(struct ulp_cb *cb, struct ulp_sys *s)
{
	long r;

	if (!cb->pid || cb->pgid == cb->pid)
		return -EPERM;
	r = ulp_ident_setsid(cb);
	if (r < 0)
		return r;
	cb->pgid = cb->pid;
	cb->sid = cb->pid;
	return cb->pid;
}

/*
 * kill(0 or -pgid, sig) from a ULP that left its task's group (ulp_sys_kill handles the task's
 * group: the ULP and its descendants). Its own group is the kernel's group of its placeholder:
 * the kernel's kill reaches every ULP in it (their placeholders forward) and every real process
 * in it, the ULP's own placeholder included, whose forward is waited for, so that the ULP's
 * action runs before kill returns and once (SIGKILL and SIGSTOP are not forwarded: posted). The
 * fork children of a ULP that leads a session are in its task's group: signalled one by one
 * (sys_fork.c). Any other group: the kernel's.
 */
int ulp_pgrp_kill(struct ulp_cb *cb, int target, int sig, long *ret)
{
	long group = target ? -target : ulp_pgrp_of(cb);
	uint32_t seen;

	if (!cb->pgid)
		return 0;
	if (group != cb->pgid) {
		*ret = raw(SYS_kill, -group, sig, 0, 0, 0, 0);
		return 1;
	}
	if (sig < 0 || sig > ULP_NSIG) {
		*ret = -EINVAL;
		return 1;
	}
	seen = ulp_ident_forwarded(cb);
	*ret = raw(SYS_kill, -group, sig, 0, 0, 0, 0);
	if (*ret < 0 || !sig)
		return 1;
	if (cb->sid)
		ulp_sys_kill_kids(cb, sig);
	if (sig == SIGKILL || sig == SIGSTOP)
		ulp_sig_post(cb->pvid, sig, SI_USER, cb->pid,
			     (int)raw(SYS_getuid, 0, 0, 0, 0, 0, 0), 0);
	else
		ulp_ident_wait_forward(cb, seen);
	return 1;
}

/* A group the runtime answers for: the caller's own, or one a ULP's placeholder leads. */
static int ulp_group(const struct ulp_cb *cb, int pgid)
{
	int pvid;

	return pgid == ulp_pgrp_of(cb) || ulp_ident_task_of(pgid, &pvid);
}

/*
 * ioctl: tcsetpgrp (TIOCSPGRP) of a ULP's group gives the terminal to its task's group, whose
 * workers do the ULP's reads and writes (were the ULP's placeholder group the foreground, the
 * task would be in the background: its reads of the terminal fail with EIO or stop it with
 * SIGTTIN); any other group (a job of a shell run as a ULP: real processes) is the kernel's.
 * The kernel's tcsetpgrp from a background group sends SIGTTOU to the caller's group unless the
 * caller blocks or ignores it, and fails (ENOTTY) when that group is orphaned: here the caller's
 * group is the task's, which the ULP's SIGTTOU disposition does not describe (a shell ignores
 * it, the task does not): SIGTTOU is blocked for the call, so that a ULP may always hand the
 * terminal on (a shell taking it back after a job) and never stops its task.
 * tcgetpgrp (TIOCGPGRP) answers the caller's group while the task's is the foreground. Any other
 * request: ulp_sys_std_call (trapped for descriptors 0-2).
 */
long ulp_sys_ioctl(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct ulp_sys call = *s;
	int *arg = (int *)s->a[2], pgid;
	unsigned long ttou = 1ul << (SIGTTOU - 1), old;
	long r;

	if ((s->a[1] != TIOCSPGRP && s->a[1] != TIOCGPGRP) ||
	    !ulp_sys_range_ok(cb, (uintptr_t)arg, sizeof(*arg)))
		return ulp_sys_std_call(cb, s);
	if (s->a[1] == TIOCSPGRP) {
		pgid = *arg;
		if (pgid > 0 && ulp_group(cb, pgid))
			pgid = (int)task_pgid();
		call.a[2] = (long)&pgid;
		raw(SYS_rt_sigprocmask, SIG_BLOCK, (long)&ttou, (long)&old, ULP_KSIGSET_SIZE, 0, 0);
		r = ulp_sys_std_call(cb, &call);
		raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, ULP_KSIGSET_SIZE, 0, 0);
		return r;
	}
	r = ulp_sys_std_call(cb, s);
	if (r == 0 && *arg == task_pgid())
		*arg = (int)ulp_pgrp_of(cb);
	return r;
}
