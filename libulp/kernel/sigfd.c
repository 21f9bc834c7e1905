/* SPDX-License-Identifier: MIT */
/*
 * signalfd of a ULP: a descriptor that reads the ULP's own pending signals (docs/syscalls.md,
 * "signalfd").
 *
 * The kernel's signalfd reads the signals pending in the kernel for the reading process, and a
 * ULP's signals never are: the kernel's mask of a worker blocks none of them and the relay
 * (signal.c) takes each one into the ULP's own pending set. So script(1), which blocks SIGCHLD
 * and SIGTERM and waits for them on a signalfd next to its pty, waited for ever as a ULP.
 *
 * The descriptor made is an eventfd, so that poll, select and epoll (the kernel's, or the
 * ring's polls) see it readable: it is made readable when a signal of its mask is posted to its
 * ULP (ulp_sigfd_notify, from ulp_sig_notify in a thread of the ULP's task, where the
 * descriptor is), and emptied by a read that took them, whose result is the records of
 * struct signalfd_siginfo the kernel writes. A read waits for a signal as sigwaitinfo does.
 *
 * The descriptors are kept in one table for the address space, each with its ULP, that ULP's
 * start count (a slot of a ULP that ended is stale) and the descriptor's word in its task's
 * ownership table (fds.c: a close, and a new file at that number, change it).
 */
#include "io.h"
#include "proc.h"
#include "ulp_signal.h"
#include "sys.h"
#include "syscall.h"
#include "uthread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
#define MAX_SIGFD 256

struct sigfd {
	_Atomic int pvid1; /* pvid + 1; 0: free, -1: being filled */
	uint32_t gen;	   /* ulp_sig_gen of the ULP then */
	int tgid;	   /* the task whose descriptor it is */
	int fd;
	uint32_t word; /* the descriptor's ownership word then, its ULP_FD_WORD_ID bits */
	_Atomic uint64_t mask;
};

static struct sigfd fds[MAX_SIGFD];
static _Atomic int used; /* slots ever taken: none, and nothing here costs a call */

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* The slot's ULP started again (the one that made it ended): the slot is free for another. */
static int stale(struct sigfd *f, int p1)
{
	return p1 > 0 && ulp_sig_gen(p1 - 1) != f->gen;
}

/* Whether slot f, of pvid's, is still the descriptor it was made as (called in its task). */
static int same_file(const struct sigfd *f)
{
	uint32_t w = ulp_fd_word(f->fd) & ULP_FD_WORD_ID;

	return f->word ? w == f->word : ulp_fd_owner(f->fd) != 0;
}

/* cb's slot for fd in this task; NULL: fd is no signalfd of cb's. */
static struct sigfd *find(const struct ulp_cb *cb, long fd)
{
	int n = atomic_load(&used), i, tgid = 0;

	for (i = 0; i < n; i++) {
		struct sigfd *f = &fds[i];

		if (atomic_load(&f->pvid1) != cb->pvid + 1 || f->fd != fd || stale(f, cb->pvid + 1))
			continue;
		if (!tgid)
			tgid = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
		if (f->tgid == tgid && same_file(f))
			return f;
	}
	return NULL;
}

/* A free slot: never used, of a ULP that ended, or (seen from its own task) of a descriptor
 * closed since. */
static struct sigfd *take_slot(int tgid)
{
	int i, z;

	for (i = 0; i < MAX_SIGFD; i++) {
		struct sigfd *f = &fds[i];
		int p1 = atomic_load(&f->pvid1);

		if (p1 == 0 || stale(f, p1) || (p1 > 0 && f->tgid == tgid && !same_file(f))) {
			z = p1;
			if (!atomic_compare_exchange_strong(&f->pvid1, &z, -1))
				continue;
			ulp_atomic_max(&used, i + 1);
			return f;
		}
	}
	return NULL;
}

/* Readable exactly while a signal of its mask is pending: emptied first, then made readable
 * again if one is (a post in between makes it readable itself). */
static void sync_ready(struct ulp_cb *cb, const struct sigfd *f)
{
	uint64_t v;
	struct iovec iov = {&v, sizeof(v)};
	long r;

	/* without waiting, whether or not the program made it non-blocking; a kernel whose
	 * eventfd refuses RWF_NOWAIT: read once a zero-timeout poll says there is a count (one a
	 * signal to the worker interrupted left the count, so the descriptor readable with no
	 * signal pending: ulp_io_poll0 asks again) */
	if (sys(SYS_preadv2, f->fd, (long)&iov, 1, -1, 0, RWF_NOWAIT) == -EOPNOTSUPP &&
	    (r = ulp_io_poll0(f->fd, POLLIN)) > 0 && (r & POLLIN))
		sys(SYS_read, f->fd, (long)&v, sizeof(v), 0, 0, 0);
	if (ulp_sig_pending(cb) & atomic_load(&f->mask)) {
		v = 1;
		sys(SYS_write, f->fd, (long)&v, sizeof(v), 0, 0, 0);
	}
}

void ulp_sigfd_notify(int pvid, int sig)
{
	int n = atomic_load(&used), i, tgid = 0;
	uint64_t one = 1;

	for (i = 0; i < n; i++) {
		struct sigfd *f = &fds[i];

		if (atomic_load(&f->pvid1) != pvid + 1 ||
		    !(atomic_load(&f->mask) & ULP_SIG_BIT(sig)) || stale(f, pvid + 1))
			continue;
		if (!tgid)
			tgid = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
		if (f->tgid == tgid && same_file(f))
			sys(SYS_write, f->fd, (long)&one, sizeof(one), 0, 0, 0);
	}
}

/* The kernel's mask argument: what a signalfd may take (not SIGKILL, SIGSTOP, the runtime's). */
static long mask_of(const struct ulp_sys *s, uint64_t *m)
{
	if (s->a[2] != ULP_KSIGSET_SIZE)
		return -EINVAL;
	*m =
	    *(const uint64_t *)s->a[1] & ~(uint64_t)ULP_RT_SIGMASK & ~(uint64_t)ULP_SIG_UNBLOCKABLE;
	return 0;
}

/* signalfd4 (and x86_64's signalfd, without flags): a new one, or a new mask for one of cb's. */
long ulp_sys_signalfd(struct ulp_cb *cb, struct ulp_sys *s)
{
	long fd = (int)s->a[0], flags = s->nr == SYS_signalfd4 ? s->a[3] : 0, r;
	struct sigfd *f;
	uint64_t m;
	int tgid;

	if (ulp_sys_in_child())
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], 0, 0);
	if (flags & ~(long)(SFD_CLOEXEC | SFD_NONBLOCK))
		return -EINVAL;
	r = mask_of(s, &m);
	if (r)
		return r;
	if (fd != -1) {
		f = find(cb, fd);
		if (!f) /* the kernel's: EBADF for no file, EINVAL for one that is no signalfd */
			return sys(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0) < 0 ? -EBADF : -EINVAL;
		atomic_store(&f->mask, m);
		sync_ready(cb, f);
		return fd;
	}
	tgid = (int)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	f = take_slot(tgid);
	if (!f)
		return -ENOMEM;
	/* SFD_NONBLOCK and SFD_CLOEXEC are O_NONBLOCK and O_CLOEXEC, as EFD_* are */
	r = sys(SYS_eventfd2, 0, flags, 0, 0, 0, 0);
	if (r < 0) {
		atomic_store(&f->pvid1, 0);
		return r;
	}
	ulp_fd_own(cb, r);
	f->fd = (int)r;
	f->gen = ulp_sig_gen(cb->pvid);
	f->tgid = tgid;
	f->word = ulp_fd_word(r) & ULP_FD_WORD_ID;
	atomic_store(&f->mask, m);
	atomic_store(&f->pvid1, cb->pvid + 1);
	sync_ready(cb, f);
	return r;
}

/* The kernel's record of signal si (fs/signalfd.c: signalfd_copyinfo). */
static void to_record(struct signalfd_siginfo *o, const siginfo_t *si)
{
	memset(o, 0, sizeof(*o));
	o->ssi_signo = (uint32_t)si->si_signo;
	o->ssi_code = si->si_code;
	o->ssi_pid = (uint32_t)si->si_pid;
	o->ssi_uid = si->si_uid;
	o->ssi_int = si->si_value.sival_int;
	o->ssi_ptr = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	if (si->si_signo == SIGCHLD) {
		o->ssi_status = si->si_status;
		o->ssi_utime = (uint64_t)si->si_utime;
		o->ssi_stime = (uint64_t)si->si_stime;
	}
}

/*
 * A read of cb's signalfd f into buf (len bytes): as many records as fit of the signals of its
 * mask pending for cb; none pending: EAGAIN when the descriptor is non-blocking, else the ULP
 * waits as in sigwaitinfo. A signal with a handler ends the wait with EINTR, or the handler
 * runs and the wait goes on when it has SA_RESTART, as the kernel restarts a read.
 */
static long sigfd_read(struct ulp_cb *cb, struct sigfd *f, char *buf, size_t len)
{
	size_t n = 0;
	siginfo_t si;
	uint64_t m = atomic_load(&f->mask);
	int how;

	if (len < sizeof(struct signalfd_siginfo))
		return -EINVAL;
	for (;;) {
		while (n + sizeof(struct signalfd_siginfo) <= len && ulp_sig_take(cb, m, &si)) {
			to_record((struct signalfd_siginfo *)(buf + n), &si);
			n += sizeof(struct signalfd_siginfo);
		}
		if (n)
			break;
		if ((sys(SYS_fcntl, f->fd, F_GETFL, 0, 0, 0, 0) & O_NONBLOCK) || !ulp_io_self()) {
			sync_ready(cb, f);
			return -EAGAIN;
		}
		how = ulp_sig_interrupts(cb->pvid, ulp_sig_pending(cb) & ~*ulp_sig_mask(cb) & ~m);
		if (how == 1)
			return -EINTR;
		if (how == 2) {
			ulp_tg_deliver(cb, NULL);
			ulp_sig_deliver(cb, NULL);
			continue;
		}
		ulp_sig_set_waitset(cb, m);
		ulp_sig_park(cb, 0);
		ulp_sig_set_waitset(cb, 0);
	}
	sync_ready(cb, f);
	return (long)n;
}

/* read: of a signalfd of the ULP's, its signals; of anything else, ulp_sys_io_block's. */
long ulp_sys_read(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct sigfd *f;

	if (atomic_load_explicit(&used, memory_order_relaxed) && !ulp_sys_in_child() &&
	    (f = find(cb, s->a[0])) != NULL)
		return sigfd_read(cb, f, (char *)s->a[1], (size_t)s->a[2]);
	return ulp_sys_io_block(cb, s);
}
