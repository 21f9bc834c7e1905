/* SPDX-License-Identifier: MIT */
/*
 * Futex emulation for ULP threads: a waiter is parked in a user-space queue keyed by the word's
 * address and its worker runs other tasks; a wake takes it out and makes it ready again.
 *
 * One table for the whole address space: every ULP (of every PVAS task) lives in the same address
 * space, so an address names one word for all of them; private and shared waits on it meet here,
 * which is what both kinds need among ULP threads (a ULP in another PVAS task included: resuming
 * a task of another scheduler instance goes through its worker's inbox).
 *
 * Shared futexes (no FUTEX_PRIVATE_FLAG) may also be used by another kernel process (a word in
 * MAP_SHARED memory). Its waiters sleep in the kernel: a shared wake also issues the real
 * FUTEX_WAKE for those our queue did not satisfy. Its wakes reach no user-space queue: a shared
 * waiter is re-checked every ULP_FUTEX_POLL_NS by the timer thread and woken when the word no
 * longer holds the value it waited on (a futex wait may return early; callers re-check).
 *
 * Timeouts: one timer kernel thread per scheduler instance (created on first use, raw, no libc)
 * sleeps in FUTEX_WAIT_BITSET until the earliest deadline; it never spins.
 * PI futexes are not emulated: they return -ENOSYS (glibc then refuses PTHREAD_PRIO_INHERIT
 * mutexes with ENOTSUP at pthread_mutex_init).
 */
#include "plock.h"
#include "uthread.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define NBUCKETS 512
#define POLL_NS                                                                                    \
	2000000ull /* shared waiters: how often a word changed by another process is seen          \
		    */
#define TIMER_STACK (64 * 1024)
#define NS 1000000000ull

struct ulp_futex_bucket {
	uint32_t lock;
	struct ulp_uthread *head;
	char pad[64 - sizeof(uint32_t) - sizeof(void *)];
};

static struct ulp_futex_bucket table[NBUCKETS] __attribute__((aligned(64)));

/* One per scheduler instance (so per process: the manager, each PVAS task). */
struct timer_svc {
	struct ulp_runtime *rt;
	long pid; /* the process it runs in: a dead task's instance may be reused at the same rt */
	uint32_t lock;
	_Atomic uint32_t seq;	  /* the timer thread sleeps on it */
	struct ulp_uthread *list; /* sorted by deadline */
	int started;
	struct timer_svc *next;
};

/* Every process's first timed wait takes svcs_lock, held across the mmaps and the clone that
 * start its service: a process killed there (a task, by pvas_kill) would have kept a plain spin
 * lock for good and every other process's timed waits spun on it. A lock of plock.h: taken over
 * from a dead holder, which left the list whole (s is linked by the last two stores). */
static uint32_t svcs_lock;
static struct timer_svc *svcs;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/*
 * The locks here are taken by the workers and by the timer thread, which may share one CPU
 * (ulpexec pinned by taskset): a spin on a lock, or on tref, held by the other one while the
 * kernel has it preempted lasts until the spinner's time slice ends. So a spin gives the CPU
 * away now and then (ulp_spin_or_yield). Seen when the timer looked at shared waiters 10 us
 * after their wait began (tried on 28 Nov, not kept): a pthread_create+join on one CPU took
 * 7.6 ms, and 62 us with these yields, against 28 us.
 */
static void lock_y(uint32_t *l)
{
	unsigned n = 0;

	while (!ulp_spin_trylock(l))
		ulp_spin_or_yield(&n);
}

static uint64_t now_ns(int clock)
{
	struct timespec ts;

	sys(SYS_clock_gettime, clock, (long)&ts, 0, 0, 0, 0);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static struct ulp_futex_bucket *bucket_of(uintptr_t addr)
{
	return &table[((addr >> 2) * 0x9e3779b97f4a7c15ull) >> 55];
}

/* ---- queue operations, bucket lock held ---- */

static void enqueue(struct ulp_futex_bucket *b, struct ulp_uthread *u)
{
	struct ulp_uthread **p = &b->head;

	while (*p) /* FIFO: the longest waiter is woken first */
		p = &(*p)->fnext;
	u->fnext = NULL;
	*p = u;
	__atomic_store_n(&u->fbucket, b, __ATOMIC_RELEASE);
	__atomic_store_n(&u->fqueued, 1, __ATOMIC_RELEASE);
}

/* Take u out of the list at *p, whose links are the field at offset link of each waiter (fnext
 * in a bucket, tnext in a timer service): a waiter sits in one list of each kind. */
static void unlink_waiter(struct ulp_uthread **p, struct ulp_uthread *u, size_t link)
{
	for (; *p; p = (struct ulp_uthread **)((char *)*p + link)) {
		if (*p == u) {
			*p = *(struct ulp_uthread **)((char *)u + link);
			return;
		}
	}
}

static void dequeue(struct ulp_futex_bucket *b, struct ulp_uthread *u)
{
	unlink_waiter(&b->head, u, offsetof(struct ulp_uthread, fnext));
	u->fqueued = 0;
	u->fnext = NULL;
}

/* Wake u, queued in b (locked), with result: out of the queue, then b unlocked, then resumed. */
static void wake_waiter(struct ulp_futex_bucket *b, struct ulp_uthread *u, int result)
{
	dequeue(b, u);
	u->fresult = result;
	ulp_spin_unlock(&b->lock);
	ulp_task_resume(u->t);
}

/* Take up to n waiters on key (bits matching) out of b into *woken (a list through fnext). */
static int take(struct ulp_futex_bucket *b, uintptr_t key, int n, uint32_t bits,
		struct ulp_uthread **woken)
{
	struct ulp_uthread **p = &b->head, *u;
	int k = 0;

	while ((u = *p) && k < n) {
		if (u->fkey != key || !(u->fbits & bits)) {
			p = &u->fnext;
			continue;
		}
		*p = u->fnext;
		u->fqueued = 0;
		u->fresult = 0;
		u->fnext = *woken;
		*woken = u;
		k++;
	}
	return k;
}

static void resume_list(struct ulp_uthread *u)
{
	struct ulp_uthread *next;

	for (; u; u = next) {
		next = u->fnext;
		u->fnext = NULL;
		ulp_task_resume(u->t);
	}
}

static void lock2(struct ulp_futex_bucket *a, struct ulp_futex_bucket *b)
{
	if (a == b) {
		lock_y(&a->lock);
	} else if (a < b) {
		lock_y(&a->lock);
		lock_y(&b->lock);
	} else {
		lock_y(&b->lock);
		lock_y(&a->lock);
	}
}

static void unlock2(struct ulp_futex_bucket *a, struct ulp_futex_bucket *b)
{
	ulp_spin_unlock(&a->lock);
	if (a != b)
		ulp_spin_unlock(&b->lock);
}

/* Lock the bucket u waits in (it may move: requeue). NULL when u is not queued. */
static struct ulp_futex_bucket *lock_waiter(struct ulp_uthread *u)
{
	struct ulp_futex_bucket *b;

	for (;;) {
		b = __atomic_load_n(&u->fbucket, __ATOMIC_ACQUIRE);
		if (!b)
			return NULL;
		lock_y(&b->lock);
		if (u->fbucket == b && u->fqueued)
			return b;
		ulp_spin_unlock(&b->lock);
		if (!__atomic_load_n(&u->fqueued, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

void ulp_futex_interrupt(struct ulp_uthread *u, int result)
{
	struct ulp_futex_bucket *b = lock_waiter(u);

	if (b)
		wake_waiter(b, u, result);
}

/* ---- the timer thread ---- */

static void svc_insert(struct timer_svc *s, struct ulp_uthread *u)
{
	struct ulp_uthread **p = &s->list;

	while (*p && (*p)->deadline <= u->deadline)
		p = &(*p)->tnext;
	u->tnext = *p;
	*p = u;
	u->tqueued = 1;
}

static void svc_remove(struct timer_svc *s, struct ulp_uthread *u)
{
	unlink_waiter(&s->list, u, offsetof(struct ulp_uthread, tnext));
	u->tqueued = 0;
}

/* The timer looks at u (tref held): time it out, or for a shared waiter whose own deadline is
 * not reached, wake it if the word changed, else look again later. */
static void fire(struct timer_svc *s, struct ulp_uthread *u, uint64_t now)
{
	struct ulp_futex_bucket *b = lock_waiter(u);

	if (b) {
		if (u->user_deadline && now >= u->user_deadline) {
			wake_waiter(b, u, -ETIMEDOUT);
		} else if (__atomic_load_n((uint32_t *)u->fkey, __ATOMIC_RELAXED) != u->fval) {
			wake_waiter(b, u, 0);
		} else {
			u->deadline = now + POLL_NS;
			if (u->user_deadline && u->user_deadline < u->deadline)
				u->deadline = u->user_deadline;
			lock_y(&s->lock);
			svc_insert(s, u);
			ulp_spin_unlock(&s->lock);
			ulp_spin_unlock(&b->lock);
		}
	}
	__atomic_store_n(&u->tref, 0, __ATOMIC_RELEASE);
}

static int timer_main(void *arg)
{
	struct timer_svc *s = arg;
	unsigned long all = ~0ul;
	struct ulp_uthread *due, *u, *next;
	struct timespec ts;
	uint64_t now, first;
	uint32_t seq;

	/* No runtime worker, no libc: no self pointer, no TLS, and no signal meant for the
	 * process lands here. */
	sys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, 8, 0, 0);
	ulp_arch_self_set(NULL);
	ulp_arch_tls_set(0);
	for (;;) {
		due = NULL;
		lock_y(&s->lock);
		seq = atomic_load(&s->seq);
		now = now_ns(CLOCK_MONOTONIC);
		while (s->list && s->list->deadline <= now) {
			u = s->list;
			s->list = u->tnext;
			u->tqueued = 0;
			__atomic_store_n(&u->tref, 1, __ATOMIC_RELAXED);
			u->tnext = due;
			due = u;
		}
		first = s->list ? s->list->deadline : 0;
		ulp_spin_unlock(&s->lock);
		for (u = due; u; u = next) {
			next = u->tnext;
			fire(s, u, now);
		}
		if (due)
			continue;
		ts.tv_sec = (time_t)(first / NS);
		ts.tv_nsec = (long)(first % NS);
		sys(SYS_futex, (long)&s->seq, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seq,
		    first ? (long)&ts : 0, 0, FUTEX_BITSET_MATCH_ANY);
	}
	return 0;
}

/* The timer service of the calling worker's scheduler instance, started on first use. */
static struct timer_svc *svc_get(void)
{
	struct ulp_runtime *rt = ulp_worker_self()->rt;
	long pid = sys(SYS_getpid, 0, 0, 0, 0, 0, 0), p, st;
	struct timer_svc *s;

	ulp_plock_lock(&svcs_lock, (uint32_t)pid); /* held across a clone: see svcs_lock */
	for (s = svcs; s; s = s->next)
		if (s->rt == rt && s->pid == pid)
			break;
	if (!s) {
		p = sys(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			0);
		st = sys(SYS_mmap, 0, TIMER_STACK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if ((unsigned long)p > -4096ul || (unsigned long)st > -4096ul) {
			ulp_spin_unlock(&svcs_lock);
			return NULL;
		}
		s = (struct timer_svc *)p;
		s->rt = rt;
		s->pid = pid;
		if (ulp_arch_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				       CLONE_THREAD | CLONE_SYSVSEM,
				   (char *)st + TIMER_STACK, timer_main, s) < 0) {
			sys(SYS_munmap, p, 4096, 0, 0, 0, 0);
			sys(SYS_munmap, st, TIMER_STACK, 0, 0, 0, 0);
			ulp_spin_unlock(&svcs_lock);
			return NULL;
		}
		s->started = 1;
		s->next = svcs;
		svcs = s;
	}
	ulp_spin_unlock(&svcs_lock);
	return s;
}

static void svc_kick(struct timer_svc *s)
{
	atomic_fetch_add(&s->seq, 1);
	sys(SYS_futex, (long)&s->seq, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* ---- the operations ---- */

static int bad_addr(uintptr_t a)
{
	return (a & 3) != 0;
}

/* Deadline in CLOCK_MONOTONIC ns from a futex timeout: relative (FUTEX_WAIT) or absolute
 * (WAIT_BITSET, on CLOCK_REALTIME with FUTEX_CLOCK_REALTIME). 0: none; -EINVAL via *err. */
static uint64_t deadline_of(const struct timespec *ts, int absolute, int realtime, int *err)
{
	uint64_t t, mono, rt;

	if (!ts)
		return 0;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= (long)NS) {
		*err = -EINVAL;
		return 0;
	}
	t = (uint64_t)ts->tv_sec * NS + (uint64_t)ts->tv_nsec;
	mono = now_ns(CLOCK_MONOTONIC);
	if (!absolute)
		return mono + t;
	if (!realtime)
		return t ? t : 1;
	/* An absolute CLOCK_REALTIME deadline, as a monotonic one from now: a clock step while
	 * waiting moves it (the kernel would follow the step). */
	rt = now_ns(CLOCK_REALTIME);
	return t <= rt ? 1 : mono + (t - rt);
}

static long futex_wait(struct ulp_uthread *self, uintptr_t addr, uint32_t val, uint32_t bits,
		       uint64_t deadline, int shared, unsigned long mask)
{
	struct ulp_futex_bucket *b = bucket_of(addr);
	struct timer_svc *s = NULL;
	volatile uint32_t probe;
	unsigned n;
	int result;

	if (!bits)
		return -EINVAL;
	/* Read once outside any lock: a bad address faults here (ending the ULP, as a process
	 * would be killed for a stray pointer) and never with a bucket lock held. */
	probe = *(volatile uint32_t *)addr;
	(void)probe;
	if (deadline || shared) {
		s = svc_get();
		if (!s)
			return -ENOMEM;
	}
	lock_y(&b->lock);
	if (__atomic_load_n((uint32_t *)addr, __ATOMIC_SEQ_CST) != val) {
		ulp_spin_unlock(&b->lock);
		return -EAGAIN;
	}
	if (deadline && deadline <= now_ns(CLOCK_MONOTONIC)) {
		ulp_spin_unlock(&b->lock);
		return -ETIMEDOUT;
	}
	if (self->tg->dying || (atomic_load(&self->sigpending) & ~mask)) {
		ulp_spin_unlock(&b->lock);
		return -EINTR;
	}
	self->fkey = addr;
	self->fval = val;
	self->fbits = bits;
	self->fshared = shared;
	self->fresult = 0;
	self->wait_mask = mask;
	enqueue(b, self);
	/* exit_group and tgkill mark the thread first, then look for it in a queue: with a full
	 * fence on both sides, either they see it queued or it sees the mark here. */
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&self->tg->dying, __ATOMIC_RELAXED) ||
	    (atomic_load(&self->sigpending) & ~mask)) {
		dequeue(b, self);
		ulp_spin_unlock(&b->lock);
		return -EINTR;
	}
	if (s) {
		self->user_deadline = deadline;
		self->deadline = deadline;
		if (shared) {
			uint64_t poll = now_ns(CLOCK_MONOTONIC) + POLL_NS;
			if (!deadline || poll < deadline)
				self->deadline = poll;
		}
		lock_y(&s->lock);
		svc_insert(s, self);
		ulp_spin_unlock(&s->lock);
		svc_kick(s); /* it may sleep until a later deadline */
	}
	ulp_task_suspend(self->t, ulp_after_unlock, &b->lock);
	result = self->fresult;
	if (s) {
		lock_y(&s->lock);
		if (self->tqueued)
			svc_remove(s, self);
		ulp_spin_unlock(&s->lock);
		n = 0;
		while (__atomic_load_n(&self->tref, __ATOMIC_ACQUIRE))
			ulp_spin_or_yield(&n);
	}
	return result;
}

static int futex_wake(uintptr_t addr, int n, uint32_t bits, int shared)
{
	struct ulp_futex_bucket *b = bucket_of(addr);
	struct ulp_uthread *woken = NULL;
	long k = 0, r;

	if (!bits)
		return -EINVAL;
	if (n <= 0)
		return 0;
	lock_y(&b->lock);
	if (b->head)
		k = take(b, addr, n, bits, &woken);
	ulp_spin_unlock(&b->lock);
	resume_list(woken);
	if (shared && k < n) {
		r = sys(SYS_futex, (long)addr, FUTEX_WAKE_BITSET, n - k, 0, 0, bits);
		if (r > 0)
			k += r;
	}
	return (int)k;
}

int ulp_futex_wake_addr(uintptr_t addr, int n, int shared)
{
	return futex_wake(addr, n, FUTEX_BITSET_MATCH_ANY, shared);
}

static long futex_requeue(uintptr_t a1, int nwake, int nreq, uintptr_t a2, int cmp, uint32_t cmpval,
			  int shared)
{
	struct ulp_futex_bucket *b1 = bucket_of(a1), *b2 = bucket_of(a2);
	struct ulp_uthread *woken = NULL, **p, *u;
	long k, moved = 0, r;

	if (nwake < 0 || nreq < 0 || bad_addr(a2))
		return -EINVAL;
	lock2(b1, b2);
	if (cmp && __atomic_load_n((uint32_t *)a1, __ATOMIC_SEQ_CST) != cmpval) {
		unlock2(b1, b2);
		return -EAGAIN;
	}
	k = take(b1, a1, nwake, FUTEX_BITSET_MATCH_ANY, &woken);
	p = &b1->head;
	while ((u = *p) && moved < nreq) {
		if (u->fkey != a1) {
			p = &u->fnext;
			continue;
		}
		u->fkey = a2;
		u->fval = __atomic_load_n((uint32_t *)a2, __ATOMIC_RELAXED);
		if (b1 == b2) {
			p = &u->fnext; /* same bucket: only its key changes */
		} else {
			*p = u->fnext;
			enqueue(b2, u);
		}
		moved++;
	}
	unlock2(b1, b2);
	resume_list(woken);
	if (shared && k < nwake) {
		r = sys(SYS_futex, (long)a1, FUTEX_WAKE, nwake - k, 0, 0, 0);
		if (r > 0)
			k += r;
	}
	return k + moved;
}

static int wake_op_cmp(uint32_t old, uint32_t enc)
{
	int cmp = (enc >> 24) & 15, arg = ((int)(enc << 20)) >> 20, v = (int)old;

	switch (cmp) {
	case FUTEX_OP_CMP_EQ:
		return v == arg;
	case FUTEX_OP_CMP_NE:
		return v != arg;
	case FUTEX_OP_CMP_LT:
		return v < arg;
	case FUTEX_OP_CMP_LE:
		return v <= arg;
	case FUTEX_OP_CMP_GT:
		return v > arg;
	case FUTEX_OP_CMP_GE:
		return v >= arg;
	default:
		return -1;
	}
}

static long futex_wake_op(uintptr_t a1, int n1, int n2, uintptr_t a2, uint32_t enc, int shared)
{
	struct ulp_futex_bucket *b1 = bucket_of(a1), *b2 = bucket_of(a2);
	int op = (enc >> 28) & 7, arg = ((int)(enc << 8)) >> 20, c;
	uint32_t old, nv;
	struct ulp_uthread *woken = NULL;
	long k;

	if (bad_addr(a2) || op > FUTEX_OP_XOR || ((enc >> 24) & 15) > FUTEX_OP_CMP_GE)
		return -ENOSYS;
	if ((enc >> 28) & FUTEX_OP_OPARG_SHIFT)
		arg = (int)(1u << (arg & 31));
	lock2(b1, b2);
	old = __atomic_load_n((uint32_t *)a2, __ATOMIC_RELAXED);
	do {
		switch (op) {
		case FUTEX_OP_SET:
			nv = (uint32_t)arg;
			break;
		case FUTEX_OP_ADD:
			nv = old + (uint32_t)arg;
			break;
		case FUTEX_OP_OR:
			nv = old | (uint32_t)arg;
			break;
		case FUTEX_OP_ANDN:
			nv = old & ~(uint32_t)arg;
			break;
		default:
			nv = old ^ (uint32_t)arg;
			break;
		}
	} while (!__atomic_compare_exchange_n((uint32_t *)a2, &old, nv, 0, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	k = n1 > 0 ? take(b1, a1, n1, FUTEX_BITSET_MATCH_ANY, &woken) : 0;
	c = wake_op_cmp(old, enc);
	if (c > 0 && n2 > 0)
		k += take(b2, a2, n2, FUTEX_BITSET_MATCH_ANY, &woken);
	unlock2(b1, b2);
	resume_list(woken);
	if (shared) { /* waiters in other processes: wake them as the kernel would */
		long r = n1 > 0 ? sys(SYS_futex, (long)a1, FUTEX_WAKE, n1, 0, 0, 0) : 0;

		k += r > 0 ? r : 0;
		r = c > 0 && n2 > 0 ? sys(SYS_futex, (long)a2, FUTEX_WAKE, n2, 0, 0, 0) : 0;
		k += r > 0 ? r : 0;
	}
	return k;
}

long ulp_futex(struct ulp_uthread *self, const long *a, unsigned long mask)
{
	uintptr_t addr = (uintptr_t)a[0];
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK, err = 0;
	int shared = !(op & FUTEX_PRIVATE_FLAG), realtime = (op & FUTEX_CLOCK_REALTIME) != 0;
	uint64_t dl;

	if (bad_addr(addr))
		return -EINVAL;
	if (realtime && cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET &&
	    cmd != FUTEX_WAIT_REQUEUE_PI && cmd != FUTEX_LOCK_PI2)
		return -ENOSYS;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		dl = deadline_of((const struct timespec *)a[3], cmd == FUTEX_WAIT_BITSET, realtime,
				 &err);
		if (err)
			return err;
		return futex_wait(self, addr, (uint32_t)a[2],
				  cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY : (uint32_t)a[5], dl,
				  shared, mask);
	case FUTEX_WAKE:
		return futex_wake(addr, (int)a[2], FUTEX_BITSET_MATCH_ANY, shared);
	case FUTEX_WAKE_BITSET:
		return futex_wake(addr, (int)a[2], (uint32_t)a[5], shared);
	case FUTEX_REQUEUE:
		return futex_requeue(addr, (int)a[2], (int)a[3], (uintptr_t)a[4], 0, 0, shared);
	case FUTEX_CMP_REQUEUE:
		return futex_requeue(addr, (int)a[2], (int)a[3], (uintptr_t)a[4], 1, (uint32_t)a[5],
				     shared);
	case FUTEX_WAKE_OP:
		return futex_wake_op(addr, (int)a[2], (int)a[3], (uintptr_t)a[4], (uint32_t)a[5],
				     shared);
	default: /* FUTEX_LOCK_PI, UNLOCK_PI, TRYLOCK_PI, WAIT_REQUEUE_PI, CMP_REQUEUE_PI, ... */
		return -ENOSYS;
	}
}

void ulp_futex_interrupt_quiet(struct ulp_uthread *u)
{
	struct ulp_futex_bucket *b = lock_waiter(u);

	if (!b)
		return;
	dequeue(b, u);
	ulp_spin_unlock(&b->lock);
}
