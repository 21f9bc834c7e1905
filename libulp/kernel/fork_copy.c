/* SPDX-License-Identifier: MIT */
/*
 * What a fork of a ULP copies: its own partition and the runtime, not the other ULPs.
 *
 * The kernel copies every mapping of the address space into a fork's child, and the child's
 * execve, a fork's usual next step, tears them all down again; every ULP of the region (of every
 * PVAS task: they share the address space) lives in that one address space. So a fork of one
 * ULP among 16 shells copied 16 ULPs' mappings, and its cost grew with the number of ULPs, not
 * with the forking program (docs/benchmarks.md, "Where a fork's time goes"). The child goes on as
 * that ULP alone and needs no other partition (sys_fork.c: child mode answers natively; what it
 * knew from the other ULPs, the FIFO opens parked in their partitions, is copied out for it at
 * the clone: io_ring.c, ulp_io_fork_hold), so around the clone the other partitions are marked
 * MADV_DONTFORK and the ULP's own MADV_DOFORK, and the own one DONTFORK again after it: in steady
 * state a fork changes the flags of its own mappings twice and of the mappings made since the
 * last fork (the kernel skips a mapping whose flag is what is asked, and merges what a change had
 * split), instead of copying and tearing down every ULP's. The kernel still visits a DONTFORK
 * mapping at the clone (one maple-tree store to drop it from the child's tree), so the cost
 * still grows with the other ULPs' mappings, more slowly. A ULP alone in its region marks
 * nothing.
 *
 * A program's own MADV_DONTFORK (RDMA libraries mark registered memory so) must keep its memory
 * out of its children, and its MADV_DOFORK must not be undone: a ULP whose program makes either
 * call has its partition cleared of the runtime's marks once, before its first such call, and is
 * not marked by anyone from then on ("own": its own forks keep what its program set; other ULPs'
 * forks copy its mappings, as before). MADV_DOFORK fails with EINVAL at a VM_IO mapping (a
 * device's; io_uring's rings on Linux 6.1) and the kernel's walk stops there, leaving what follows
 * it marked: the partition is then cleared one mapping at a time from /proc/self/maps and
 * becomes "own" too.
 *
 * r->fork_lock keeps the marks and the clone of one fork together across the region's tasks:
 * another fork's marks would drop this ULP's partition from its child. The kernel serializes the
 * copies on the address space's lock anyway. The holder is the worker's process (its pid), taken
 * over if that process is killed there (plock.c). Only the user backend; ULP_FORK_COPY_ALL=1
 * turns it off (every partition copied, as before).
 */
#include "backend.h"
#include "io.h"
#include "plock.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int ulp_fork_copy_all = -1; /* -1: not read yet (ulp_fork_copy_setup) */
/* Test hook (ULP_FORK_COPY_TEST=einval): the own partition's MADV_DOFORK is taken as refused, so
 * that the one-mapping-at-a-time path runs where no VM_IO mapping can be made. */
static int test_einval;

void ulp_fork_copy_setup(void)
{
	const char *e = getenv("ULP_FORK_COPY_ALL"), *t = getenv("ULP_FORK_COPY_TEST");

	if (ulp_fork_copy_all < 0)
		ulp_fork_copy_all = e && !strcmp(e, "1");
	test_einval = t && !strcmp(t, "einval");
}

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static int applies(const struct pvas_region *r)
{
	return ulp_fork_copy_all == 0 && r && r->backend == &ulp_backend_user;
}

static long advise(uintptr_t lo, uintptr_t hi, int advice)
{
	return lo < hi ? sys(SYS_madvise, (long)lo, (long)(hi - lo), advice, 0, 0, 0) : 0;
}

static uintptr_t part_at(const struct pvas_region *r, unsigned pvid)
{
	return r->base + (uintptr_t)pvid * r->part_size;
}

static int is_own(const struct pvas_region *r, unsigned pvid)
{
	return atomic_load_explicit(&r->procs[pvid].own_marks, memory_order_relaxed) != 0;
}

/* Hex digits at *p, moved past them. */
static uintptr_t hex(const char **p, const char *end)
{
	uintptr_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			break;
		v = v << 4 | (uintptr_t)d;
	}
	return v;
}

/* The mapping whose /proc/self/maps line starts at p (ends before end), where it lies in
 * [lo, hi): MADV_DOFORK. */
static void dofork_line(const char *p, const char *end, uintptr_t lo, uintptr_t hi)
{
	uintptr_t a = hex(&p, end), b = 0;

	if (p < end && *p == '-') {
		p++;
		b = hex(&p, end);
	}
	if (a < hi && b > lo)
		advise(a < lo ? lo : a, b > hi ? hi : b, MADV_DOFORK);
}

/* MADV_DOFORK on each mapping of [lo, hi) by itself, from /proc/self/maps (the placeholder's or
 * the task's: the same address space): one the kernel refuses (VM_IO) is passed over. -errno
 * when the file cannot be read (the caller's fork then goes on without marks). */
static long dofork_each(uintptr_t lo, uintptr_t hi)
{
	char buf[4096];
	size_t have = 0;
	int skip = 0;				   /* in the rest of a line too long for buf */
	_Atomic int *making = ulp_fd_make_begin(); /* a runtime descriptor, briefly */
	long fd = sys(SYS_openat, AT_FDCWD, (long)"/proc/self/maps", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	long n = 0;

	if (fd < 0) {
		ulp_fd_make_end(making);
		return fd;
	}
	for (;;) {
		const char *p = buf, *end, *nl;

		n = sys(SYS_read, fd, (long)(buf + have), (long)(sizeof(buf) - have), 0, 0, 0);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		end = buf + have + n;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			if (!skip)
				dofork_line(p, nl, lo, hi);
			skip = 0;
			p = nl + 1;
		}
		have = (size_t)(end - p);
		if (have == sizeof(buf)) { /* one line longer than buf: its start is what counts */
			if (!skip)
				dofork_line(buf, end, lo, hi);
			skip = 1;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	ulp_fd_make_end(making);
	return n < 0 ? n : 0;
}

/* r->fork_lock: the holder's process id, 0 when free. A fork holds it for hundreds of
 * microseconds (the placeholder's clone): waiters sleep on it (plock.c), as a spinning one had
 * kept a CPU from the clone it waited for (16 shells forking at once ran slower with the marks
 * than without). */
static void fork_lock(struct pvas_region *r)
{
	ulp_plock_lock_sleep(&r->fork_lock, &r->fork_waiters);
}

static void fork_unlock(struct pvas_region *r)
{
	ulp_plock_unlock_wake(&r->fork_lock, &r->fork_waiters);
}

/* cb's partition cleared of the runtime's marks: MADV_DOFORK, and where a VM_IO mapping stops
 * the kernel's walk (EINVAL), one mapping at a time. 1 when it did (the caller makes it "own":
 * the walk would stop there at every fork). Under the lock. */
static int dofork(struct ulp_cb *cb)
{
	long rc = test_einval ? -EINVAL : advise(cb->part_lo, cb->part_hi, MADV_DOFORK);

	if (rc != -EINVAL)
		return 0;
	dofork_each(cb->part_lo, cb->part_hi);
	return 1;
}

/* cb's partition "own": nobody marks it again. Under the lock, once it is cleared. */
static void set_own(struct ulp_cb *cb)
{
	struct pvas_region *r = cb->region;

	if (!atomic_exchange(&r->procs[cb->pvid].own_marks, 1))
		atomic_fetch_add(&r->nown_marks, 1);
}

/* Partitions [a, b): MADV_DONTFORK. */
static void mark(const struct pvas_region *r, unsigned a, unsigned b)
{
	advise(part_at(r, a), part_at(r, b), MADV_DONTFORK);
}

/* Every partition but pvid me and the "own" ones: MADV_DONTFORK. A lone pair of ranges while no
 * ULP is "own"; else runs of partitions between them. */
static void mark_others(const struct pvas_region *r, unsigned me)
{
	unsigned i, run = 0;

	if (!atomic_load(&r->nown_marks)) {
		mark(r, 0, me);
		mark(r, me + 1, r->nparts);
		return;
	}
	for (i = 0; i <= r->nparts; i++) {
		if (i < r->nparts && i != me && !is_own(r, i))
			continue;
		if (run < i)
			mark(r, run, i);
		run = i + 1;
	}
}

/* What ulp_fork_copy_begin returns: the lock is held; the own partition is marked again after
 * the clone. */
#define HELD 1
#define REMARK 2

int ulp_fork_copy_begin(struct ulp_cb *cb)
{
	struct pvas_region *r = cb->region;
	int got = HELD;

	if (!applies(r))
		return 0;
	fork_lock(r);
	/* A ULP alone in its region (a new one made meanwhile is copied, no harm) marks nothing but
	 * makes sure its own mappings are copied: the walk alone, when none is marked. */
	if (r->nused > 1) {
		mark_others(r, (unsigned)cb->pvid);
		got |= REMARK;
	}
	if (!is_own(r, (unsigned)cb->pvid) && dofork(cb))
		set_own(cb);
	return got;
}

void ulp_fork_copy_end(struct ulp_cb *cb, int got)
{
	struct pvas_region *r = cb->region;

	if (!(got & HELD))
		return;
	/* marked again, so that the next fork of another ULP has only what was mapped since to
	 * mark, not every mapping of each ULP that forked since */
	if ((got & REMARK) && !is_own(r, (unsigned)cb->pvid))
		advise(cb->part_lo, cb->part_hi, MADV_DONTFORK);
	fork_unlock(r);
}

void ulp_fork_copy_own(struct ulp_cb *cb)
{
	struct pvas_region *r = cb->region;

	if (!applies(r) || is_own(r, (unsigned)cb->pvid))
		return;
	fork_lock(r);
	dofork(cb);
	set_own(cb);
	fork_unlock(r);
}

void ulp_fork_copy_release(struct pvas_region *r, int pvid)
{
	if (atomic_exchange(&r->procs[pvid].own_marks, 0))
		atomic_fetch_sub(&r->nown_marks, 1);
}
