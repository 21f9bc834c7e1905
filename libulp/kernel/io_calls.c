/* SPDX-License-Identifier: MIT */
/*
 * The blocking I/O and time calls of ULPs (docs/syscalls.md, "Calls that park the ULP").
 *
 * Each call is first tried without blocking, in one system call where the kernel offers a way
 * (preadv2/pwritev2 with RWF_NOWAIT, MSG_DONTWAIT, a zero timeout), so a call that would not block
 * costs the trap and nothing more. Only when it would block is the ULP parked on the task's
 * ring: a read (of a FIFO, a socket, a file waiting for the disk) is done by the ring itself, and
 * a read the cancel of an interrupted wait did not stop in time is the call's result; any other
 * call arms a poll and is redone once the descriptor is ready, so its interrupted wait loses
 * nothing. File status flags are never changed: a pipe or terminal shared with other processes
 * keeps its O_NONBLOCK as it is. A descriptor the program itself made non-blocking gets the
 * kernel's answer (EAGAIN). Other files whose driver cannot say "would block" (RWF_NOWAIT
 * refused) are polled with a zero timeout and read or written natively once ready; a regular
 * one (/proc, /sys) is always ready, so its I/O stays native.
 *
 * Signals: a signal whose handler the ULP installed ends its parked call with EINTR, or goes on
 * waiting when the handler has SA_RESTART and the kernel would restart the call (read, write,
 * accept, connect, open; never poll, select, epoll_wait, nanosleep, pause), as the kernel does.
 */
#include "io.h"
#include "ulp_signal.h"
#include "syscall.h"
#include "uthread.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
#define MAX_POLL 1024 /* fds of one poll/select parked on the ring; more: native */
#define MAX_IOV 64    /* iovecs of a blocking writev continued after a short write */

int ulp_io_rwf_nowait = 1;
int ulp_io_sock_rwf_nowait;
int ulp_io_ring_rw;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* A call that does not wait, yet may see -EINTR: the runtime's own signals (the preemption tick,
 * wake-ups) are not the program's and must not show. */
static long sys_nowait(long nr, long a, long b, long c, long d, long e, long f)
{
	long r;

	do
		r = sys(nr, a, b, c, d, e, f);
	while (r == -EINTR);
	return r;
}

static int fd_nonblock(int fd)
{
	long fl = sys(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);

	return fl >= 0 && (fl & O_NONBLOCK);
}

long ulp_io_poll0(int fd, short ev)
{
	struct pollfd p = {fd, ev, 0};
	long r = sys_nowait(SYS_poll, (long)&p, 1, 0, 0, 0, 0);

	return r > 0 ? p.revents : r;
}

/* Deadline on CLOCK_MONOTONIC, as IORING_TIMEOUT_ABS reads it. */
static void wait_deadline(struct ulp_io_wait *wt, long long deadline)
{
	wt->ts.tv_sec = deadline / 1000000000;
	wt->ts.tv_nsec = deadline % 1000000000;
	wt->ts_flags = IORING_TIMEOUT_ABS;
	wt->ts_set = 1;
}

/* The socket's SO_RCVTIMEO / SO_SNDTIMEO in ns (0: none); -ENOTSOCK: not a socket. */
static long long sock_timeo(int fd, int opt)
{
	struct {
		long sec, usec;
	} tv = {0, 0};
	unsigned len = sizeof(tv);
	long r = sys(SYS_getsockopt, fd, SOL_SOCKET, opt, (long)&tv, (long)&len, 0);

	if (r != 0)
		return r == -ENOTSOCK ? r : 0;
	return (long long)tv.sec * 1000000000 + tv.usec * 1000;
}

/* Wait on the ring until fd is ready for ev. 0: ready (or so it may be: redo the call);
 * -EINTR; -EAGAIN: the socket timeout (deadline) passed. */
static long park_fd(struct ulp_io *io, struct ulp_io_wait *wt, struct ulp_cb *cb, int fd,
		    unsigned ev, long long deadline)
{
	struct ulp_io_op op = {.kind = ULP_IO_POLL, .fd = fd, .events = ev};

	for (;;) {
		wt->ts_set = 0;
		if (deadline)
			wait_deadline(wt, deadline);
		ulp_io_park(io, wt, &op, 1);
		if (wt->interrupted == 1)
			return -EINTR;
		if (wt->interrupted == 2) { /* SA_RESTART: run the handler, then wait on */
			ulp_tg_deliver(cb, NULL);
			ulp_sig_deliver(cb, NULL);
			ulp_io_wait_init(io, wt, cb, 1);
			if (ulp_io_poll0(fd, (short)ev) != 0)
				return 0;
			continue;
		}
		if (wt->timed_out)
			return -EAGAIN;
		return 0;
	}
}

/*
 * A blocking call that found its file not ready, before it parks: when other ULPs are ready on
 * this worker (or become so by a completion the ring holds), they run first, once, and the call
 * tries again; only a second "not ready" parks it. The partner of a FIFO or socket on the same
 * worker usually answers in that turn: a ping-pong of two ULPs then never arms the ring (no
 * submission, no completion to reap), as two threads of a process would hand over on a CPU.
 * Nothing is due earlier than in the kernel (the call has not blocked yet: a process could be
 * preempted there too), and a call that must not wait (O_NONBLOCK) never gets here. 1: other
 * ULPs ran, try again.
 */
int ulp_io_yield_before_park(void)
{
	struct ulp_worker *w = ulp_worker_self();

	if (!w || !w->cur)
		return 0;
	ulp_io_poll(w);
	return ulp_worker_has_ready(w) && ulp_task_yield(w->cur);
}

/*
 * A blocking read whose last read of the same descriptor went through only after such a turn
 * (ULP_FD_WAITED: a partner on this worker answered in it) takes the turn before its first try.
 * In a ping-pong the partner answers there again, so the try reads at once: no "would block"
 * try, no look at O_NONBLOCK (a FIFO's read is one vmsplice instead of fcntl and two). As with
 * yield_before_park, nothing is due earlier than in the kernel: a process may lose its CPU just
 * before a call. The hint goes when it misled: the try after the turn found nothing anyway (the
 * partner is elsewhere), or a ULP that computes ran in the turn (a tick switched a task out
 * here: a reader kept fed by a process must not wait a quantum at each read). 1: other ULPs
 * ran (a "would block" after it parks at once).
 */
static int turn_first(int fd, uint32_t *word)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_io_worker *iw = w ? ulp_io_worker(w) : NULL;
	uint32_t seen;

	if (!(*word & ULP_FD_WAITED) || !iw)
		return 0;
	seen = iw->preempts;
	if (!ulp_io_yield_before_park())
		return 0;
	if (ulp_worker_self() != w || iw->preempts != seen)
		ulp_fd_unnote(fd, word, ULP_FD_WAITED);
	return 1;
}

/* What the try after a turn (turned: 1 turn_first's, 2 yield_before_park's) says of the hint:
 * data after the partner's turn sets it, nothing after turn_first's takes it away. */
static void turn_learnt(int fd, uint32_t *word, int turned, long r)
{
	if (turned == 2 && r >= 0 && !(*word & ULP_FD_WAITED))
		ulp_fd_note(fd, word, ULP_FD_WAITED);
	else if (turned == 1 && r == -EAGAIN && (*word & ULP_FD_WAITED))
		ulp_fd_unnote(fd, word, ULP_FD_WAITED);
}

/* ---- read and write family ---- */

struct rw {
	long nr; /* SYS_preadv2 / SYS_pwritev2 / SYS_recvfrom / ... the call redone */
	int fd;
	struct iovec *iov;
	int cnt;
	long long off;	   /* -1: the file position */
	long *a;	   /* socket calls: the ULP's arguments */
	struct ulp_cb *cb; /* socket calls: the caller, whose SCM_RIGHTS descriptors they are */
};

/* A read or write of one buffer made for real, as the program's read/write/pread64/pwrite64. */
static long plain_rw(const struct rw *c)
{
	int w = c->nr == SYS_pwritev2;

	if (c->off < 0)
		return sys(w ? SYS_write : SYS_read, c->fd, (long)c->iov->iov_base,
			   (long)c->iov->iov_len, 0, 0, 0);
	return sys(w ? SYS_pwrite64 : SYS_pread64, c->fd, (long)c->iov->iov_base,
		   (long)c->iov->iov_len, (long)c->off, 0, 0);
}

/* recvmsg, recvmmsg: the descriptors an SCM_RIGHTS message brings are made by the call itself,
 * so it is a maker (fds.c), whose record is the receiver's, as in a process. */
static long recv_rights(const struct rw *c, long flags)
{
	_Atomic int *making = ulp_fd_make_begin();
	long *a = c->a, r, i;

	if (c->nr == SYS_recvmsg) {
		r = sys(SYS_recvmsg, a[0], a[1], flags, 0, 0, 0);
		if (r >= 0)
			ulp_fd_own_cmsg(c->cb, (const struct msghdr *)a[1]);
	} else { /* no timeout: do_recvmmsg keeps it */
		r = sys(SYS_recvmmsg, a[0], a[1], a[2], flags, 0, 0);
		for (i = 0; i < r; i++)
			ulp_fd_own_cmsg(c->cb, &((struct mmsghdr *)a[1])[i].msg_hdr);
	}
	ulp_fd_make_end(making);
	return r;
}

static long rw_try(struct rw *c, int nowait)
{
	long *a = c->a;

	switch (c->nr) {
	case SYS_recvfrom:
	case SYS_sendto:
		return sys(c->nr, a[0], a[1], a[2], a[3] | (nowait ? MSG_DONTWAIT : 0), a[4], a[5]);
	case SYS_recvmsg:
		return recv_rights(c, a[2] | (nowait ? MSG_DONTWAIT : 0));
	case SYS_sendmsg:
		return sys(c->nr, a[0], a[1], a[2] | (nowait ? MSG_DONTWAIT : 0), 0, 0, 0);
	case SYS_recvmmsg:
		return recv_rights(c, a[3] | (nowait ? MSG_DONTWAIT : 0));
	case SYS_accept4:
		return sys(c->nr, a[0], a[1], a[2], a[3], 0, 0);
	default:
		/* preadv2, pwritev2 with the split 64-bit offset; made for real on one buffer as
		 * read/write/pread64/pwrite64: the same call, 0.1 us cheaper (no iovec to copy) */
		if (!nowait && c->cnt == 1)
			return plain_rw(c);
		return sys(c->nr, c->fd, (long)c->iov, c->cnt, (long)c->off, 0,
			   nowait ? RWF_NOWAIT : 0);
	}
}

/* Advance an iovec array past n bytes; 0 when nothing is left. */
static int iov_advance(struct iovec **iov, int *cnt, size_t n)
{
	while (*cnt && n >= (*iov)->iov_len) {
		n -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
	if (*cnt) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + n;
		(*iov)->iov_len -= n;
	}
	while (*cnt && !(*iov)->iov_len) {
		(*iov)++;
		(*cnt)--;
	}
	return *cnt;
}

/* The first iovecs of c holding at most max bytes, the last one cut (out has c->cnt slots). */
static int iov_prefix(const struct rw *c, size_t max, struct iovec *out)
{
	int i;

	for (i = 0; i < c->cnt && max; i++) {
		out[i] = c->iov[i];
		if (out[i].iov_len > max)
			out[i].iov_len = max;
		max -= out[i].iov_len;
	}
	return i;
}

/* fd's file type (the S_IFMT bits); 0 when fstat fails. */
static unsigned file_type(int fd)
{
	struct stat st;

	if (sys(SYS_newfstatat, fd, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0) != 0)
		return 0;
	return st.st_mode & S_IFMT;
}

/*
 * The call made for real on a descriptor whose driver refuses RWF_NOWAIT (a FIFO, a terminal;
 * on 6.1 also a pipe or a socket), once a zero-timeout poll said it is ready. Ready is not room
 * for everything: a blocking write of more than PIPE_BUF could fill the buffer and block the
 * worker, whose other ULPs may be the readers. So such a write (the caller goes on with the
 * rest: "whole") takes at most PIPE_BUF to a FIFO or pipe, which one that polls writable always
 * takes at once, and goes to a socket as the sendmsg it is there, with MSG_DONTWAIT (datagrams
 * stay whole). A write of PIPE_BUF or less stays one call, so it stays atomic, as the kernel's.
 */
static long rw_native(struct rw *c, int whole)
{
	struct iovec part[MAX_IOV], *iov = c->iov;
	struct msghdr mh = {0};
	size_t len = 0;
	unsigned type;
	long r;
	int i, cnt = c->cnt;

	for (i = 0; whole && i < c->cnt && len <= PIPE_BUF; i++)
		len += c->iov[i].iov_len;
	if (len <= PIPE_BUF || !(type = file_type(c->fd)))
		return rw_try(c, 0);
	if (type == S_IFSOCK && c->off < 0) {
		mh.msg_iov = c->iov;
		mh.msg_iovlen = (size_t)c->cnt;
		return sys(SYS_sendmsg, c->fd, (long)&mh, MSG_DONTWAIT, 0, 0, 0);
	}
	if (type == S_IFIFO) {
		c->cnt = iov_prefix(c, PIPE_BUF, part);
		c->iov = part;
	}
	r = rw_try(c, 0);
	c->iov = iov;
	c->cnt = cnt;
	return r;
}

/* A file whose read a process sees short only at its end: a regular file or block device, a
 * memory device (/dev/zero, /dev/urandom: major 1), whose driver stops early only for a signal
 * or, under RWF_NOWAIT, when the scheduler wants the CPU. */
static int reads_whole(int fd)
{
	struct stat st;

	if (sys(SYS_newfstatat, fd, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0) != 0)
		return 0;
	return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ||
	       (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1);
}

/*
 * A read that came back short (r bytes) where the program's own read would not have: the try
 * without blocking reads only what is in the page cache, and /dev/zero stops when the scheduler
 * wants the CPU or at the runtime's preemption tick. `dd bs=64M count=1` of a file half in the
 * cache, or of /dev/zero, wrote less than as a process (its status=none says nothing). The rest
 * is read for real (a regular file waits for the disk, as a process's read does) until the
 * buffer is full, the end of the file (0) or an error, which the bytes already read hide, as
 * the kernel's would. A short read at the end of a file costs an fstat and that last read.
 */
static long read_rest(const struct rw *c, long r)
{
	struct iovec rest[MAX_IOV], *iov = rest;
	struct rw more = *c;
	size_t want = 0, step = (size_t)r;
	long n, done = r;
	int i;

	for (i = 0; i < c->cnt; i++)
		want += c->iov[i].iov_len;
	if (r <= 0 || (size_t)r >= want || c->cnt > MAX_IOV || !reads_whole(c->fd))
		return r;
	memcpy(rest, c->iov, (size_t)c->cnt * sizeof(*rest));
	more.cnt = c->cnt;
	while (iov_advance(&iov, &more.cnt, step)) {
		more.iov = iov;
		more.off = c->off < 0 ? -1 : c->off + done;
		n = rw_try(&more, 0);
		if (n <= 0)
			break;
		done += n;
		step = (size_t)n;
	}
	return done;
}

/* The deadline a socket timeout (SO_RCVTIMEO / SO_SNDTIMEO) sets for a call starting now; 0:
 * none, or not a socket. Asked only before a call's first wait: a call that goes through
 * without waiting needs no timeout. word (NULL: none): fd's descriptor-table word, where a
 * descriptor that is no socket is noted so (fds.c) for its next calls. */
static long long sock_deadline(int fd, unsigned ev, uint32_t *word)
{
	long long t = sock_timeo(fd, ev == POLLIN ? SO_RCVTIMEO : SO_SNDTIMEO);

	if (t == -ENOTSOCK && word)
		ulp_fd_note(fd, word, ULP_FD_NOT_SOCK);
	return t > 0 ? ulp_raw_clock_ns(CLOCK_MONOTONIC) + t : 0;
}

/*
 * A read that would block, done by the ring while the ULP is parked (ulp_io_ring_rw): the ring
 * tries it once more without blocking and, when the file is not ready, arms its own poll and
 * reads once it is (a regular file waiting for the disk: an asynchronous read). So the call
 * costs one system call after the try (the submission), the ULP wakes with its data, and of two
 * readers of one FIFO only one gets each byte, as in the kernel. A signal or the socket timeout
 * cancels it; bytes read before the cancel took are the call's result: nothing is lost.
 * Writes keep the polls: a pipe's write sends SIGPIPE to the thread that makes it, which for a
 * write the ring retries later would be whatever ULP runs then. -EAGAIN: the deadline passed.
 */
static long read_parked(struct ulp_io *io, struct ulp_cb *cb, const struct rw *c,
			long long deadline)
{
	struct ulp_io_op op = {.kind = ULP_IO_READV,
			       .fd = c->fd,
			       .addr = c->iov,
			       .len = (unsigned)c->cnt,
			       .off = c->off};
	struct ulp_io_wait wt;

	ulp_io_wait_init(io, &wt, cb, 1);
	for (;;) {
		wt.ts_set = 0;
		if (deadline)
			wait_deadline(&wt, deadline);
		ulp_io_park(io, &wt, &op, 1);
		if (wt.interrupted == 1)
			return -EINTR;
		if (wt.interrupted == 2) { /* SA_RESTART: run the handler, then go on */
			ulp_tg_deliver(cb, NULL);
			ulp_sig_deliver(cb, NULL);
			ulp_io_wait_init(io, &wt, cb, 1);
			continue;
		}
		return wt.timed_out ? -EAGAIN : wt.res;
	}
}

/* A read of a FIFO's read end without blocking, its status flags untouched (other processes
 * share them): vmsplice from the pipe to the ULP's buffers with SPLICE_F_NONBLOCK reads as the
 * read would (the bytes there, up to the buffers' length; 0 at the end: no writer left), or
 * says -EAGAIN. Only for a file opened for reading alone (vmsplice writes into a pipe open for
 * writing) that refused RWF_NOWAIT (vmsplice clears FMODE_NOWAIT, which such a file has not). */
static long fifo_try(const struct rw *c)
{
	long r;

	do
		r = sys(SYS_vmsplice, c->fd, (long)c->iov, c->cnt, SPLICE_F_NONBLOCK, 0, 0);
	while (r == -EINTR);
	return r;
}

/*
 * A FIFO reader's turn (kind 1: turn_first's, 2: yield_before_park's), its buffer offered to the
 * task's writers meanwhile (fifo_pass.c): a partner that writes in the turn puts its bytes there
 * with no system call of the reader's and one of its own. *turned: kind when other ULPs ran, else
 * 0. The read's result when bytes were passed, else -EAGAIN.
 */
static long fifo_turn(const struct rw *c, uint32_t *word, int kind, int *turned)
{
	struct ulp_fifo_offer *o = NULL;
	long r;

	if (c->cnt == 1 && c->off < 0)
		o = ulp_fifo_offer(c->fd, *word, c->iov->iov_base, c->iov->iov_len);
	if (kind == 1)
		*turned = turn_first(c->fd, word);
	else
		*turned = ulp_io_yield_before_park() ? 2 : 0;
	if (!o)
		return -EAGAIN;
	r = ulp_fifo_withdraw(o);
	if (r != -EAGAIN)
		turn_learnt(c->fd, word, *turned, r);
	return r;
}

/*
 * The read of a FIFO, which refuses RWF_NOWAIT: tried without blocking (fifo_try); when there is
 * nothing to read, the ULP parks on a poll of the FIFO (which its end, POLLHUP, ends too) and
 * tries again. O_NONBLOCK (nonblock, -1: not known yet) is looked at only when the try finds
 * nothing: a read that goes through is the same either way. Not the ring's read (read_parked),
 * which held the FIFO end open after the ULP's close: io_uring retries a file without RWF_NOWAIT by
 * poll only while it polls POLLIN, and a FIFO at its end polls POLLHUP alone, so the read ended in
 * an io-wq thread, whose request, with its reference to the open file, is freed in the task work of
 * the worker that submitted it. While that worker waited in the vfork clone of a posix_spawn (no
 * task work runs there), a writer's open paired with the closed end and its byte went nowhere: a
 * FIFO pair beside a spawning ULP waited for each other for ever (docs/syscalls.md, "Calls that
 * park the ULP"). A poll's request is freed where its completion is posted.
 */
static long read_fifo(struct ulp_io *io, struct ulp_cb *cb, const struct rw *c, uint32_t *word,
		      int nonblock)
{
	struct ulp_io_wait wt;
	int turned = 0;
	long r, fl;

	if (*word & ULP_FD_WAITED) {
		r = fifo_turn(c, word, 1, &turned);
		if (r != -EAGAIN)
			return r;
	}
	for (;;) {
		r = fifo_try(c);
		turn_learnt(c->fd, word, turned, r);
		if (r != -EAGAIN)
			return r;
		if (nonblock < 0) {
			fl = sys(SYS_fcntl, c->fd, F_GETFL, 0, 0, 0, 0);
			if (fl < 0)
				return fl;
			nonblock = (fl & O_NONBLOCK) != 0;
		}
		if (nonblock)
			return r;
		if (!turned) {
			r = fifo_turn(c, word, 2, &turned);
			if (r != -EAGAIN)
				return r;
			if (turned)
				continue;
		}
		turned = 3; /* parked: what the next try says teaches nothing */
		ulp_io_wait_init(io, &wt, cb, 1);
		r = park_fd(io, &wt, cb, c->fd, POLLIN, 0);
		if (r)
			return r;
	}
}

/* A regular file, whose O_NONBLOCK means nothing: its read waits for the disk in a process. */
static int is_regular(int fd)
{
	return file_type(fd) == S_IFREG;
}

/*
 * A blocking read with the ring doing what would block. System calls: the try without blocking,
 * and nothing more when it goes through; else the ring's submission. A file that refused
 * RWF_NOWAIT, and that it is a FIFO or a socket, are noted in the descriptor table (fds.c), and
 * its next reads skip the try and the fstat: a FIFO ping-pong's read is two system calls
 * (O_NONBLOCK's look, the submission). -EOPNOTSUPP: the file refused RWF_NOWAIT and is no FIFO,
 * socket or regular file (a terminal), or this kernel's ring would read it in io-wq
 * (ulp_io_ring_rw 1): the caller polls.
 */
static long read_ring(struct ulp_io *io, struct ulp_cb *cb, struct rw *c, uint32_t *word)
{
	int noted = (*word & ULP_FD_NO_NOWAIT) != 0, polls = (*word & ULP_FD_POLLS) != 0;
	/* What refused RWF_NOWAIT is no socket where sockets take it: no SO_RCVTIMEO to read. */
	int no_sock = (*word & ULP_FD_NOT_SOCK) || (noted && ulp_io_sock_rwf_nowait);
	int tried, refused, turned = 0;
	long r = -EOPNOTSUPP, fl;
	unsigned type;

	if ((*word & ULP_FD_FIFO_READ) && c->off < 0) /* a FIFO's read end, known: fifo_try */
		return read_fifo(io, cb, c, word, -1);
	if (!noted && ulp_io_rwf_nowait) {
		/* a pipe's read end offers its buffer in the turn, as a FIFO's (fifo_turn) */
		if (*word & ULP_FD_WAITED) {
			r = fifo_turn(c, word, 1, &turned);
			if (r != -EAGAIN)
				return r;
		}
		r = rw_try(c, 1);
		turn_learnt(c->fd, word, turned, r);
	}
	tried = r == -EAGAIN; /* the try said "would block" (not refused, not skipped) */
	/* refused, not skipped: a FIFO that may be read by fifo_try */
	refused = noted || (r == -EOPNOTSUPP && ulp_io_rwf_nowait);

	if (r > 0) /* maybe short where a process's read is not (read_rest) */
		return read_rest(c, r);
	if (r == -EOPNOTSUPP) {
		if (!noted && ulp_io_rwf_nowait) { /* a refusal, not a skipped try */
			ulp_fd_note(c->fd, word, ULP_FD_NO_NOWAIT);
			no_sock |= ulp_io_sock_rwf_nowait;
		}
		if (ulp_io_ring_rw < 2)
			return -EOPNOTSUPP;
		/* Of the files that refuse RWF_NOWAIT, a FIFO or a socket is the ring's (noted
		 * ULP_FD_POLLS for its next reads). A regular one (the files of /proc and /sys,
		 * which hwloc reads by the thousand in an MPI rank's start; FUSE, 9p) is read
		 * natively at once, as a process reads it: the ring would hand it to an io-wq
		 * thread that reads it blocking, 10-50 us a read (64 MPICH ranks started 0.3-0.4 s
		 * slower so). Others (a terminal) keep the poll. The type, not a poll, decides: a
		 * FIFO that polls ready may be emptied by another reader before the native read,
		 * which then blocks the worker (3 ULPs reading one FIFO on 2 workers hung so). */
		if (!polls) {
			type = file_type(c->fd);
			polls = type == S_IFIFO || type == S_IFSOCK;
			if (polls)
				ulp_fd_note(c->fd, word, ULP_FD_POLLS);
			else if (type == S_IFREG)
				return rw_try(c, 0);
			else
				return -EOPNOTSUPP;
		}
		r = -EAGAIN;
	}
	if (r != -EAGAIN)
		return r;
	/* Made non-blocking by the program: the kernel's answer (the ring would wait: it retries
	 * an O_NONBLOCK file by poll). That is the call itself where no try said it, and for a
	 * regular file, whose O_NONBLOCK means nothing (it waits for the disk in a process). */
	fl = sys(SYS_fcntl, c->fd, F_GETFL, 0, 0, 0, 0);
	if (refused && polls && c->off < 0 && fl >= 0 && (fl & O_ACCMODE) == O_RDONLY &&
	    (r = read_fifo(io, cb, c, word, (fl & O_NONBLOCK) != 0)) != -EBADF) {
		/* a FIFO's read end (vmsplice says EBADF for what is no pipe): its next reads
		 * go to read_fifo at once, its access mode being the open file's for good */
		ulp_fd_note(c->fd, word, ULP_FD_FIFO_READ);
		return r;
	}
	if (fl >= 0 && (fl & O_NONBLOCK))
		return !tried || is_regular(c->fd) ? rw_try(c, 0) : -EAGAIN;
	/* The socket timeout is asked after the other ULPs' turn (no getsockopt when the second
	 * try goes through), so it counts from there: as for a process that lost its CPU just
	 * before the call, the wait is never shorter than the timeout. */
	if (tried && !turned) {
		r = fifo_turn(c, word, 2, &turned);
		if (r != -EAGAIN)
			return r;
		if (turned) {
			r = rw_try(c, 1);
			turn_learnt(c->fd, word, 2, r);
			if (r != -EAGAIN)
				return r > 0 ? read_rest(c, r) : r;
		}
	}
	return read_parked(io, cb, c, no_sock ? 0 : sock_deadline(c->fd, POLLIN, word));
}

/*
 * One blocking read-like or write-like call. ev: POLLIN or POLLOUT. whole: a blocking write to a
 * pipe or stream socket returns only once everything is written (as the kernel's does), so after
 * a short write the rest is written once there is room; c->iov must then be a private copy.
 *
 * System calls, for the ping-pong of docs/syscalls.md: the try without blocking, and nothing
 * more when it goes through. When the driver refuses RWF_NOWAIT (-EOPNOTSUPP), the call
 * remembers it and asks a zero-timeout poll instead of trying again after each wait. O_NONBLOCK
 * and the socket timeout are read only before the first wait, the timeout only from what may be
 * a socket: where every socket takes RWF_NOWAIT (ulp_io_sock_rwf_nowait), a refusal says none.
 */
static long rw_blocking(struct ulp_cb *cb, struct rw *c, unsigned ev, int whole)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_wait wt;
	long long deadline = 0;
	long r, done = 0;
	/* The socket calls' MSG_DONTWAIT works on every kernel; RWF_NOWAIT may be turned off */
	int rw = c->nr == SYS_preadv2 || c->nr == SYS_pwritev2;
	int waited = 0, nowait = rw ? ulp_io_rwf_nowait : 1, no_sock = 0, native = 0, was_native;
	/* What the descriptor table knows of the file (fds.c): positional calls are on files */
	uint32_t word = rw && c->off < 0 ? ulp_fd_word(c->fd) : 0;

	if (!io)
		return rw_try(c, 0);
	/* A FIFO's or a pipe's: maybe straight into a waiting reader's buffer (fifo_pass.c; only
	 * where a reader offers one: nothing to ask of other files) */
	if (rw && ev == POLLOUT && c->off < 0 && c->cnt == 1) {
		r = ulp_fifo_give(c->fd, word, c->iov->iov_base, c->iov->iov_len);
		if (r != -EAGAIN)
			return r;
	}
	if (rw && ev == POLLIN && ulp_io_ring_rw) {
		r = read_ring(io, cb, c, &word);
		if (r != -EOPNOTSUPP)
			return r;
	}
	if (word & ULP_FD_NO_NOWAIT) { /* it refused before: no try */
		no_sock = ulp_io_sock_rwf_nowait;
		nowait = 0;
	}
	no_sock |= (word & ULP_FD_NOT_SOCK) != 0;
	for (;;) {
		r = native ? rw_native(c, whole) : nowait ? rw_try(c, 1) : -EOPNOTSUPP;
		if (r > 0 && ev == POLLIN && rw && nowait && !native)
			r = read_rest(c, r);
		was_native = native;
		native = 0;
		if (r == -EOPNOTSUPP && !was_native) {
			if (rw && nowait)
				ulp_fd_note(c->fd, &word, ULP_FD_NO_NOWAIT);
			no_sock |= rw && nowait && ulp_io_sock_rwf_nowait;
			nowait = 0;
			r = ulp_io_poll0(c->fd, (short)ev) != 0 ? rw_native(c, whole) : -EAGAIN;
		}
		if (r > 0 && whole) {
			done += r;
			if (c->off >= 0)
				c->off += r;
			if (iov_advance(&c->iov, &c->cnt, (size_t)r))
				continue; /* room for more: try at once; EAGAIN parks below */
			return done;
		}
		if (r != -EAGAIN)
			return done ? done : r;
		/* Ready by poll, yet RWF_NOWAIT said EAGAIN: a regular file (waiting for the disk,
		 * which no poll can end: parking would wake at once and try again for ever), or a
		 * driver's spurious EAGAIN. The call is made for real, once, also on an O_NONBLOCK
		 * descriptor: O_NONBLOCK means nothing to a regular file, whose read waits for the
		 * disk in a process too (a page-cache miss gave EAGAIN to a ULP before). */
		if (nowait && !was_native && ulp_io_poll0(c->fd, (short)ev) != 0) {
			native = 1;
			continue;
		}
		if (!waited) {
			/* Made non-blocking by the program: the kernel's answer (the call itself
			 * where the driver refused RWF_NOWAIT). Read only now: a call that goes
			 * through needs neither this nor the timeout. */
			if (fd_nonblock(c->fd))
				return done ? done : nowait ? r : rw_try(c, 0);
			waited = 1;
			if (ulp_io_yield_before_park()) /* the other ULPs' turn first */
				continue;
		}
		/* The first park: the socket timeout counts from here, after the turn, as for a
		 * read (read_ring). */
		if (waited == 1) {
			waited = 2;
			deadline = no_sock ? 0 : sock_deadline(c->fd, ev, &word);
			ulp_io_wait_init(io, &wt, cb, 1);
		}
		r = park_fd(io, &wt, cb, c->fd, ev, deadline);
		if (r)
			return done ? done : r;
	}
}

static long do_rw(struct ulp_cb *cb, long nr, long *a)
{
	struct iovec one, copy[MAX_IOV];
	struct rw c = {0, (int)a[0], &one, 1, -1, a, cb};
	int write = 0;

	switch (nr) {
	case SYS_read:
	case SYS_write:
	case SYS_pread64:
	case SYS_pwrite64:
		one.iov_base = (void *)a[1];
		one.iov_len = (size_t)a[2];
		write = nr == SYS_write || nr == SYS_pwrite64;
		if (nr == SYS_pread64 || nr == SYS_pwrite64) {
			if (a[3] < 0)
				return -EINVAL;
			c.off = a[3];
		}
		break;
	default: /* readv, writev, preadv, pwritev */
		write = nr == SYS_writev || nr == SYS_pwritev;
		c.iov = (struct iovec *)a[1];
		c.cnt = (int)a[2];
		if (nr == SYS_preadv || nr == SYS_pwritev) {
			if (a[3] < 0)
				return -EINVAL;
			c.off = a[3];
		}
		if (write && c.cnt > 0 && c.cnt <= MAX_IOV) {
			memcpy(copy, c.iov, (size_t)c.cnt * sizeof(*copy));
			c.iov = copy;
		} else if (write) {
			write = 2; /* too many to continue after a short write: as is */
		}
		break;
	}
	c.nr = write ? SYS_pwritev2 : SYS_preadv2;
	return rw_blocking(cb, &c, write ? POLLOUT : POLLIN, write == 1);
}

static long do_sock(struct ulp_cb *cb, long nr, long *a)
{
	struct rw c = {nr, (int)a[0], NULL, 0, -1, a, cb};
	long flags = nr == SYS_recvfrom || nr == SYS_sendto || nr == SYS_recvmmsg ? a[3] : a[2];
	int in = nr == SYS_recvfrom || nr == SYS_recvmsg || nr == SYS_recvmmsg;

	if (flags & MSG_DONTWAIT) /* the call as it is (its flags say MSG_DONTWAIT already) */
		return rw_try(&c, 0);
	return rw_blocking(cb, &c, in ? POLLIN : POLLOUT, 0);
}

/* accept's kernel call, a maker (fds.c) of the caller's new descriptor. */
static long accept_now(struct ulp_cb *cb, long nr, const long *a)
{
	_Atomic int *making = ulp_fd_make_begin();
	long r = sys(nr, a[0], a[1], a[2], nr == SYS_accept4 ? a[3] : 0, 0, 0);

	if (r >= 0)
		ulp_fd_own(cb, r);
	ulp_fd_make_end(making);
	return r;
}

/* accept and connect go through the ring itself: there is no per-call non-blocking flag. */
static long do_ring_op(struct ulp_cb *cb, long nr, long *a)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_op op = {.fd = (int)a[0], .addr = (const void *)a[1], .len = (unsigned)a[2]};
	struct ulp_io_wait wt;
	long r;

	if (!io || fd_nonblock((int)a[0])) /* also: EBADF from the call itself */
		return nr == SYS_connect ? sys(nr, a[0], a[1], a[2], 0, 0, 0)
					 : accept_now(cb, nr, a);
	if (nr == SYS_connect) {
		op.kind = ULP_IO_CONNECT;
	} else {
		/* accept: a connection is usually waiting, or not at all: poll decides. The
		 * listening socket's SO_RCVTIMEO bounds the whole wait, as in the kernel (-EAGAIN
		 * when it passes), read before the first wait only. */
		long long deadline = -1;

		for (;;) {
			r = ulp_io_poll0((int)a[0], POLLIN);
			if (r != 0)
				return accept_now(cb, nr, a);
			if (deadline < 0)
				deadline = sock_deadline((int)a[0], POLLIN, NULL);
			ulp_io_wait_init(io, &wt, cb, 1);
			r = park_fd(io, &wt, cb, (int)a[0], POLLIN, deadline);
			if (r)
				return r;
		}
	}
	ulp_io_wait_init(io, &wt, cb, 1);
	/* connect: the socket's SO_SNDTIMEO bounds the wait, as in the kernel */
	wt.ts_set = 0;
	r = sock_deadline((int)a[0], POLLOUT, NULL);
	if (r)
		wait_deadline(&wt, r);
	ulp_io_park(io, &wt, &op, 1);
	/* Interrupted or timed out: the connection goes on in the background, as the kernel's
	 * does, which then says -EINTR or (the timeout) -EINPROGRESS. */
	if (wt.interrupted)
		return -EINTR;
	return wt.timed_out ? -EINPROGRESS : wt.res;
}

/* A path relative to the ULP's directory made absolute in buf (the worker is in that directory
 * now, not when the ring's thread runs the open: fs.c); NULL when it does not fit. */
static const char *absolute(const char *path, char *buf, size_t len)
{
	long n = sys(SYS_getcwd, (long)buf, len, 0, 0, 0, 0);
	size_t i = n > 0 ? (size_t)n - 1 : 0; /* getcwd counts the NUL */

	if (n <= 0)
		return NULL;
	if (i > 1)
		buf[i++] = '/';
	for (; *path && i < len - 1; path++)
		buf[i++] = *path;
	buf[i] = 0;
	return *path ? NULL : buf;
}

/* Opening a FIFO waits for the other end (unless O_NONBLOCK or O_RDWR): that open runs on the
 * ring (in the kernel's io-wq thread of this process), every other open natively. The new
 * descriptor is the caller's (fds.c). */
static long do_open(struct ulp_cb *cb, long nr, long *a)
{
	/* The kernel reads dirfd as an int: glibc's AT_FDCWD arrives zero-extended
	 * (0xffffff9c), which a 64-bit compare never took for AT_FDCWD, so a relative FIFO path
	 * was not made absolute and io-wq opened it in whichever ULP's directory the worker had
	 * moved to by then (integ-ident failed 4 runs in 30). */
	long dirfd = nr == SYS_openat ? (int)a[0] : AT_FDCWD;
	const char *path = (const char *)(nr == SYS_openat ? a[1] : a[0]);
	int flags = (int)(nr == SYS_openat ? a[2] : a[1]);
	unsigned mode = (unsigned)(nr == SYS_openat ? a[3] : a[2]);
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_op op = {.kind = ULP_IO_OPENAT,
			       .fd = (int)dirfd,
			       .events = (unsigned)flags,
			       .addr = path,
			       .len = mode};
	struct ulp_io_wait wt;
	_Atomic int *making;
	struct stat st;
	char abs[4096];
	long r;
	int fifo;

	/* Every open but a FIFO's that waits for its other end: a maker (fds.c), in one window. */
	making = ulp_fd_make_begin();
	if (ulp_sys_self_open(cb, dirfd, path, flags, &r)) { /* its /proc/self/cmdline, environ */
		fifo = 0;
	} else {
		fifo = !(flags & (O_NONBLOCK | O_PATH)) && (flags & O_ACCMODE) != O_RDWR &&
		       sys(SYS_newfstatat, dirfd, (long)path, (long)&st, 0, 0, 0) == 0 &&
		       S_ISFIFO(st.st_mode);
		if (!fifo)
			r = sys(SYS_openat, dirfd, (long)path, flags, mode, 0, 0);
	}
	if (!fifo && r >= 0)
		ulp_fd_own(cb, r);
	ulp_fd_make_end(making);
	if (!fifo)
		return r;
	/* Not while a fork's child may still hold a copy of an end of it that another ULP closed:
	 * the open would pair with that copy (fds.c, "a child's copy of the table"). */
	ulp_fd_fifo_gate();
	/* A writer's open with a reader there (one parked in its own open counts): the open with
	 * O_NONBLOCK pairs as the blocking one does, at once, without io-wq (whose thread may run
	 * it long after: "Calls that park the ULP"); then O_NONBLOCK goes (the new description is
	 * the caller's alone yet). ENXIO: no reader, the blocking open below. */
	if ((flags & O_ACCMODE) == O_WRONLY && !(flags & (O_ASYNC | O_DIRECT))) {
		making = ulp_fd_make_begin();
		r = sys(SYS_openat, dirfd, (long)path, flags | O_NONBLOCK, mode, 0, 0);
		if (r >= 0 && sys(SYS_fcntl, r, F_SETFL, flags & (O_APPEND | O_NOATIME), 0, 0, 0)) {
			sys(SYS_close, r, 0, 0, 0, 0, 0);
			r = -ENXIO;
		}
		if (r >= 0)
			ulp_fd_own(cb, r);
		ulp_fd_make_end(making);
		if (r != -ENXIO)
			return r;
	}
	/* No ring, or too long to make absolute: the kernel's open, which blocks the worker (and
	 * may not hold a maker's window that long: recorded after, docs/syscalls.md). */
	if (!io || (dirfd == AT_FDCWD && path[0] != '/' &&
		    !(op.addr = absolute(path, abs, sizeof(abs))))) {
		r = sys(SYS_openat, dirfd, (long)path, flags, mode, 0, 0);
		if (r >= 0)
			ulp_fd_own(cb, r);
		return r;
	}
	ulp_io_wait_init(io, &wt, cb, 1);
	wt.open_dev = st.st_dev; /* for a closer that meets its descriptor (fds.c) */
	wt.open_ino = st.st_ino;
	ulp_io_park(io, &wt, &op, 1);
	return wt.interrupted ? -EINTR : wt.res; /* recorded where it was reaped (io_ring.c) */
}

/* ---- poll, select, epoll ---- */

/* Wait for any of fds[] (events) until deadline (0: none; -1 in the caller means do not wait).
 * 0: something may be ready, redo the call; -EINTR; 1: the deadline passed. */
static long park_many(struct ulp_cb *cb, struct ulp_io_op *ops, int n, long long deadline)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_wait wt;

	ulp_io_wait_init(io, &wt, cb, 1);
	if (deadline)
		wait_deadline(&wt, deadline);
	ulp_io_park(io, &wt, ops, n);
	if (wt.interrupted)
		return -EINTR; /* never restarted after a handler, as the kernel's */
	return wt.timed_out ? 1 : 0;
}

long ulp_io_wait_fds(struct ulp_cb *cb, const int *fds, int n, unsigned events, int timeout_ms,
		     int intr)
{
	return ulp_io_wait_fds_us(cb, fds, n, events, timeout_ms * 1000LL, intr);
}

long ulp_io_wait_fds_us(struct ulp_cb *cb, const int *fds, int n, unsigned events,
			long long timeout_us, int intr)
{
	struct ulp_io_op ops[ULP_IO_WAIT_FDS_MAX];
	struct ulp_io_wait wt;
	int i;

	if (!ulp_io_self() || n > ULP_IO_WAIT_FDS_MAX)
		return -ENOSYS;
	for (i = 0; i < n; i++)
		ops[i] = (struct ulp_io_op){.kind = ULP_IO_POLL, .fd = fds[i], .events = events};
	ulp_io_wait_init(ulp_io_self(), &wt, cb, intr);
	wait_deadline(&wt, ulp_raw_clock_ns(CLOCK_MONOTONIC) + timeout_us * 1000);
	ulp_io_park(ulp_io_self(), &wt, ops, n);
	if (wt.interrupted == 1 || (wt.interrupted && intr == 2))
		return -EINTR;
	if (wt.interrupted == 2) { /* SA_RESTART: run the handler; the caller looks again */
		ulp_tg_deliver(cb, NULL);
		ulp_sig_deliver(cb, NULL);
	}
	return 0;
}

static int ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

static long long ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void ns_ts(long long ns, struct timespec *ts)
{
	if (ns < 0)
		ns = 0;
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
}

/* The deadline of a timespec timeout (ppoll, pselect6) counted from start; none when tsp is
 * NULL. -EINVAL for one the kernel would refuse. */
static int ts_deadline(const struct timespec *tsp, long long start, long long *deadline)
{
	if (!tsp)
		return 0;
	if (!ts_valid(tsp))
		return -EINVAL;
	*deadline = start + ts_ns(tsp);
	return 0;
}

static long do_poll(struct ulp_cb *cb, long nr, long *a)
{
	struct pollfd *fds = (struct pollfd *)a[0];
	unsigned long nfds = (unsigned long)a[1], i;
	struct timespec zero = {0, 0}, *tsp = nr == SYS_ppoll ? (struct timespec *)a[2] : NULL;
	long long deadline = 0, start = ulp_raw_clock_ns(CLOCK_MONOTONIC);
	long r;
	int n, yielded = nr == SYS_ppoll && a[3]; /* a mask for the wait: no turn outside it */

	if (nr == SYS_poll && a[2] >= 0)
		deadline = start + a[2] * 1000000ll;
	if (ts_deadline(tsp, start, &deadline))
		return -EINVAL;
	if (!ulp_io_self() || nfds > MAX_POLL)
		return sys(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	for (;;) {
		r = nr == SYS_ppoll ? sys_nowait(SYS_ppoll, a[0], a[1], (long)&zero, a[3], a[4], 0)
				    : sys_nowait(SYS_poll, a[0], a[1], 0, 0, 0, 0);
		if (r != 0 || (deadline && deadline <= ulp_raw_clock_ns(CLOCK_MONOTONIC)))
			break;
		if (!yielded && (yielded = ulp_io_yield_before_park()))
			continue;
		{
			struct ulp_io_op ops[nfds ? nfds : 1];

			for (i = 0, n = 0; i < nfds; i++)
				if (fds[i].fd >= 0)
					ops[n++] = (struct ulp_io_op){
					    .kind = ULP_IO_POLL,
					    .fd = fds[i].fd,
					    .events = (unsigned short)fds[i].events};
			r = park_many(cb, ops, n, deadline);
		}
		if (r < 0 || r == 1) {
			if (r == 1)
				r = 0;
			break;
		}
	}
	if (tsp) /* ppoll leaves the time not slept, as the kernel's */
		ns_ts(deadline - ulp_raw_clock_ns(CLOCK_MONOTONIC), tsp);
	return r;
}

static long do_select(struct ulp_cb *cb, long nr, long *a)
{
	int nfds = (int)a[0], i, n;
	unsigned long *set[3] = {(unsigned long *)a[1], (unsigned long *)a[2],
				 (unsigned long *)a[3]};
	static const unsigned ev[3] = {POLLIN, POLLOUT, POLLPRI};
	size_t words = ((size_t)(nfds > 0 ? nfds : 0) + 63) / 64;
	struct timeval *tv = nr == SYS_select ? (struct timeval *)a[4] : NULL;
	struct timespec *tsp = nr == SYS_pselect6 ? (struct timespec *)a[4] : NULL;
	struct timespec zero_ts = {0, 0};
	struct timeval zero_tv = {0, 0};
	long long deadline = 0, start = ulp_raw_clock_ns(CLOCK_MONOTONIC);
	long r;
	int yielded = nr == SYS_pselect6 && a[5]; /* a mask for the wait: no turn outside it */

	if (nfds < 0)
		return -EINVAL;
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000)
			return -EINVAL;
		deadline = start + tv->tv_sec * 1000000000ll + tv->tv_usec * 1000ll;
	}
	if (ts_deadline(tsp, start, &deadline))
		return -EINVAL;
	if (!ulp_io_self() || nfds > MAX_POLL)
		return sys(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	{
		unsigned long copy[3][words ? words : 1];
		struct ulp_io_op ops[3 * (nfds ? nfds : 1)];

		for (i = 0; i < 3; i++)
			if (set[i])
				memcpy(copy[i], set[i], words * sizeof(long));
		for (;;) {
			for (i = 0; i < 3; i++)
				if (set[i])
					memcpy(set[i], copy[i], words * sizeof(long));
			r = nr == SYS_select
				? sys_nowait(SYS_select, a[0], a[1], a[2], a[3], (long)&zero_tv, 0)
				: sys_nowait(SYS_pselect6, a[0], a[1], a[2], a[3], (long)&zero_ts,
					     a[5]);
			if (r != 0 || (deadline && deadline <= ulp_raw_clock_ns(CLOCK_MONOTONIC)))
				break;
			if (!yielded && (yielded = ulp_io_yield_before_park()))
				continue;
			n = 0;
			for (i = 0; i < 3; i++) {
				int fd;

				if (!set[i])
					continue;
				for (fd = 0; fd < nfds; fd++)
					if (copy[i][fd / 64] & (1ul << (fd % 64)))
						ops[n++] = (struct ulp_io_op){
						    .kind = ULP_IO_POLL, .fd = fd, .events = ev[i]};
			}
			r = park_many(cb, ops, n, deadline);
			if (r < 0 || r == 1) {
				for (i = 0; i < 3 && r == 1; i++)
					if (set[i])
						memset(set[i], 0, words * sizeof(long));
				if (r == 1)
					r = 0;
				break;
			}
		}
	}
	/* Linux leaves the time not slept in the timeout. */
	if (tv) {
		struct timespec left;

		ns_ts(deadline - ulp_raw_clock_ns(CLOCK_MONOTONIC), &left);
		tv->tv_sec = left.tv_sec;
		tv->tv_usec = left.tv_nsec / 1000;
	}
	if (tsp)
		ns_ts(deadline - ulp_raw_clock_ns(CLOCK_MONOTONIC), tsp);
	return r;
}

/* epoll_wait, epoll_pwait (a timeout in ms, negative: none) and epoll_pwait2 (a timespec, NULL:
 * none; until 28 Nov it waited in the kernel, holding the worker) */
static long do_epoll(struct ulp_cb *cb, long nr, long *a)
{
	static const struct timespec zero_ts = {0, 0};
	const struct timespec *tsp = nr == SYS_epoll_pwait2 ? (const struct timespec *)a[3] : NULL;
	long long deadline = 0;
	struct ulp_io_op op = {.kind = ULP_IO_POLL, .fd = (int)a[0], .events = POLLIN};
	long r, try_tmo = nr == SYS_epoll_pwait2 ? (long)&zero_ts : 0;
	/* a mask for the wait: no turn outside it */
	int yielded = (nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2) && a[4], no_wait;

	if (!ulp_io_self())
		return sys(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == SYS_epoll_pwait2) {
		if (tsp && !ts_valid(tsp))
			return -EINVAL;
		no_wait = tsp && !tsp->tv_sec && !tsp->tv_nsec;
		if (tsp && !no_wait)
			deadline = ulp_raw_clock_ns(CLOCK_MONOTONIC) + ts_ns(tsp);
	} else {
		no_wait = a[3] == 0;
		if (a[3] > 0)
			deadline = ulp_raw_clock_ns(CLOCK_MONOTONIC) + a[3] * 1000000ll;
	}
	for (;;) {
		r = sys_nowait(nr, a[0], a[1], a[2], try_tmo, a[4], a[5]);
		if (r != 0 || no_wait ||
		    (deadline && deadline <= ulp_raw_clock_ns(CLOCK_MONOTONIC)))
			return r;
		if (!yielded && (yielded = ulp_io_yield_before_park()))
			continue;
		r = park_many(cb, &op, 1, deadline);
		if (r < 0)
			return r;
		if (r == 1)
			return 0;
	}
}

/*
 * recvmmsg: what has come, taken in one call without waiting, until vlen messages came, or one
 * did with MSG_WAITFORONE, or the timeout passed after a message (the kernel looks at it only
 * then); the wait for a message is a blocking recvmsg's (do_sock). After the first message an
 * error ends the call with what came (the kernel keeps the error for the next call, which sees
 * it again here: it is the socket's). The descriptors SCM_RIGHTS brought are the receiver's
 * (recv_rights).
 */
static long do_recvmmsg(struct ulp_cb *cb, long *a)
{
	struct mmsghdr *v = (struct mmsghdr *)a[1];
	unsigned vlen = (unsigned)a[2], done = 0;
	long flags = (unsigned)a[3], r;
	const struct timespec *tmo = (const struct timespec *)a[4];
	long long deadline = 0;

	if (tmo) {
		if (!ts_valid(tmo))
			return -EINVAL;
		deadline = ulp_raw_clock_ns(CLOCK_MONOTONIC) + ts_ns(tmo);
	}
	while (done < vlen) {
		long m[6] = {a[0], (long)(v + done), vlen - done, flags & ~(long)MSG_WAITFORONE};

		r = do_sock(cb, SYS_recvmmsg, m);
		if (r <= 0) {
			if (done)
				break;
			return r;
		}
		done += (unsigned)r;
		if ((flags & MSG_WAITFORONE) ||
		    (deadline && ulp_raw_clock_ns(CLOCK_MONOTONIC) >= deadline))
			break;
	}
	return done; /* the SCM_RIGHTS descriptors are recorded: recv_rights */
}

/* ---- sleeping and waiting ---- */

static long do_sleep(struct ulp_cb *cb, int clk, int flags, const struct timespec *req,
		     struct timespec *rem)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_wait wt;
	long long deadline;
	unsigned tf = IORING_TIMEOUT_ABS;

	if (!ts_valid(req))
		return -EINVAL;
	switch (clk) {
	case CLOCK_MONOTONIC:
		break;
	case CLOCK_REALTIME:
		tf |= IORING_TIMEOUT_REALTIME;
		break;
	case CLOCK_BOOTTIME:
		tf |= IORING_TIMEOUT_BOOTTIME;
		break;
	default: /* CPU-time clocks, alarm clocks: the kernel's own (blocking) sleep */
		io = NULL;
	}
	if (!io)
		return sys(SYS_clock_nanosleep, clk, flags, (long)req, (long)rem, 0, 0);
	deadline = flags & TIMER_ABSTIME ? ts_ns(req) : ulp_raw_clock_ns(clk) + ts_ns(req);
	ulp_io_wait_init(io, &wt, cb, 1);
	wt.ts.tv_sec = deadline / 1000000000;
	wt.ts.tv_nsec = deadline % 1000000000;
	wt.ts_flags = tf;
	wt.ts_set = 1;
	ulp_io_park(io, &wt, NULL, 0);
	if (!wt.interrupted)
		return 0;
	if (rem && !(flags & TIMER_ABSTIME))
		ns_ts(deadline - ulp_raw_clock_ns(clk), rem);
	return -EINTR;
}

static long do_pause(struct ulp_cb *cb)
{
	struct ulp_io *io = ulp_io_self();
	struct ulp_io_wait wt;

	if (!io)
		return sys(SYS_pause, 0, 0, 0, 0, 0, 0);
	ulp_io_wait_init(io, &wt, cb, 1);
	ulp_io_park(io, &wt, NULL, 0);
	return -EINTR;
}

/* The dispatch table's handler for every call here (sys_table.c, arch/x86_64/sys_arch.h). */
long ulp_sys_io_block(struct ulp_cb *cb, struct ulp_sys *s)
{
	long nr = s->nr, *a = s->a, r = -ENOSYS, *ret = &r;

	switch (nr) {
	case SYS_read:
	case SYS_write:
	case SYS_readv:
	case SYS_writev:
	case SYS_pread64:
	case SYS_pwrite64:
	case SYS_preadv:
	case SYS_pwritev:
		/* 0-2 that this ULP closed (sys_io.c) are closed for it, open for the others */
		if ((unsigned long)a[0] <= 2 && (cb->std_closed & (1u << a[0])))
			return -EBADF;
		*ret = do_rw(cb, nr, a);
		break;
	case SYS_recvfrom:
	case SYS_sendto:
	case SYS_recvmsg:
	case SYS_sendmsg:
		*ret = do_sock(cb, nr, a); /* recvmsg's SCM_RIGHTS: the receiver's (recv_rights) */
		break;
	case SYS_recvmmsg:
		*ret = do_recvmmsg(cb, a);
		break;
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
		*ret = do_ring_op(cb, nr, a); /* accept's descriptor: recorded (accept_now) */
		break;
	case SYS_poll:
	case SYS_ppoll:
		*ret = do_poll(cb, nr, a);
		break;
	case SYS_select:
	case SYS_pselect6:
		*ret = do_select(cb, nr, a);
		break;
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		*ret = do_epoll(cb, nr, a);
		break;
	case SYS_nanosleep:
		*ret = do_sleep(cb, CLOCK_MONOTONIC, 0, (const struct timespec *)a[0],
				(struct timespec *)a[1]);
		break;
	case SYS_clock_nanosleep:
		*ret = do_sleep(cb, (int)a[0], (int)a[1], (const struct timespec *)a[2],
				(struct timespec *)a[3]);
		break;
	case SYS_pause:
		*ret = do_pause(cb);
		break;
	case SYS_open:
	case SYS_openat:
		*ret = do_open(cb, nr, a); /* its descriptor recorded there */
		break;
	}
	return r;
}

/* ---- yield policy ---- */

#define NAP_AFTER_YIELDS 64
#define NAP_NS 50000

/*
 * A trapped sched_yield. Switch to ready work of this worker only: taking a yielder from another
 * worker just to yield it back made ranks bounce between workers (2 workers made MPI-style ring
 * steps bimodal). When nothing else is ready here for many yields in a row, every ULP of the
 * worker is spin-waiting for someone elsewhere: nap briefly on the ring (a completion ends the
 * nap) so that the CPU goes to whoever they wait for.
 */
long ulp_io_yield(struct ulp_cb *cb)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_io_worker *iw = ulp_io_worker(w);
	struct ulp_task *self = w->cur;

	ulp_io_poll(w);
	if (ulp_worker_has_ready(w) || !iw) {
		if (iw)
			iw->yield_streak = 0;
		if (!ulp_task_yield(self))
			sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		return 0;
	}
	if (++iw->yield_streak < NAP_AFTER_YIELDS)
		return sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	iw->yield_streak = 0;
	if (ulp_io_self())
		ulp_io_idle_wait(w, NAP_NS);
	else
		sys(SYS_nanosleep, (long)&(struct timespec){0, NAP_NS}, 0, 0, 0, 0, 0);
	return 0;
}
