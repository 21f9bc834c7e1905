/* SPDX-License-Identifier: MIT */
/*
 * Emulated system calls: the handler ABI and the dispatch table.
 *
 * The seccomp filter (trap.c) traps, from code in the PVAS region, exactly the syscall numbers that
 * have a handler in ulp_sys_table (sys_table.c); the SIGSYS handler looks the number up there and
 * calls the handler. Every other syscall of a ULP runs natively, unseen.
 *
 * A handler runs in the SIGSYS handler, on the ULP's own stack, with the ULP's TLS loaded: no libc
 * call that touches TLS (errno, stdio, the stack-protector canary), raw system calls only (sys.h);
 * the worker is ulp_worker_self() or cb->task.worker. It may
 *   - return the syscall's result (a value, or -errno): it goes to the ULP's return register;
 *   - switch away and come back (ulp_task_yield, or block the task and let a waker requeue it):
 *     the kernel's signal frame stays on the ULP's stack, so the handler simply returns once the
 *     task runs again, possibly on another worker;
 *   - end the ULP with ulp_sys_end(), which does not return.
 *
 * To emulate one more syscall:
 *   1. write `long ulp_sys_NAME(struct ulp_cb *cb, struct ulp_sys *s)` in the file of its domain
 *      (sys_mem.c, sys_proc.c, sys_signal.c, sys_thread.c, sys_io.c; calls only one architecture
 *      has go in libulp/arch/<arch>/sys_arch.c) and declare it below;
 *   2. add `[SYS_NAME] = ulp_sys_NAME` to ulp_sys_table in sys_table.c (or to ULP_ARCH_SYS_TABLE
 *      in libulp/arch/<arch>/sys_arch.h, with the handler in ULP_ARCH_SYS_HANDLERS). That one
 *      line also makes the filter trap it;
 *   3. list it in docs/syscalls.md and add a test under tests/integ/.
 */
#ifndef ULP_KERNEL_SYSCALL_H
#define ULP_KERNEL_SYSCALL_H

#include <stddef.h>
#include <stdint.h>

#include "sys_arch.h"

struct ulp_cb;

/* One trapped call: its number, its six arguments and the signal context it came with. */
struct ulp_sys {
	long nr;
	long a[6];
	void *uc; /* ucontext_t of the SIGSYS frame (arch.h: ulp_arch_trap_*) */
};

/* A handler's type: declare one as `ulp_sys_handler ulp_sys_NAME;`, define it as
 * `long ulp_sys_NAME(struct ulp_cb *cb, struct ulp_sys *s)`. */
typedef long ulp_sys_handler(struct ulp_cb *cb, struct ulp_sys *s);
typedef ulp_sys_handler *ulp_sys_fn;

/* Indexed by syscall number; NULL: not trapped (runs natively). */
extern const ulp_sys_fn ulp_sys_table[ULP_SYS_NR_MAX];

/* Run the handler of call nr for cb with the trap context uc, as the SIGSYS handler does (result
 * in uc's return register, then the thread's pending signals). trap.c. */
void ulp_trap_call(struct ulp_cb *cb, long nr, void *uc);
/* Whether pc lies in the vDSO's code (a ULP's own call there: its user time, as a process's). */
int ulp_trap_in_vdso(uintptr_t pc);
/* The same for the fast path of a ULP with other threads, but for the signals: 1 (result in *ret)
 * when one is due, which the caller runs from a kernel signal frame (fastcall.c); else 0. */
int ulp_trap_call_fast(struct ulp_cb *cb, long nr, void *uc, long *ret);

/* Fast path (fastcall.c): read ULP_FASTCALL and set up, once, before any ULP runs; a trap of call
 * nr at the site in uc (may rewrite that site). */
void ulp_fast_init(void);
void ulp_fast_trapped(struct ulp_cb *cb, long nr, void *uc);
/* pc lies in cb's trampolines: the runtime's code, where no signal of the ULP runs (a handler
 * would see it interrupted there; the fast path's end or the next tick runs it). */
int ulp_fast_in_slots(struct ulp_cb *cb, uintptr_t pc);
/* The ULP execs (exec.c): the old program's rewritten sites are gone, its mask stays. */
void ulp_fast_exec(struct ulp_cb *cb);
/* 1 when rewriting is on (ULP_FASTCALL is not 0 and the CPU allows it). */
int ulp_fast_on(void);
/* Rewrite the code at pc of cb with patch (over an ulp_arch_*_patch) into cb's next free
 * trampoline slot (spare: the one after it, writable too, or 0 when there is none; patch returns
 * 1 when it used both): 0, or 1 when both were used; -ENOSPC when no slot is left; -EALREADY when
 * pc lies in code refused before; else patch's -errno, and but for -EAGAIN (try again later) the
 * code [refuse[0], refuse[1]) is remembered as refused (patch may widen it from [pc, pc+1)). Only
 * while no other thread of cb runs. */
typedef int (*ulp_fast_patch_fn)(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot,
				 uintptr_t spare, uintptr_t refuse[2]);
int ulp_fast_rewrite(struct ulp_cb *cb, uintptr_t pc, ulp_fast_patch_fn patch);

/* Wait loops that yield (spinyield.c): read ULP_SPINYIELD, once, after ulp_fast_init; a tick
 * found the running thread of cb spinning at the pc of uc (may rewrite that loop). */
void ulp_spin_init(void);
void ulp_spin_tick(struct ulp_cb *cb, void *uc);
/* A fault on this thread in a waiting thread's probe (another task's loop run by the scheduler):
 * uc now returns from the probe, and 1; else 0, the fault is no probe's. */
int ulp_spin_probe_fault(void *uc);
/* 1 while this thread runs a waiting thread's probe: runtime code, never preempted. */
int ulp_spin_probing(void);
/* The ULP execs (sys_io.c), in its task: the close-on-exec descriptors it owns go (fds.c), and
 * the task's others too when it is its task's only ULP (sole). */
void ulp_io_exec_fds(struct ulp_cb *cb, int sole);

/* End the ULP: exit status (low 8 bits) or the signal that killed it. Never returns. */
void ulp_sys_end(struct ulp_cb *cb, int status, int sig) __attribute__((noreturn));
/* End the calling kernel process (a fork child of a ULP) by sig, or with status. */
void ulp_sys_die(int status, int sig) __attribute__((noreturn));

/* Whether [lo, lo+len) lies in the part of cb's partition the program may map (not the control
 * block). */
int ulp_sys_range_ok(const struct ulp_cb *cb, uintptr_t lo, size_t len);

/* The TLS register value the ULP runs with (set: loaded at once, the ULP being the running task).
 * For the arch handlers, which see the control block only through this header. */
void ulp_sys_tls_set(struct ulp_cb *cb, uintptr_t tls);
uintptr_t ulp_sys_tls_get(const struct ulp_cb *cb);

/* memory (sys_mem.c) */
ulp_sys_handler ulp_sys_brk, ulp_sys_mmap, ulp_sys_munmap, ulp_sys_mremap, ulp_sys_mprotect,
    ulp_sys_madvise;
/* process (sys_proc.c); ulp_sys_kill serves kill, tkill and tgkill */
ulp_sys_handler ulp_sys_exit, ulp_sys_kill, ulp_sys_sched_yield, ulp_sys_seccomp, ulp_sys_prctl,
    ulp_sys_getrusage, ulp_sys_times, ulp_sys_readlink, ulp_sys_getpid, ulp_sys_getppid,
    ulp_sys_priority;
/* process: cwd and umask (fs.c); ulp_sys_chdir serves chdir and fchdir */
ulp_sys_handler ulp_sys_chdir, ulp_sys_umask, ulp_sys_chroot;
/* open of the ULP's own /proc/self/cmdline or environ (sys_proc.c): 1 and the result in *ret
 * (an fd holding its strings, or -errno); 0 for any other file. */
int ulp_sys_self_open(struct ulp_cb *cb, long dirfd, const char *path, int flags, long *ret);
/* In a child process of cb (child mode, sys_fork.c): readlink(at), open(at) and execve(at) of
 * its own /proc/self/exe, cmdline, environ, made the program's: 1 with the result in *ret, or 0
 * (an execve of the exe link with *path set to the program's path). */
int ulp_sys_child_self(struct ulp_cb *cb, struct ulp_sys *s, const char **path, long *ret);
/* clock_gettime of a CPU clock for cb (sys_proc.c); other clocks: the kernel's. */
struct timespec;
long ulp_sys_cpu_clock(struct ulp_cb *cb, long clk, struct timespec *ts);
ulp_sys_handler ulp_sys_clock_gettime;
/* A child process of cb ended and was waited for, having used ru (its own and its waited-for
 * descendants'): add it to cb's RUSAGE_CHILDREN (sys_proc.c). */
struct rusage;
void ulp_sys_kid_usage(struct ulp_cb *cb, const struct rusage *ru);
/* process: children (sys_fork.c); ulp_sys_fork serves fork, vfork and clone of a process,
 * ulp_sys_execve execve and execveat */
ulp_sys_handler ulp_sys_fork, ulp_sys_execve, ulp_sys_wait4, ulp_sys_waitid;
/* kill(0, sig) and the like from cb, for its children's side (sys_fork.c): sig to each of its
 * descendant processes still in its task's process group. */
void ulp_sys_kill_kids(struct ulp_cb *cb, int sig);
/* pid is a child process of cb not yet waited for (sys_fork.c). */
int ulp_sys_is_kid(struct ulp_cb *cb, int pid);
/* System call nr (wait4, waitid, setpgid) about a child of the ULP, made by the child's kernel
 * parent: the task, or, when the task's call finds no such child of its own (ECHILD, ESRCH), the
 * ULP's placeholder, which makes the ULP's forks (sys_fork.c). */
long ulp_sys_as_parent(struct ulp_cb *cb, long nr, long a, long b, long c, long d, long e);
/* process groups and sessions (sys_pgrp.c); ulp_sys_getpgrp is x86_64's getpgrp (sys_arch.h) */
ulp_sys_handler ulp_sys_setpgid, ulp_sys_getpgid, ulp_sys_getpgrp, ulp_sys_setsid, ulp_sys_getsid,
    ulp_sys_ioctl;
/* cb's process group as it sees it (its own, or its task's); the group its fork children start
 * in (0: its task's, where the kernel puts them); a child's getpgid or getsid (nr) answer id as
 * cb sees it (its own when cb leads a session: its children are in its task's). */
long ulp_pgrp_of(const struct ulp_cb *cb);
int ulp_pgrp_kids(const struct ulp_cb *cb);
long ulp_pgrp_kid_view(const struct ulp_cb *cb, long nr, long id);
/* kill(target, sig) with target 0 or < -1 from cb when cb left its task's group: 1 and the
 * result in *ret; 0 when cb is in its task's group (ulp_sys_kill's own case). */
int ulp_pgrp_kill(struct ulp_cb *cb, int target, int sig, long *ret);
/* In a fork child of a ULP (a real process now): 1, and its calls go to ulp_sys_child. */
int ulp_sys_in_child(void);
/* 1 in a fork child, a process with its own copy of memory (not posix_spawn's CLONE_VM child),
 * which holds this ULP's partition and none of the other ULPs' (fork_copy.c). */
int ulp_sys_forked(void);
ulp_sys_handler ulp_sys_child;
/* signals (sys_signal.c); ulp_sys_alarm is x86_64's alarm (sys_arch.h) */
ulp_sys_handler ulp_sys_rt_sigaction, ulp_sys_rt_sigprocmask, ulp_sys_sigaltstack,
    ulp_sys_rt_sigpending, ulp_sys_rt_sigsuspend, ulp_sys_rt_sigtimedwait, ulp_sys_rt_sigqueueinfo,
    ulp_sys_rt_tgsigqueueinfo, ulp_sys_setitimer, ulp_sys_getitimer, ulp_sys_alarm,
    ulp_sys_timer_create, ulp_sys_timer_delete;
/* signalfd of a ULP (sigfd.c): ulp_sys_signalfd serves signalfd4 and signalfd, ulp_sys_read
 * read (a signalfd's, else ulp_sys_io_block's) */
ulp_sys_handler ulp_sys_signalfd, ulp_sys_read;
/* ppoll, pselect6, epoll_pwait: their signal mask while they wait (sys_signal.c), the waiting
 * ulp_sys_io_block's */
ulp_sys_handler ulp_sys_masked_wait;
/* threads (sys_thread.c); ulp_sys_exit_thread serves exit (this thread; exit_group is
 * ulp_sys_exit) */
ulp_sys_handler ulp_sys_clone, ulp_sys_clone3, ulp_sys_set_tid_address, ulp_sys_rseq,
    ulp_sys_exit_thread, ulp_sys_gettid, ulp_sys_set_robust_list, ulp_sys_get_robust_list,
    ulp_sys_sched_getaffinity, ulp_sys_sched_setaffinity, ulp_sys_futex, ulp_sys_sched_policy;
/* In a new fork child of cb (sys_fork.c): the affinity cb set, its nice value, scheduling policy
 * and I/O priority (its placeholder's) become the child's, the kernel's (sys_thread.c). */
void ulp_sys_sched_child(struct ulp_cb *cb, int inherited);
/* credentials (sys_cred.c): setuid, setgid, setreuid, setregid, setresuid, setresgid, setfsuid,
 * setfsgid, setgroups, capset, unshare, setns, personality, prctl (ulp_sys_cred_prctl's
 * options); a change makes the ULP a process of its own: ulp_sys_as_child (sys_fork.c)
 * continues it in a fork child that makes call s there (in which it returns s's result), the
 * ULP ending with that child's status; when s fails there, the child ends and the ULP gets the
 * error; -EPERM for a ULP with other threads. */
ulp_sys_handler ulp_sys_cred;
/* ptrace (sys_cred.c): the ULP becomes a process of its own at its first request, as for a
 * credential change (ulp_sys_as_child); PTRACE_TRACEME of the ULP itself: -EPERM */
ulp_sys_handler ulp_sys_ptrace;
long ulp_sys_as_child(struct ulp_cb *cb, struct ulp_sys *s);
/* 1: prctl option op is of the credentials' kind (PR_SET_NO_NEW_PRIVS...), ulp_sys_cred's. */
int ulp_sys_cred_prctl(long op);
/* In a new child process of cb: the no_new_privs cb set (sys_cred.c). */
void ulp_cred_child(const struct ulp_cb *cb);
/* fcntl (sys_lock.c): record locks (F_SETLK, F_SETLKW, F_GETLK) as the ULP's own, the rest
 * ulp_sys_fd_new's */
ulp_sys_handler ulp_sys_fcntl;
/* flock (sys_lock.c): a wait for the lock parks the ULP between tries */
ulp_sys_handler ulp_sys_flock;
/* msgsnd, msgrcv, semop, semtimedop, mq_timedsend, mq_timedreceive (sys_ipc.c): their waits park
 * the ULP */
ulp_sys_handler ulp_sys_ipc_wait;
/* resource limits (sys_rlimit.c): ulp_sys_rlimit serves getrlimit, setrlimit and prlimit64 of
 * the ULP (its placeholder's limits); in its child processes (sys_fork.c), in a new fork child
 * ulp_rlimit_child makes them the child's (RLIMIT_AS and RLIMIT_DATA kept for its execve),
 * ulp_rlimit_child_call answers those calls (forked: a fork child, not a CLONE_VM one), and
 * ulp_rlimit_exec sets the kept ones before the kernel's execve, which gives them back when the
 * exec failed (ulp_rlimit_exec_failed). */
struct ulp_rlimit_saved {
	uint64_t old[2][2]; /* RLIMIT_AS, RLIMIT_DATA before: soft, hard */
	int set[2];
};
ulp_sys_handler ulp_sys_rlimit;
void ulp_rlimit_child(struct ulp_cb *cb, int forked, int inherited);
/* 1 when the ULP set its own RLIMIT_AS or RLIMIT_DATA (res), kept by the runtime: *cur, *max */
int ulp_rlimit_own(struct ulp_cb *cb, int res, uint64_t *cur, uint64_t *max);
long ulp_rlimit_child_call(struct ulp_cb *cb, struct ulp_sys *s, int forked);
void ulp_rlimit_exec(struct ulp_cb *cb, int forked, struct ulp_rlimit_saved *sv);
void ulp_rlimit_exec_failed(const struct ulp_rlimit_saved *sv);
/* RLIMIT_NOFILE of the ULP itself, around trapped call s whose handler is fn (trap.c): before
 * it, -EBADF or -EINVAL for a dup2, dup3 or F_DUPFD onto a number at or past the limit, else 0;
 * after it (result r), a new descriptor at or past it closed again, -EMFILE; else r. */
long ulp_rlimit_fd_pre(struct ulp_cb *cb, const struct ulp_sys *s, ulp_sys_fn fn);
long ulp_rlimit_fd_post(struct ulp_cb *cb, const struct ulp_sys *s, ulp_sys_fn fn, long r);
/* The task's descriptor table can hold numbers below want: its soft RLIMIT_NOFILE raised (its hard
 * one too where it may; else up to it). A ULP's own limit stays its placeholder's. */
void ulp_rlimit_task_nofile(uint64_t want);
/* I/O (sys_io.c); ulp_sys_io_block (io_calls.c) serves every call that may block: it parks the ULP
 * on its task's io_uring */
ulp_sys_handler ulp_sys_close, ulp_sys_close_range, ulp_sys_dup2, ulp_sys_io_block;
/* a call on descriptors, trapped only when one is 0-2 (ulp_sys_arg_traps): the kernel's, on the
 * ULP's own 0-2 (stdfds.c) */
ulp_sys_handler ulp_sys_std_call;
/* calls that make descriptors (fds.c): one returned (ulp_sys_fd_new: open_by_handle_at,
 * socket, dup, eventfd...), or two written to an int[2] (ulp_sys_fd_pair: pipe, socketpair) */
ulp_sys_handler ulp_sys_fd_new, ulp_sys_fd_pair;
/* the fast path's return through the trap (fastcall.c) */
ulp_sys_handler ulp_sys_fast_return;

/* Calls the filter traps only for some values of their second argument (the low 32 bits), or
 * (std set) when one of their descriptor arguments (ulp_sys_fd_args) is 0, 1 or 2 (a ULP's own
 * standard descriptors, stdfds.c): the others run natively, unseen (sys_table.c; the handler
 * still takes any value, as the fast path may bring it every call of a site). */
#define ULP_SYS_ARG_TRAP_MAX 5
struct ulp_sys_arg_trap {
	int nr;
	unsigned n;
	uint32_t val[ULP_SYS_ARG_TRAP_MAX];
	unsigned std;
};
extern const struct ulp_sys_arg_trap ulp_sys_arg_traps[];
extern const unsigned ulp_sys_n_arg_traps;
/* Which arguments of a trapped call are descriptors (bit i: argument i), for a ULP's own 0-2
 * (stdfds.c): the calls whose handlers pass them on to the kernel. close, close_range, dup2 and
 * dup3 are not here: their handlers know about 0-2. */
extern const uint8_t ulp_sys_fd_args[ULP_SYS_NR_MAX];
/* calls only this architecture has (libulp/arch/<arch>/sys_arch.c) */
ulp_sys_handler ULP_ARCH_SYS_HANDLERS;

#endif
