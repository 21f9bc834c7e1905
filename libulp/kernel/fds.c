/* SPDX-License-Identifier: MIT */
/*
 * Which ULP made each descriptor of a task (docs/syscalls.md, "Descriptor ownership").
 *
 * The ULPs of a PVAS task share its descriptor table, as the threads of a process do; a process's
 * descriptors go when it ends, and its close-on-exec ones at execve. So every call of a ULP that
 * makes descriptors records them here as its own (the task's table: owner[fd] = pvid + 1), close,
 * close_range and dup2 onto one forget them, and the ULP's end closes those it still owns, in its
 * task, before it is reported ended: a reader in another ULP sees EOF as it would from a process.
 * Descriptors 0-2 are every ULP's (sys_io.c keeps them per ULP), the task's others (the
 * launcher's, the runtime's) nobody's: never recorded, never closed here.
 *
 * A record is made after the call returns, and forgotten after the owner's close (only if it is
 * still the owner's: a neighbour may have made and recorded the number in between), so a number
 * being closed by its owner is never nobody's. A number nobody recorded (the launcher's, an
 * ioctl's) may still be closed by anyone, as a process closes its own; that close must not meet
 * a descriptor another ULP's call has just made and not yet recorded (a double close in one ULP
 * closed its neighbour's new socket: docs/syscalls.md, "Descriptor ownership"). So makers and
 * closers of unrecorded numbers meet in a handshake, Dekker's, over the task's closing flag and
 * a count of makers per worker (seq_cst, so of a maker's raise and a closer's, at least one is
 * seen by the other): a maker counts itself in on its worker before its kernel call and out
 * once it recorded the result, stepping back while a closer is at work; a closer (and a dup2
 * onto such a number) raises the closing flag, waits until no maker is inside, and looks again.
 * A maker's window holds one native call and never parks (blocking calls try without blocking
 * and park between tries, outside it). The FIFO opens the
 * ring runs for a parked ULP make their descriptor in io-wq, whenever the other end comes: they
 * are recorded where their completion is reaped (io_ring.c), and a closer that finds the number
 * open, a FIFO that such an open in flight is opening, waits a little for that reap
 * (ring_open_wait).
 * One close that does not pass the trap (an IORING_OP_CLOSE of a program's own io_uring) leaves
 * its record, which the next trapped call that makes that number replaces; should the number be
 * reused without one (the runtime's own descriptors, made natively), the owner's end would close
 * it. A program's own io_uring is outside what the runtime sees (docs/syscalls.md says so).
 *
 * A word of the table holds more than the owner: a generation that every record and every
 * forget advances, and what the I/O calls learnt about the open file there (ULP_FD_NO_NOWAIT: it
 * refused RWF_NOWAIT, so its next read or write skips that try, and ULP_FD_POLLS when it is a
 * FIFO or a socket, whose reads are the ring's; ULP_FD_NOT_SOCK: it has no
 * socket timeout to read; ULP_FD_FIFO_READ: a FIFO's read end, which its open's access mode
 * makes for the open file's life; ULP_FD_WAITED: its last read was answered in a turn of the
 * worker's other ULPs, a hint that may be wrong: io_calls.c). The generation has 7 bits: a word
 * read before a call and taken for the same after it would need 128 records and forgets of that
 * number in between. A note is made only onto the word read before the call that learnt it
 * (compare-and-swap), so a note about one file is never taken for the next one at its number, as
 * long as that one came through the trap: once a ULP of the task makes an io_uring of its own
 * (whose closes and opens do not), no note is trusted (notes_off).
 */
#include "io.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

/* Descriptors recorded: below nr_open's default; a process that raised it and uses more keeps
 * those unrecorded (docs/syscalls.md). */
#define FD_LIMIT (1 << 20)

/* A word: owner (pvid + 1; 0: nobody), generation, notes (io.h's ULP_FD_*: the top bits). */
#define FD_OWNER 0x000fffff
#define FD_GEN_ONE 0x00100000
#define FD_GEN 0x07f00000

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* The calling task's table; mapped at the first record when create is set. */
static _Atomic int32_t *owners(struct ulp_fd_table **tp, int create)
{
	struct ulp_fd_table *t = ulp_io_fd_table();
	_Atomic int32_t *m, *none = NULL;

	*tp = t;
	if (!t)
		return NULL;
	m = atomic_load_explicit(&t->owner, memory_order_acquire);
	if (m || !create)
		return m;
	m = ulp_raw_mmap(FD_LIMIT * sizeof(int32_t), MAP_NORESERVE);
	if (!m)
		return NULL;
	/* Of two first records racing on two workers, one table stays. */
	if (!atomic_compare_exchange_strong(&t->owner, &none, m)) {
		ulp_raw_munmap((void *)m, FD_LIMIT * sizeof(int32_t));
		m = none;
	}
	return m;
}

/* The generation after word o's, alone. */
static int32_t next_gen(int32_t o)
{
	return (int32_t)(((uint32_t)o + FD_GEN_ONE) & FD_GEN);
}

/* Word w of the table changed: what fifo_pass.c learnt of the file at its number goes too (it
 * checks the word's owner and generation, whose 7 bits come back after 128 changes). */
static void changed(_Atomic int32_t *w)
{
	struct ulp_fd_table *t = ulp_io_fd_table();
	_Atomic int32_t *own = t ? atomic_load_explicit(&t->owner, memory_order_relaxed) : NULL;

	if (own && w >= own && w < own + FD_LIMIT)
		ulp_fifo_forget((int)(w - own));
}

/* The next generation of *w with owner (0: forgotten) and no notes. */
static void set_word(_Atomic int32_t *w, int32_t owner)
{
	int32_t o = atomic_load_explicit(w, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(w, &o, next_gen(o) | owner,
						      memory_order_relaxed, memory_order_relaxed))
		;
	changed(w);
}

/* Forget fd if cb owns it; whether it did. */
static int forget_own(_Atomic int32_t *w, int32_t me)
{
	int32_t o = atomic_load_explicit(w, memory_order_relaxed);

	while ((o & FD_OWNER) == me)
		if (atomic_compare_exchange_weak_explicit(w, &o, next_gen(o), memory_order_relaxed,
							  memory_order_relaxed)) {
			changed(w);
			return 1;
		}
	return 0;
}

void ulp_fd_own_pvid(int pvid, long fd)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own;

	if (fd < 3 || fd >= FD_LIMIT || ulp_sys_in_child())
		return;
	own = owners(&t, 1);
	if (!own || pvid + 1 > FD_OWNER)
		return;
	set_word(&own[fd], pvid + 1);
	ulp_atomic_max(&t->hi, (int)fd + 1);
}

void ulp_fd_own(struct ulp_cb *cb, long fd)
{
	ulp_fd_own_pvid(cb->pvid, fd);
}

void ulp_fd_disown(long lo, long hi)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own = owners(&t, 0);
	long fd, top;

	if (!own || ulp_sys_in_child())
		return;
	top = atomic_load(&t->hi);
	for (fd = lo < 3 ? 3 : lo; fd <= hi && fd < top; fd++)
		if (atomic_load_explicit(&own[fd], memory_order_relaxed) & ~FD_GEN)
			set_word(&own[fd], 0);
}

void ulp_fd_close_owned(struct ulp_cb *cb, int cloexec)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own = owners(&t, 0);
	int32_t me = cb->pvid + 1;
	long fd, top, f;

	if (ulp_sys_in_child())
		return;
	if (!cloexec)
		ulp_lock_end(cb); /* its record locks (sys_lock.c) */
	if (!own)
		return;
	top = atomic_load(&t->hi);
	for (fd = 3; fd < top; fd++) {
		if ((atomic_load_explicit(&own[fd], memory_order_relaxed) & FD_OWNER) != me)
			continue;
		if (cloexec) {
			f = sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
			if (f < 0 || !(f & FD_CLOEXEC))
				continue;
			ulp_lock_closing(cb, fd); /* its record locks on the file go */
		}
		/* Closed first, forgotten then: the number stays its own until it is closed. */
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
		forget_own(&own[fd], me);
	}
}

/* fd's word in the calling task's table, NULL when none is kept (0-2, past the table, no
 * table); *tp: the table. */
static _Atomic int32_t *slot(long fd, struct ulp_fd_table **tp)
{
	_Atomic int32_t *own = owners(tp, 0);

	if (!own || fd < 3 || fd >= FD_LIMIT || fd >= atomic_load(&(*tp)->hi))
		return NULL;
	return &own[fd];
}

int ulp_fd_owner(long fd)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *w = slot(fd, &t);

	return w ? atomic_load_explicit(w, memory_order_relaxed) & FD_OWNER : 0;
}

uint32_t ulp_fd_word(long fd)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *w = slot(fd, &t);
	uint32_t v;

	if (!w || atomic_load_explicit(&t->own_ring, memory_order_relaxed))
		return 0;
	v = (uint32_t)atomic_load_explicit(w, memory_order_relaxed);
	return v & FD_OWNER ? v : 0; /* nobody's: nothing is kept about it */
}

void ulp_fd_forget(struct ulp_cb *cb, long fd)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *w = slot(fd, &t);

	if (w && !ulp_sys_in_child())
		forget_own(w, cb->pvid + 1);
}

/* ---- makers and closers of unrecorded numbers (the handshake above) ---- */

/* The task's table when its makers and closers meet (NULL: no instance, or a fork child, whose
 * table is its own and whose copy of the counters may hold a parent's half-made state). */
static struct ulp_fd_table *meeting(void)
{
	return ulp_sys_in_child() ? NULL : ulp_io_fd_table();
}

/* Until a closer's flag drops. Closers hold it for a few system calls. */
static void wait_closer(struct ulp_fd_table *t)
{
	while (atomic_load_explicit(&t->closing, memory_order_relaxed))
		sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

_Atomic int *ulp_fd_make_begin(void)
{
	struct ulp_fd_table *t = meeting();
	struct ulp_io_worker *iw = t ? ulp_io_worker(ulp_worker_self()) : NULL;

	if (!iw)
		return NULL;
	for (;;) {
		atomic_fetch_add(&iw->fd_making, 1);
		if (!atomic_load(&t->closing))
			return &iw->fd_making;
		atomic_fetch_sub(&iw->fd_making, 1); /* stepped back: the closer may wait on it */
		wait_closer(t);
	}
}

void ulp_fd_make_end(_Atomic int *making)
{
	if (making)
		atomic_fetch_sub(making, 1);
}

long ulp_fd_make_own(struct ulp_cb *cb, long nr, long a, long b, long c, long d)
{
	_Atomic int *making = ulp_fd_make_begin();
	long r = sys(nr, a, b, c, d, 0, 0);

	if (r >= 0)
		ulp_fd_own(cb, r);
	ulp_fd_make_end(making);
	return r;
}

void ulp_fd_drop(struct ulp_cb *cb, long fd)
{
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	ulp_fd_forget(cb, fd);
}

/* A ring's FIFO open installs its descriptor in io-wq a moment before its completion shows, and
 * is recorded when a worker reaps that (io_ring.c). While fd is open and a FIFO that such an
 * open in flight is opening, reap and look again: then it is recorded, or, past the bound, it
 * is not that open's (one waiting for its other end has made nothing yet; an open's install
 * and its completion are microseconds apart, but io-wq's thread may lose the CPU in between). */
#define RING_OPEN_WAIT_NS 200000000LL
static void ring_open_wait(long fd)
{
	long long until = 0;

	while (!ulp_fd_owner(fd) && ulp_io_open_pending(fd)) {
		if (!until)
			until = ulp_raw_clock_ns(CLOCK_MONOTONIC) + RING_OPEN_WAIT_NS;
		else if (ulp_raw_clock_ns(CLOCK_MONOTONIC) > until)
			return;
		ulp_io_poll(ulp_worker_self());
		sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	}
}

int ulp_fd_claim(long fd)
{
	struct ulp_fd_table *t = meeting();
	int owner;

	if (!t)
		return sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0) < 0 ? -EBADF : 0;
	while (atomic_exchange(&t->closing, 1)) /* one closer at a time */
		wait_closer(t);
	while (ulp_io_fd_makers())
		sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	owner = ulp_fd_owner(fd); /* a maker may have made and recorded it meanwhile */
	if (owner)
		return owner;
	/* Not open: no maker can make it while the flag is up, and a ring's open that makes it
	 * after this look would be closed by a close made now: EBADF, as the kernel would say. */
	if (sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0) < 0)
		return -EBADF;
	ring_open_wait(fd);
	return ulp_fd_owner(fd);
}

void ulp_fd_claim_end(void)
{
	struct ulp_fd_table *t = meeting();

	if (t)
		atomic_store(&t->closing, 0);
}

/* ---- a child's copy of the table (io.h, ulp_fd_fork) ----
 *
 * The kernel copies the task's table inside clone, and the child closes the other ULPs'
 * descriptors in it some time later; the words it reads then are not the clone's: a FIFO pair
 * beside a spawning ULP hung so (docs/syscalls.md, "Fork children"). A ULP closed its FIFO
 * end after the clone and forgot it before its posix_spawn child (which shares the memory)
 * looked: the child saw the number nobody's and kept its copy until its execve, and the
 * partner's next open of that FIFO paired with that copy instead of with the ULP, wrote its
 * byte into it and went on: each of the two then waited in an open for the other. So the
 * child closes a number that was another ULP's before the clone or after it, or that changed
 * in between (its generation moved: whatever the copy holds may have been someone's), unless
 * it is its own ULP's now. Two kinds of descriptors exist before they are recorded: a maker's
 * (no maker is inside its window at the clone: the fork holds the closing flag across it, as a
 * closer does) and a ring's FIFO open's (recorded when its completion is reaped: a number
 * nobody recorded that is a FIFO such an open of another ULP is still opening when the child
 * looks is closed too; a posix_spawn child looks at the task's parked calls themselves, a fork
 * child at its copy of them, which the parent keeps from changing during the clone:
 * ulp_io_fifo_opening). And the child's copies live until it has closed them, which takes a moment,
 * or longer when it loses the CPU: long enough for the pair to close an end, and for the partner's
 * next open to pair with the child's copy of it. So the task's blocking FIFO opens wait until every
 * fork's child has closed them (ulp_fd_fifo_gate), counted in a page shared with the children
 * (a fork child's memory is a copy). A FIFO end closed after the clone was closed after the
 * fork was counted, so an open that comes after that close (the partner's next) sees it.
 */

/* The task's forks whose child has not yet closed the other ULPs' descriptors: one word per fork
 * at work (0: free; odd: its child is at work, a ticket of that fork alone; 2: done; 4: given up
 * by the parent) and how many are at work. The ticket: a child the parent gave up on (stopped, or
 * slow on a loaded machine) may end its work after its word went to a later fork, and must not
 * mark that fork's child done. MAP_SHARED, so that a fork child's stores reach the task; one
 * page. */
#define FORK_SETTLE_WORDS 1022
#define FORK_SETTLE_NS 1000000000LL /* a child stopped or killed before it closed them */
struct ulp_fd_forks {
	_Atomic int pending;
	_Atomic uint32_t seq; /* tickets given */
	_Atomic uint32_t word[FORK_SETTLE_WORDS];
};

static struct ulp_fd_forks *forks_page(struct ulp_fd_table *t)
{
	struct ulp_fd_forks *p = atomic_load(&t->forks), *none = NULL;
	long m;

	if (p)
		return p;
	m = sys(SYS_mmap, 0, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ulp_raw_is_err(m))
		return NULL;
	p = (struct ulp_fd_forks *)m;
	if (!atomic_compare_exchange_strong(&t->forks, &none, p)) { /* another fork was first */
		sys(SYS_munmap, m, sizeof(*p), 0, 0, 0, 0);
		p = none;
	}
	return p;
}

/* A word of the page for this fork, holding its ticket (*ticket), counted as pending; NULL: no
 * page, or all taken (a thousand forks at once: this one is not waited for). */
static _Atomic uint32_t *settle_claim(struct ulp_fd_table *t, uint32_t *ticket)
{
	struct ulp_fd_forks *p = forks_page(t);
	uint32_t free_word;
	int i;

	if (p)
		*ticket = atomic_fetch_add(&p->seq, 1) << 1 | 1;
	for (i = 0; p && i < FORK_SETTLE_WORDS; i++) {
		free_word = 0;
		if (atomic_compare_exchange_strong(&p->word[i], &free_word, *ticket)) {
			atomic_fetch_add(&p->pending, 1);
			return &p->word[i];
		}
	}
	return NULL;
}

/* The word's fork (ticket) is no longer pending: by its child (2) or by its parent (4),
 * whichever comes first. */
static void settle_done(struct ulp_fd_table *t, _Atomic uint32_t *w, uint32_t ticket, uint32_t by)
{
	uint32_t at_work = ticket;

	if (w && atomic_compare_exchange_strong(w, &at_work, by)) {
		atomic_fetch_sub(&atomic_load(&t->forks)->pending, 1);
		sys(SYS_futex, (long)w, FUTEX_WAKE, 1, 0, 0, 0); /* shared: the parent */
	}
}

void ulp_fd_fifo_gate(void)
{
	struct ulp_fd_table *t = meeting();
	struct ulp_fd_forks *p = t ? atomic_load(&t->forks) : NULL;
	long long until = 0;

	while (p && atomic_load(&p->pending) > 0) {
		if (!until)
			until = ulp_raw_clock_ns(CLOCK_MONOTONIC) + FORK_SETTLE_NS;
		else if (ulp_raw_clock_ns(CLOCK_MONOTONIC) > until)
			return;
		sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	}
}

/* This worker's fork holds the closing flag (on) or no longer does (ulp_fd_own_use_begin). */
static void fork_guard(int on)
{
	struct ulp_io_worker *iw = ulp_io_worker(ulp_worker_self());

	if (iw)
		iw->fork_guard = on;
}

int ulp_fd_own_use_begin(_Atomic int **making)
{
	struct ulp_fd_table *t = meeting();
	struct ulp_io_worker *iw = t ? ulp_io_worker(ulp_worker_self()) : NULL;

	*making = NULL;
	if (!iw || iw->fork_guard)
		return 1;
	atomic_fetch_add(&iw->fd_making, 1); /* as ulp_fd_make_begin, without the wait */
	if (!atomic_load(&t->closing)) {
		*making = &iw->fd_making;
		return 1;
	}
	atomic_fetch_sub(&iw->fd_making, 1);
	return 0;
}

void ulp_fd_fork_begin(const struct ulp_cb *cb, struct ulp_fd_fork *f)
{
	struct ulp_fd_table *t = meeting();
	_Atomic int32_t *own;
	int i;

	f->was = NULL;
	f->settle = NULL;
	f->ticket = 0;
	f->n = f->held = f->mapped = f->known = 0;
	if (!t)
		return; /* no instance, or a fork child's fork: its table is its own */
	while (atomic_exchange(&t->closing, 1))
		wait_closer(t);
	f->held = 1;
	fork_guard(1);
	while (ulp_io_fd_makers())
		sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	own = owners(&t, 0);
	f->n = own ? atomic_load(&t->hi) - 3 : 0;
	if (f->n > ULP_FD_FORK_WORDS) {
		f->was = ulp_raw_mmap((size_t)f->n * sizeof(int32_t), 0);
		f->mapped = f->was != NULL;
	} else if (f->n > 0) {
		f->was = f->buf;
	}
	if (!f->was)
		f->n = 0;
	f->known = f->was || f->n == 0; /* else no room: the child goes by the words it sees */
	for (i = 0; i < f->n; i++)
		f->was[i] = atomic_load_explicit(&own[i + 3], memory_order_relaxed);
	f->settle = settle_claim(t, &f->ticket);
}

/* In the child: the closing flag is lowered once (a posix_spawn child shares the parent's
 * memory, whose thread waits in clone until the child's execve: the child lowers it as soon
 * as it runs; a fork child's is a copy, lowered here for its own tidiness). */
static void fork_lower(struct ulp_fd_fork *f)
{
	struct ulp_fd_table *t = ulp_io_fd_table();

	if (f->held && t) {
		fork_guard(0); /* a posix_spawn child's is its parent's worker's */
		atomic_store(&t->closing, 0);
	}
	f->held = 0;
}

void ulp_fd_fork_child_end(struct ulp_fd_fork *f)
{
	if (f->mapped) /* its copy */
		ulp_raw_munmap(f->was, (size_t)f->n * sizeof(int32_t));
	f->mapped = 0;
}

void ulp_fd_fork_end(struct ulp_fd_fork *f, long pid)
{
	/* not meeting(): a posix_spawn's parent still counts as in its child until it returns */
	struct ulp_fd_table *t = ulp_io_fd_table();
	struct timespec step = {0, 10000000};
	long long until = ulp_raw_clock_ns(CLOCK_MONOTONIC) + FORK_SETTLE_NS;

	fork_lower(f); /* the fork's (a posix_spawn child's did it already) */
	ulp_fd_fork_child_end(f);
	if (!f->settle || !t)
		return;
	/* A fork child closes them as it starts (a posix_spawn child has, once clone returned). */
	while (pid > 0 && atomic_load(f->settle) == f->ticket &&
	       ulp_raw_clock_ns(CLOCK_MONOTONIC) < until)
		sys(SYS_futex, (long)f->settle, FUTEX_WAIT, f->ticket, (long)&step, 0, 0);
	settle_done(t, f->settle, f->ticket, 4);
	atomic_store(f->settle, 0);
	f->settle = NULL;
}

/* Whether fd, open in the child, is a FIFO that a ring open of another ULP than pvid is still
 * opening (its descriptor perhaps, made in io-wq before the clone and not yet recorded). */
static int fork_fifo(long fd, int pvid)
{
	struct stat st;

	/* none in flight (the common case): no fstat of every number nobody recorded */
	return ulp_io_opens() > 0 && sys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) == 0 &&
	       S_ISFIFO(st.st_mode) && ulp_io_fifo_opening(pvid, st.st_dev, st.st_ino);
}

/* Whether the child closes its copy of a number whose word was `was` before the clone and is
 * `now` (the rule above; me: the child's ULP). */
static int others_copy(int32_t was, int32_t now, int32_t me)
{
	int32_t o = now & FD_OWNER, p = was & FD_OWNER;

	if (o == me)
		return 0;
	return o || (p && p != me) || (was & FD_GEN) != (now & FD_GEN);
}

/* Whether the child closes fd (the rule above), with own the table it sees now. A ring open's
 * completion records its descriptor before it leaves the parked calls, both under their lock
 * (io_ring.c, complete), which fork_fifo takes: so the word is read again once fork_fifo found
 * no open in flight. Read only before it, a completion reaped in between was seen neither as a
 * record nor as an open, and the child kept that FIFO end until its execve (past it without
 * O_CLOEXEC): a spawned program held another ULP's FIFO end (3 runs in 10 of 1000 spawns beside
 * a FIFO pair, under load), and the pair's next open could pair with it (until 27 Nov). */
static int child_closes(_Atomic int32_t *own, const struct ulp_fd_fork *f, long fd, int32_t me)
{
	int32_t now = atomic_load_explicit(&own[fd], memory_order_relaxed), was;

	if (fd - 3 < f->n)
		was = f->was[fd - 3];
	else
		was = f->known ? 0 : now; /* past the highest then: never recorded */
	if (others_copy(was, now, me))
		return 1;
	if (now & FD_OWNER) /* its own */
		return 0;
	if (fork_fifo(fd, me - 1))
		return 1;
	return others_copy(was, atomic_load_explicit(&own[fd], memory_order_acquire), me);
}

/* Close the numbers in [lo, top) that child_closes says, each run in one close_range. */
static void close_copies(_Atomic int32_t *own, const struct ulp_fd_fork *f, int32_t me, long lo,
			 long top)
{
	long fd, end;

	for (fd = lo; fd < top; fd = end + 1) {
		if (!child_closes(own, f, fd, me)) {
			end = fd;
			continue;
		}
		for (end = fd; end + 1 < top && child_closes(own, f, end + 1, me); end++)
			;
		if (sys(SYS_close_range, fd, end, 0, 0, 0, 0) == -ENOSYS)
			for (long n = fd; n <= end; n++)
				sys(SYS_close, n, 0, 0, 0, 0, 0);
	}
}

/* Past the highest recorded number: a ring open not yet reaped made its descriptor at the lowest
 * number free when it began, so above the highest only behind numbers that were taken then, by
 * nobody's descriptors (open here) or by other such opens (each one number): the walk ends after
 * as many free numbers in a row as opens are in flight, and one. */
static void close_fifos_above(int32_t me, long fd)
{
	long free_run = 0, opens = ulp_io_opens();

	for (; opens > 0 && free_run <= opens; fd++) {
		if (sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0) < 0) {
			free_run++;
			continue;
		}
		free_run = 0;
		if (fork_fifo(fd, me - 1))
			sys(SYS_close, fd, 0, 0, 0, 0, 0);
	}
}

/* Each run of numbers to close goes in one close_range: a task of many ranks holds thousands,
 * and each fork child closes them all. Numbers nobody recorded (the launcher's, the runtime's)
 * stay, so a run ends at the first one. Kernels before 5.9 have no close_range: one close each. */
void ulp_fd_close_others(const struct ulp_cb *cb, struct ulp_fd_fork *f)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own;
	struct ulp_fd_fork none = {0};
	int32_t me = cb->pvid + 1;
	long lo = 3, top = 0, hi;

	if (!f)
		f = &none; /* not known: by the words seen now */
	fork_lower(f);
	own = owners(&t, 0);
	/* A record made during the walk may raise the highest number: walked too, till none did. */
	while (own && ((hi = atomic_load(&t->hi)) > top || f->n + 3 > top)) {
		top = hi > f->n + 3 ? hi : f->n + 3;
		close_copies(own, f, me, lo, top);
		lo = top;
	}
	close_fifos_above(me, top > 3 ? top : 3);
	if (t)
		settle_done(t, f->settle, f->ticket, 2);
}

/* fd's word made next (and *word with it) if it still is *word */
static void renote(long fd, uint32_t *word, uint32_t next)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *w = *word ? slot(fd, &t) : NULL;
	int32_t o = (int32_t)*word;

	if (w && atomic_compare_exchange_strong(w, &o, (int32_t)next))
		*word = next;
}

void ulp_fd_note(long fd, uint32_t *word, uint32_t note)
{
	renote(fd, word, *word | note);
}

void ulp_fd_unnote(long fd, uint32_t *word, uint32_t note)
{
	renote(fd, word, *word & ~note);
}

void ulp_fd_range_owned(struct ulp_cb *cb, long lo, long hi, int cloexec)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own = owners(&t, 0);
	int32_t me = cb->pvid + 1;
	long fd, top;

	if (!own)
		return;
	top = atomic_load(&t->hi);
	for (fd = lo < 3 ? 3 : lo; fd <= hi && fd < top; fd++) {
		if ((atomic_load_explicit(&own[fd], memory_order_relaxed) & FD_OWNER) != me)
			continue;
		if (cloexec) {
			sys(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC, 0, 0, 0);
			continue;
		}
		ulp_lock_closing(cb, fd); /* its record locks on the file go (sys_lock.c) */
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
		forget_own(&own[fd], me);
	}
}

/* The descriptors an SCM_RIGHTS message brought (recvmsg, recvmmsg): the receiver's. The
 * kernel wrote msg_controllen; each header is checked to lie inside it. */
void ulp_fd_own_cmsg(struct ulp_cb *cb, const struct msghdr *mh)
{
	const char *p, *end;
	const struct cmsghdr *c;
	const int *fd;
	size_t n;

	if (!mh || !mh->msg_control)
		return;
	p = mh->msg_control;
	end = p + mh->msg_controllen;
	while ((size_t)(end - p) >= sizeof(*c)) {
		c = (const struct cmsghdr *)p;
		if (c->cmsg_len < sizeof(*c) || c->cmsg_len > (size_t)(end - p))
			break;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			fd = (const int *)CMSG_DATA(c);
			for (n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); n; n--, fd++)
				ulp_fd_own(cb, *fd);
		}
		p += CMSG_ALIGN(c->cmsg_len);
	}
}

/* bpf commands whose result is a new descriptor (the others return 0 or a count). */
static int bpf_makes_fd(long cmd)
{
	switch (cmd) {
	case BPF_MAP_CREATE:
	case BPF_PROG_LOAD:
	case BPF_OBJ_GET:
	case BPF_PROG_GET_FD_BY_ID:
	case BPF_MAP_GET_FD_BY_ID:
	case BPF_RAW_TRACEPOINT_OPEN:
	case BPF_BTF_LOAD:
	case BPF_BTF_GET_FD_BY_ID:
	case BPF_LINK_CREATE:
	case BPF_LINK_GET_FD_BY_ID:
	case BPF_ENABLE_STATS:
	case BPF_ITER_CREATE:
	case 36: /* BPF_TOKEN_CREATE (Linux 6.9), newer than these headers */
		return 1;
	}
	return 0;
}

/* Whether call s, which returned r, made descriptor r. */
static int makes_fd(const struct ulp_sys *s, long r)
{
	if (r < 0)
		return 0;
	switch (s->nr) {
	case SYS_fcntl:
		return (int)s->a[1] == F_DUPFD || (int)s->a[1] == F_DUPFD_CLOEXEC;
	case SYS_landlock_create_ruleset: /* flags ask for the ABI version or errata instead */
		return s->a[2] == 0;
	case SYS_bpf:
		return bpf_makes_fd((int)s->a[0]);
	}
	return 1;
}

int ulp_fd_makes(const struct ulp_sys *s, long r)
{
	return makes_fd(s, r);
}

/* A ULP made an io_uring of its own: its closes, opens and accepts there (IORING_OP_CLOSE,
 * OPENAT, SOCKET...) change descriptors without passing the trap, so no word of the task's
 * table can vouch for a note any more, for the task's life. */
static void notes_off(void)
{
	struct ulp_fd_table *t = ulp_io_fd_table();

	if (t)
		atomic_store(&t->own_ring, 1);
}

/* Every call that returns one new descriptor (sys_table.c lists them): made natively, its
 * result recorded as the caller's. None of them waits for long (an open that may, a FIFO's, is
 * ulp_sys_io_block's). */
long ulp_sys_fd_new(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	_Atomic int *making = ulp_fd_make_begin();
	long r = sys(s->nr, a[0], a[1], a[2], a[3], a[4], a[5]);

	if (makes_fd(s, r))
		ulp_fd_own(cb, r);
	ulp_fd_make_end(making);
	if (s->nr == SYS_io_uring_setup && r >= 0)
		notes_off();
	return r;
}

/* pipe, pipe2, socketpair: two descriptors, written to the ULP's int[2]. */
long ulp_sys_fd_pair(struct ulp_cb *cb, struct ulp_sys *s)
{
	long *a = s->a;
	_Atomic int *making = ulp_fd_make_begin();
	long r = sys(s->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	const int *fds = (const int *)(s->nr == SYS_socketpair ? a[3] : a[0]);

	if (r == 0) {
		ulp_fd_own(cb, fds[0]);
		ulp_fd_own(cb, fds[1]);
	}
	ulp_fd_make_end(making);
	return r;
}
