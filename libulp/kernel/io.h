/* SPDX-License-Identifier: MIT */
/*
 * Blocking system calls of ULPs, parked on the io_uring of their PVAS task (io_ring.c), the
 * emulations of those calls (io_calls.c) and the per-worker preemption timer (preempt.c).
 *
 * Everything here may run with a ULP's TLS loaded (in the SIGSYS handler, on the ULP's stack): no
 * __thread, no errno, raw system calls only. docs/syscalls.md explains the design.
 */
#ifndef ULP_KERNEL_IO_H
#define ULP_KERNEL_IO_H

#include <stdatomic.h>
#include <stdint.h>

#include "proc.h"
#include "sys.h"

struct ulp_io;

/* *v = max(*v, x), atomically (high-water marks: fds.c's table, sigfd.c's slots). */
static inline void ulp_atomic_max(_Atomic int *v, int x)
{
	for (int o = atomic_load(v); o < x;)
		if (atomic_compare_exchange_weak(v, &o, x))
			break;
}

/* Per-worker state of the ring and the preemption tick (struct ulp_io's ws[worker id]). */
struct ulp_io_worker {
	/* Its thread is between making a descriptor and recording it (fds.c's makers): its own
	 * cache line, as every maker's count is written twice per call and read only by closers */
	_Alignas(64) _Atomic int fd_making;
	_Atomic int sleeping;	    /* in the idle wait: the wake hook sends it ULP_SIG_WAKE */
	int fork_guard;		    /* its fork holds the task's closing flag (fds.c) */
	int timer;		    /* preemption timer (kernel id), -1: none */
	struct ulp_task *tick_task; /* what ran at the last tick, and its switch count */
	uint64_t tick_switches;
	unsigned yield_streak; /* yields in a row with nothing else ready (yield policy) */
	uint32_t preempts;     /* tasks its tick switched out (io_calls.c's turn_first) */
	uint64_t cpu_seen;     /* the worker thread's CPU time at the last tick (accounting) */
	unsigned period_us;    /* the tick's period now: ulp_quantum_us, or ulp_spin_quantum_us */
	/* 1 while its tick runs at the long period: every live task of the instance runs, none
	 * waits (preempt.c); read by other threads of the task (ulp_preempt_kick_alone) */
	_Atomic int alone;
	unsigned ticks_seen; /* ticks that found tick_task running, without a switch between */
	/* The tick's handler runs here with the tick blocked (preempt.c): released by a switch */
	int tick_held;
	/* Where the last tick's handler here returned to, and that task's switch count: a tick
	 * that finds it there again came while that handler ran (preempt.c, stale_tick) */
	struct ulp_task *ret_task;
	uintptr_t ret_pc, ret_sp;
	uint64_t ret_switches;
	/* The cwd and umask its thread has now (fs.c): a ULP's when fs_known */
	uint64_t cwd_dev, cwd_ino;
	unsigned umask;
	int fs_known;
};

/* One parked call: lives on the ULP's stack (in the trap handler's frame) until it resumes. */
struct ulp_io_wait {
	struct ulp_task *task;
	struct ulp_io *io;
	int pvid;
	uint32_t sig_gen; /* the ULP's signal count when the call began */
	int interruptible;
	const int *dying; /* its ULP's thread group is ending (struct ulp_tg's flag); NULL: none */
	/* Signals sent to the waiting thread alone (pthread_kill; struct ulp_uthread) and its mask
	 * while it waits; NULL: the ULP has no thread group. */
	const _Atomic unsigned long *thread_pend;
	unsigned long thread_mask;
	int pending; /* CQEs still to come; the task is resumed once it is 0 and done */
	int done;    /* something happened: an event, the timeout, a signal */
	int res;     /* result of the first completion */
	int timed_out;
	int interrupted; /* 1: a signal; 2: one whose handler has SA_RESTART */
	int cancelling;
	int open_inflight; /* its request is a FIFO open in io-wq (io_ring.c's iowq_kick) */
	uint64_t open_dev, open_ino; /* the FIFO it opens (ulp_io_open_pending) */
	int data_op; /* its request moves data (ULP_IO_READV/WRITEV): its result wins */
	const struct ulp_io_op *ops; /* its requests (on the parked call's stack), for a resubmit */
	int nops;
	struct ulp_io_wait *next, *prev; /* the ring's list of parked calls */
	struct {
		long long tv_sec, tv_nsec; /* layout of struct __kernel_timespec */
	} ts;
	unsigned ts_flags;
	int ts_set;
};

/* Per-worker set-up (timer, wake-up mask; the ring of its task on worker 0). Raw calls. */
void ulp_io_worker_init(struct ulp_worker *w);
/* A PVAS task's set-up before its workers start (io_ring.c). */
void ulp_io_task_init(void);
/* Once per process before workers start: handlers, quantum from ULP_QUANTUM_US. Hosted libc. */
int ulp_io_install(struct pvas_region *r);

/* Whether fd is open on a FIFO that a FIFO open parked on the ring (not yet reaped) opens: its
 * descriptor, perhaps, made in io-wq and not yet recorded (fds.c). */
int ulp_io_open_pending(long fd);
/* How many FIFO opens parked on the ring are in flight (not yet reaped). */
int ulp_io_opens(void);
/* The ring of the calling worker's task; NULL when it has none (io_uring unavailable). */
struct ulp_io *ulp_io_self(void);
/* The descriptor-ownership table of the calling worker's task (fds.c): owner[fd] is the pvid + 1
 * of the ULP that made fd, 0 for none; mapped at the first record (NULL before); every fd
 * recorded is below hi. NULL: no instance. */
struct ulp_fd_table {
	_Atomic(_Atomic int32_t *) owner;
	_Atomic int hi;
	_Atomic int own_ring; /* a ULP made an io_uring: descriptors may change unseen, no notes */
	_Atomic int closing; /* a close of (or dup2 onto) an unrecorded number is at work (fds.c) */
	/* The forks whose child has not yet closed the other ULPs' descriptors: a page shared with
	 * the children (fds.c, ulp_fd_fifo_gate); mapped at the first fork. */
	_Atomic(struct ulp_fd_forks *) forks;
	/* The ULPs' private opens of the files they lock (sys_lock.c); mapped at the first. */
	_Atomic(struct ulp_locks *) locks;
	/* FIFO bytes passed between ULPs (fifo_pass.c); mapped at the first use. */
	_Atomic(struct ulp_fifo_pass *) pass;
};
struct ulp_fd_table *ulp_io_fd_table(void);
/* Descriptor ownership (fds.c). own: fd was made by cb's call (0-2 and fds past the table are
 * never recorded); disown: [lo, hi] are closed (by anyone) or about to be; close_owned: close
 * every descriptor cb owns in the calling task (cloexec: only those with FD_CLOEXEC) -- its end,
 * its execve; own_cmsg: the SCM_RIGHTS descriptors a received message brought. */
void ulp_fd_own(struct ulp_cb *cb, long fd);
void ulp_fd_own_pvid(int pvid, long fd);
void ulp_fd_disown(long lo, long hi);
/* cb closed fd, its own: forgotten unless another ULP has made and recorded it since. */
void ulp_fd_forget(struct ulp_cb *cb, long fd);
/* A call that may make descriptors: make_begin before its kernel call (it waits while a claim is
 * at work), make_end with what begin gave once its descriptors are recorded (the worker's count
 * of makers: the window never leaves its worker, as it never parks). */
_Atomic int *ulp_fd_make_begin(void);
/* A maker's window for a descriptor the runtime opens and closes at once for itself (ident.c's
 * /proc reads): no close of a number nobody recorded meets it meanwhile. 1: open it now, then
 * ulp_fd_make_end(*making); 0: not now (a closer or another worker's fork holds the closing
 * flag, and waiting for it could wait for the caller itself: look later). While this worker's
 * own fork holds the flag no closer runs: 1, with no window. */
int ulp_fd_own_use_begin(_Atomic int **making);
void ulp_fd_make_end(_Atomic int *making);
/* A descriptor the runtime makes for a call of cb's and closes before that call returns (the
 * pidfds a wait4 parks on, the exec's directory): made as a maker (call nr, one descriptor) and
 * recorded as cb's, so that no other ULP's double close reaches it; drop: closed and forgotten. */
long ulp_fd_make_own(struct ulp_cb *cb, long nr, long a, long b, long c, long d);
void ulp_fd_drop(struct ulp_cb *cb, long fd);
/* The calling task's makers inside their window, all workers (struct ulp_io_worker). */
int ulp_io_fd_makers(void);
/* Before a close of (or a dup2 onto) fd, which no ULP had recorded: no maker is inside its window
 * then, nor can enter until ulp_fd_claim_end (always called after, whatever it said). Says fd's
 * owner now (pvid + 1), 0: nobody's and open, -EBADF: nobody's and not open. */
int ulp_fd_claim(long fd);
void ulp_fd_claim_end(void);
void ulp_fd_close_owned(struct ulp_cb *cb, int cloexec);
/* A new child process of cb (fork, posix_spawn, a non-PIE exec) starts with a copy of the
 * task's table, made inside clone: the descriptors other ULPs had then are closed there, as
 * another process's are not in a process's table (a child of one shell held another's pipe,
 * whose reader then never saw EOF). Which ones those were is known from the table's words
 * before the clone (fork_begin, in the parent) and after it (close_others, in the child: the
 * words it sees then), with no maker inside its window at the clone, and the FIFO opens of
 * other ULPs still in flight on the ring then (their descriptor exists before it is recorded:
 * ulp_io_fifo_opening).
 * Until the child has closed them, the task's blocking FIFO opens wait (fifo_gate): such an
 * open could pair with the child's copy of an end its ULP closed already. fork_end in the
 * parent once clone returned (pid: the child, or an error); child_end in a fork child (not a
 * posix_spawn one, which shares the parent's memory) after close_others. fds.c says why each
 * is needed. */
#define ULP_FD_FORK_WORDS 256
struct ulp_fd_fork {
	int32_t *was; /* words 3 .. 3 + n - 1 before the clone; NULL: none kept */
	int n;
	int held;   /* the fork holds the task's closing flag (a posix_spawn child lowers it) */
	int mapped; /* was is mapped (more words than buf holds) */
	int known;  /* the words were read: a number past them was never recorded */
	_Atomic uint32_t *settle; /* the child's word in the shared page (NULL: none) */
	uint32_t ticket;	  /* what the word holds while the child is at work */
	int32_t buf[ULP_FD_FORK_WORDS];
};
void ulp_fd_fork_begin(const struct ulp_cb *cb, struct ulp_fd_fork *f);
void ulp_fd_fork_end(struct ulp_fd_fork *f, long pid);
void ulp_fd_close_others(const struct ulp_cb *cb, struct ulp_fd_fork *f);
void ulp_fd_fork_child_end(struct ulp_fd_fork *f);
void ulp_fd_fifo_gate(void);
/* In a child of ULP pvid: whether a ring open of another ULP, in flight (in io-wq, not yet
 * reaped), is opening the FIFO (dev, ino), which its descriptor may be (io_ring.c). A
 * posix_spawn child looks at the task's parked calls themselves (it shares the memory), a fork
 * child at its copy, made whole: fork_hold(1) before the clone keeps them from changing during
 * it (the parked calls' lock), fork_hold(0) after it, in the parent and in the child. */
int ulp_io_fifo_opening(int pvid, uint64_t dev, uint64_t ino);
/* hold: 1 by a thread of the task, a pid (> 1) by that ULP's placeholder (whoever waits for
 * the lock takes it over if the placeholder ends holding it: io_ring.c), 0 release. */
void ulp_io_fork_hold(int hold);
/* revents of fd for ev without waiting, a zero-timeout poll asked again when a signal to the
 * worker interrupts it (EINTR); negative: the error of poll itself (io_calls.c). */
long ulp_io_poll0(int fd, short ev);
/* The ULP (pvid + 1) that made fd, 0: none recorded. */
int ulp_fd_owner(long fd);
/* The table's word for fd, owner and notes (0: nothing kept: 0-2, nobody's, no table); a note
 * (ULP_FD_*) is added only if the word is still *word, read before (a new file at that number
 * has another), and then into *word too. */
uint32_t ulp_fd_word(long fd);
void ulp_fd_note(long fd, uint32_t *word, uint32_t note);
/* The same, taking the note away (where it is still *word) */
void ulp_fd_unnote(long fd, uint32_t *word, uint32_t note);
#define ULP_FD_WORD_ID 0x07ffffffu   /* a word's owner and generation, without the notes */
#define ULP_FD_WAITED 0x08000000u    /* its last read was answered in a turn (io_calls.c) */
#define ULP_FD_FIFO_READ 0x10000000u /* a FIFO's read end, open for reading alone */
#define ULP_FD_POLLS 0x20000000u     /* ... and is a FIFO or a socket (fstat) */
#define ULP_FD_NO_NOWAIT 0x40000000u /* the file refused RWF_NOWAIT */
#define ULP_FD_NOT_SOCK 0x80000000u  /* getsockopt said ENOTSOCK */
/* A FIFO's bytes passed from a writing ULP to a reading ULP of the task without the kernel
 * (fifo_pass.c). offer: the reader of fd (word: its table word) offers buf while other ULPs run
 * (NULL: no offer: not a FIFO's read end, no word, a fork child); withdraw: after that turn,
 * -EAGAIN when nothing was passed, else the read's result. give: a blocking write of buf to fd:
 * -EAGAIN when it passed nothing (the write is made as usual), else its result. copy_fault:
 * from the fault handler, 1 when the fault was a pass's copy, which then returns -EFAULT. */
struct ulp_fifo_offer;
struct ulp_fifo_offer *ulp_fifo_offer(int fd, uint32_t word, void *buf, size_t len);
long ulp_fifo_withdraw(struct ulp_fifo_offer *o);
long ulp_fifo_give(int fd, uint32_t word, const void *buf, size_t n);
int ulp_fifo_copy_fault(void *uc);
/* fds.c: the table's word for fd changed (a record, a forget): what was learnt of it goes */
void ulp_fifo_forget(int fd);
/* Close (cloexec: mark close-on-exec) the descriptors in [lo, hi] that cb made. */
void ulp_fd_range_owned(struct ulp_cb *cb, long lo, long hi, int cloexec);
struct msghdr;
void ulp_fd_own_cmsg(struct ulp_cb *cb, const struct msghdr *mh);
/* Call s (one of ulp_sys_fd_new's), which returned r, made descriptor r. */
struct ulp_sys;
int ulp_fd_makes(const struct ulp_sys *s, long r);

/* Record locks (sys_lock.c): each ULP locks a file through a private open of it, a runtime
 * descriptor. is_private: fd is one (a program may not close it nor dup2 onto it); closing: cb
 * is about to close fd (close, dup2 onto it, close_range, execve), its locks on fd's file go,
 * closing_range the same for each of [lo, hi]; end: all of cb's go (its end); child: a new child
 * process closes every private in its table (it holds none of its parent's locks). */
int ulp_lock_is_private(long fd);
void ulp_lock_closing(struct ulp_cb *cb, long fd);
void ulp_lock_closing_range(struct ulp_cb *cb, long lo, long hi);
void ulp_lock_end(struct ulp_cb *cb);
void ulp_lock_child(void);

/* A ULP's own standard descriptors (stdfds.c): where a ULP (whose task's table other ULPs
 * share) redirected its 0-2 (dup2/dup3 onto them), at numbers from ULP_STD_LOW up, below the
 * launcher's. std_fd: the descriptor the ULP means by fd; std_is_own: fd is one of those; std_args:
 * the 0-2 among call s's descriptor arguments (ulp_sys_fd_args) made the ULP's; std_dup: dup2/dup3
 * onto 0-2; std_close: close(fd 0-2) drops its own; std_exec: execve's close-on-exec of its own fd,
 * 1 when it had one; std_child: a new child process's table gets the ULP's 0-2. */
#define ULP_STD_LOW 736
int ulp_std_fd(const struct ulp_cb *cb, long fd);
int ulp_std_is_own(const struct ulp_cb *cb, long fd);
struct ulp_sys;
void ulp_std_args(const struct ulp_cb *cb, struct ulp_sys *s);
long ulp_std_dup(struct ulp_cb *cb, const struct ulp_sys *s);
void ulp_std_close(struct ulp_cb *cb, long fd);
int ulp_std_exec(struct ulp_cb *cb, long fd);
void ulp_std_child(const struct ulp_cb *cb);
/* At a ULP's start (ulp_start): /dev/null as its own stdin when its launcher asked for it
 * (std_null_in: pvas_ulp_attr.stdin_null). */
void ulp_std_start(struct ulp_cb *cb);
/* open of /dev/stdout, /proc/self/fd/1 and the like when that descriptor is the ULP's own: 1 and
 * the result in *ret (its copy opened again), else 0. */
int ulp_std_open(const struct ulp_cb *cb, const char *path, int flags, long *ret);
int ulp_std_readlink(const struct ulp_cb *cb, const char *path, char *out, long size, long *ret);
/* The descriptors that poll, ppoll, select and pselect6 find in memory: 0-2 made the ULP's own
 * for the call (std_mem_in: in the program's pollfd array, noted in *undo; select's sets are
 * copied into *undo, as the program's may be smaller than the own numbers need), the program's
 * numbers back after it, with the results at them (std_mem_out, given the call's result). */
#define ULP_STD_SET_LONGS (1024 / (8 * sizeof(unsigned long)))
struct ulp_std_undo {
	unsigned short poll_at[8]; /* pollfd entries changed, their 0-2 in poll_fd */
	unsigned char poll_fd[8], npoll;
	long sel_n;		    /* select: the program's nfds; 0: sets untouched */
	int sel_own[3];		    /* the own descriptor put for 0-2 (0: none) */
	unsigned long *sel_user[3]; /* the program's sets */
	unsigned long sel_set[3][ULP_STD_SET_LONGS];
};
void ulp_std_mem_in(const struct ulp_cb *cb, struct ulp_sys *s, struct ulp_std_undo *undo);
void ulp_std_mem_out(const struct ulp_sys *s, const struct ulp_std_undo *undo, long r);
void ulp_std_vfork_child(void);
/* w's per-worker state; NULL before its instance has one. */
struct ulp_io_worker *ulp_io_worker(struct ulp_worker *w);
/* Scheduler hooks (struct ulp_sched_hooks): idle, poll and wake of the ULP layer's instances. */
void ulp_io_hook_idle(struct ulp_worker *w, const _Atomic uint32_t *word, uint32_t seq, void *arg);
void ulp_io_hook_poll(struct ulp_worker *w, void *arg);
void ulp_io_hook_wake(struct ulp_runtime *rt, int n, void *arg);
/* Its descriptor (-1: none), which the trap keeps the program from closing. */
int ulp_io_fd(void);

/* Park the current task until one of the requests completes (poll on fds, a timeout, a connect,
 * a read or write) or a signal of the ULP arrives. n requests; a timeout when wt->ts_set (with
 * IORING_TIMEOUT_* flags). Returns 0 once resumed; wt says why. A read or write (one request
 * alone) is done by the ring itself: wt->res is its result even when a signal or the timeout
 * came first, once it moved data. */
struct ulp_io_op {
	int kind; /* ULP_IO_POLL, ULP_IO_CONNECT, ULP_IO_OPENAT, ULP_IO_READV, ULP_IO_WRITEV */
	int fd;	  /* the fd polled, connected, read or written; openat's dirfd */
	unsigned events;  /* poll events; openat's flags */
	const void *addr; /* connect's sockaddr; openat's path; the iovec array */
	unsigned len;	  /* connect's address length; openat's mode; the iovec count */
	long long off;	  /* read and write: the file offset, -1: the file position */
};
#define ULP_IO_POLL 1
#define ULP_IO_CONNECT 2
#define ULP_IO_OPENAT 3
#define ULP_IO_READV 4
#define ULP_IO_WRITEV 5
int ulp_io_park(struct ulp_io *io, struct ulp_io_wait *wt, const struct ulp_io_op *ops, int n);
/* Park the current ULP until one of fds[0..n) has events, timeout_ms passes or (intr) a signal
 * of the ULP comes (-EINTR; with SA_RESTART the handler runs and it returns 0, so the caller
 * looks again, as the kernel restarts the call; intr 2: -EINTR also then, for calls the kernel
 * never restarts); 0 otherwise. -ENOSYS: no ring (the caller waits the blocking way). */
#define ULP_IO_WAIT_FDS_MAX 256
/* Before a blocking call parks: the worker's ready ULPs run once (io_calls.c); 1: some ran, the
 * caller tries again. */
int ulp_io_yield_before_park(void);
long ulp_io_wait_fds(struct ulp_cb *cb, const int *fds, int n, unsigned events, int timeout_ms,
		     int intr);
/* The same, timeout_us microseconds */
long ulp_io_wait_fds_us(struct ulp_cb *cb, const int *fds, int n, unsigned events,
			long long timeout_us, int intr);
/* Start a wait record for the current ULP (snapshots its signal count). */
void ulp_io_wait_init(struct ulp_io *io, struct ulp_io_wait *wt, struct ulp_cb *cb,
		      int interruptible);
/* A signal with a ULP handler arrived for the ULP since wt began, or is pending for the waiting
 * thread and not blocked: 0, 1, or 2 (SA_RESTART); 1 as well once the ULP is dying (exit_group,
 * a fatal signal): the call ends and its thread with it. */
int ulp_io_signalled(struct ulp_io_wait *wt);

/* Reap completions (from the scheduler loop, the tick, after a park). Never blocks. */
void ulp_io_poll(struct ulp_worker *w);
/* Idle: wait for a completion or a wake-up (timeout_ns 0: none). */
void ulp_io_idle_wait(struct ulp_worker *w, long long timeout_ns);

/* A signal was posted to ULP pvid that ends its parked call (restart: its handler has
 * SA_RESTART, so a restartable call goes on waiting); nparts: the region's. From any context,
 * the relay included. */
void ulp_io_signal_note(int pvid, unsigned nparts, int restart);
/* A parked call of this task may have to end early: its ULP is dying (its group's flag is set:
 * a thread parked in epoll_wait with no timeout kept a crashed MPI rank from ever ending), or a
 * signal was sent to its thread alone (tgkill). A worker looks at the parked calls at its next
 * reap; each sees the flag or its pending bit (ulp_io_signalled). */
void ulp_io_recheck_waiters(void);

/* 0: read/write never try RWF_NOWAIT (ULP_IO_RWF_NOWAIT=0; tests of the 6.1 path). */
extern int ulp_io_rwf_nowait;
/* 1: sockets take RWF_NOWAIT on this kernel (6.18 does, 6.1 not), so a refusal means no socket. */
extern int ulp_io_sock_rwf_nowait;
/* A read or write that would block is done by the ring (io_calls.c): 2 also for a file that
 * refuses RWF_NOWAIT (a FIFO: kernels whose io_uring tries such a file by poll, 6.6 on), 1 only
 * for one that said EAGAIN (a regular file waiting for the disk), 0 never (ULP_IO_RING_RW). */
extern int ulp_io_ring_rw;

/* Yield policy of a trapped sched_yield: no bouncing between workers; nap when only yielders. */
long ulp_io_yield(struct ulp_cb *cb);

/* Preemption (preempt.c). */
extern unsigned ulp_quantum_us;
extern unsigned ulp_spin_quantum_us;
void ulp_preempt_worker_init(struct ulp_worker *w);
void ulp_preempt_arm(struct ulp_worker *w, int on);
/* Charge the CPU time the worker's thread used since its last tick to the ULP it runs now, as
 * the tick would (a CPU clock read: sys_proc.c), so that the ULP's count is current. */
void ulp_preempt_account_now(struct ulp_worker *w);
/* Unblock the tick on w's thread if a tick's handler there blocked it (preempt.c): before w
 * switches to a ULP's task (the switch_in hook, proc.c) and before a ULP's signal handler runs
 * (signal.c), so that the ULP's code is preemptible. Costs a few loads otherwise. */
void ulp_preempt_release(struct ulp_worker *w);
/* The switch_in hook's part (proc.c): ulp_preempt_release, and the tick of a ULP alone comes
 * back to the quantum (preempt.c). */
void ulp_preempt_switch_in(struct ulp_worker *w);
/* At the end of a trapped call on w: a worker that ticked seldom, as nothing waited in its task
 * (preempt.c), ticks at the quantum again when the call made work wait (it made or woke a
 * thread). Called only while ulp_preempt_alone_n, the workers that tick seldom now (in every
 * task: one load on the fast path otherwise), is not 0. */
extern _Atomic int ulp_preempt_alone_n;
void ulp_preempt_after_call(struct ulp_worker *w);
/* After a signal was posted to a ULP of the task of w (signal.c's ulp_sig_notify, on any worker
 * w): each other worker whose ULP threads compute alone, ticking seldom (preempt.c), is kicked to
 * take it now. Here, alone_here: when the signal that the relay handles in frame ucv came over
 * the running ULP's code, it takes it at once (over runtime code: at a kick after it). */
void ulp_preempt_kick_alone(struct ulp_worker *w);
/* A kick (ULP_SIG_KICK) to worker w's kernel thread: the ULP thread running there looks at its
 * marks (preempt.c, kicked). */
void ulp_worker_kick(const struct ulp_worker *w);
void ulp_preempt_alone_here(struct ulp_worker *w, void *ucv);

#endif
