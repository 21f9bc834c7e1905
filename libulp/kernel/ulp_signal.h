/* SPDX-License-Identifier: MIT */
/*
 * Signals of ULPs (signal.c): each ULP has its own dispositions, pending set, alternate stack and
 * timers, as a process has, and each of its threads its own mask. The masks are the runtime's
 * alone: the kernel's mask of a worker never blocks a signal a ULP may catch (a worker runs many
 * ULPs, and a mask left by one would hold back the signals of the next).
 *
 * The kernel sees one disposition per PVAS task: for every signal a ULP may catch it is the relay
 * (signal.c), which finds the ULP the signal is for and posts it there. The ULP runs the handler
 * itself, in its own context, when it next comes out of the runtime (the end of a trap, a
 * preemption tick) or at once when the relay interrupted its own code. docs/syscalls.md, "Signals".
 *
 * Everything here may run with a ULP's TLS loaded: raw system calls, no errno, no libc state.
 */
#ifndef ULP_KERNEL_ULP_SIGNAL_H
#define ULP_KERNEL_ULP_SIGNAL_H

#include <signal.h>

#include "proc.h"

/* Once per process, before ULPs run (hosted): the per-ULP tables, the relay's restorer. */
int ulp_sig_setup(struct pvas_region *r);
/* In a PVAS task's first thread: the relay becomes the kernel's action for every signal a ULP
 * may catch (raw). */
void ulp_sig_task_init(void);
/* A ULP's first run, in its own context before its program starts: nothing pending, no mask. */
void ulp_sig_start(struct ulp_cb *cb);
/* A ULP has ended (its exit path, any context of its task): its timers go. */
void ulp_sig_exit(struct ulp_cb *cb);
/* cb execs (exec.c, in its task, no thread of it running): handlers back to SIG_DFL (SIG_IGN
 * stays), flags gone, no alternate stack, its POSIX timers deleted; mask, pending set and alarm
 * stay. */
void ulp_sig_exec(struct ulp_cb *cb);
/* In a fork child of cb (a real process from now on): the ULP's dispositions become the kernel's
 * (ignored signals stay ignored across the child's execve). cleared: the clone reset the
 * handlers it copied to SIG_DFL (CLONE_CLEAR_SIGHAND), so only what differs is set. */
void ulp_sig_fork_child(struct ulp_cb *cb, void *uc, int cleared);
/* The same in the child process that is to execve a program for cb (one that cannot replace it
 * in place: sys_fork.c), which goes on from there, not from a trap frame: the mask of cb's
 * running thread becomes the child's kernel mask now. Before 27 Nov the program ran with none
 * of the ULP's blocked or ignored signals (`nohup python3`: SIGHUP not ignored). */
void ulp_sig_exec_child(struct ulp_cb *cb);

/* Post sig for ULP pvid (a process-directed signal): pending until the ULP runs its action.
 * code/pid/uid/value: what its siginfo says. 0, or -EAGAIN: a real-time signal the ULP has
 * too many of queued (sigqueue.c). */
int ulp_sig_post(int pvid, int sig, int code, int pid, int uid, long value);
/* The two halves of a post: record touches only the region's memory (a ULP's placeholder
 * process may call it, ident.c); notify ends a parked call of the ULP when the signal would act
 * there, from a thread of the ULP's task. */
int ulp_sig_record(int pvid, int sig, int code, int pid, int uid, long value);
/* A record whose pending bit goes to *bits, not yet to the ULP's pending set: the signals a
 * placeholder took at once become pending at once (ulp_sig_publish), as they are for a process
 * (a SIGUSR1 sent after 300 sigqueue reached the ULP before them: the kernel gave the
 * placeholder the lowest number first). */
int ulp_sig_record_to(int pvid, int sig, int code, int pid, int uid, long value,
		      _Atomic uint64_t *bits);
void ulp_sig_publish(int pvid, uint64_t bits);
/* The same for the kernel's SIGCHLD of a child's end or stop, si_utime and si_stime kept. */
int ulp_sig_record_chld(int pvid, const siginfo_t *si, _Atomic uint64_t *bits);
void ulp_sig_notify(int pvid, int sig);
/* A signal sig was posted to ULP pvid: its signalfds of that signal become readable (sigfd.c;
 * in a thread of the ULP's task, whose descriptors they are). */
void ulp_sigfd_notify(int pvid, int sig);
/* Park cb until a signal is posted to it (or the deadline, CLOCK_MONOTONIC ns; 0: none); 1: timed
 * out. A blocked signal ends it only when in the waitset (ulp_sig_set_waitset). sys_signal.c. */
int ulp_sig_park(struct ulp_cb *cb, long long deadline);
/* A ULP forked child pid (sys_fork.c), before recording it: an earlier child's end announced
 * under that pid is forgotten (it was reaped, its pid reused). Not at the reap: a scan that
 * looked before it would announce that end again. */
void ulp_sig_child_new(int pid);
/* cb recorded its new child pid (sys_fork.c): its SIGCHLD, if it ended before (the relay found
 * no ULP of it then). */
void ulp_sig_child_added(struct ulp_cb *cb, int pid);
/* The queued signals sent to thread u of cb become the process's (u execs). */
struct ulp_uthread;
void ulp_sig_adopt(struct ulp_cb *cb, struct ulp_uthread *u);
/* Partition pvid's start count: changes each time a ULP starts there. */
uint32_t ulp_sig_gen(int pvid);
/* Run the actions of the signals pending for cb that its running thread's mask lets through. uc:
 * the frame the ULP resumes from (NULL: none at hand). Returns how many handlers ran (a fatal
 * one does not return). */
int ulp_sig_deliver(struct ulp_cb *cb, void *uc);
/* The action of sig for the running thread of cb, now: ignore, end the ULP, or its handler. */
void ulp_sig_handle(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc);
/* A synchronous fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) of cb's code: 1 when the ULP's handler
 * ran (the frame resumes), 0 when the fault ends the ULP. */
int ulp_sig_fault(struct ulp_cb *cb, int sig, const siginfo_t *si, void *uc);

/* The signal mask of cb's running thread. */
unsigned long *ulp_sig_mask(struct ulp_cb *cb);
/* A signal is pending for ULP pvid that ends a parked call (not yet run). */
int ulp_sig_would_interrupt(int pvid);
/* How signals `set`, sent to one thread of ULP pvid, end that thread's parked call: 0 (none has
 * a handler or is fatal: ignored ones never interrupt), 2 (every one that does has a handler
 * with SA_RESTART), else 1. */
int ulp_sig_interrupts(int pvid, unsigned long set);
/* Pending for cb, any thread (sigpending). */
unsigned long ulp_sig_pending(struct ulp_cb *cb);
/* 1 when a signal pending for cb, or for its calling thread, is not blocked by that thread: what
 * ulp_sig_deliver and ulp_tg_deliver would run now. */
int ulp_sig_due(struct ulp_cb *cb);
/* The same for thread t of cb (a task of it, running or not). */
int ulp_sig_due_task(struct ulp_cb *cb, struct ulp_task *t);
/* Take one of `want` from cb's pending set: its number and siginfo, or 0. */
int ulp_sig_take(struct ulp_cb *cb, unsigned long want, siginfo_t *si);
/* What the ULP's threads block (for parked calls, which have no frame to read it from) and the
 * signals a wait takes (sigtimedwait, sigsuspend) even when blocked. */
void ulp_sig_set_blocked(struct ulp_cb *cb, unsigned long mask);
void ulp_sig_set_waitset(struct ulp_cb *cb, unsigned long set);
/* Whether a kernel action's handler is the relay. */
int ulp_sig_is_relay(void *handler);
/* The relay as the kernel's action for sig in this process (a ULP set an action). */
void ulp_sig_relay_on(int sig);
/* A ULP's action changed: what ends its parked calls follows. */
void ulp_sig_action_changed(struct ulp_cb *cb, int sig);

/* Timers whose expiry signals a ULP (timer_create with SIGEV_SIGNAL, alarm, setitimer): a kernel
 * timer (CLOCK clk) whose signal carries a record the relay maps back to the ULP. */
long ulp_sig_timer_create(struct ulp_cb *cb, int clk, int signo, long value, int *kid);
long ulp_sig_timer_delete(struct ulp_cb *cb, int kid);
/* The sigev_value its signal carries (a timer made without a sigevent carries its id). */
void ulp_sig_timer_value(struct ulp_cb *cb, int kid, long value);
/* alarm / ITIMER_REAL's timer of cb (made on first use); negative: -errno. */
long ulp_sig_alarm_timer(struct ulp_cb *cb);

/* CPU-time timers and limit (cputime.c). cb was charged CPU time (preempt.c's tick): the signals
 * its ITIMER_VIRTUAL, ITIMER_PROF and RLIMIT_CPU owe it now. */
void ulp_cputime_check(struct ulp_cb *cb);
/* cb's ITIMER_VIRTUAL or ITIMER_PROF (which): old[0] the CPU time left (0: off), old[1] the
 * interval, in ns; then, with set, set[0] (0: off) and set[1] become them. */
void ulp_cputime_itimer(struct ulp_cb *cb, int which, const uint64_t *set, uint64_t *old);
/* cb set its RLIMIT_CPU: looked at again at its next tick. */
void ulp_cputime_limit_changed(struct ulp_cb *cb);

/* ---- queued signals (sigqueue.c): real-time signals, each with its own siginfo ---- */

/* Signals 32..64 (the kernel's SIGRTMIN..SIGRTMAX) are queued; the others coalesce. */
#define ULP_SIG_QUEUED(s) ((s) >= 32)
#define ULP_SIG_QUEUED_BITS (~0ul << 31)
/* The most a ULP may have queued (its RLIMIT_SIGPENDING, if lower): docs/syscalls.md. */
#define ULP_SIGQ_MAX 1024
/* What one of them carries. */
struct ulp_sigq_info {
	int code, pid, uid, pad;
	long value;
};
/* How a signal is queued past the bound: BOUNDED (sigqueue, tgkill: -EAGAIN), OVER (kill and
 * the kernel's own: queued beyond it while one of that number is not, else pending without its
 * siginfo, as the kernel does), ONCE (a timer's: not again while queued, never refused). */
enum { ULP_SIGQ_BOUNDED, ULP_SIGQ_OVER, ULP_SIGQ_ONCE };
/* Once per process (hosted): the table for nparts partitions. */
int ulp_sigq_setup(unsigned nparts);
/* Partition pvid's queue emptied (its pages given back) with bound limit; the bound alone. */
void ulp_sigq_reset(int pvid, unsigned limit);
void ulp_sigq_set_limit(int pvid, unsigned limit);
/* Queue sig for ULP pvid (tag 0) or one of its threads (tag: sys_thread.c), its bit set in
 * *pend; 0, or -EAGAIN at the bound. Any context: no lock, no libc. */
int ulp_sigq_push(int pvid, int tag, int sig, const struct ulp_sigq_info *in,
		  _Atomic uint64_t *pend, int how);
/* Take the oldest queued sig of tag: 1, its siginfo in *out; 0: none (its bit in *pend cleared
 * when none is queued or being queued). */
int ulp_sigq_take(int pvid, int tag, int sig, struct ulp_sigq_info *out, _Atomic uint64_t *pend);
/* One of sig for tag is queued (or being queued). */
int ulp_sigq_has(int pvid, int tag, int sig);
/* Discard the queued signals of tag (-1: any) and sig (0: any): SIG_IGN, a thread's end. */
void ulp_sigq_flush(int pvid, int tag, int sig);
/* Queued signals of tag from become tag to's (an exec'ing thread's become the process's); the
 * signals moved, as bits. */
unsigned long ulp_sigq_retag(int pvid, int from, int to);

/* ---- identity (ident.c): a ULP's process id is its placeholder process's ---- */

/* Once per process, before ULPs run (hosted): the placeholder table, ULP_SIG_IDENT's handler. */
int ulp_ident_setup(struct pvas_region *r);
/* A ULP's start, in its task after ulp_sig_start: its placeholder, its pid in cb->pid. */
int ulp_ident_start(struct ulp_cb *cb);
/* Its exit path: the placeholder is killed and reaped. */
void ulp_ident_exit(struct ulp_cb *cb);
/* getppid of a ULP: the launcher; of a fork child of cb: cb's pid while its task is its parent. */
long ulp_ident_ppid(void);
/* pid is a placeholder process (live or ending): its SIGCHLD is none of a ULP's children's. */
int ulp_ident_is_placeholder(int pid);
/* 0 when ULP_FORK_BY_PLACEHOLDER=0: the worker makes a ULP's child processes (the task is their
 * kernel parent), as before 27 Nov. */
extern int ulp_ph_fork;
/* fn(arg) run by the ULP's placeholder, which holds its pid, so that the kernel's parent of the
 * children it forks there is the ULP (sys_fork.c); fn's result, -ENOSYS when the ULP has no
 * placeholder, -ETIMEDOUT when it did not take the call (stopped for 2 s, or gone), -EAGAIN
 * when it took it and died. The caller's worker waits meanwhile. */
long ulp_ident_parent_call(const struct ulp_cb *cb, long (*fn)(void *), void *arg);
/* The ULP's SIGCHLD action changed: its placeholder, its children's parent, takes the kernel's
 * part of it (SIG_IGN and SA_NOCLDWAIT reap children as they end, SA_NOCLDSTOP) before this
 * returns (a stopped one: once it runs). */
void ulp_ident_chld_action(const struct ulp_cb *cb);
/* The ULP exec'd (exec.c, host side, before the new program runs): its placeholder takes the new
 * program's name as its comm (ps, /proc/PID/comm). */
void ulp_ident_exec(struct ulp_cb *cb);
/* prctl(PR_SET_NAME) of the ULP: its placeholder takes the name (set: up to 15 bytes; its comm
 * in ps, /proc/PID/comm); get (16 bytes): the name it has. 0, or -ESRCH without a placeholder. */
int ulp_ident_name(struct ulp_cb *cb, const char *set, char *get);
/* The ULP's worker has gone to its new directory: its placeholder follows (fs.c). */
void ulp_ident_follow_cwd(struct ulp_cb *cb);
/* "/proc/PID/REST" of cb's placeholder (PID its own) into buf of len bytes, without libc: its
 * directory (fs.c: "cwd"), its /proc/self files (sys_proc.c). 0, or -ENAMETOOLONG. */
int ulp_ident_proc_path(const struct ulp_cb *cb, const char *rest, char *buf, size_t len);
long ulp_ident_child_ppid(const struct ulp_cb *cb);
/* Process groups (sys_pgrp.c): cb's placeholder joins group pgid (0: a group of its own), or
 * leads a session of its own (setsid's result, or -errno). */
int ulp_ident_setpgid(const struct ulp_cb *cb, int pgid);
int ulp_ident_setsid(const struct ulp_cb *cb);
/* How many signals cb's placeholder has forwarded; wait (1 s at most) until it forwards one
 * more than seen. */
uint32_t ulp_ident_forwarded(const struct ulp_cb *cb);
void ulp_ident_wait_forward(const struct ulp_cb *cb, uint32_t seen);
/* A child of cb was killed by a signal: wait (a second at most) while cb's placeholder has a
 * signal pending or runs, which may be cb's share of the same kill of its group. */
void ulp_ident_settle(const struct ulp_cb *cb);
/* Placeholder pid is stopped (SIGSTOP, SIGTSTP...), and alive. */
int ulp_ident_stopped(int pid);
/* The ULP took a stop signal's default action (signal.c): its threads wait, at their next
 * return from the runtime, until SIGCONT or its end. */
void ulp_sig_stopped_wait(struct ulp_cb *cb);
/* pid is a ULP's placeholder: its task's pid, and its partition in *pvid; else 0. */
int ulp_ident_task_of(int pid, int *pvid);

/* Signals whose default action ends the process, as bits (bit sig-1). */
#define ULP_SIG_BIT(s) (1ul << ((s)-1))
#define ULP_SIG_IGNORED_BY_DEFAULT                                                                 \
	(ULP_SIG_BIT(SIGCHLD) | ULP_SIG_BIT(SIGCONT) | ULP_SIG_BIT(SIGURG) |                       \
	 ULP_SIG_BIT(SIGWINCH) | ULP_SIG_BIT(SIGSTOP) | ULP_SIG_BIT(SIGTSTP) |                     \
	 ULP_SIG_BIT(SIGTTIN) | ULP_SIG_BIT(SIGTTOU))
#define ULP_SIG_UNBLOCKABLE (ULP_SIG_BIT(SIGKILL) | ULP_SIG_BIT(SIGSTOP))

#endif
