/* SPDX-License-Identifier: MIT */
/*
 * Credentials and namespaces of a ULP: setuid, setgid, setreuid, setregid, setresuid, setresgid,
 * setfsuid, setfsgid, setgroups, capset, the prctl options of the same kind,
 * landlock_restrict_self; unshare, setns; personality.
 *
 * The kernel keeps credentials per thread (glibc makes a change every thread's): until 27 Nov a
 * ULP's setresuid changed the worker thread it ran on, so the ULPs that ran there next had the new
 * user, the ULP itself, moved to another worker, the old one (a server dropping its privileges
 * kept them), and perl's `$< = $> = 65534` left its task spinning as nobody, deaf to its launcher's
 * SIGTERM. A worker's credentials stay its task's. A call that changes nothing (setuid(getuid())
 * where the ULP's ids are all one) runs natively; one that changes the ULP's credentials makes it
 * a process of its own: a fork child continues the ULP and makes the call, the kernel's, and the
 * ULP waits for it and ends with its status, as for a non-PIE execve (ulp_sys_as_child,
 * sys_fork.c). Its pid is the child's from then on; a ULP with several threads is refused (EPERM).
 *
 * Namespaces are the kernel's per thread too: until 27 Nov `unshare -n` or `unshare -m` in one ULP
 * moved its worker thread, and the next ULP there saw the new network (only `lo`) or the mounts
 * made in it. unshare and setns go the same way (unshare of CLONE_FS alone changes nothing for a
 * ULP, whose directory and umask are its own already: fs.c). So do the prctl options kept with the
 * credentials (PR_SET_KEEPCAPS, PR_SET_SECUREBITS, PR_CAPBSET_DROP, PR_CAP_AMBIENT) and personality
 * (`setarch --uname-2.6` made the next ULP's uname say 2.6), all per thread, and
 * PR_SET_CHILD_SUBREAPER, the task's: the orphans it adopts would be the task's children, which
 * the ULP's wait never sees (an init-like ULP reaped only its own children). A Landlock domain
 * (landlock_restrict_self) is the thread's credentials too: one ULP's sandbox was the next ULP's
 * on that worker (its files unreadable, its exec failing), and not its own once it moved.
 *
 * PR_SET_NO_NEW_PRIVS, which a worker would keep for good and give every later child of the
 * task's ULPs (`setpriv --no-new-privs` in one: `su` failed in another's children), only narrows
 * what an execve may gain, which an in-place one never does: the ULP keeps it (cb->nnp), reads it
 * back, and its child processes get it (ulp_cred_child); no new process for it.
 */
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>

#define GROUPS_MAX 64 /* a longer setgroups list is taken as a change, unread */

static long sys(long nr, long a, long b, long c)
{
	return ulp_arch_syscall(nr, a, b, c, 0, 0, 0);
}

/* Each of ids[0..n) is -1 (unchanged) or the one id the thread has for all of real, effective
 * and saved (getres: SYS_getresuid or SYS_getresgid). */
static int same_ids(long getres, const long *ids, int n)
{
	unsigned r, e, sv;
	int i;

	if (sys(getres, (long)&r, (long)&e, (long)&sv) < 0 || r != e || e != sv)
		return 0;
	for (i = 0; i < n; i++)
		if ((int)ids[i] != -1 && (unsigned)ids[i] != r)
			return 0;
	return 1;
}

static int same_groups(struct ulp_cb *cb, long n, const unsigned *list)
{
	unsigned cur[GROUPS_MAX];
	long i;

	if (n < 0 || n > GROUPS_MAX ||
	    (n && !ulp_sys_range_ok(cb, (uintptr_t)list, (size_t)n * sizeof(*list))) ||
	    sys(SYS_getgroups, GROUPS_MAX, (long)cur, 0) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (cur[i] != list[i])
			return 0;
	return 1;
}

/* capset of the ULP's own pid (libcap-ng passes getpid(), the placeholder's, and goes on passing
 * it in the process the ULP becomes) is of 0, the caller: s takes hdr, a copy saying so. */
static void own_caps(struct ulp_cb *cb, struct ulp_sys *s, struct __user_cap_header_struct *hdr)
{
	const struct __user_cap_header_struct *u = (const void *)s->a[0];

	if (!ulp_sys_range_ok(cb, (uintptr_t)u, sizeof(*u)) || u->pid != cb->pid || !cb->pid)
		return;
	*hdr = *u;
	hdr->pid = 0;
	s->a[0] = (long)hdr;
}

/* 1: capset sets what the calling thread has already. */
static int same_caps(struct ulp_cb *cb, const struct ulp_sys *s)
{
	const struct __user_cap_header_struct *hdr = (const void *)s->a[0];
	const struct __user_cap_data_struct *want = (const void *)s->a[1];
	struct __user_cap_data_struct cur[2];

	if (!ulp_sys_range_ok(cb, (uintptr_t)hdr, sizeof(*hdr))) /* own_caps's copy is too */
		return 0;
	if (hdr->pid || hdr->version != _LINUX_CAPABILITY_VERSION_3 ||
	    !ulp_sys_range_ok(cb, (uintptr_t)want, sizeof(cur)) ||
	    sys(SYS_capget, (long)hdr, (long)cur, 0) < 0)
		return 0;
	return cur[0].effective == want[0].effective && cur[0].permitted == want[0].permitted &&
	       cur[0].inheritable == want[0].inheritable && cur[1].effective == want[1].effective &&
	       cur[1].permitted == want[1].permitted && cur[1].inheritable == want[1].inheritable;
}

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_IS_SET 1
#define PR_CAP_AMBIENT_RAISE 2
#define PR_CAP_AMBIENT_LOWER 3
#endif

static long pr(long op, long a, long b)
{
	return ulp_arch_syscall(SYS_prctl, op, a, b, 0, 0, 0);
}

/* The prctl options of a credential's kind that change nothing as asked (or only read). */
static int same_prctl(const long *a)
{
	int v = 0;

	switch (a[0]) {
	case PR_SET_CHILD_SUBREAPER:
		return pr(PR_GET_CHILD_SUBREAPER, (long)&v, 0) == 0 && v == !!a[1];
	case PR_SET_KEEPCAPS:
		return pr(PR_GET_KEEPCAPS, 0, 0) == a[1];
	case PR_SET_SECUREBITS:
		return pr(PR_GET_SECUREBITS, 0, 0) == a[1];
	case PR_CAPBSET_DROP:
		return pr(PR_CAPBSET_READ, a[1], 0) == 0;
	case PR_CAP_AMBIENT:
		if (a[1] == PR_CAP_AMBIENT_RAISE || a[1] == PR_CAP_AMBIENT_LOWER)
			return pr(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, a[2]) ==
			       (a[1] == PR_CAP_AMBIENT_RAISE);
		return a[1] == PR_CAP_AMBIENT_IS_SET;
	}
	return 1; /* not of that kind: sys_proc.c's */
}

int ulp_sys_cred_prctl(long op)
{
	return op == PR_SET_NO_NEW_PRIVS || op == PR_GET_NO_NEW_PRIVS || op == PR_SET_KEEPCAPS ||
	       op == PR_SET_SECUREBITS || op == PR_CAPBSET_DROP || op == PR_CAP_AMBIENT ||
	       op == PR_SET_CHILD_SUBREAPER;
}

/* PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS of the ULP: its own, or the task's where the runtime
 * set it for the task (trap.c), checked as the kernel does. */
static long nnp(struct ulp_cb *cb, const long *a)
{
	if (a[0] == PR_GET_NO_NEW_PRIVS)
		return a[1] || a[2] || a[3] || a[4] ? -EINVAL
						    : cb->nnp || pr(PR_GET_NO_NEW_PRIVS, 0, 0) == 1;
	if (a[1] != 1 || a[2] || a[3] || a[4])
		return -EINVAL;
	cb->nnp = 1;
	return 0;
}

void ulp_cred_child(const struct ulp_cb *cb)
{
	if (cb->nnp)
		pr(PR_SET_NO_NEW_PRIVS, 1, 0);
}

/* 1: call s leaves the calling thread's credentials as they are. */
static int no_change(struct ulp_cb *cb, const struct ulp_sys *s)
{
	const long *a = s->a;

	switch (s->nr) {
	case SYS_setuid:
	case SYS_setfsuid:
		return same_ids(SYS_getresuid, a, 1);
	case SYS_setreuid:
		return same_ids(SYS_getresuid, a, 2);
	case SYS_setresuid:
		return same_ids(SYS_getresuid, a, 3);
	case SYS_setgid:
	case SYS_setfsgid:
		return same_ids(SYS_getresgid, a, 1);
	case SYS_setregid:
		return same_ids(SYS_getresgid, a, 2);
	case SYS_setresgid:
		return same_ids(SYS_getresgid, a, 3);
	case SYS_setgroups:
		return same_groups(cb, a[0], (const unsigned *)a[1]);
	case SYS_capset:
		return same_caps(cb, s);
	case SYS_unshare:
		return !(a[0] & ~(long)CLONE_FS);
	case SYS_prctl:
		return same_prctl(a);
	case SYS_personality: /* 0xffffffff only reads it */
		return (unsigned)a[0] == 0xffffffffu ||
		       ulp_arch_syscall(SYS_personality, 0xffffffffL, 0, 0, 0, 0, 0) == a[0];
	}
	return 0;
}

long ulp_sys_cred(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct __user_cap_header_struct hdr; /* capset's, when it names the ULP's own pid */
	long *a = s->a;

	if (s->nr == SYS_prctl && (a[0] == PR_SET_NO_NEW_PRIVS || a[0] == PR_GET_NO_NEW_PRIVS) &&
	    !ulp_sys_in_child())
		return nnp(cb, a);
	if (s->nr == SYS_capset)
		own_caps(cb, s, &hdr);
	if (ulp_sys_in_child() || no_change(cb, s))
		return ulp_arch_syscall(s->nr, a[0], a[1], a[2], a[3], a[4], 0);
	return ulp_sys_as_child(cb, s);
}

/*
 * ptrace. A tracer is a kernel thread: a ULP's requests made natively came from whichever worker
 * ran it (a ULP moved to another worker got ESRCH), and its waits, scoped to its own children,
 * never reported the processes its tracees made (PTRACE_O_TRACEFORK): `strace -f sh -c
 * /bin/true` as a ULP hung until 27 Nov (twelfth session), its job never ending. The ULP becomes
 * a process of its own at its first request (ulp_sys_as_child, as for a credential change: -EPERM
 * for a ULP with other threads), where it traces and waits as a process does. PTRACE_TRACEME of
 * the ULP itself would make its worker a tracee of the launcher: -EPERM, as for a process
 * traced already. In a child process of the ULP (child mode): the kernel's.
 */
long ulp_sys_ptrace(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;

	if (ulp_sys_in_child())
		return ulp_arch_syscall(s->nr, a[0], a[1], a[2], a[3], 0, 0);
	if (a[0] == PTRACE_TRACEME)
		return -EPERM;
	return ulp_sys_as_child(cb, s);
}
