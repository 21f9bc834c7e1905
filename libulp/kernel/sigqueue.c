/* SPDX-License-Identifier: MIT */
/*
 * Queued signals of ULPs (ulp_signal.h, "queued signals"): the kernel queues each real-time
 * signal (32..64) sent to a process, with its own siginfo, up to RLIMIT_SIGPENDING, and takes
 * them back first in, first out per number. A ULP's pending set is a word of bits (signal.c),
 * which holds one of each: until 27 Nov 300 sigqueue(pid, SIGRTMIN+1, i) to a ULP arrived 36 to
 * 90 times, with the last value each time.
 *
 * Each partition has a fixed array of slots in a region-wide table (never unmapped: a record that
 * races with the ULP's end touches nothing freed), reserved and not touched until used. Whoever
 * records a signal (the ULP's placeholder process, the relay in a signal handler of any worker,
 * a thread of the ULP in a trap) may interrupt, on its own thread, someone who takes one, or be
 * stopped by SIGSTOP halfway (the placeholder): so nothing here waits for anybody, no lock.
 *
 * A slot's state word says all that is needed to choose, in one atomic read:
 *   0                                 free;
 *   KEY(sig, tag)                     being written (counts as queued: the pending bit stays);
 *   KEY(sig, tag) | seq << 24 | READY queued, seq its place in the order of arrivals;
 *   KEY(sig, tag) | seq << 24         being taken.
 * tag 0: sent to the process; else to one of its threads (sys_thread.c). A sender reserves a
 * place in the count first (the bound), claims the first free slot, sets the pending bit, then
 * fills and publishes the slot. A taker scans the slots for the oldest ready one of its number,
 * claims it with a compare-and-swap, copies it, frees it; when it saw no other entry of that
 * number it clears the pending bit, and sets it again if one came meanwhile (so a bit is never
 * left clear with an entry queued; it may be left set with none by two takers racing, and the
 * next look, ulp_sigq_take or ulp_sigq_has, puts it right).
 */
#include "ulp_signal.h"

#include "syscall.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define READY 1ull
#define KEY(sig, tag) (((uint64_t)(sig) << 1) | ((uint64_t)(tag) << 8))
#define KEY_MASK 0xfffffeull
#define SEQ(st) ((st) >> 24)
#define SEQ_MAX ((1ull << 40) - 1)

/* The bound a ULP can set (its RLIMIT_SIGPENDING, if lower), and room beyond it for kill and
 * the kernel's own signals, which the kernel never refuses (one of each number per target). */
#define SLOTS (ULP_SIGQ_MAX + 64)

struct slot {
	_Atomic uint64_t state;
	struct ulp_sigq_info info;
};

struct sigq {
	_Atomic unsigned count; /* slots reserved or used */
	_Atomic unsigned limit; /* the ULP's bound */
	_Atomic unsigned hi;	/* no slot at or past it was ever claimed (since the reset) */
	unsigned pad;
	_Atomic uint64_t seq; /* arrivals so far */
	struct slot slot[SLOTS];
};

static char *queues;
static size_t stride; /* one partition's struct sigq, in whole pages */
static unsigned nqueues;

int ulp_sigq_setup(unsigned nparts)
{
	if (queues)
		return 0;
	stride = (sizeof(struct sigq) + 4095) & ~(size_t)4095;
	queues = ulp_raw_mmap(stride * nparts, MAP_NORESERVE);
	if (!queues)
		return -ENOMEM;
	nqueues = nparts;
	return 0;
}

static struct sigq *q_of(int pvid)
{
	return queues && pvid >= 0 && (unsigned)pvid < nqueues
		   ? (struct sigq *)(queues + (size_t)pvid * stride)
		   : NULL;
}

void ulp_sigq_reset(int pvid, unsigned limit)
{
	struct sigq *q = q_of(pvid);

	if (!q)
		return;
	/* Its pages go back to the kernel (read as zeros again: every slot free). */
	ulp_arch_syscall(SYS_madvise, (long)q, (long)stride, MADV_DONTNEED, 0, 0, 0);
	ulp_sigq_set_limit(pvid, limit);
}

void ulp_sigq_set_limit(int pvid, unsigned limit)
{
	struct sigq *q = q_of(pvid);

	if (q)
		atomic_store(&q->limit, limit < ULP_SIGQ_MAX ? limit : ULP_SIGQ_MAX);
}

/* Slot i is claimed: the scans look up to it. */
static void raise_hi(struct sigq *q, unsigned n)
{
	unsigned h = atomic_load(&q->hi);

	while (h < n && !atomic_compare_exchange_weak(&q->hi, &h, n))
		;
}

/* A slot of key queued or being written (a taker's own is being taken: not counted). */
static int queued(uint64_t st, uint64_t key)
{
	return (st & KEY_MASK) == key && ((st & READY) || !SEQ(st));
}

/* The slot of key that pid sent (-1: any) queued, or -1. */
static int find(struct sigq *q, uint64_t key, int pid)
{
	unsigned i, hi = atomic_load(&q->hi);

	for (i = 0; i < hi; i++)
		if (queued(atomic_load(&q->slot[i].state), key) &&
		    (pid < 0 || q->slot[i].info.pid == pid))
			return (int)i;
	return -1;
}

int ulp_sigq_has(int pvid, int tag, int sig)
{
	struct sigq *q = q_of(pvid);

	return q && find(q, KEY(sig, tag), -1) >= 0;
}

/* No other entry of key was seen: its bit goes, unless one came meanwhile. */
static void settle(struct sigq *q, uint64_t key, _Atomic uint64_t *pend, uint64_t bit)
{
	atomic_fetch_and(pend, ~bit);
	if (find(q, key, -1) >= 0)
		atomic_fetch_or(pend, bit);
}

int ulp_sigq_push(int pvid, int tag, int sig, const struct ulp_sigq_info *in,
		  _Atomic uint64_t *pend, int how)
{
	struct sigq *q = q_of(pvid);
	uint64_t key = KEY(sig, tag), zero, seq;
	unsigned n, i;

	if (!q)
		return -EAGAIN;
	if (how == ULP_SIGQ_ONCE && find(q, key, in->pid) >= 0)
		return 0; /* a timer's signal still queued: one at a time, as the kernel's */
	n = atomic_fetch_add(&q->count, 1);
	if (n >= atomic_load(&q->limit)) {
		int pending = how != ULP_SIGQ_BOUNDED && find(q, key, -1) >= 0;

		if (how == ULP_SIGQ_BOUNDED || n >= SLOTS || pending) {
			atomic_fetch_sub(&q->count, 1);
			/* as the kernel: kill's signal is pending already, without its siginfo */
			return pending ? 0 : -EAGAIN;
		}
	}
	/* n < SLOTS reservations: a free slot is there, or will be when a taker is done. */
	for (i = 0;; i = (i + 1) % SLOTS) {
		zero = 0;
		if (!atomic_load_explicit(&q->slot[i].state, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&q->slot[i].state, &zero, key))
			break;
	}
	raise_hi(q, i + 1);
	atomic_fetch_or(pend, ULP_SIG_BIT(sig));
	q->slot[i].info = *in;
	seq = (atomic_fetch_add(&q->seq, 1) % SEQ_MAX) + 1;
	atomic_store_explicit(&q->slot[i].state, key | seq << 24 | READY, memory_order_release);
	return 0;
}

int ulp_sigq_take(int pvid, int tag, int sig, struct ulp_sigq_info *out, _Atomic uint64_t *pend)
{
	struct sigq *q = q_of(pvid);
	uint64_t key = KEY(sig, tag), st, best;
	unsigned i, hi, at = 0;
	int others;

	if (!q)
		return 0;
	for (;;) {
		best = 0;
		others = 0;
		hi = atomic_load(&q->hi);
		for (i = 0; i < hi; i++) {
			st = atomic_load_explicit(&q->slot[i].state, memory_order_acquire);
			if (!queued(st, key))
				continue;
			if ((st & READY) && (!best || SEQ(st) < SEQ(best))) {
				others += best != 0;
				best = st;
				at = i;
			} else {
				others++;
			}
		}
		if (!best) { /* none ready: a writer's will come with its bit; else none at all */
			if (!others)
				settle(q, key, pend, ULP_SIG_BIT(sig));
			return 0;
		}
		if (atomic_compare_exchange_strong(&q->slot[at].state, &best, best & ~READY))
			break;
	}
	*out = q->slot[at].info;
	atomic_store_explicit(&q->slot[at].state, 0, memory_order_release);
	atomic_fetch_sub(&q->count, 1);
	if (!others)
		settle(q, key, pend, ULP_SIG_BIT(sig));
	return 1;
}

void ulp_sigq_flush(int pvid, int tag, int sig)
{
	struct sigq *q = q_of(pvid);
	unsigned i, hi;
	uint64_t st;

	if (!q)
		return;
	hi = atomic_load(&q->hi);
	for (i = 0; i < hi; i++) {
		st = atomic_load(&q->slot[i].state);
		if (!(st & READY) || (tag >= 0 && ((st >> 8) & 0xffff) != (uint64_t)tag) ||
		    (sig && ((st >> 1) & 0x7f) != (uint64_t)sig))
			continue;
		if (atomic_compare_exchange_strong(&q->slot[i].state, &st, 0))
			atomic_fetch_sub(&q->count, 1);
	}
}

unsigned long ulp_sigq_retag(int pvid, int from, int to)
{
	struct sigq *q = q_of(pvid);
	unsigned long bits = 0;
	unsigned i, hi;
	uint64_t st;

	if (!q)
		return 0;
	hi = atomic_load(&q->hi);
	for (i = 0; i < hi; i++) {
		st = atomic_load(&q->slot[i].state);
		while ((st & READY) && ((st >> 8) & 0xffff) == (uint64_t)from &&
		       !atomic_compare_exchange_weak(&q->slot[i].state, &st,
						     (st & ~(0xffffull << 8)) | (uint64_t)to << 8))
			;
		if ((st & READY) && ((st >> 8) & 0xffff) == (uint64_t)from)
			bits |= ULP_SIG_BIT((st >> 1) & 0x7f);
	}
	return bits;
}
