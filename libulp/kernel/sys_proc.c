/* SPDX-License-Identifier: MIT */
/*
 * Process syscalls of a ULP: ending it, signals it sends itself, yielding. A ULP is no kernel
 * process: what would end or copy the process ends or is refused for the ULP alone.
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <signal.h>

#define IOPRIO_WHO_PROCESS 1 /* linux/ioprio.h */

/* Every thread of the ULP ends, then the ULP (sys_thread.c). */
void ulp_sys_end(struct ulp_cb *cb, int status, int sig)
{
	if (ulp_sys_in_child()) /* a fork child is a process: it ends as one */
		ulp_sys_die(status, sig);
	ulp_tg_die(cb, status, sig);
}

/* End the calling process as the kernel would: by sig's default action, or exit_group(status). */
void ulp_sys_die(int status, int sig)
{
	struct ulp_ksigaction dfl = {0};
	unsigned long none = 0;

	if (sig) {
		dfl.handler = SIG_DFL;
		ulp_arch_syscall(SYS_rt_sigaction, sig, (long)&dfl, 0, ULP_KSIGSET_SIZE, 0, 0);
		ulp_arch_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, ULP_KSIGSET_SIZE,
				 0, 0);
		ulp_arch_syscall(SYS_kill, ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0), sig, 0,
				 0, 0, 0);
		status = 128 + sig; /* a signal whose default is not fatal after all */
	}
	for (;;)
		ulp_arch_syscall(SYS_exit_group, status, 0, 0, 0, 0, 0);
}

/* exit_group (exit, which ends one thread, is ulp_sys_exit_thread in sys_thread.c). */
long ulp_sys_exit(struct ulp_cb *cb, struct ulp_sys *s)
{
	ulp_sys_end(cb, (int)s->a[0], 0);
}

/* The ULP's process id (ident.c): its own, not its task's. */
long ulp_sys_getpid(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child() || !cb->pid) /* a fork child is a process: the kernel's */
		return ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return cb->pid;
}

/*
 * getpriority/setpriority and ioprio_get/ioprio_set of the ULP itself (PRIO_PROCESS or
 * IOPRIO_WHO_PROCESS, 0 or its pid): its placeholder's nice value and I/O priority, which the
 * kernel checks and keeps for it and `ps`, `ionice -p` show; the worker's would be every ULP's of
 * the task (before 27 Nov `nice -n 10` or `ionice -c 3` in one ULP slowed the others on its
 * worker, and their `nice` said 10). Its fork children start with them (ulp_sys_sched_child).
 * Other targets (another pid, a group, a user): the kernel's.
 */
long ulp_sys_priority(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a, who = (int)a[1];
	long proc =
	    s->nr == SYS_ioprio_get || s->nr == SYS_ioprio_set ? IOPRIO_WHO_PROCESS : PRIO_PROCESS;

	if (!ulp_sys_in_child() && cb->pid && a[0] == proc && (who == 0 || who == cb->pid))
		who = cb->pid;
	return ulp_arch_syscall(s->nr, a[0], who, a[2], 0, 0, 0);
}

/* A ULP's parent is its launcher; a fork child's is the ULP. */
long ulp_sys_getppid(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return ulp_ident_child_ppid(cb);
	return ulp_ident_ppid();
}

/* kill(pid) aimed at the ULP's process group while it is in its task's: 0, its own pid as a
 * group (a shell's `kill -- -$$`), or the group getpgrp() gives it (its task's, shared with the
 * launcher and the other ULPs): the ULP and its descendants in that group, not the others. A
 * group of its own is ulp_pgrp_kill's (sys_pgrp.c). */
static int own_group(struct ulp_cb *cb, int pid)
{
	return !cb->pgid && (pid == 0 || pid == -cb->pid ||
			     (pid < -1 && pid == -ulp_arch_syscall(SYS_getpgid, 0, 0, 0, 0, 0, 0)));
}

/* kill, tkill, tgkill aimed at the ULP itself (abort, raise, kill(getpid())): posted to the ULP,
 * whose action takes effect when this call returns; kill of its process group (own_group): to
 * its descendants in it too; aimed elsewhere (another ULP's pid included: its placeholder
 * forwards it): the kernel's. */
long ulp_sys_kill(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	long pid = cb->pid;
	int sig = (int)(s->nr == SYS_tgkill ? a[2] : a[1]);
	long r;
	int self;

	if (ulp_sys_in_child()) /* a process of its own: the kernel's */
		return ulp_arch_syscall(s->nr, a[0], a[1], a[2], 0, 0, 0);
	if (s->nr != SYS_kill && ulp_tg_kill(cb, s->nr, a, &r))
		return r; /* aimed at a thread of this ULP (sys_thread.c) */
	if (s->nr == SYS_kill && ((int)a[0] == 0 || (int)a[0] < -1) &&
	    ulp_pgrp_kill(cb, (int)a[0], sig, &r))
		return r; /* a group, the ULP having left its task's (sys_pgrp.c) */
	if (s->nr == SYS_tgkill)
		self = a[0] == pid && a[1] == cb->task.worker->tid;
	else if (s->nr == SYS_tkill)
		self = a[0] == cb->task.worker->tid;
	else
		self = (int)a[0] == pid || own_group(cb, (int)a[0]);
	if (!self)
		return ulp_arch_syscall(s->nr, a[0], a[1], a[2], 0, 0, 0);
	if (sig < 0 || sig > ULP_NSIG)
		return -EINVAL;
	if (sig && s->nr == SYS_kill && own_group(cb, (int)a[0]))
		ulp_sys_kill_kids(cb, sig); /* its group: its children's side (sys_fork.c) */
	if (sig) /* EAGAIN: a tkill of a real-time signal past the bound */
		return ulp_sig_post(cb->pvid, sig, s->nr == SYS_kill ? SI_USER : SI_TKILL, (int)pid,
				    (int)ulp_arch_syscall(SYS_getuid, 0, 0, 0, 0, 0, 0), 0);
	return 0;
}

/* Another ULP's turn when one is ready; else the worker's kernel thread yields. */
long ulp_sys_sched_yield(struct ulp_cb *cb, struct ulp_sys *s)
{
	return ulp_io_yield(cb); /* the yield policy (io_calls.c) */
}

/*
 * seccomp filters and strict mode stay with the kernel thread, here a worker that runs every ULP
 * of the task: one ULP's filter would outlive it and judge the others. Refused with EINVAL, what
 * a kernel without seccomp says (programs that sandbox themselves then go on without it). The
 * queries (SECCOMP_GET_ACTION_AVAIL, SECCOMP_GET_NOTIF_SIZES) are the kernel's.
 */
long ulp_sys_seccomp(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (s->a[0] == SECCOMP_SET_MODE_STRICT || s->a[0] == SECCOMP_SET_MODE_FILTER)
		return -EINVAL;
	return ulp_arch_syscall(SYS_seccomp, s->a[0], s->a[1], s->a[2], 0, 0, 0);
}

/* prctl: PR_SET_SECCOMP refused as seccomp is; PR_GET_SECCOMP says 0 (the runtime's filter is
 * not the program's). The options kept with the credentials (PR_SET_NO_NEW_PRIVS...) are
 * sys_cred.c's. The rest is the kernel's, for the worker thread (PR_SET_NAME names the worker). */
/*
 * PR_SET_NAME and PR_GET_NAME of the ULP's main thread: its placeholder's name (what ps and
 * /proc/PID/comm show for its pid); the worker's would rename a thread that runs every ULP of
 * the task (before 27 Nov perl's `$0 = "x"` renamed the worker and the ULP's comm stayed
 * "perl"). Its other threads' names are not kept: set, 0; read, the ULP's.
 */
static long thread_name(struct ulp_cb *cb, long op, long addr)
{
	struct ulp_uthread *u = ulp_tg_current(cb);
	char name[16] = {0};
	size_t i;

	if (addr < (long)cb->part_lo || addr + (long)sizeof(name) > (long)cb->part_hi)
		return -EFAULT;
	if (op == PR_GET_NAME) {
		if (ulp_ident_name(cb, NULL, name) != 0)
			return ulp_arch_syscall(SYS_prctl, op, addr, 0, 0, 0, 0);
		memcpy((char *)addr, name, sizeof(name));
		return 0;
	}
	if (u && cb->tg && u != &cb->tg->leader)
		return 0;
	for (i = 0; i < sizeof(name) - 1 && ((const char *)addr)[i]; i++)
		name[i] = ((const char *)addr)[i];
	return ulp_ident_name(cb, name, NULL) == 0
		   ? 0
		   : ulp_arch_syscall(SYS_prctl, op, addr, 0, 0, 0, 0);
}

long ulp_sys_prctl(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;

	if (a[0] == PR_SET_SECCOMP)
		return -EINVAL;
	if (a[0] == PR_GET_SECCOMP)
		return 0;
	if ((a[0] == PR_SET_NAME || a[0] == PR_GET_NAME) && !ulp_sys_in_child())
		return thread_name(cb, a[0], a[1]);
	if (ulp_sys_cred_prctl(a[0])) /* kept with the credentials, per thread (sys_cred.c) */
		return ulp_sys_cred(cb, s);
	return ulp_arch_syscall(SYS_prctl, a[0], a[1], a[2], a[3], a[4], 0);
}

/* ---- CPU accounting: the ULP's own time (preempt.c charges it at each tick) ---- */

static void ns_tv(uint64_t ns, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ns / 1000000000u);
	tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
}

/* Linux's encoding of the CPU clock of a given process or thread (clock_getcpuclockid,
 * pthread_getcpuclockid): ~id << 3 | which, 4 set for a thread, id 0: the caller. */
#define CPUCLOCK_PERTHREAD 4
#define CPUCLOCK_WHICH 3
#define CPUCLOCK_VIRT 1	   /* user time; PROF and SCHED: user + system */
#define CPUCLOCK_CLOCKFD 3 /* a dynamic clock (a file), not a CPU clock */

/* The calling ULP's process times (user, system ns). */
static void ulp_times(struct ulp_cb *cb, uint64_t ns[2])
{
	ns[0] = atomic_load(&cb->cpu_ns[0]);
	ns[1] = atomic_load(&cb->cpu_ns[1]);
}

/* The calling thread's times: its own once the ULP has threads, else the ULP's. */
static void thread_times(struct ulp_cb *cb, uint64_t ns[2])
{
	struct ulp_uthread *u = ulp_tg_current(cb);

	if (!u) {
		ulp_times(cb, ns);
		return;
	}
	ns[0] = atomic_load(&u->cpu_ns[0]);
	ns[1] = atomic_load(&u->cpu_ns[1]);
}

/*
 * The times CPU clock clk reads for the calling ULP: 0, or -ESRCH when clk is not one of the
 * ULP's (a wall clock, another process's CPU clock or a thread that is not the ULP's: the
 * kernel's then). *user_only: the clock counts user time alone (CPUCLOCK_VIRT).
 */
static int cpu_times(struct ulp_cb *cb, int clk, uint64_t ns[2], int *user_only)
{
	int id;

	*user_only = 0;
	if (clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID) {
		if (clk == CLOCK_PROCESS_CPUTIME_ID)
			ulp_times(cb, ns);
		else
			thread_times(cb, ns);
		return 0;
	}
	if (clk >= 0 || (clk & CPUCLOCK_WHICH) == CPUCLOCK_CLOCKFD)
		return -ESRCH;
	*user_only = (clk & CPUCLOCK_WHICH) == CPUCLOCK_VIRT;
	id = ~((clk - (clk & 7)) / 8); /* ~(clk >> 3), without shifting a negative value */
	if (!(clk & CPUCLOCK_PERTHREAD)) {
		if (id != 0 && id != cb->pid)
			return -ESRCH;
		ulp_times(cb, ns);
		return 0;
	}
	if (id == 0) {
		thread_times(cb, ns);
		return 0;
	}
	if (!cb->tg) { /* one thread: its id is the ULP's pid */
		if (id != cb->pid)
			return -ESRCH;
		ulp_times(cb, ns);
		return 0;
	}
	return ulp_tg_thread_cpu(cb, id, ns);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

void ulp_sys_kid_usage(struct ulp_cb *cb, const struct rusage *ru)
{
	long m = atomic_load(&cb->kids_maxrss);

	atomic_fetch_add(&cb->kids_cpu_ns[0], tv_ns(&ru->ru_utime));
	atomic_fetch_add(&cb->kids_cpu_ns[1], tv_ns(&ru->ru_stime));
	while (ru->ru_maxrss > m &&
	       !atomic_compare_exchange_weak(&cb->kids_maxrss, &m, ru->ru_maxrss))
		;
	atomic_fetch_add(&cb->kids_cnt[0], ru->ru_minflt);
	atomic_fetch_add(&cb->kids_cnt[1], ru->ru_majflt);
	atomic_fetch_add(&cb->kids_cnt[2], ru->ru_inblock);
	atomic_fetch_add(&cb->kids_cnt[3], ru->ru_oublock);
	atomic_fetch_add(&cb->kids_cnt[4], ru->ru_nvcsw);
	atomic_fetch_add(&cb->kids_cnt[5], ru->ru_nivcsw);
}

/* RUSAGE_CHILDREN: the ULP's own waited-for children (ulp_sys_kid_usage); the kernel's would be
 * every ULP's of the task (before 27 Nov one ULP's `times` showed the CPU time another ULP's
 * child used). */
static void kids_rusage(struct ulp_cb *cb, struct rusage *ru)
{
	ns_tv(atomic_load(&cb->kids_cpu_ns[0]), &ru->ru_utime);
	ns_tv(atomic_load(&cb->kids_cpu_ns[1]), &ru->ru_stime);
	ru->ru_maxrss = atomic_load(&cb->kids_maxrss);
	ru->ru_minflt = atomic_load(&cb->kids_cnt[0]);
	ru->ru_majflt = atomic_load(&cb->kids_cnt[1]);
	ru->ru_inblock = atomic_load(&cb->kids_cnt[2]);
	ru->ru_oublock = atomic_load(&cb->kids_cnt[3]);
	ru->ru_nvcsw = atomic_load(&cb->kids_cnt[4]);
	ru->ru_nivcsw = atomic_load(&cb->kids_cnt[5]);
}

/* RUSAGE_SELF: the ULP's times, RUSAGE_THREAD: the calling thread's, and the task's other
 * fields (maxrss, faults...); RUSAGE_CHILDREN: the ULP's waited children's (kids_rusage). */
long ulp_sys_getrusage(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct rusage *ru = (struct rusage *)s->a[1];
	int who = (int)s->a[0]; /* an int: the register's upper half is not the caller's to set */
	long r = ulp_arch_syscall(SYS_getrusage, who, s->a[1], 0, 0, 0, 0);
	uint64_t ns[2];

	if (!r && who == RUSAGE_CHILDREN)
		kids_rusage(cb, ru);
	if (r || (who != RUSAGE_SELF && who != RUSAGE_THREAD))
		return r;
	if (who == RUSAGE_SELF)
		ulp_times(cb, ns);
	else
		thread_times(cb, ns);
	ns_tv(ns[0], &ru->ru_utime);
	ns_tv(ns[1], &ru->ru_stime);
	return 0;
}

/* A CPU clock of the ULP (clock() reads CLOCK_PROCESS_CPUTIME_ID): its CPU time as getrusage
 * counts it, brought up to date first; CLOCK_THREAD_CPUTIME_ID and pthread_getcpuclockid's
 * clocks: the thread's own. Any other clock: the kernel's. */
long ulp_sys_cpu_clock(struct ulp_cb *cb, long clk, struct timespec *ts)
{
	uint64_t ns[2];
	int user_only;

	if ((int)clk >= 0 && clk != CLOCK_PROCESS_CPUTIME_ID && clk != CLOCK_THREAD_CPUTIME_ID)
		return ulp_arch_syscall(SYS_clock_gettime, clk, (long)ts, 0, 0, 0,
					0); /* a wall clock */
	ulp_preempt_account_now(ulp_worker_self());
	if (cpu_times(cb, (int)clk, ns, &user_only))
		return ulp_arch_syscall(SYS_clock_gettime, clk, (long)ts, 0, 0, 0, 0);
	if (!ulp_sys_range_ok(cb, (uintptr_t)ts, sizeof(*ts)))
		return -EFAULT;
	if (!user_only)
		ns[0] += ns[1];
	ts->tv_sec = (time_t)(ns[0] / 1000000000u);
	ts->tv_nsec = (long)(ns[0] % 1000000000u);
	return 0;
}

/* clock_gettime made as a system call by the ULP's code (its libc reads most clocks in the
 * vDSO, which trap.c traps for the CPU clocks). */
long ulp_sys_clock_gettime(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child())
		return ulp_arch_syscall(SYS_clock_gettime, s->a[0], s->a[1], 0, 0, 0, 0);
	return ulp_sys_cpu_clock(cb, (int)s->a[0], (struct timespec *)s->a[1]);
}

#define CLK_TCK_LINUX 100 /* times() counts in USER_HZ */

long ulp_sys_times(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct tms *t = (struct tms *)s->a[0];
	long r = ulp_arch_syscall(SYS_times, s->a[0], 0, 0, 0, 0, 0);

	if (!t || ulp_raw_is_err(r))
		return r;
	t->tms_utime = (clock_t)(atomic_load(&cb->cpu_ns[0]) / (1000000000u / CLK_TCK_LINUX));
	t->tms_stime = (clock_t)(atomic_load(&cb->cpu_ns[1]) / (1000000000u / CLK_TCK_LINUX));
	t->tms_cutime = (clock_t)(atomic_load(&cb->kids_cpu_ns[0]) / (1000000000u / CLK_TCK_LINUX));
	t->tms_cstime = (clock_t)(atomic_load(&cb->kids_cpu_ns[1]) / (1000000000u / CLK_TCK_LINUX));
	return r;
}

/* ---- /proc/self/exe, cwd, cmdline, environ ---- */

/* What follows "/proc/self/", "/proc/thread-self/" or "/proc/PID/" in p, PID a or b (a < 0: the
 * calling process's own), else NULL; *by_self (may be NULL): whether it said self or
 * thread-self. */
static const char *proc_rest(const char *p, long a, long b, int *by_self)
{
	long pid = 0;

	if (by_self)
		*by_self = 1;
	if (strncmp(p, "/proc/", 6) != 0)
		return NULL;
	p += 6;
	if (!strncmp(p, "self/", 5))
		return p + 5;
	if (!strncmp(p, "thread-self/", 12))
		return p + 12;
	if (by_self)
		*by_self = 0;
	if (*p < '1' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		pid = pid * 10 + (*p++ - '0');
	if (a < 0)
		a = ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return (pid == a || pid == b) && *p == '/' ? p + 1 : NULL;
}

/* The same for the ULP: PID its own or its task's when task is not 0. */
static const char *self_rest(const struct ulp_cb *cb, const char *p, long task, int *by_self)
{
	return proc_rest(p, cb->pid > 0 ? cb->pid : 0, task, by_self);
}

/* 1: "/proc/self/NAME", "/proc/thread-self/NAME" or "/proc/PID/NAME" (self_rest). */
static int self_file(const struct ulp_cb *cb, const char *p, const char *name, long task)
{
	const char *rest = self_rest(cb, p, task, NULL);

	return rest && !strcmp(rest, name);
}

/*
 * Any other file of "/proc/self/" or "/proc/thread-self/": the task's would name the task (its pid,
 * the launcher's name, the worker's directory), so it is opened in the ULP's placeholder's
 * /proc/PID instead (ident.c), which is the ULP's pid and program name (status, stat), directory
 * (cwd), address space (maps) and descriptor table (fd, fdinfo), as the kernel's are a process's.
 * Its per-process counters are the placeholder's, not the ULP's (docs/syscalls.md, "Process
 * id"). 0: not such a path (/proc/PID of its own pid is the placeholder's already), or no
 * placeholder.
 */
static int self_elsewhere(const struct ulp_cb *cb, const char *path, int flags, long *ret)
{
	char buf[4096];
	const char *rest;
	int by_self;

	if (cb->pid <= 0)
		return 0;
	rest = self_rest(cb, path, 0, &by_self);
	if (!rest || !by_self || ulp_ident_proc_path(cb, rest, buf, sizeof(buf)))
		return 0;
	*ret = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)buf, flags, 0, 0, 0);
	return 1;
}

/* s padded with spaces to width w at b + *i (the kernel's "%-Ns"). */
static void put_padded(char *b, int *i, const char *s, int w)
{
	int n = 0;

	for (; s[n]; n++)
		b[(*i)++] = s[n];
	for (; n < w; n++)
		b[(*i)++] = ' ';
}

/* A limit as the kernel's /proc/PID/limits writes it: "unlimited" or the number. */
static void limit_text(char *d, uint64_t v)
{
	char t[24];
	int n = 0, i = 0;

	if (v == RLIM_INFINITY) {
		strcpy(d, "unlimited");
		return;
	}
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n)
		d[i++] = t[--n];
	d[i] = 0;
}

/*
 * /proc/self/limits of a ULP that set its own RLIMIT_AS or RLIMIT_DATA: its placeholder's file,
 * where those two are the task's (sys_rlimit.c keeps the ULP's), with their lines made from the
 * ULP's, in the kernel's format ("%-25s %-20s %-20s %-10s"). 0: nothing to change (the
 * placeholder's file is opened as any other /proc/self file), else 1 with *ret the descriptor of
 * a memfd holding it, or -errno.
 */
static int self_limits(struct ulp_cb *cb, int flags, long *ret)
{
	static const struct {
		const char *name;
		int res;
	} lines[] = {{"Max data size", RLIMIT_DATA}, {"Max address space", RLIMIT_AS}};
	char path[96], in[4096] = "", out[4608], num[24];
	uint64_t cur[2], max[2];
	long fd, n, at = 0;
	int i, j, k, o = 0, own[2], any = 0;

	for (j = 0; j < 2; j++)
		any |= own[j] = ulp_rlimit_own(cb, lines[j].res, &cur[j], &max[j]);
	if (!any || cb->pid <= 0 || ulp_ident_proc_path(cb, "limits", path, sizeof(path)))
		return 0;
	fd = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return 0;
	while (at < (long)sizeof(in) - 1 &&
	       (n = ulp_arch_syscall(SYS_read, fd, (long)in + at, (long)sizeof(in) - 1 - at, 0, 0,
				     0)) > 0)
		at += n;
	ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	in[at] = 0;
	for (i = 0; i < at;) {
		for (k = i; k < at && in[k] != '\n'; k++)
			;
		for (j = 0; j < 2; j++)
			if (own[j] && !strncmp(in + i, lines[j].name, strlen(lines[j].name)))
				break;
		if (j < 2 && o + 80 < (int)sizeof(out)) {
			put_padded(out, &o, lines[j].name, 25);
			out[o++] = ' ';
			limit_text(num, cur[j]);
			put_padded(out, &o, num, 20);
			out[o++] = ' ';
			limit_text(num, max[j]);
			put_padded(out, &o, num, 20);
			out[o++] = ' ';
			put_padded(out, &o, "bytes", 10);
			out[o++] = '\n';
		} else if (o + (k + 1 - i) < (int)sizeof(out)) {
			memcpy(out + o, in + i, (size_t)(k < at ? k + 1 - i : k - i));
			o += k < at ? k + 1 - i : k - i;
		}
		i = k + 1;
	}
	fd = ulp_arch_syscall(SYS_memfd_create, (long)"limits",
			      (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0, 0, 0, 0, 0);
	if (fd >= 0 && ulp_arch_syscall(SYS_write, fd, (long)out, o, 0, 0, 0) != o) {
		ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
		fd = -EIO;
	}
	if (fd >= 0)
		ulp_arch_syscall(SYS_lseek, fd, 0, SEEK_SET, 0, 0, 0);
	*ret = fd;
	return 1;
}

static long strings_file(uintptr_t lo, uintptr_t hi, int flags);

/* readlink's answer link into buf of size bytes (> 0): truncated, no terminating NUL, as the
 * kernel's. */
static long link_out(char *buf, long size, const char *link)
{
	size_t n = strlen(link);

	if (n > (size_t)size)
		n = (size_t)size;
	memcpy(buf, link, n);
	return (long)n;
}

int ulp_sys_self_open(struct ulp_cb *cb, long dirfd, const char *path, int flags, long *ret)
{
	uintptr_t lo, hi;

	if (ulp_sys_in_child() || !path || !ulp_sys_range_ok(cb, (uintptr_t)path, 1) ||
	    (dirfd != AT_FDCWD && path[0] != '/'))
		return 0;
	if (ulp_std_open(cb, path, flags, ret)) /* its own 0-2, in any mode (stdfds.c) */
		return 1;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return 0;
	if (self_file(cb, path, "cmdline", 0)) {
		lo = cb->args_lo;
		hi = cb->args_hi;
	} else if (self_file(cb, path, "environ", 0)) {
		lo = cb->env_lo;
		hi = cb->env_hi;
	} else if (self_file(cb, path, "limits", 0) && self_limits(cb, flags, ret)) {
		return 1;
	} else if (self_file(cb, path, "exe", 0) && cb->exe[0]) {
		/* the task's exe is the launcher: the ULP's program file itself */
		*ret = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)cb->exe, flags, 0, 0, 0);
		return 1;
	} else {
		return self_elsewhere(cb, path, flags, ret);
	}
	*ret = strings_file(lo, hi, flags);
	return 1;
}

/* The task's file would be the launcher's: a file (memfd) holding the ULP's strings in [lo, hi)
 * as they are now (a program that rewrites its argv sees it there, as from the kernel's). */
static long strings_file(uintptr_t lo, uintptr_t hi, int flags)
{
	long fd = ulp_arch_syscall(SYS_memfd_create, (long)"cmdline",
				   (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0, 0, 0, 0, 0);

	if (fd >= 0 && hi > lo &&
	    ulp_arch_syscall(SYS_write, fd, (long)lo, (long)(hi - lo), 0, 0, 0) !=
		(long)(hi - lo)) {
		ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
		fd = -EIO;
	}
	if (fd >= 0)
		ulp_arch_syscall(SYS_lseek, fd, 0, SEEK_SET, 0, 0, 0);
	return fd;
}

/*
 * A child process of the ULP (fork, posix_spawn, before its execve) is a copy of its task, so the
 * kernel's /proc/self/exe, cmdline and environ there are the launcher's: `exec /proc/self/exe`
 * in a perl fork child ran ulpexec with perl's arguments (until 27 Nov, twelfth session), and
 * readlink named ulpexec. They are the program's here, as in the ULP itself (ulp_sys_self_open,
 * ulp_sys_readlink): readlink and readlinkat of the exe link give the program's path, a
 * read-only open of exe opens the program file and of cmdline or environ a memfd holding the
 * strings of the child's copy of the ULP's memory, and execve or execveat of the exe link runs
 * the program (*path is made the program's path). 1: answered in *ret; 0: the kernel's call.
 */
int ulp_sys_child_self(struct ulp_cb *cb, struct ulp_sys *s, const char **path, long *ret)
{
	const long *a = s->a;
	const char *p, *rest;
	long flags = 0, size = 0;
	char *buf = NULL;

	switch (s->nr) {
	case SYS_readlink:
		p = (const char *)a[0], buf = (char *)a[1], size = a[2];
		break;
	case SYS_readlinkat:
		p = (const char *)a[1], buf = (char *)a[2], size = a[3];
		break;
	case SYS_open:
		p = (const char *)a[0], flags = a[1];
		break;
	case SYS_openat:
		p = (const char *)a[1], flags = a[2];
		break;
	case SYS_execve:
		p = (const char *)a[0];
		break;
	case SYS_execveat:
		p = (const char *)a[1];
		break;
	default:
		return 0;
	}
	if (!cb->exe[0] || !p || !ulp_sys_range_ok(cb, (uintptr_t)p, 1) || p[0] != '/' ||
	    !(rest = proc_rest(p, -1, 0, NULL)))
		return 0;
	if (s->nr == SYS_execve || s->nr == SYS_execveat) {
		if (strcmp(rest, "exe"))
			return 0;
		*path = cb->exe;
		return 0;
	}
	if (s->nr == SYS_readlink || s->nr == SYS_readlinkat) {
		if (strcmp(rest, "exe"))
			return 0;
		if (size > 0 && !ulp_sys_range_ok(cb, (uintptr_t)buf, (size_t)size))
			return 0; /* not the partition's (the child's own mmap): the kernel's */
		*ret = size <= 0 ? -EINVAL : link_out(buf, size, cb->exe);
		return 1;
	}
	if ((flags & O_ACCMODE) != O_RDONLY)
		return 0;
	if (!strcmp(rest, "exe"))
		*ret = ulp_arch_syscall(SYS_openat, AT_FDCWD, (long)cb->exe, flags, 0, 0, 0);
	else if (!strcmp(rest, "cmdline"))
		*ret = strings_file(cb->args_lo, cb->args_hi, (int)flags);
	else if (!strcmp(rest, "environ"))
		*ret = strings_file(cb->env_lo, cb->env_hi, (int)flags);
	else
		return 0;
	return 1;
}

/* "/proc/self/cwd" or "/proc/thread-self/cwd": the task's, which is not the ULP's (fs.c). */
static int self_cwd(const char *p)
{
	return !strcmp(p, "/proc/self/cwd") || !strcmp(p, "/proc/thread-self/cwd");
}

/* readlink, readlinkat of the process's own exe link: the ULP's program, not the launcher. */
long ulp_sys_readlink(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	int at = s->nr != ULP_ARCH_SYS_READLINK;
	const char *p = (const char *)a[at ? 1 : 0];
	char *buf = (char *)a[at ? 2 : 1];
	long size = a[at ? 3 : 2];
	char cwd[4096];
	const char *link = cb->exe;
	long r;

	if (!ulp_sys_in_child() && p && ulp_sys_range_ok(cb, (uintptr_t)p, 1) &&
	    ulp_std_readlink(cb, p, buf, size, &r))
		return r; /* /proc/self/fd/1... of its own 0-2 (stdfds.c) */
	if (ulp_sys_in_child() || !p || !ulp_sys_range_ok(cb, (uintptr_t)p, 1) ||
	    !(self_file(cb, p, "exe", ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0)) ||
	      self_cwd(p)))
		return at ? ulp_arch_syscall(SYS_readlinkat, a[0], a[1], a[2], a[3], 0, 0)
			  : ulp_arch_syscall(s->nr, a[0], a[1], a[2], 0, 0, 0);
	if (size <= 0)
		return -EINVAL;
	if (self_cwd(p)) { /* the worker is in the ULP's directory */
		r = ulp_arch_syscall(SYS_getcwd, (long)cwd, sizeof(cwd), 0, 0, 0, 0);
		if (r < 0)
			return at ? ulp_arch_syscall(SYS_readlinkat, a[0], a[1], a[2], a[3], 0, 0)
				  : ulp_arch_syscall(s->nr, a[0], a[1], a[2], 0, 0, 0);
		link = cwd;
	}
	return link_out(buf, size, link);
}
