/* SPDX-License-Identifier: MIT */
/*
 * The completion source of a scheduler instance (a PVAS task, or the launching process): one
 * io_uring per process, set up by raw system calls. liburing is not used: its calls set errno
 * (TLS) and this code runs with a ULP's TLS loaded, or with none at all in PVAS tasks.
 *
 * A ULP whose call would block arms polls (or a connect, a timeout) here and is suspended; the
 * submission happens in the suspend's after-callback, once its context is saved, so a completion
 * can never resume a task that is still running. Every worker reaps completions at each turn of
 * its scheduler loop and at each preemption tick, and idle workers sleep in io_uring_enter on the
 * ring: a completion wakes them. Work queued by another thread or another process wakes them with
 * tgkill(ULP_SIG_WAKE), which they leave blocked except inside that wait (io_uring_enter's
 * sigmask makes the unblock and the sleep atomic, as ppoll does), so a wake-up sent before they
 * sleep is not lost.
 *
 * Completions carry a pointer to the wait record (on the parked ULP's stack); all the requests of
 * one record share that user_data, so one IORING_ASYNC_CANCEL_ALL ends the others once one fired.
 * The record's fields change under cq_lock only, and the task is resumed once its last CQE came.
 */
#include "io.h"
#include "plock.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define RING_ENTRIES 256
#define CQ_ENTRIES 4096
#define IOWQ_MAX_WORKERS 4096
#define IOWQ_KICK_NS 20000000 /* iowq_kick */
#define UD_CANCEL 1ull	      /* low bit of user_data: the CQE of a cancel request */
#define FORK_OPENS 64

struct ulp_io {
	int fd; /* -1: no ring (io_uring refused); the per-worker states still serve preemption */
	int tgid;
	struct ulp_runtime *rt;
	uint32_t sq_lock, cq_lock; /* cq_lock: 1 held, or the pid of the placeholder holding it */
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *sq_flags;
	struct io_uring_sqe *sqes;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	void *ring_map;
	size_t ring_len, sqes_len;
	struct ulp_io_wait *waiters; /* parked calls, under cq_lock */
	_Atomic int kick;	     /* a ULP signal arrived: look at the parked calls */
	_Atomic int opens;	     /* FIFO opens in io-wq, not yet completed (iowq_kick) */
	/* Per ULP (pvid): a count of signals posted to it that end a parked call, times 2, plus 1
	 * when the last had SA_RESTART (signal.c decides which). */
	_Atomic uint32_t *sig_gen;
	unsigned sig_gen_n;
	/* The FIFO opens in flight at a fork's clone, kept under cq_lock by ulp_io_fork_hold: what
	 * a fork child looks at instead of the parked calls, which lie in the other ULPs'
	 * partitions, not copied into it (fork_copy.c). nfork_opens > FORK_OPENS: more than fit,
	 * any counts. */
	unsigned nfork_opens;
	struct {
		int pvid;
		uint64_t dev, ino;
	} fork_opens[FORK_OPENS];
	struct ulp_fd_table fdt; /* who made each descriptor of the task (fds.c) */
	unsigned nworkers;
	struct ulp_io_worker ws[]; /* by worker id */
};

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static int is_err(long r)
{
	return (unsigned long)r > -4096UL;
}

static void *raw_mmap(size_t len, int fd, long off)
{
	long p =
	    sys(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
		fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE : MAP_SHARED | MAP_POPULATE,
		fd, off);
	return is_err(p) ? NULL : (void *)p;
}

/* The instance's state (outside the workers: the launching process's instance, ulp_rt). */
static struct ulp_io *io_of(struct ulp_worker *w)
{
	return ulp_sched_ctx(w ? w->rt : &ulp_rt);
}

struct ulp_io *ulp_io_self(void)
{
	struct ulp_io *io = io_of(ulp_worker_self());

	return io && io->fd >= 0 ? io : NULL;
}

struct ulp_fd_table *ulp_io_fd_table(void)
{
	struct ulp_io *io = io_of(ulp_worker_self());

	return io ? &io->fdt : NULL;
}

struct ulp_io_worker *ulp_io_worker(struct ulp_worker *w)
{
	struct ulp_io *io = io_of(w);

	return io && w->id < io->nworkers ? &io->ws[w->id] : NULL;
}

int ulp_io_fd(void)
{
	struct ulp_io *io = ulp_io_self();

	return io ? io->fd : -1;
}

/* ---- set-up ---- */

#define RING_FD_MIN 900 /* far from the descriptors programs use and count on (0, 1, 2, 3...) */

static struct ulp_io *ring_create(struct ulp_runtime *rt)
{
	struct io_uring_params p;
	struct ulp_io *io;
	char *sq, *cq;
	long fd, hi;
	size_t sq_len, cq_len;

	size_t len = sizeof(*io) + rt->nworkers * sizeof(io->ws[0]);
	unsigned i;

	io = raw_mmap(len, -1, 0);
	if (!io)
		return NULL;
	io->nworkers = rt->nworkers;
	io->rt = rt;
	io->tgid = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	for (i = 0; i < io->nworkers; i++)
		io->ws[i].timer = -1;
	io->fd = -1;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = CQ_ENTRIES;
	fd = sys(SYS_io_uring_setup, RING_ENTRIES, (long)&p, 0, 0, 0, 0);
	if (is_err(fd))
		goto fail;
	/* A program that closes every descriptor above 2, or dup2()s onto a low one, must not hit
	 * the ring: move it high (close of it is refused by the trap). */
	hi = sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, RING_FD_MIN, 0, 0, 0);
	if (!is_err(hi)) {
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
		fd = hi;
	}
	if (!(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP) ||
	    !(p.features & IORING_FEAT_EXT_ARG))
		goto fail_fd; /* older than 5.11: stay with native blocking calls */
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	io->ring_len = sq_len > cq_len ? sq_len : cq_len;
	io->ring_map = raw_mmap(io->ring_len, (int)fd, IORING_OFF_SQ_RING);
	io->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	io->sqes = raw_mmap(io->sqes_len, (int)fd, IORING_OFF_SQES);
	if (!io->ring_map || !io->sqes)
		goto fail_fd;
	sq = cq = io->ring_map;
	io->sq_head = (unsigned *)(sq + p.sq_off.head);
	io->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	io->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	io->sq_array = (unsigned *)(sq + p.sq_off.array);
	io->sq_flags = (unsigned *)(sq + p.sq_off.flags);
	io->cq_head = (unsigned *)(cq + p.cq_off.head);
	io->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	io->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	io->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	/* Blocking FIFO opens each hold an io-wq thread until their partner opens; with the
	 * default bound (4 per CPU) the partners queue behind them and never run. */
	{
		unsigned max[2] = {IOWQ_MAX_WORKERS, IOWQ_MAX_WORKERS};

		sys(SYS_io_uring_register, fd, IORING_REGISTER_IOWQ_MAX_WORKERS, (long)max, 2, 0,
		    0);
	}
	io->fd = (int)fd;
	return io;
fail_fd:
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
fail:
	return io; /* no ring: blocking calls stay native; preemption still works */
}

/*
 * In a PVAS task before its workers start: the ring's descriptor goes to RING_FD_MIN or above, and
 * growing the descriptor table that far once the workers share it waits for an RCU grace period
 * (expand_fdtable's synchronize_rcu: 8-12 ms per task on the 2-vCPU VM, measured with strace).
 * Grown now, while the task has one thread, it costs an allocation.
 */
void ulp_io_task_init(void)
{
	long fd = sys(SYS_eventfd2, 0, EFD_CLOEXEC, 0, 0, 0, 0);

	if (is_err(fd))
		return;
	if (!is_err(sys(SYS_dup3, fd, RING_FD_MIN + 64, O_CLOEXEC, 0, 0, 0)))
		sys(SYS_close, RING_FD_MIN + 64, 0, 0, 0, 0, 0);
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
}

/* One for the address space: every PVAS task's first worker takes it, and a task can be killed
 * while it holds it, setting its ring up (pvas_destroy_force right after pvas_spawn). Held as a
 * plain spin lock it stayed held, and every later task's workers spun on it, never running a
 * ULP (pvas-api's thousand-ULP case hung in CI, 27 Nov): a lock of plock.h, taken over from a
 * dead holder, whose half-made ring was its own. */
static uint32_t setup_lock;

void ulp_io_worker_init(struct ulp_worker *w)
{
	struct ulp_runtime *rt = w->rt;
	unsigned long wake = 1ul << (ULP_SIG_WAKE - 1);

	/* ULP_SIG_WAKE stays blocked but inside the idle wait (see the top of this file). */
	sys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&wake, 0, 8, 0, 0);
	/* The first worker of the instance to start sets the ring up, in its own process (the
	 * ring's descriptor lives in that process's table). */
	if (!ulp_sched_ctx(rt)) {
		ulp_plock_lock(&setup_lock, (uint32_t)sys(SYS_getpid, 0, 0, 0, 0, 0, 0));
		if (!ulp_sched_ctx(rt)) {
			struct ulp_io *io = ring_create(rt);

			if (io)
				ulp_sched_set_ctx(rt, io);
		}
		ulp_spin_unlock(&setup_lock);
	}
	ulp_preempt_worker_init(w);
}

/* ---- submission ---- */

static struct io_uring_sqe *sqe_get(struct ulp_io *io)
{
	unsigned tail = *io->sq_tail, head;

	for (;;) {
		head = __atomic_load_n(io->sq_head, __ATOMIC_ACQUIRE);
		if (tail - head < RING_ENTRIES)
			break;
		/* Full (only with many requests in flight at once): let the kernel take them. */
		sys(SYS_io_uring_enter, io->fd, (long)(tail - head), 0, 0, 0, 0);
	}
	return &io->sqes[tail & *io->sq_mask];
}

static void sqe_push(struct ulp_io *io)
{
	unsigned tail = *io->sq_tail;

	io->sq_array[tail & *io->sq_mask] = tail & *io->sq_mask;
	__atomic_store_n(io->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

static void submit(struct ulp_io *io, unsigned n)
{
	long r;

	do
		r = sys(SYS_io_uring_enter, io->fd, n, 0, 0, 0, 0);
	while (r == -EINTR || r == -EAGAIN || r == -EBUSY);
}

/* Under sq_lock. */
static void prep_cancel(struct ulp_io *io, struct ulp_io_wait *wt)
{
	struct io_uring_sqe *s = sqe_get(io);

	memset(s, 0, sizeof(*s));
	s->opcode = IORING_OP_ASYNC_CANCEL;
	s->addr = (uint64_t)(uintptr_t)wt;
	s->cancel_flags = IORING_ASYNC_CANCEL_ALL;
	s->user_data = (uint64_t)(uintptr_t)wt | UD_CANCEL;
	sqe_push(io);
}

/* Under cq_lock: the wait is over; end its other requests, or resume it when none is left. */
static void wait_finish(struct ulp_io *io, struct ulp_io_wait *wt)
{
	if (wt->pending > 0) {
		if (!wt->cancelling) {
			wt->cancelling = 1;
			wt->pending++; /* the cancel's own CQE */
			ulp_spin_lock(&io->sq_lock);
			prep_cancel(io, wt);
			ulp_spin_unlock(&io->sq_lock);
			submit(io, 1);
		}
		return;
	}
	if (wt->prev)
		wt->prev->next = wt->next;
	else
		io->waiters = wt->next;
	if (wt->next)
		wt->next->prev = wt->prev;
	wt->next = wt->prev = NULL;
	ulp_task_resume(wt->task);
}

struct park_arg {
	struct ulp_io *io;
	struct ulp_io_wait *wt;
	const struct ulp_io_op *ops;
	int n;
};

/* Under sq_lock: the request of op for the wait wt (its user_data). */
static void prep_op(struct ulp_io *io, struct ulp_io_wait *wt, const struct ulp_io_op *op)
{
	struct io_uring_sqe *s = sqe_get(io);

	memset(s, 0, sizeof(*s));
	s->fd = op->fd;
	s->user_data = (uint64_t)(uintptr_t)wt;
	if (op->kind == ULP_IO_CONNECT) {
		s->opcode = IORING_OP_CONNECT;
		s->addr = (uint64_t)(uintptr_t)op->addr;
		s->off = op->len;
	} else if (op->kind == ULP_IO_OPENAT) {
		/* In io-wq, blocking: the inline try would add O_NONBLOCK, which makes a
		 * FIFO open fail (ENXIO) or not wait for the writer. */
		s->opcode = IORING_OP_OPENAT;
		s->flags = IOSQE_ASYNC;
		wt->open_inflight = 1;
		atomic_fetch_add(&io->opens, 1);
		s->addr = (uint64_t)(uintptr_t)op->addr;
		s->open_flags = op->events;
		s->len = op->len;
	} else if (op->kind == ULP_IO_READV || op->kind == ULP_IO_WRITEV) {
		s->opcode = op->kind == ULP_IO_READV ? IORING_OP_READV : IORING_OP_WRITEV;
		s->addr = (uint64_t)(uintptr_t)op->addr;
		s->len = op->len;
		s->off = (uint64_t)op->off;
		wt->data_op = 1;
	} else {
		s->opcode = IORING_OP_POLL_ADD;
		s->poll32_events = op->events;
	}
	sqe_push(io);
}

/*
 * cq_lock is held by a ULP's placeholder across the clone it makes for the ULP's fork
 * (ulp_io_fork_hold), and a placeholder can be killed there: by the new child itself (a `kill
 * -KILL $PPID` in the child can run before the placeholder is scheduled again, on a loaded
 * machine) or by a SIGKILL to the ULP's pid. The lock was then held for ever and every worker of
 * the task, and the next placeholder to fork, spun (process.sh's `kill -9 $PPID` case with -w 2
 * hung 2 runs in 15, and once in CI, 27 Nov). So a placeholder holds the lock with its pid as
 * the lock's value, and whoever spins on a lock held so looks now and then whether that process
 * has ended (ulp_plock_lock, plock.c), and then takes the lock over; reap's try does it here.
 * The placeholder changes nothing under it: it only keeps the parked calls from changing during
 * the clone. 1: the caller holds the lock now.
 */
static int holder_gone(struct ulp_io *io)
{
	uint32_t pid = __atomic_load_n(&io->cq_lock, __ATOMIC_RELAXED);

	return pid > 1 && ulp_pid_ended(pid) &&
	       __atomic_compare_exchange_n(&io->cq_lock, &pid, 1, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* A worker's hold: 1 (never taken over: the worker's process is the one waiting). */
static void lock_cq(struct ulp_io *io)
{
	ulp_plock_lock(&io->cq_lock, 1);
}

/* Runs on the next task's stack once the parked task is saved. */
static void park_after(void *argv)
{
	struct park_arg *a = argv;
	struct ulp_io *io = a->io;
	struct ulp_io_wait *wt = a->wt;
	uint64_t ud = (uint64_t)(uintptr_t)wt;
	unsigned n = 0;
	int i;

	lock_cq(io);
	wt->next = io->waiters;
	wt->prev = NULL;
	if (io->waiters)
		io->waiters->prev = wt;
	io->waiters = wt;
	wt->pending = a->n + (wt->ts_set ? 1 : 0);
	wt->ops = a->ops; /* on the parked call's stack, as wt is */
	wt->nops = a->n;
	/* A signal that came before the record was listed: the call ends now. */
	if (wt->interruptible && ulp_io_signalled(wt)) {
		wt->interrupted = ulp_io_signalled(wt);
		wt->done = 1;
		wt->pending = 0;
		wait_finish(io, wt);
		ulp_spin_unlock(&io->cq_lock);
		return;
	}
	ulp_spin_lock(&io->sq_lock);
	for (i = 0; i < a->n; i++) {
		prep_op(io, wt, &a->ops[i]);
		n++;
	}
	if (wt->ts_set) {
		struct io_uring_sqe *s = sqe_get(io);

		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_TIMEOUT;
		s->fd = -1;
		s->addr = (uint64_t)(uintptr_t)&wt->ts;
		s->len = 1;
		s->timeout_flags = wt->ts_flags;
		s->user_data = ud;
		sqe_push(io);
		n++;
	}
	ulp_spin_unlock(&io->sq_lock);
	ulp_spin_unlock(&io->cq_lock);
	if (n)
		submit(io, n);
}

void ulp_io_wait_init(struct ulp_io *io, struct ulp_io_wait *wt, struct ulp_cb *cb,
		      int interruptible)
{
	memset(wt, 0, sizeof(*wt));
	wt->io = io;
	wt->pvid = cb->pvid;
	wt->interruptible = interruptible;
	wt->dying = cb->tg ? &cb->tg->dying : NULL;
	if (cb->tg) {
		wt->thread_pend = &ulp_tg_current(cb)->sigpending;
		wt->thread_mask = *ulp_sig_mask(cb);
	}
	if (io->sig_gen && (unsigned)cb->pvid < io->sig_gen_n) {
		wt->sig_gen = atomic_load(&io->sig_gen[cb->pvid]) & ~1u;
		/* A signal relayed since the call began (while it tried without blocking, or
		 * between two parks of one call) and not yet run: the call is interrupted by it,
		 * as the kernel's would be, so the snapshot must not count it as already seen. */
		if (ulp_sig_would_interrupt(cb->pvid))
			wt->sig_gen -= 2;
	}
}

/* Signals sent to the waiting thread alone (tgkill), as ulp_io_signalled counts them. Ordered
 * with ulp_tg_kill's store of the pending bit as the ULP's are (io->kick, cq_lock). */
static int thread_signalled(const struct ulp_io_wait *wt)
{
	unsigned long p = wt->thread_pend ? atomic_load(wt->thread_pend) & ~wt->thread_mask : 0;

	return p ? ulp_sig_interrupts(wt->pvid, p) : 0;
}

int ulp_io_signalled(struct ulp_io_wait *wt)
{
	struct ulp_io *io = wt->io;
	uint32_t g;
	int t;

	/* Ordered with ulp_tg_die's store by cq_lock (park_after, kick_waiters) and io->kick. */
	if (wt->dying && __atomic_load_n(wt->dying, __ATOMIC_ACQUIRE))
		return 1;
	t = thread_signalled(wt);
	if (t == 1 || !io->sig_gen || (unsigned)wt->pvid >= io->sig_gen_n)
		return t;
	g = atomic_load(&io->sig_gen[wt->pvid]);
	if ((g & ~1u) == wt->sig_gen)
		return t;
	return g & 1 ? 2 : 1;
}

int ulp_io_park(struct ulp_io *io, struct ulp_io_wait *wt, const struct ulp_io_op *ops, int n)
{
	struct ulp_worker *w = ulp_worker_self();
	struct park_arg a = {io, wt, ops, n};

	struct ulp_io_worker *iw = ulp_io_worker(w);

	wt->task = w->cur;
	wt->done = wt->timed_out = wt->interrupted = wt->cancelling = wt->data_op = 0;
	wt->res = 0;
	if (iw)
		iw->yield_streak = 0;
	ulp_task_suspend(wt->task, park_after, &a);
	return 0;
}

/*
 * io-wq (the kernel's threads that run our blocking FIFO opens) starts a new thread when work is
 * queued while none of its threads runs, or when its last running thread blocks with work
 * queued; the second start is asked of the submitting thread (task_work) and is dropped when
 * one is still pending for that io-wq thread. A run of 256 ULPs opening a ring of FIFOs on 2
 * workers hung about 1 in 80 runs under load: both workers idle, every parked open's io-wq
 * thread in wait_for_partner, the partners' opens queued with no thread to run them, the SQ all
 * consumed (read in the hung process). So an idle worker with FIFO opens in flight wakes every
 * IOWQ_KICK_NS and, when nothing completed, queues a no-op to its io-wq (IOSQE_ASYNC: io-wq
 * itself, user_data 0: no waiter): the queueing starts a thread when none runs, which takes the
 * oldest queued open. Each worker kicks its own io-wq (io-wq is per submitting thread).
 */
static void iowq_kick(struct ulp_io *io)
{
	struct io_uring_sqe *s;

	ulp_spin_lock(&io->sq_lock);
	s = sqe_get(io);
	memset(s, 0, sizeof(*s));
	s->opcode = IORING_OP_NOP;
	s->flags = IOSQE_ASYNC;
	sqe_push(io);
	ulp_spin_unlock(&io->sq_lock);
	submit(io, 1);
}

/* ---- completions ---- */

/*
 * Under cq_lock: a request of wt ended with -ECANCELED though no cancel was asked for. io-wq
 * cancels the work queued to it when it fails to start its first thread (create_io_thread,
 * made by the submitting worker's task work, fails while a signal is pending there, three times
 * running: the SIGCHLDs of a ULP spawning processes did it), and the call waited for ever: a
 * FIFO open or read beside a spawning ULP, at a run's start, 1 run in 60-150 under load. The
 * request never ran, so it is queued again (the wait's one request: an open, a read, a
 * connect); of a poll of several descriptors, the call is woken and looks again. 1: queued.
 */
static int requeue(struct ulp_io *io, struct ulp_io_wait *wt)
{
	if (wt->nops != 1)
		return 0;
	ulp_spin_lock(&io->sq_lock);
	prep_op(io, wt, &wt->ops[0]);
	ulp_spin_unlock(&io->sq_lock);
	submit(io, 1);
	return 1;
}

static void complete(struct ulp_io *io, uint64_t ud, int res)
{
	struct ulp_io_wait *wt = (struct ulp_io_wait *)(uintptr_t)(ud & ~UD_CANCEL);

	if (!wt)
		return;
	if (!(ud & UD_CANCEL) && wt->open_inflight) { /* its one request: the open's CQE */
		/* The descriptor exists since io-wq made it: the ULP's now, before it runs again
		 * (every open's result is taken below), for a double close elsewhere (fds.c). */
		if (res >= 0)
			ulp_fd_own_pvid(wt->pvid, res);
		wt->open_inflight = 0;
		atomic_fetch_sub(&io->opens, 1);
	}
	if (!(ud & UD_CANCEL) && res == -ECANCELED && !wt->cancelling && !wt->done) {
		if (requeue(io, wt))
			return; /* still pending */
		/* a poll's: taken as an event, the call looks again */
		res = 0;
	}
	wt->pending--;
	/* The kernel's restart codes (ERESTARTSYS...: an io-wq open that a signal of the process
	 * stopped in wait_for_partner) are never a program's: the call was interrupted. A rank's
	 * FIFO open printed "errno 512" when its job was ended. */
	if (res <= -512 && res >= -516)
		res = -EINTR;
	/* A read or write the cancel stopped (an io-wq one ends with EINTR) did nothing; a timeout
	 * (ETIME) that came after it is no news. */
	if (wt->data_op && wt->done && (res == -EINTR || res == -ETIME))
		res = -ECANCELED;
	if (!(ud & UD_CANCEL) && res != -ECANCELED &&
	    (!wt->done || wt->interrupted || (wt->data_op && wt->timed_out))) {
		/* The first event, or one that beat the cancel a signal (or, for a read or write,
		 * the timeout) asked for: it happened (an opened file, a connection, bytes moved),
		 * so the call reports it rather than EINTR. */
		wt->done = 1;
		wt->interrupted = 0;
		wt->res = res;
		wt->timed_out = res == -ETIME;
	}
	if (wt->done)
		wait_finish(io, wt);
}

/* Signals arrived for ULPs: end the parked calls they interrupt. Under cq_lock. */
static void kick_waiters(struct ulp_io *io)
{
	struct ulp_io_wait *wt, *next;
	int s;

	for (wt = io->waiters; wt; wt = next) {
		next = wt->next;
		if (wt->done || !wt->interruptible)
			continue;
		s = ulp_io_signalled(wt);
		if (!s)
			continue;
		wt->interrupted = s;
		wt->done = 1;
		wait_finish(io, wt);
	}
}

static void reap(struct ulp_io *io)
{
	unsigned head, tail;

	if (!ulp_spin_trylock(&io->cq_lock) && !holder_gone(io))
		return; /* another worker is at it */
	if (atomic_exchange(&io->kick, 0))
		kick_waiters(io);
	for (;;) {
		head = *io->cq_head;
		tail = __atomic_load_n(io->cq_tail, __ATOMIC_ACQUIRE);
		if (head == tail) {
			/* Overflowed CQEs wait in the kernel until asked for. */
			if (!(__atomic_load_n(io->sq_flags, __ATOMIC_RELAXED) &
			      IORING_SQ_CQ_OVERFLOW))
				break;
			sys(SYS_io_uring_enter, io->fd, 0, 0, IORING_ENTER_GETEVENTS, 0, 0);
			if (head == __atomic_load_n(io->cq_tail, __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		for (; head != tail; head++) {
			struct io_uring_cqe *c = &io->cqes[head & *io->cq_mask];

			complete(io, c->user_data, c->res);
		}
		__atomic_store_n(io->cq_head, head, __ATOMIC_RELEASE);
	}
	ulp_spin_unlock(&io->cq_lock);
}

int ulp_io_fd_makers(void)
{
	struct ulp_io *io = io_of(ulp_worker_self());
	unsigned i;
	int n = 0;

	for (i = 0; io && i < io->nworkers; i++)
		n += atomic_load(&io->ws[i].fd_making);
	return n;
}

int ulp_io_fifo_opening(int pvid, uint64_t dev, uint64_t ino)
{
	struct ulp_io *io = ulp_io_self();
	const struct ulp_io_wait *wt;
	int found = 0;

	if (!io || !atomic_load(&io->opens))
		return 0;
	if (ulp_sys_forked()) { /* the parked calls are not in its memory: those of its clone */
		unsigned i, n = io->nfork_opens;

		for (i = 0; i < n && i < FORK_OPENS && !found; i++)
			found = io->fork_opens[i].pvid != pvid && io->fork_opens[i].dev == dev &&
				io->fork_opens[i].ino == ino;
		return found || n > FORK_OPENS;
	}
	lock_cq(io);
	for (wt = io->waiters; wt && !found; wt = wt->next)
		found = wt->open_inflight && wt->pvid != pvid && wt->open_dev == dev &&
			wt->open_ino == ino;
	ulp_spin_unlock(&io->cq_lock);
	return found;
}

int ulp_io_opens(void)
{
	struct ulp_io *io = ulp_io_self();

	return io ? atomic_load(&io->opens) : 0;
}

int ulp_io_open_pending(long fd)
{
	struct ulp_io *io = ulp_io_self();
	struct stat st;

	/* no open in flight: no fstat either */
	if (!io || !atomic_load(&io->opens) ||
	    sys(SYS_newfstatat, fd, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0) != 0 ||
	    !S_ISFIFO(st.st_mode))
		return 0;
	return ulp_io_fifo_opening(-1, st.st_dev, st.st_ino); /* any ULP's: no pvid is -1 */
}

void ulp_io_fork_hold(int hold)
{
	struct ulp_io *io = ulp_io_self();

	if (!io)
		return;
	if (hold) {
		const struct ulp_io_wait *wt;
		unsigned n = 0;

		ulp_plock_lock(&io->cq_lock, (uint32_t)hold); /* the placeholder's pid */
		for (wt = io->waiters; wt && n <= FORK_OPENS; wt = wt->next) {
			if (!wt->open_inflight)
				continue;
			if (n < FORK_OPENS) {
				io->fork_opens[n].pvid = wt->pvid;
				io->fork_opens[n].dev = wt->open_dev;
				io->fork_opens[n].ino = wt->open_ino;
			}
			n++;
		}
		io->nfork_opens = n;
	} else
		ulp_spin_unlock(&io->cq_lock);
}

static int ready(struct ulp_io *io)
{
	return *io->cq_head != __atomic_load_n(io->cq_tail, __ATOMIC_ACQUIRE) ||
	       atomic_load_explicit(&io->kick, memory_order_relaxed) ||
	       (__atomic_load_n(io->sq_flags, __ATOMIC_RELAXED) & IORING_SQ_CQ_OVERFLOW);
}

void ulp_io_poll(struct ulp_worker *w)
{
	struct ulp_io *io = io_of(w);

	if (io && io->fd >= 0 && ready(io))
		reap(io);
}

void ulp_io_hook_poll(struct ulp_worker *w, void *arg)
{
	ulp_io_poll(w);
}

void ulp_io_idle_wait(struct ulp_worker *w, long long timeout_ns)
{
	struct ulp_io *io = io_of(w);
	struct io_uring_getevents_arg arg;
	struct __kernel_timespec ts;
	unsigned long mask = 0, wake = 1ul << (ULP_SIG_WAKE - 1);

	/* A ULP may have changed the worker's mask: the wake-up must be blocked outside. */
	sys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&wake, (long)&mask, 8, 0, 0);
	mask &= ~wake;
	memset(&arg, 0, sizeof(arg));
	arg.sigmask = (uint64_t)(uintptr_t)&mask;
	arg.sigmask_sz = 8;
	if (timeout_ns > 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		arg.ts = (uint64_t)(uintptr_t)&ts;
	}
	/* FIFO opens in io-wq: wake up now and then to see that they still move (iowq_kick). */
	if (atomic_load_explicit(&io->opens, memory_order_relaxed) > 0 &&
	    (timeout_ns <= 0 || timeout_ns > IOWQ_KICK_NS)) {
		ts.tv_sec = 0;
		ts.tv_nsec = IOWQ_KICK_NS;
		arg.ts = (uint64_t)(uintptr_t)&ts;
	}
	ulp_preempt_arm(w, 0);
	if (!ready(io) &&
	    sys(SYS_io_uring_enter, io->fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
		(long)&arg, sizeof(arg)) == -ETIME &&
	    !ready(io) && atomic_load_explicit(&io->opens, memory_order_relaxed) > 0)
		iowq_kick(io);
	ulp_preempt_arm(w, 1);
	reap(io);
}

void ulp_io_hook_idle(struct ulp_worker *w, const _Atomic uint32_t *word, uint32_t seq, void *arg)
{
	struct ulp_io *io = io_of(w);
	struct ulp_io_worker *iw = ulp_io_worker(w);

	if (!io || io->fd < 0 || !iw) {
		/* No ring: the futex, with the preemption tick stopped meanwhile. */
		ulp_preempt_arm(w, 0);
		ulp_raw_futex_wait((uint32_t *)word, seq);
		ulp_preempt_arm(w, 1);
		return;
	}
	atomic_store(&iw->sleeping, 1);
	/* Pairs with the scheduler's wake: it bumps the word, then looks at `sleeping`. */
	if (atomic_load(word) == seq)
		ulp_io_idle_wait(w, 0);
	atomic_store(&iw->sleeping, 0);
}

/* Any process of the region may call this (the manager queueing a ULP into a task): only
 * memory and tgkill, never the ring's descriptor. */
void ulp_io_hook_wake(struct ulp_runtime *rt, int n, void *arg)
{
	struct ulp_io *io = ulp_sched_ctx(rt);
	unsigned i;

	for (i = 0; io && i < io->nworkers && i < rt->nworkers && n; i++) {
		struct ulp_worker *v = rt->workers[i];
		int one = 1;

		if (!atomic_load(&io->ws[i].sleeping) || v->tid <= 0)
			continue;
		if (!atomic_compare_exchange_strong(&io->ws[i].sleeping, &one, 0))
			continue;
		sys(SYS_tgkill, io->tgid, v->tid, ULP_SIG_WAKE, 0, 0, 0);
		n--;
	}
}

/* ---- signals of ULPs ---- */

/* Some worker must look at the parked calls at its next reap: one asleep in the ring is woken
 * (the pair of kick and hook_sleeping is ordered as in hook_wait). */
static void look_at_waiters(struct ulp_io *io)
{
	atomic_store(&io->kick, 1);
	ulp_io_hook_wake(io->rt, 1, NULL);
}

void ulp_io_signal_note(int pvid, unsigned nparts, int restart)
{
	struct ulp_io *io = ulp_io_self();
	_Atomic uint32_t *g;
	uint32_t o, v;

	if (!io || pvid < 0 || (unsigned)pvid >= nparts)
		return;
	if (!__atomic_load_n(&io->sig_gen, __ATOMIC_ACQUIRE)) {
		/* Mapped on the first signal (this may run in a signal handler: raw mmap). Of two
		 * racing first signals, one mapping is kept, the other unmapped. */
		_Atomic uint32_t *m = raw_mmap(nparts * sizeof(uint32_t), -1, 0), *none = NULL;

		if (!m)
			return;
		io->sig_gen_n = nparts; /* the same for every racer: the region's */
		if (!__atomic_compare_exchange_n(&io->sig_gen, &none, m, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			sys(SYS_munmap, (long)m, nparts * sizeof(uint32_t), 0, 0, 0, 0);
	}
	g = &io->sig_gen[pvid];
	o = atomic_load(g);
	do
		v = ((o & ~1u) + 2) | (restart ? 1 : 0);
	while (!atomic_compare_exchange_weak(g, &o, v));
	look_at_waiters(io);
}

void ulp_io_recheck_waiters(void)
{
	struct ulp_io *io = ulp_io_self();

	if (io)
		look_at_waiters(io);
}
