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
 * socket timeout to read: io_calls.c). A note is made only onto the word read before the call
 * that learnt it (compare-and-swap), so a note about one file is never taken for the next one
 * at its number, as long as that one came through the trap: once a ULP of the task makes an
 * io_uring of its own (whose closes and opens do not), no note is trusted (notes_off).
 */
#include "io.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

/* Descriptors recorded: below nr_open's default; a process that raised it and uses more keeps
 * those unrecorded (docs/syscalls.md). */
#define FD_LIMIT (1 << 20)

/* A word: owner (pvid + 1; 0: nobody), generation, notes (io.h's ULP_FD_*: the top bits). */
#define FD_OWNER 0x000fffff
#define FD_GEN_ONE 0x00100000
#define FD_GEN 0x1ff00000

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

/* The next generation of *w with owner (0: forgotten) and no notes. */
static void set_word(_Atomic int32_t *w, int32_t owner)
{
	int32_t o = atomic_load_explicit(w, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(w, &o, next_gen(o) | owner,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* Forget fd if cb owns it; whether it did. */
static int forget_own(_Atomic int32_t *w, int32_t me)
{
	int32_t o = atomic_load_explicit(w, memory_order_relaxed);

	while ((o & FD_OWNER) == me)
		if (atomic_compare_exchange_weak_explicit(w, &o, next_gen(o), memory_order_relaxed,
							  memory_order_relaxed))
			return 1;
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

	if (!own || ulp_sys_in_child())
		return;
	top = atomic_load(&t->hi);
	for (fd = 3; fd < top; fd++) {
		if ((atomic_load_explicit(&own[fd], memory_order_relaxed) & FD_OWNER) != me)
			continue;
		if (cloexec) {
			f = sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
			if (f < 0 || !(f & FD_CLOEXEC))
				continue;
		}
		/* Closed first, forgotten then: the number stays its own until it is closed. */
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
		forget_own(&own[fd], me);
	}
}

/* Whether fd is recorded as another ULP's than me. */
static int others(_Atomic int32_t *own, long fd, int32_t me)
{
	int32_t o = atomic_load_explicit(&own[fd], memory_order_relaxed) & FD_OWNER;

	return o && o != me;
}

/* Each run of other ULPs' numbers goes in one close_range: a task of many ranks holds thousands,
 * and each fork child closes them all. Numbers nobody recorded (the launcher's, the runtime's)
 * stay, so a run ends at the first one. Kernels before 5.9 have no close_range: one close each. */
void ulp_fd_close_others(const struct ulp_cb *cb)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *own = owners(&t, 0);
	int32_t me = cb->pvid + 1;
	long fd, end, top;

	if (!own)
		return;
	top = atomic_load(&t->hi);
	for (fd = 3; fd < top; fd = end + 1) {
		if (!others(own, fd, me)) {
			end = fd;
			continue;
		}
		for (end = fd; end + 1 < top && others(own, end + 1, me); end++)
			;
		if (sys(SYS_close_range, fd, end, 0, 0, 0, 0) == -ENOSYS)
			for (long f = fd; f <= end; f++)
				sys(SYS_close, f, 0, 0, 0, 0, 0);
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

void ulp_fd_note(long fd, uint32_t *word, uint32_t note)
{
	struct ulp_fd_table *t;
	_Atomic int32_t *w = *word ? slot(fd, &t) : NULL;
	int32_t o = (int32_t)*word;

	if (w && atomic_compare_exchange_strong(w, &o, (int32_t)(*word | note)))
		*word |= note;
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
