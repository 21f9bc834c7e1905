/* SPDX-License-Identifier: MIT */
/*
 * A ULP's process id. A PID is a kernel object: to give each ULP one that no other process on the
 * machine has, and that kill(2) from anywhere reaches, each ULP gets a placeholder process that
 * holds it for the ULP's life. getpid() of the ULP is the placeholder's pid, getppid() the
 * launcher's (the ULP's parent, as mpiexec is a rank's), and its main thread's tid equals it.
 *
 * The placeholder is made when the ULP starts, before its program runs (glibc learns its main
 * thread's tid from set_tid_address at its very start, so a later pid could not equal that tid):
 * clone(CLONE_VM | CLONE_FILES) from the worker that starts the ULP. It shares the ULP's
 * address space and descriptor table, so that what other processes do with a PID works on the
 * ULP's: /proc/PID/fd/N opens the ULP's descriptor N (UCX passes shared memory between MPI ranks
 * so), process_vm_readv(PID) reads the ULP's memory, /proc/PID/maps is the ULP's. Its cwd is the
 * ULP's own (a copy made in the ULP's directory, moved when the ULP moves): fs.c keeps the ULP's
 * directory there. It makes the ULP's child processes, so that their kernel parent is the ULP
 * (ulp_ident_parent_call; sys_fork.c), and forwards their SIGCHLD as any other signal. It runs
 * nothing but a loop, on a small stack of its own, with every signal blocked:
 *   - a signal sent to it (kill, sigqueue: SIGKILL and SIGSTOP aside) is recorded for its ULP
 *     with the sender's siginfo (ulp_sig_record), and the task is nudged with ULP_SIG_IDENT, so
 *     that a parked call ends or the running ULP runs the action (handler, ignore, default);
 *   - SIGKILL ends it; its exit signal (ULP_SIG_IDENT, never coalesced as SIGCHLD would be)
 *     tells the task, which reaps it and ends the ULP "killed by SIGKILL";
 *   - SIGSTOP stops it, and its task, told by its SIGCHLD, stops the ULP (signal.c); signals
 *     sent meanwhile wait until SIGCONT, which it forwards.
 * It sits in a process group of its own, so that a signal to the job's group (Ctrl-C) reaches
 * each ULP once, through its task, and not a second time through its placeholder. When the ULP
 * ends, its exit path has it exec a program that exits at once and reaps it (no zombie; the pid
 * is free only after the ULP ended); when the task dies, PR_SET_PDEATHSIG ends it.
 *
 * Why exec to end: at a process's exit the kernel walks every mapping of its address space
 * (process accounting, acct_collect): here every ULP's, once per ULP (0.2 to 1 ms per ULP with
 * thousands of ULPs, measured). The exec leaves the shared address space first (~70 us whatever
 * its size); a SIGKILL from outside still pays the walk. The exec makes its exit signal SIGCHLD:
 * the relay (signal.c) asks ulp_ident_is_placeholder before it looks for a ULP whose child it is.
 * A placeholder in an address space of its own from the start would exit cheaply too, but its
 * /proc/PID/fd and process_vm_readv would not be the ULP's (MPICH over UCX then fails in
 * MPI_Init: tried). Cost: docs/syscalls.md.
 */
#include "io.h"
#include "pvas.h"
#include "ulp_signal.h"

#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PH_STACK (16 * 1024) /* the loop's stack: a siginfo and a few frames */

/* One partition's placeholder, in a table of its own (never unmapped, unlike a control block). */
struct phrec {
	_Atomic int pid; /* its pid; 0: none (or being reaped by whoever cleared it) */
	int tgid;	 /* the PVAS task that made it: its parent */
	int pvid;
	uint32_t gen; /* the ULP's start count it belongs to */
	char comm[16];
	/* Requests to follow the ULP to its new directory (fs.c): the worker thread it went to,
	 * the last request and the last one done (futex). */
	int fs_tid;
	_Atomic uint32_t fs_req, fs_done;
	/* Its ULP exec'd: take comm as the new program's name, then say so (futex). */
	_Atomic uint32_t name_done;
	/* Its tid while it shares the address space (the kernel clears it and wakes the futex at
	 * its exec or exit: CLEAR_TID), 0 after; (uint32_t)-1 before it ran. */
	_Atomic uint32_t alive;
	/* Signals it forwarded (futex): a ULP that signals its own group waits for its share. */
	_Atomic uint32_t fwd_seq;
	/* Its ULP called setsid: its answer, then the count of answers (futex). */
	int sid_rc;
	_Atomic uint32_t sid_done;
	/* A call it makes for its ULP as the kernel's parent of the ULP's children (fork, wait,
	 * setpgid: sys_fork.c): one at a time (call_lock), CALL_POSTED, then CALL_TAKEN by the
	 * placeholder, CALL_DONE with call_ret (futex); CALL_IDLE again once the ULP read it. */
	_Atomic uint32_t call_lock, call_state;
	long (*call_fn)(void *);
	void *call_arg;
	long call_ret;
	/* Its ULP's action for SIGCHLD, which its own (the children's parent's) mirrors: CHLD_IGN
	 * (SIG_IGN), and the SA_NOCLDWAIT and SA_NOCLDSTOP flags (chld_sync). */
	_Atomic unsigned chld_act;
};

enum { CALL_IDLE, CALL_POSTED, CALL_TAKEN, CALL_DONE };

#define RETIRE 0xffffffffu /* a request's value: end (fs_req counts up from 1) */
#define RENAME 0xfffffffeu /* a request's value: take the name in comm */
#define SETSID 0xfffffffdu /* a request's value: lead a session of its own */
#define CALL 0xfffffffcu   /* a request's value: run call_fn (ulp_ident_parent_call) */
#define CHLD 0xfffffffbu   /* a request's value: take chld_act (ulp_ident_chld_action) */
#define CHLD_IGN 1u

enum { PH_RUNS = 1, PH_STOPPED = 2, PH_UNKNOWN = 3 }; /* ph_status */
static int ph_status(int pid);

/* Sized for the first region, as signal.c's tables: later ones lie where it did (trap.c). */
static unsigned nrecs;
static struct phrec *recs;
static char *stacks;
static int manager_pid;
/* "/proc/LAUNCHER/fd/N" of a memfd holding a program that exits at once (ulp_arch_exit_elf): a
 * placeholder ends by exec'ing it, which drops the shared address space first, so that its exit
 * does not walk every ULP's mappings (empty: it is killed instead). */
static char exit_path[48];
/* Which partition a placeholder pid belongs to (pvid + 1), indexed by pid up to pid_max: a
 * placeholder's death is found without a scan of the ULPs. */
static _Atomic int *by_pid;
static long npids;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static struct phrec *rec_of(int pvid)
{
	return recs && pvid >= 0 && (unsigned)pvid < nrecs ? &recs[pvid] : NULL;
}

/* Queue ULP_SIG_IDENT to pid with value, sent as from (the task, or a placeholder). */
static long send_ident(int pid, int from, long value)
{
	siginfo_t n;

	memset(&n, 0, sizeof(n));
	n.si_signo = ULP_SIG_IDENT;
	n.si_code = SI_QUEUE;
	n.si_pid = from;
	n.si_uid = (uid_t)sys(SYS_getuid, 0, 0, 0, 0, 0, 0);
	n.si_value.sival_ptr = (void *)value;
	return sys(SYS_rt_sigqueueinfo, pid, ULP_SIG_IDENT, (long)&n, 0, 0, 0);
}

/* ---- the placeholder ---- */

/* Record si for the ULP, its pending bit into *bits (ulp_sig_record_to). -EAGAIN: its queue of
 * real-time signals is full (sigqueue.c). */
static int record(struct phrec *p, const siginfo_t *si, _Atomic uint64_t *bits)
{
	if (si->si_signo == SIGCHLD && si->si_code > 0) /* a child's end: its CPU times too */
		return ulp_sig_record_chld(p->pvid, si, bits);
	return ulp_sig_record_to(p->pvid, si->si_signo, si->si_code, si->si_pid, (int)si->si_uid,
				 (long)si->si_value.sival_ptr, bits);
}

/* The signals recorded (n, their bits) become pending for the ULP, and the task is nudged for
 * each number (a queued signal carries the partition and the number). */
static void forward(struct phrec *p, uint64_t bits, uint32_t n)
{
	int self = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);

	ulp_sig_publish(p->pvid, bits);
	for (; bits; bits &= bits - 1)
		send_ident(p->tgid, self, ((long)p->pvid << 8) | (__builtin_ctzl(bits) + 1));
	if (n) {
		atomic_fetch_add(&p->fwd_seq, n);
		sys(SYS_futex, (long)&p->fwd_seq, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	}
}

/* Run the call its ULP posted, unless the ULP gave up on it (ulp_ident_parent_call). In the child
 * of a fork that call_fn makes, call_fn does not return here. */
static void run_call(struct phrec *p)
{
	uint32_t want = CALL_POSTED;

	if (!atomic_compare_exchange_strong(&p->call_state, &want, CALL_TAKEN))
		return;
	p->call_ret = p->call_fn(p->call_arg);
	atomic_store(&p->call_state, CALL_DONE);
	sys(SYS_futex, (long)&p->call_state, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* Take the ULP's SIGCHLD action as its own, for the kernel's part of it: children reaped as they
 * end (SIG_IGN, SA_NOCLDWAIT), no notice of stops (SA_NOCLDSTOP). The handler stays a copy of
 * the task's (never run here: every signal is blocked), or SIG_DFL; SIG_IGN when ignored. */
static void chld_sync(struct phrec *p)
{
	struct ulp_ksigaction k;
	unsigned a = atomic_load(&p->chld_act);

	if (sys(SYS_rt_sigaction, SIGCHLD, 0, (long)&k, ULP_KSIGSET_SIZE, 0, 0) != 0)
		return;
	if (a & CHLD_IGN)
		k.handler = SIG_IGN;
	else if (k.handler == SIG_IGN)
		k.handler = SIG_DFL;
	k.flags = (k.flags & ~(unsigned long)(SA_NOCLDWAIT | SA_NOCLDSTOP)) |
		  (a & (SA_NOCLDWAIT | SA_NOCLDSTOP));
	sys(SYS_rt_sigaction, SIGCHLD, (long)&k, 0, ULP_KSIGSET_SIZE, 0, 0);
}

/* chld_sync as its ULP's call (ulp_ident_chld_action). */
static long chld_call(void *arg)
{
	chld_sync(arg);
	return 0;
}

/* Append decimal v to buf at *i. */
static void put_num(char *buf, int *i, long v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n)
		buf[(*i)++] = d[--n];
}

static void put_str(char *buf, int *i, const char *s)
{
	while (*s)
		buf[(*i)++] = *s++;
}

/* "/proc/PID/cwd", or "/proc/PID/task/TID/cwd" when tid is not 0, into buf (64 bytes), without
 * libc (a PVAS task and a placeholder have none). */
static void cwd_path(char *buf, int pid, int tid)
{
	int i = 0;

	put_str(buf, &i, "/proc/");
	put_num(buf, &i, pid);
	if (tid) {
		put_str(buf, &i, "/task/");
		put_num(buf, &i, tid);
	}
	put_str(buf, &i, "/cwd");
	buf[i] = 0;
}

int ulp_ident_proc_path(const struct ulp_cb *cb, const char *rest, char *buf, size_t len)
{
	size_t n = 0;
	int i = 0;

	while (rest[n])
		n++;
	if (n + sizeof("/proc//") + 20 > len) /* 20: the most digits a pid takes */
		return -ENAMETOOLONG;
	put_str(buf, &i, "/proc/");
	put_num(buf, &i, cb->pid);
	buf[i++] = '/';
	put_str(buf, &i, rest);
	buf[i] = 0;
	return 0;
}

/* Go where the ULP's worker thread is (fs.c asked, and waits on fs_done). */
static void follow(struct phrec *p, uint32_t seq)
{
	char path[64];

	cwd_path(path, p->tgid, p->fs_tid);
	sys(SYS_chdir, (long)path, 0, 0, 0, 0, 0);
	atomic_store(&p->fs_done, seq);
	sys(SYS_futex, (long)&p->fs_done, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* Its ULP exec'd: the new program's name, as the kernel's exec sets comm (ulp_ident_exec waits). */
static void rename_self(struct phrec *p)
{
	sys(SYS_prctl, PR_SET_NAME, (long)p->comm, 0, 0, 0, 0);
	atomic_fetch_add(&p->name_done, 1);
	sys(SYS_futex, (long)&p->name_done, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* Its ULP calls setsid (ulp_ident_setsid waits): only a process can make itself a session's
 * leader. */
static void setsid_self(struct phrec *p)
{
	p->sid_rc = (int)sys(SYS_setsid, 0, 0, 0, 0, 0, 0);
	atomic_fetch_add(&p->sid_done, 1);
	sys(SYS_futex, (long)&p->sid_done, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* End: by exec'ing the program that exits (see exit_path), else by exiting here. */
static void retire(void)
{
	char *none[] = {exit_path, NULL};

	if (exit_path[0])
		sys(SYS_execve, (long)exit_path, (long)none, (long)(none + 1), 0, 0, 0);
	sys(SYS_exit_group, 0, 0, 0, 0, 0, 0);
}

/* A request of its task's (ULP_SIG_IDENT): a code, or a cwd request's count (follow). 0: si is
 * none, but a signal to forward. */
static int request(struct phrec *p, long sig, const siginfo_t *si)
{
	uint32_t req = (uint32_t)(long)si->si_value.sival_ptr;

	if (sig != ULP_SIG_IDENT || si->si_code != SI_QUEUE || si->si_pid != p->tgid)
		return 0;
	switch (req) {
	case RETIRE:
		retire();
		break;
	case RENAME:
		rename_self(p);
		break;
	case SETSID:
		setsid_self(p);
		break;
	case CALL:
		run_call(p);
		break;
	case CHLD:
		chld_sync(p);
		break;
	default:
		follow(p, req);
	}
	return 1;
}

/*
 * The placeholder's whole life. No libc: it shares the launcher's memory, not its threads.
 * It records every signal pending for it before they become pending for the ULP, at once, as
 * they were for this process: the kernel hands them over lowest number first, not in the order
 * sent (a SIGUSR1 sent after 300 sigqueue reached the ULP before most of them). A real-time
 * signal past the ULP's bound is held (one) and the others stay queued in the kernel, for this
 * process, until the ULP takes some: so a sender past the kernel's RLIMIT_SIGPENDING gets EAGAIN,
 * as when it signals a process that does not take them. It tries again every 2 ms meanwhile.
 */
#define DRAIN 4096 /* at most recorded before they are forwarded (a sender that never stops) */
static int ph_main(void *arg)
{
	struct phrec *p = arg;
	const unsigned long all = ~0ul, standard = ~ULP_SIG_QUEUED_BITS | ULP_RT_SIGMASK;
	const struct timespec retry = {0, 2 * 1000 * 1000}, now = {0, 0};
	_Atomic uint64_t bits;
	siginfo_t si, held;
	uint32_t n;
	long sig;
	int holding = 0;

	/* Gone with its task (the worker that made it lives as long as the task). */
	sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
	if (sys(SYS_getppid, 0, 0, 0, 0, 0, 0) != p->tgid)
		sys(SYS_exit, 0, 0, 0, 0, 0, 0);
	sys(SYS_prctl, PR_SET_NAME, (long)p->comm, 0, 0, 0, 0);
	/* Its exec or exit clears this word and wakes whoever waits on it (ulp_ident_exit). */
	atomic_store(&p->alive, (uint32_t)sys(SYS_set_tid_address, (long)&p->alive, 0, 0, 0, 0, 0));
	for (;;) {
		sig = sys(SYS_rt_sigtimedwait, (long)(holding ? &standard : &all), (long)&si,
			  (long)(holding ? &retry : NULL), ULP_KSIGSET_SIZE, 0, 0);
		if (ulp_sig_gen(p->pvid) != p->gen)
			holding = 0; /* its ULP has ended; the exit path kills us */
		atomic_store(&bits, 0);
		n = 0;
		if (holding && record(p, &held, &bits) == 0) {
			holding = 0;
			n++;
		}
		while (sig > 0) {
			if (request(p, sig, &si) || sig > ULP_NSIG ||
			    ulp_sig_gen(p->pvid) != p->gen)
				;
			else if (record(p, &si, &bits) == 0)
				n++;
			else { /* a real-time one: none comes while holding */
				held = si;
				holding = 1;
			}
			if (n >= DRAIN)
				break;
			sig = sys(SYS_rt_sigtimedwait, (long)(holding ? &standard : &all),
				  (long)&si, (long)&now, ULP_KSIGSET_SIZE, 0, 0);
		}
		forward(p, atomic_load(&bits), n);
	}
	return 0;
}

/* ---- in the task ---- */

/* Reap placeholder pid, which died; when it was not its ULP's end that killed it (that clears
 * the record first and reaps it itself), the ULP ends by SIGKILL, as a process killed so. */
static void ph_died(int pid)
{
	struct phrec *p;
	siginfo_t si;
	int want = pid, i;

	if (pid <= 0 || pid >= npids || (i = atomic_load(&by_pid[pid])) <= 0)
		return; /* not ours, or retiring (its ULP's end reaps it) */
	p = &recs[i - 1];
	if (!atomic_compare_exchange_strong(&p->pid, &want, 0))
		return;
	atomic_store(&by_pid[pid], 0);
	sys(SYS_waitid, P_PID, pid, (long)&si, WEXITED | WNOHANG | __WALL, 0, 0);
	if (ulp_sig_gen(i - 1) == p->gen) /* the same start of its ULP */
		ulp_sig_post(i - 1, SIGKILL, SI_KERNEL, 0, 0, 0);
}

/* The kernel's pid_max (pids are below it), or the most it can be. */
static long pid_max(void)
{
	char buf[32] = {0};
	long fd = sys(SYS_openat, AT_FDCWD, (long)"/proc/sys/kernel/pid_max", O_RDONLY, 0, 0, 0), n,
	     v = 0;
	int i;

	if (fd < 0)
		return 4194304; /* PID_MAX_LIMIT on 64-bit */
	n = sys(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	return v > 0 ? v : 4194304;
}

/* ULP_SIG_IDENT: a placeholder forwarded a signal, or died. */
static void ident_handler(int sig, siginfo_t *si, void *uc)
{
	struct ulp_cb *cur;
	uintptr_t pc = ulp_arch_trap_pc(uc);
	long v = (long)si->si_value.sival_ptr;

	(void)sig;
	if (!recs || ulp_sys_in_child())
		return;
	cur = ulp_current_cb();
	if (si->si_code == SI_QUEUE) {
		struct phrec *p = rec_of((int)(v >> 8));

		if (!p || atomic_load(&p->pid) != si->si_pid)
			return; /* not from a placeholder of ours */
		ulp_sig_notify(p->pvid, (int)(v & 0xff));
	} else if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED ||
		   si->si_code == CLD_EXITED) {
		ph_died(si->si_pid);
	} else {
		return;
	}
	/* The ULP running here was interrupted in its own code: its actions now, as the relay. */
	if (cur && pc >= cur->part_lo && pc < cur->part_hi && !ulp_spin_probing())
		ulp_sig_deliver(cur, uc);
}

/* exit_path: the memfd stays open in this process (close-on-exec), named through /proc. */
static void exit_program(void)
{
	unsigned char elf[256];
	size_t n = ulp_arch_exit_elf(elf, sizeof(elf));
	int fd = n ? pvas_fd_high(memfd_create("ulp-exit", MFD_CLOEXEC)) : -1;

	if (fd < 0)
		return;
	if (write(fd, elf, n) != (ssize_t)n) {
		close(fd);
		return;
	}
	snprintf(exit_path, sizeof(exit_path), "/proc/%d/fd/%d", (int)getpid(), fd);
}

int ulp_ph_fork = 1;

int ulp_ident_setup(struct pvas_region *r)
{
	const char *q = getenv("ULP_FORK_BY_PLACEHOLDER");
	int rc;

	if (recs)
		return 0;
	ulp_ph_fork = !(q && !strcmp(q, "0"));
	ulp_fork_copy_setup();
	npids = pid_max();
	recs = ulp_raw_mmap((size_t)r->nparts * sizeof(*recs), MAP_NORESERVE);
	stacks = ulp_raw_mmap((size_t)r->nparts * PH_STACK, MAP_NORESERVE);
	by_pid = ulp_raw_mmap((size_t)npids * sizeof(*by_pid), MAP_NORESERVE);
	if (!recs || !stacks || !by_pid)
		return -ENOMEM;
	/* On the interrupted stack, like the relay: it may run the ULP's handler there. */
	rc = ulp_trap_handler_install(ULP_SIG_IDENT, ident_handler, SA_RESTART);
	if (rc)
		return rc;
	nrecs = r->nparts;
	manager_pid = getpid();
	exit_program();
	return 0;
}

/* The last part of the program's path, as the kernel's comm (15 characters). A loop, not libc:
 * this runs in a PVAS task, where a first call through the PLT would bind it using TLS. */
static void set_comm(struct phrec *p, const char *exe)
{
	const char *b = exe, *c;
	size_t i;

	for (c = exe; *c; c++)
		if (*c == '/')
			b = c + 1;
	for (i = 0; i < sizeof(p->comm) - 1 && b[i]; i++)
		p->comm[i] = b[i];
	p->comm[i] = 0;
}

int ulp_ident_start(struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	unsigned long all = ~0ul, old;
	char wname[16] = {0};
	long pid;

	if (!p)
		return -EINVAL;
	p->tgid = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	p->pvid = cb->pvid;
	p->gen = ulp_sig_gen(cb->pvid);
	atomic_store(&p->alive, 0xffffffffu); /* not run yet */
	set_comm(p, cb->path[0] ? cb->path : cb->exe);
	/* Born with every signal blocked: a handler of the task copied into it must never run
	 * there (it would take the worker's state for its own). */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, ULP_KSIGSET_SIZE, 0, 0);
	/* Born with the program's name (a clone inherits its creator's comm): the ULP may read its
	 * /proc/self/status before the placeholder first runs (sys_proc.c opens it there). */
	sys(SYS_prctl, PR_GET_NAME, (long)wname, 0, 0, 0, 0);
	sys(SYS_prctl, PR_SET_NAME, (long)p->comm, 0, 0, 0, 0);
	pid = ulp_arch_clone(CLONE_VM | CLONE_FILES | ULP_SIG_IDENT,
			     stacks + (size_t)(cb->pvid + 1) * PH_STACK, ph_main, p);
	sys(SYS_prctl, PR_SET_NAME, (long)wname, 0, 0, 0, 0);
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, ULP_KSIGSET_SIZE, 0, 0);
	if (pid < 0)
		return (int)pid;
	/* In a group of its own (see the top), put there by its parent: were it to do it itself
	 * once it runs, it could undo a setpgid or setsid its ULP made first (sys_pgrp.c). */
	sys(SYS_setpgid, pid, pid, 0, 0, 0, 0);
	if (pid < npids)
		atomic_store(&by_pid[pid], cb->pvid + 1);
	atomic_store(&p->pid, (int)pid);
	cb->pid = (int)pid;
	return 0;
}

/* Ask placeholder pid to end by exec (it may be stopped: SIGCONT) and wait, a second at most,
 * until it has left the address space; it is killed if it has not. */
static void retire_wait(struct phrec *p, int pid)
{
	struct timespec ts = {0, 100 * 1000 * 1000};
	uint32_t v;
	int tries;

	if (exit_path[0] && send_ident(pid, p->tgid, (long)RETIRE) == 0) {
		sys(SYS_kill, pid, SIGCONT, 0, 0, 0, 0);
		for (tries = 0; tries < 10 && (v = atomic_load(&p->alive)) != 0; tries++)
			/* not _PRIVATE: the kernel wakes CLEAR_TID words as shared futexes */
			sys(SYS_futex, (long)&p->alive, FUTEX_WAIT, v, (long)&ts, 0, 0);
		if (atomic_load(&p->alive) == 0)
			return;
	}
	sys(SYS_kill, pid, SIGKILL, 0, 0, 0, 0);
}

void ulp_ident_exit(struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	siginfo_t si;
	int pid;

	if (!p || !(pid = atomic_exchange(&p->pid, 0)))
		return; /* none, or it died and its reaper has it */
	/* -1, retiring, until reaped: its end is no news (ph_died), and its exec makes its exit
	 * signal SIGCHLD, which the relay must not take for a ULP's child's. */
	if (pid < npids)
		atomic_store(&by_pid[pid], -1);
	retire_wait(p, pid);
	while (sys(SYS_waitid, P_PID, pid, (long)&si, WEXITED | __WALL, 0, 0) == -EINTR)
		;
	if (pid < npids)
		atomic_store(&by_pid[pid], 0);
}

long ulp_ident_parent_call(const struct ulp_cb *cb, long (*fn)(void *), void *arg)
{
	struct phrec *p = rec_of(cb->pvid);
	struct timespec ts = {0, 100 * 1000 * 1000};
	uint32_t v, unlocked = 0;
	int pid, rounds = 0, stopped = 0;
	long r;

	if (!p || !(pid = atomic_load(&p->pid)))
		return -ENOSYS;
	/* the ULP's threads, one at a time */
	while (!atomic_compare_exchange_strong(&p->call_lock, &unlocked, 1)) {
		sys(SYS_futex, (long)&p->call_lock, FUTEX_WAIT_PRIVATE, 1, (long)&ts, 0, 0);
		unlocked = 0;
	}
	p->call_fn = fn;
	p->call_arg = arg;
	atomic_store(&p->call_state, CALL_POSTED);
	r = send_ident(pid, p->tgid, (long)CALL) == 0 ? 0 : -ENOSYS;
	while (!r && (v = atomic_load(&p->call_state)) != CALL_DONE) {
		int gone = atomic_load(&p->pid) != pid || atomic_load(&p->alive) == 0;

		/* Not taken: stopped for 2 s, or not run for a minute (a loaded machine may not
		 * schedule it for seconds: await_ph), or gone. Withdrawn, unless taken meanwhile;
		 * taken by one that died before it answered (killed, its ULP ending): -EAGAIN, as
		 * what it did is not known (a fork made again would make a second child). */
		if ((v == CALL_POSTED && (stopped >= 20 || rounds >= 600)) || gone) {
			uint32_t posted = CALL_POSTED;

			if (atomic_compare_exchange_strong(&p->call_state, &posted, CALL_IDLE))
				r = -ETIMEDOUT;
			else if (gone && atomic_load(&p->call_state) != CALL_DONE)
				r = -EAGAIN;
			continue;
		}
		sys(SYS_futex, (long)&p->call_state, FUTEX_WAIT_PRIVATE, v, (long)&ts, 0, 0);
		rounds++;
		if (atomic_load(&p->call_state) == CALL_POSTED && ph_status(pid) == PH_STOPPED)
			stopped++;
	}
	if (!r)
		r = p->call_ret;
	atomic_store(&p->call_state, CALL_IDLE);
	atomic_store(&p->call_lock, 0);
	sys(SYS_futex, (long)&p->call_lock, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	return r;
}

void ulp_ident_chld_action(const struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	const struct ulp_ksigaction *a = &cb->sig.act[SIGCHLD];
	unsigned v = (a->handler == SIG_IGN ? CHLD_IGN : 0) |
		     (unsigned)(a->flags & (SA_NOCLDWAIT | SA_NOCLDSTOP));
	int pid;

	if (!p || ulp_sys_in_child() || !(pid = atomic_load(&p->pid)) ||
	    atomic_exchange(&p->chld_act, v) == v)
		return;
	/* Taken before sigaction returns: a child that ends next is reaped as it ends, or kept
	 * for the ULP's wait, as the action now says (a request sent and not waited for left a
	 * child that ended at once a zombie after SIG_IGN, and reaped it after SIG_DFL). */
	if (ulp_ident_parent_call(cb, chld_call, p) < 0)
		send_ident(pid, p->tgid, (long)CHLD); /* not taken (stopped): when it runs */
}

int ulp_ident_is_placeholder(int pid)
{
	return by_pid && pid > 0 && pid < npids && atomic_load(&by_pid[pid]) != 0;
}

/* 1 when "NAME:\t" in the /proc status text s (len bytes) is followed by a hex mask that is not
 * all zeros, or (NAME "State") by one of the letters in states. */
static int status_says(const char *s, long len, const char *name, const char *states)
{
	long i, k, m;

	for (i = 0; i < len; i++) {
		for (k = 0; name[k] && i + k < len && s[i + k] == name[k]; k++)
			;
		if (name[k] || i + k + 2 > len || s[i + k] != ':' || (i && s[i - 1] != '\n'))
			continue;
		for (k += i + 1; k < len && s[k] == '\t'; k++)
			;
		if (states) {
			for (m = 0; k < len && states[m] && states[m] != s[k]; m++)
				;
			return k < len && states[m];
		}
		for (; k < len && s[k] != '\n'; k++)
			if (s[k] != '0')
				return 1;
		return 0;
	}
	return 0;
}

/* What placeholder pid does, from /proc/PID/status: PH_RUNS when it runs or has a signal
 * pending (a forward or an answer to come), PH_STOPPED when stopped or dead (it answers nothing
 * now), 0 when it waits for a request with nothing pending, PH_UNKNOWN when it cannot look now. */
static int ph_status(int pid)
{
	char path[64], buf[2048];
	_Atomic int *making;
	long fd, n;
	int i = 0;

	put_str(path, &i, "/proc/");
	put_num(path, &i, pid);
	put_str(path, &i, "/status");
	path[i] = 0;
	/* A maker's window: the descriptor is nobody's, at a number the ULPs use. Outside one,
	 * another ULP's double close of that number closed it (a wrong close that ULP counted)
	 * and this close could then close a descriptor made meanwhile: a FIFO pair beside a ULP
	 * whose placeholder was slow counted one in 2 runs of 30 under load (until 27 Nov). */
	if (!ulp_fd_own_use_begin(&making))
		return PH_UNKNOWN; /* a thread of its ULP forking holds the call lock, say */
	fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	n = fd < 0 ? -1 : sys(SYS_read, fd, (long)buf, sizeof(buf), 0, 0, 0);
	if (fd >= 0)
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
	ulp_fd_make_end(making);
	if (n <= 0 || status_says(buf, n, "State", "TtZX"))
		return PH_STOPPED;
	if (status_says(buf, n, "State", "R") || status_says(buf, n, "SigPnd", NULL) ||
	    status_says(buf, n, "ShdPnd", NULL))
		return PH_RUNS;
	return 0;
}

/*
 * Wait until *word is no longer old: placeholder pid answered a request. A stopped placeholder
 * answers only once continued: after 2 s of it stopped, 0 (the caller goes on). A running one
 * may not be scheduled for seconds on a loaded machine: it is waited for (a minute at most, a
 * hang guard); a bound of 2 s in all made setsid fail with EAGAIN under load.
 */
static int await_ph(_Atomic uint32_t *word, uint32_t old, int pid)
{
	struct timespec ts = {0, 100 * 1000 * 1000};
	int rounds, stopped = 0;

	for (rounds = 0; rounds < 600 && stopped < 20 && atomic_load(word) == old; rounds++) {
		sys(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, old, (long)&ts, 0, 0);
		if (atomic_load(word) == old && ph_status(pid) == PH_STOPPED)
			stopped++;
	}
	return atomic_load(word) != old;
}

/* The placeholder takes the name in p->comm now, and says when it has; a stopped placeholder
 * does not answer: the caller goes on anyway (await_ph). */
static void rename_now(const struct ulp_cb *cb, struct phrec *p, uint32_t done)
{
	if (send_ident(cb->pid, p->tgid, (long)RENAME) != 0)
		return;
	await_ph(&p->name_done, done, cb->pid);
}

void ulp_ident_exec(struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	uint32_t done;

	if (!p || !cb->pid)
		return;
	done = atomic_load(&p->name_done);
	set_comm(p, cb->path[0] ? cb->path : cb->exe);
	rename_now(cb, p, done); /* named before the new program runs, as after execve */
}

int ulp_ident_name(struct ulp_cb *cb, const char *set, char *get)
{
	struct phrec *p = rec_of(cb->pvid);
	uint32_t done;
	size_t i;

	if (!p || !cb->pid)
		return -ESRCH;
	if (get) {
		memcpy(get, p->comm, sizeof(p->comm));
		return 0;
	}
	done = atomic_load(&p->name_done);
	for (i = 0; i < sizeof(p->comm) - 1 && set[i]; i++)
		p->comm[i] = set[i];
	p->comm[i] = 0;
	rename_now(cb, p, done);
	return 0;
}

void ulp_ident_follow_cwd(struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	uint32_t seq, done;

	if (!p || !cb->pid)
		return;
	p->fs_tid = ulp_worker_self()->tid;
	seq = atomic_fetch_add(&p->fs_req, 1) + 1;
	if (send_ident(cb->pid, p->tgid, (long)seq) != 0)
		return;
	/* This worker stays where it went until the placeholder is there too. A placeholder
	 * stopped by SIGSTOP does not answer: the ULP goes on, its path kept (fs.c, await_ph). */
	while ((int32_t)((done = atomic_load(&p->fs_done)) - seq) < 0 &&
	       await_ph(&p->fs_done, done, cb->pid))
		;
}

long ulp_ident_ppid(void)
{
	return manager_pid;
}

long ulp_ident_child_ppid(const struct ulp_cb *cb)
{
	const struct phrec *p = rec_of(cb->pvid);
	long r = sys(SYS_getppid, 0, 0, 0, 0, 0, 0);

	/* Still a child of the ULP's task: of the ULP. Reparented: the kernel's answer. */
	return p && cb->pid && r == p->tgid ? cb->pid : r;
}

/* ---- process groups and sessions (sys_pgrp.c) ---- */

/*
 * The placeholder holds the ULP's pid, so it is what the kernel's process groups can hold for
 * the ULP: while the ULP is in its task's group, its placeholder sits in a group of its own (see
 * the top); once the ULP leads or joins another group, its placeholder is in that group, so that
 * kill(-pgid) from anywhere reaches it (and forwards to the ULP), and the ULP's fork children
 * can join it. The placeholder is a child of the task: the task moves it (setpgid of a child).
 */
int ulp_ident_setpgid(const struct ulp_cb *cb, int pgid)
{
	if (!rec_of(cb->pvid) || !cb->pid)
		return -ESRCH;
	return (int)sys(SYS_setpgid, cb->pid, pgid ? pgid : cb->pid, 0, 0, 0, 0);
}

/*
 * setsid acts on its caller only: the placeholder is asked to call it. The kernel refuses a
 * group's leader, which the placeholder is of its own group: it first joins the task's group,
 * for as long as it takes to answer (a signal to the task's group meanwhile would reach the ULP
 * twice). A stopped placeholder does not answer: after 2 s stopped, -EAGAIN (it answers when
 * continued; its group is then the task's until the ULP asks again).
 */
int ulp_ident_setsid(const struct ulp_cb *cb)
{
	struct phrec *p = rec_of(cb->pvid);
	uint32_t done;
	long r;

	if (!p || !cb->pid)
		return -EPERM;
	r = sys(SYS_setpgid, cb->pid, sys(SYS_getpgid, 0, 0, 0, 0, 0, 0), 0, 0, 0, 0);
	if (r < 0)
		return (int)r;
	done = atomic_load(&p->sid_done);
	if (send_ident(cb->pid, p->tgid, (long)SETSID) != 0) {
		sys(SYS_setpgid, cb->pid, cb->pid, 0, 0, 0, 0);
		return -EPERM;
	}
	if (!await_ph(&p->sid_done, done, cb->pid))
		return -EAGAIN;
	/* refused (a group led by its pid has other members): back to a group of its own */
	if (p->sid_rc < 0)
		sys(SYS_setpgid, cb->pid, cb->pid, 0, 0, 0, 0);
	return p->sid_rc;
}

uint32_t ulp_ident_forwarded(const struct ulp_cb *cb)
{
	const struct phrec *p = rec_of(cb->pvid);

	return p ? atomic_load(&p->fwd_seq) : 0;
}

/*
 * A signal the ULP sent its own group reached its placeholder: wait until it is recorded for
 * the ULP, which then runs its action before its kill returns, as the kernel's sender does.
 * 1 s, then for as long as the placeholder runs or has a signal pending (a minute at most): a
 * loaded machine may not run it within the second (before 27 Nov a ULP whose group was
 * killed during its waitpid went on to exit 0). A stopped placeholder forwards when continued.
 */
void ulp_ident_wait_forward(const struct ulp_cb *cb, uint32_t seen)
{
	struct phrec *p = rec_of(cb->pvid);
	struct timespec ts = {0, 100 * 1000 * 1000};
	int tries;

	for (tries = 0; p && tries < 600 && atomic_load(&p->fwd_seq) == seen; tries++) {
		int st = tries >= 10 ? ph_status(cb->pid) : PH_RUNS;

		if (st != PH_RUNS && st != PH_UNKNOWN)
			break;
		sys(SYS_futex, (long)&p->fwd_seq, FUTEX_WAIT_PRIVATE, seen, (long)&ts, 0, 0);
	}
}

int ulp_ident_stopped(int pid)
{
	return ph_status(pid) == PH_STOPPED && sys(SYS_kill, pid, 0, 0, 0, 0, 0) == 0;
}

int ulp_ident_task_of(int pid, int *pvid)
{
	int i;

	if (!by_pid || pid <= 0 || pid >= npids || (i = atomic_load(&by_pid[pid])) <= 0 ||
	    atomic_load(&recs[i - 1].pid) != pid)
		return 0;
	*pvid = i - 1;
	return recs[i - 1].tgid;
}

/*
 * A child of the ULP was killed by a signal: a kill of the ULP's group may have reached it
 * before the ULP's own share, which its placeholder forwards a moment later. When that
 * placeholder has a signal pending or is running (it sleeps in rt_sigtimedwait otherwise), the
 * wait that reports the child waits until it has forwarded (a second at most), so that the ULP
 * is not told of the child's death before its own signal, which a process takes at once.
 */
void ulp_ident_settle(const struct ulp_cb *cb)
{
	uint32_t seen = ulp_ident_forwarded(cb);

	if (!rec_of(cb->pvid) || cb->pid <= 0)
		return;
	if (ph_status(cb->pid) == PH_RUNS)
		ulp_ident_wait_forward(cb, seen);
}
