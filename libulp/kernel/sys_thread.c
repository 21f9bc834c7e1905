/* SPDX-License-Identifier: MIT */
/*
 * The thread domain of the trap: clone(CLONE_THREAD) makes a ULP thread; exit vs exit_group;
 * gettid, set_tid_address, robust lists, tgkill/tkill to a thread of the ULP, affinity.
 *
 * Life of a ULP with threads: the leader (the control block's task) is the ULP for everyone
 * outside (waiters join it, its exit ends the ULP). When it leaves while other threads live, it
 * waits for them on a small stack of its own (the reaper stack: its program stack may be gone,
 * a fault may have it on the worker's alternate stack) and ends the ULP after the last one.
 * exit_group and fatal signals mark the group dying: parked threads are woken (futex waits here,
 * calls parked on the ring by io_ring.c), running ones are kicked (ULP_SIG_KICK sent to their
 * worker), ready ones end at their next trap return or preemption tick.
 *
 * Thread ids: the leader's is the process id (getpid), so gettid() == getpid() in the main
 * thread as programs expect; the others are ULP_TID_BASE + pvid * ULP_TID_SPAN + n, above any
 * kernel pid (pid_max <= 2^22) and below FUTEX_TID_MASK (robust mutexes store them).
 */
#include "io.h"
#include "sys.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define ULP_TID_BASE 0x400000
#define ULP_TID_SPAN 0x8000
#define BOOT_GAP 4096 /* below a new thread's sp: where its first switch lands */

/* clone flags a ULP thread may be made with: glibc's pthread_create and what a thread library
 * may add. Anything else (new namespaces, vfork, pidfd, ptrace) is refused. */
#define THREAD_NEEDS (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)
#define THREAD_MAY                                                                                 \
	(THREAD_NEEDS | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SETTLS |                    \
	 CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_DETACHED |        \
	 CLONE_IO)

struct robust_head {
	uintptr_t next;
	long futex_offset;
	uintptr_t pending;
};

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static int is_err(long r)
{
	return (unsigned long)r > -4096UL;
}

static void *raw_alloc(size_t len)
{
	long p =
	    sys(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return is_err(p) ? NULL : (void *)p;
}

static size_t desc_size(void)
{
	return (sizeof(struct ulp_uthread) + 4095) & ~(size_t)4095;
}

/* [p, p + len) inside the ULP's partition, past its control block. p <= hi is checked first:
 * hi - p of an address above the partition wraps around to a huge length. */
static int in_part(const struct ulp_cb *cb, uintptr_t p, size_t len)
{
	return p >= cb->part_lo + ULP_CB_SIZE && p <= cb->part_hi && len <= cb->part_hi - p;
}

static int in_region(const struct ulp_cb *cb, uintptr_t p, size_t len)
{
	const struct pvas_region *r = cb->region;

	/* The launcher's own code lies above the region (0x55.. against a region ending at
	 * 0x5000_0000_0000): without p <= end, a kick that interrupted the runtime there was taken
	 * for one in a ULP's code, and ran a signal handler on top of the runtime's half-done work
	 * (a thread-exit hook on that task's stack was abandoned; the ULP then hung in exit). */
	return p >= r->base && p <= r->base + r->size && len <= r->base + r->size - p;
}

/* The ULP's process id (ident.c), as for a process. */
static long leader_tid(const struct ulp_cb *cb)
{
	return cb->pid ? cb->pid : sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

/* ---- the group ---- */

static struct ulp_tg *tg_get(struct ulp_cb *cb)
{
	struct ulp_tg *tg = __atomic_load_n(&cb->tg, __ATOMIC_ACQUIRE);

	if (tg)
		return tg;
	/* Only a single-threaded ULP gets here (clone creates the group first): no race. */
	tg = raw_alloc((sizeof(*tg) + 4095) & ~(size_t)4095);
	if (!tg)
		return NULL;
	tg->nlive = 1;
	tg->next_tid = 1;
	tg->leader.t = &cb->task;
	tg->leader.cb = cb;
	tg->leader.tg = tg;
	tg->leader.tid = (int)leader_tid(cb);
	/* the leader's thread has run as long as the ULP so far */
	atomic_store(&tg->leader.cpu_ns[0], atomic_load(&cb->cpu_ns[0]));
	atomic_store(&tg->leader.cpu_ns[1], atomic_load(&cb->cpu_ns[1]));
	__atomic_store_n(&cb->tg, tg, __ATOMIC_RELEASE);
	return tg;
}

struct ulp_uthread *ulp_tg_thread_of(struct ulp_cb *cb, struct ulp_task *t)
{
	struct ulp_tg *tg = __atomic_load_n(&cb->tg, __ATOMIC_ACQUIRE);

	if (!tg || !t || t->kind != ULP_TASK_ULP)
		return NULL; /* a ULT the runtime started on the ULP's behalf is none of its threads
			      */
	if (t == &cb->task)
		return &tg->leader;
	return (struct ulp_uthread *)((char *)t - offsetof(struct ulp_uthread, task));
}

struct ulp_uthread *ulp_tg_current(struct ulp_cb *cb)
{
	return ulp_tg_thread_of(cb, ulp_cur_task());
}

/* The thread of this ULP with id tid, or NULL. Group lock held. */
static struct ulp_uthread *find_locked(struct ulp_tg *tg, long tid)
{
	struct ulp_uthread *u;

	if (tid == tg->leader.tid)
		return tg->leader.ended ? NULL : &tg->leader;
	for (u = tg->threads; u; u = u->gnext)
		if (u->tid == tid && !u->ended)
			return u;
	return NULL;
}

int ulp_tg_thread_cpu(struct ulp_cb *cb, long tid, uint64_t ns[2])
{
	struct ulp_tg *tg = __atomic_load_n(&cb->tg, __ATOMIC_ACQUIRE);
	struct ulp_uthread *u;

	if (!tg)
		return -ESRCH;
	ulp_spin_lock(&tg->lock);
	u = find_locked(tg, tid);
	if (u) {
		ns[0] = atomic_load(&u->cpu_ns[0]);
		ns[1] = atomic_load(&u->cpu_ns[1]);
	}
	ulp_spin_unlock(&tg->lock);
	return u ? 0 : -ESRCH;
}

static int alloc_tid(struct ulp_cb *cb, struct ulp_tg *tg)
{
	unsigned tries;
	int tid;

	for (tries = 0; tries < ULP_TID_SPAN; tries++) {
		tid = ULP_TID_BASE + cb->pvid * ULP_TID_SPAN + (int)tg->next_tid;
		tg->next_tid = tg->next_tid + 1 < ULP_TID_SPAN ? tg->next_tid + 1 : 1;
		if (!find_locked(tg, tid))
			return tid;
	}
	return -EAGAIN;
}

void ulp_tg_release(struct ulp_cb *cb)
{
	struct ulp_tg *tg = cb->tg;
	struct ulp_uthread *u, *next;

	if (!tg)
		return;
	/* Threads of a task that was killed may still sit in futex queues: take them out. */
	for (u = tg->threads; u; u = next) {
		next = u->gnext;
		ulp_futex_interrupt_quiet(u);
		sys(SYS_munmap, (long)u, (long)desc_size(), 0, 0, 0, 0);
	}
	ulp_futex_interrupt_quiet(&tg->leader);
	for (u = tg->free; u; u = next) {
		next = u->gnext;
		sys(SYS_munmap, (long)u, (long)desc_size(), 0, 0, 0, 0);
	}
	if (tg->reaper)
		sys(SYS_munmap, (long)tg->reaper, ULP_TG_REAPER_STACK, 0, 0, 0, 0);
	cb->tg = NULL;
	sys(SYS_munmap, (long)tg, (long)((sizeof(*tg) + 4095) & ~(size_t)4095), 0, 0, 0, 0);
}

/* ---- robust lists (what the kernel does at a thread's death) ---- */

static void futex_death(struct ulp_cb *cb, uintptr_t a, int tid, int pending)
{
	uint32_t v, nv;

	if ((a & 3) || !in_part(cb, a, 4))
		return;
	v = __atomic_load_n((uint32_t *)a, __ATOMIC_RELAXED);
	for (;;) {
		if (pending && v == 0) { /* released, its waiter maybe not woken yet */
			ulp_futex_wake_addr(a, 1, 1);
			return;
		}
		if ((v & FUTEX_TID_MASK) != (uint32_t)tid)
			return;
		nv = (v & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
		if (__atomic_compare_exchange_n((uint32_t *)a, &v, nv, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
	}
	if (v & FUTEX_WAITERS)
		ulp_futex_wake_addr(a, 1, 1);
}

static void robust_walk(struct ulp_uthread *u)
{
	struct ulp_cb *cb = u->cb;
	struct robust_head *h = (struct robust_head *)u->robust_head;
	uintptr_t e, next, pending;
	unsigned limit = 2048; /* the kernel's ROBUST_LIST_LIMIT: a cycle must not hang us */

	if (!h || !in_part(cb, (uintptr_t)h, sizeof(*h)) || ((uintptr_t)h & 7))
		return;
	u->robust_head = 0;
	pending = h->pending;
	e = h->next;
	while (e != (uintptr_t)&h->next && limit--) {
		if (!in_part(cb, e & ~(uintptr_t)1, sizeof(uintptr_t)) || (e & 6))
			return;
		next = *(uintptr_t *)(e & ~(uintptr_t)1);
		/* PI entries (bit 0) are not ours to handle: no PI futexes here */
		if (e != pending && !(e & 1))
			futex_death(cb, (e & ~(uintptr_t)1) + (uintptr_t)h->futex_offset, u->tid,
				    0);
		e = next;
	}
	if (pending && !(pending & 1))
		futex_death(cb, pending + (uintptr_t)h->futex_offset, u->tid, 1);
}

/* ---- ending threads ---- */

static void unblock_all_signals(void)
{
	unsigned long none = 0;

	/* The abandoned trap frame will never restore the thread's mask: the worker must not
	 * keep it (glibc blocks every signal before a thread's last exit). */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
}

/* Runs on the next task's stack once the thread's own stack is free: the kernel's clear-tid
 * (pthread_join waits on it; glibc reuses the stack once it reads 0), then the group count. */
void ulp_tg_thread_exited(struct ulp_task *t)
{
	struct ulp_uthread *u =
	    (struct ulp_uthread *)((char *)t - offsetof(struct ulp_uthread, task));
	struct ulp_tg *tg = u->tg;
	struct ulp_uthread **p;
	struct ulp_cb *cb = u->cb;
	int wake = 0;

	if (u->clear_tid) {
		__atomic_store_n(u->clear_tid, 0, __ATOMIC_SEQ_CST);
		ulp_futex_wake_addr((uintptr_t)u->clear_tid, 1, 1);
	}
	ulp_sigq_flush(cb->pvid, ulp_tg_sigtag(cb, u), 0); /* its queued signals go with it */
	ulp_spin_lock(&tg->lock);
	for (p = &tg->threads; *p; p = &(*p)->gnext) {
		if (*p == u) {
			*p = u->gnext;
			break;
		}
	}
	u->gnext = tg->free;
	tg->free = u;
	if (--tg->nlive == 1 && tg->leader_waiting) {
		tg->leader_waiting = 0;
		wake = 1;
	}
	ulp_spin_unlock(&tg->lock);
	/* the leader may end the ULP and free tg from here on: touch neither */
	if (wake)
		ulp_task_resume(&cb->task);
}

static void thread_end(struct ulp_uthread *u) __attribute__((noreturn));
static void thread_end(struct ulp_uthread *u)
{
	u->ended = 1;
	robust_walk(u);
	unblock_all_signals();
	ulp_task_exit(u->t, NULL);
}

/* On the reaper stack: wait until the leader is the last thread, then end the ULP. */
static void leader_wait(void *arg)
{
	struct ulp_cb *cb = arg;
	struct ulp_tg *tg = cb->tg;

	ulp_task_arrive(&cb->task);
	for (;;) {
		ulp_spin_lock(&tg->lock);
		if (tg->nlive == 1) {
			ulp_spin_unlock(&tg->lock);
			break;
		}
		tg->leader_waiting = 1;
		ulp_task_suspend(&cb->task, ulp_after_unlock, &tg->lock);
	}
	unblock_all_signals();
	ulp_task_exit(&cb->task, NULL);
}

static void leader_end(struct ulp_cb *cb) __attribute__((noreturn));
static void leader_end(struct ulp_cb *cb)
{
	struct ulp_tg *tg = cb->tg;
	ulp_ctx_t here;

	if (!tg) {
		unblock_all_signals();
		ulp_task_exit(&cb->task, NULL);
	}
	tg->leader.ended = 1;
	robust_walk(&tg->leader);
	if (tg->leader.clear_tid) {
		__atomic_store_n(tg->leader.clear_tid, 0, __ATOMIC_SEQ_CST);
		ulp_futex_wake_addr((uintptr_t)tg->leader.clear_tid, 1, 1);
		tg->leader.clear_tid = NULL;
	}
	ulp_spin_lock(&tg->lock);
	if (tg->nlive == 1 || !tg->reaper) {
		ulp_spin_unlock(&tg->lock);
		unblock_all_signals();
		ulp_task_exit(&cb->task, NULL);
	}
	ulp_spin_unlock(&tg->lock);
	/* Others live: wait for them off this stack (see the top of the file). */
	ulp_arch_ctx_init(&tg->reaper_ctx, tg->reaper, ULP_TG_REAPER_STACK, leader_wait, cb);
	ulp_arch_switch(&here, &tg->reaper_ctx);
	__builtin_unreachable();
}

/* End the calling thread of cb (it left the ULP or the ULP is dying). */
static void end_current(struct ulp_cb *cb) __attribute__((noreturn));
static void end_current(struct ulp_cb *cb)
{
	struct ulp_uthread *u = ulp_tg_current(cb);

	if (!u || u == &cb->tg->leader)
		leader_end(cb);
	thread_end(u);
}

static void kick(struct ulp_uthread *u)
{
	struct ulp_task *t = u->t;
	struct ulp_worker *w;

	/* The caller marked u (dying, or a pending signal); futex_wait fences the same way. */
	atomic_thread_fence(memory_order_seq_cst);
	w = __atomic_load_n(&t->worker, __ATOMIC_ACQUIRE);
	ulp_futex_interrupt(u, -EINTR);
	/* Running on another worker: a kick there makes it look (preempt.c, ulp_tg_kick). Racy on
	 * purpose: a thread that switched away meanwhile looks at its next trap return. */
	if (w && w != ulp_worker_self() && __atomic_load_n(&w->cur, __ATOMIC_RELAXED) == t)
		ulp_worker_kick(w);
}

void ulp_tg_die(struct ulp_cb *cb, int status, int sig)
{
	struct ulp_tg *tg = cb->tg;
	struct ulp_uthread *u, *me;
	int first = 0;

	if (!tg) {
		cb->exit_status = status & 0xff;
		cb->term_sig = sig;
		leader_end(cb);
	}
	me = ulp_tg_current(cb);
	ulp_spin_lock(&tg->lock);
	if (!tg->dying) {
		tg->dying = 1;
		first = 1;
		cb->exit_status = status & 0xff;
		cb->term_sig = sig;
	}
	ulp_spin_unlock(&tg->lock);
	if (first) {
		/* Under the lock: a thread that ends moves its descriptor to the free list, which
		 * would cut an unlocked walk short. A kick takes only bucket and deque locks. */
		ulp_spin_lock(&tg->lock);
		for (u = tg->threads; u; u = u->gnext)
			if (u != me && !u->ended)
				kick(u);
		if (me != &tg->leader && !tg->leader.ended)
			kick(&tg->leader);
		ulp_spin_unlock(&tg->lock);
		/* Threads parked on the ring (a read, epoll_wait) are in no futex queue. */
		ulp_io_recheck_waiters();
	}
	end_current(cb);
}

/* exit: this thread only (exit_group is ulp_sys_exit, sys_proc.c). */
long ulp_sys_exit_thread(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct ulp_uthread *u = ulp_tg_current(cb);
	int status = (int)s->a[0];

	if (ulp_sys_in_child()) /* its only thread: the process ends */
		ulp_sys_die((int)s->a[0], 0);
	if (!u || u == &cb->tg->leader) {
		/* The leader's status is the ULP's, unless a group exit already set one. */
		if (!cb->tg || !cb->tg->dying) {
			cb->exit_status = status & 0xff;
			cb->term_sig = 0;
		}
		leader_end(cb);
	}
	thread_end(u);
}

/* ---- clone ---- */

static struct ulp_uthread *desc_alloc(struct ulp_tg *tg)
{
	struct ulp_uthread *u;

	ulp_spin_lock(&tg->lock);
	u = tg->free;
	if (u)
		tg->free = u->gnext;
	ulp_spin_unlock(&tg->lock);
	if (!u)
		u = raw_alloc(desc_size());
	else
		memset(u, 0, sizeof(*u));
	return u;
}

static void desc_free(struct ulp_tg *tg, struct ulp_uthread *u)
{
	ulp_spin_lock(&tg->lock);
	u->gnext = tg->free;
	tg->free = u;
	ulp_spin_unlock(&tg->lock);
}

/* First code of a new thread, on a corner of its own stack: become the clone child. */
static void thread_entry(void *arg)
{
	struct ulp_uthread *u = arg;

	ulp_task_arrive(u->t);
	if (u->tg->dying)
		thread_end(u);
	u->sigmask = u->start_mask; /* the kernel's mask has no signal of the ULP (signal.c) */
	ulp_arch_regs_resume(&u->regs);
}

static long make_thread(struct ulp_cb *cb, unsigned long flags, uintptr_t sp, int *ptid, int *ctid,
			uintptr_t tls, void *uc)
{
	struct ulp_tg *tg;
	struct ulp_uthread *u;
	struct ulp_task *cur = ulp_cur_task();
	int tid;

	if ((flags & THREAD_NEEDS) != THREAD_NEEDS || (flags & ~(THREAD_MAY | 0xff)))
		return -EINVAL;
	if (!sp || !in_region(cb, sp - BOOT_GAP, BOOT_GAP))
		return -EINVAL;
	if (((flags & CLONE_PARENT_SETTID) && !in_region(cb, (uintptr_t)ptid, 4)) ||
	    ((flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) &&
	     !in_region(cb, (uintptr_t)ctid, 4)))
		return -EFAULT;
	tg = tg_get(cb);
	if (!tg)
		return -ENOMEM;
	if (!tg->reaper) {
		tg->reaper = raw_alloc(ULP_TG_REAPER_STACK);
		if (!tg->reaper)
			return -ENOMEM;
	}
	u = desc_alloc(tg);
	if (!u)
		return -ENOMEM;
	u->t = &u->task;
	u->cb = cb;
	u->tg = tg;
	ulp_arch_regs_from_trap(&u->regs, uc);
	ulp_arch_regs_set_child(&u->regs, sp, 0);
	u->start_mask = *ulp_sig_mask(cb);
	u->task.kind = ULP_TASK_ULP;
	u->task.owner = cb;
	u->task.own_tls = 1;
	u->task.tls = flags & CLONE_SETTLS ? tls : cur->tls;
	if (flags & CLONE_CHILD_CLEARTID)
		u->clear_tid = (uint32_t *)ctid;
	ulp_arch_ctx_init(&u->task.ctx, (void *)(sp - BOOT_GAP), BOOT_GAP - 256, thread_entry, u);
	ulp_spin_lock(&tg->lock);
	tid = tg->dying ? -EINTR : alloc_tid(cb, tg);
	if (tid < 0) {
		ulp_spin_unlock(&tg->lock);
		desc_free(tg, u);
		return tid;
	}
	u->tid = tid;
	u->gnext = tg->threads;
	__atomic_store_n(&tg->threads, u, __ATOMIC_RELEASE);
	tg->nlive++;
	ulp_spin_unlock(&tg->lock);
	if (flags & CLONE_PARENT_SETTID)
		*ptid = tid;
	if (flags & CLONE_CHILD_SETTID)
		*ctid = tid;
	/* A ULP thread holds its instance like a ULP: the task-exit hook (ulp_proc_exited, then
	 * ulp_tg_thread_exited) drops the reference. */
	ulp_sched_ref(ulp_worker_self()->rt);
	ulp_task_resume(u->t);
	return tid;
}

long ulp_sys_clone(struct ulp_cb *cb, struct ulp_sys *s)
{
	const long *a = s->a;
	unsigned long flags = (unsigned long)a[0];

	if (!(flags & CLONE_THREAD))
		return ulp_sys_fork(cb, s); /* a new process: sys_fork.c */
	if (ulp_sys_in_child())
		return -EAGAIN; /* a fork child has no scheduler to run a ULP thread */
	return make_thread(cb, flags, (uintptr_t)a[1], (int *)a[2], (int *)a[3], (uintptr_t)a[4],
			   s->uc);
}

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

long ulp_sys_clone3(struct ulp_cb *cb, struct ulp_sys *s)
{
	const struct clone_args_v0 *ca = (const void *)s->a[0];
	size_t size = (size_t)s->a[1];

	if (size < sizeof(*ca) || !in_region(cb, (uintptr_t)ca, sizeof(*ca)))
		return size < sizeof(*ca) ? -EINVAL : -EFAULT;
	if (!(ca->flags & CLONE_THREAD))
		return -ENOSYS; /* a new process: glibc falls back to clone (ulp_sys_fork) */
	if (ulp_sys_in_child())
		return -EAGAIN;
	if (ca->exit_signal || !ca->stack || !ca->stack_size)
		return -EINVAL;
	return make_thread(cb, ca->flags, (uintptr_t)(ca->stack + ca->stack_size),
			   (int *)ca->parent_tid, (int *)ca->child_tid, (uintptr_t)ca->tls, s->uc);
}

/* ---- identity ---- */

/* arch_prctl(ARCH_SET_FS/ARCH_GET_FS) of the calling thread of the ULP: its own TLS */
void ulp_sys_tls_set(struct ulp_cb *cb, uintptr_t tls)
{
	ulp_task_set_tls(ulp_cur_task(), tls);
}

uintptr_t ulp_sys_tls_get(const struct ulp_cb *cb)
{
	return ulp_cur_task()->tls;
}

static long cur_tid(struct ulp_cb *cb)
{
	struct ulp_uthread *u = ulp_tg_current(cb);

	return u ? u->tid : leader_tid(cb);
}

long ulp_sys_gettid(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(SYS_gettid, 0, 0, 0, 0, 0, 0);
	return cur_tid(cb);
}

long ulp_sys_set_tid_address(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	struct ulp_uthread *u;

	if (!tg_get(cb))
		return -ENOMEM;
	u = ulp_tg_current(cb);
	u->clear_tid = (uint32_t *)a[0];
	return u->tid;
}

long ulp_sys_set_robust_list(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	struct ulp_uthread *u;

	if ((size_t)a[1] != sizeof(struct robust_head))
		return -EINVAL;
	if (!tg_get(cb))
		return -ENOMEM;
	u = ulp_tg_current(cb);
	u->robust_head = (uintptr_t)a[0];
	u->robust_len = (size_t)a[1];
	return 0;
}

long ulp_sys_get_robust_list(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	struct ulp_tg *tg = tg_get(cb);
	struct ulp_uthread *u;
	uintptr_t head;
	size_t len;

	if (!tg)
		return -ENOMEM;
	if (!in_region(cb, (uintptr_t)a[1], 8) || !in_region(cb, (uintptr_t)a[2], 8))
		return -EFAULT;
	ulp_spin_lock(&tg->lock);
	u = a[0] ? find_locked(tg, a[0]) : ulp_tg_current(cb);
	head = u ? u->robust_head : 0;
	len = u ? u->robust_len : 0;
	ulp_spin_unlock(&tg->lock);
	if (!u)
		return -ESRCH;
	*(uintptr_t *)a[1] = head;
	*(size_t *)a[2] = len;
	return 0;
}

/* ---- signals to threads ---- */

int ulp_tg_kill(struct ulp_cb *cb, long nr, const long *a, long *ret)
{
	long tgid = nr != SYS_tkill ? a[0] : 0, tid = nr != SYS_tkill ? a[1] : a[0];
	int sig = (int)(nr != SYS_tkill ? a[2] : a[1]);
	/* rt_tgsigqueueinfo (pthread_sigqueue): the caller's siginfo */
	const siginfo_t *info = nr == SYS_rt_tgsigqueueinfo ? (const siginfo_t *)a[3] : NULL;
	struct ulp_tg *tg = tg_get(cb);
	struct ulp_uthread *u;

	if (!tg)
		return 0;
	if (nr != SYS_tkill && tgid != leader_tid(cb) && tgid != tg->leader.tid)
		return 0; /* another process */
	ulp_spin_lock(&tg->lock);
	u = find_locked(tg, tid);
	ulp_spin_unlock(&tg->lock);
	if (!u) {
		if (tid >= ULP_TID_BASE + cb->pvid * ULP_TID_SPAN &&
		    tid < ULP_TID_BASE + (cb->pvid + 1) * ULP_TID_SPAN) {
			*ret = -ESRCH; /* one of ours that ended */
			return 1;
		}
		return 0;
	}
	if (sig < 0 || sig > 64) {
		*ret = -EINVAL;
		return 1;
	}
	*ret = 0;
	if (sig == 0)
		return 1;
	if (info && !in_region(cb, (uintptr_t)info, sizeof(*info))) {
		*ret = -EFAULT;
		return 1;
	}
	if (ULP_SIG_QUEUED(sig)) { /* queued, as the kernel queues a thread's (sigqueue.c) */
		struct ulp_sigq_info in = {SI_TKILL, (int)leader_tid(cb),
					   (int)sys(SYS_getuid, 0, 0, 0, 0, 0, 0), 0, 0};

		if (info) {
			in.code = info->si_code;
			in.pid = info->si_pid;
			in.uid = (int)info->si_uid;
			in.value = (long)info->si_value.sival_ptr;
		}

		*ret = ulp_sigq_push(cb->pvid, ulp_tg_sigtag(cb, u), sig, &in, &u->sigpending,
				     ULP_SIGQ_BOUNDED);
		if (*ret)
			return 1;
	} else {
		atomic_fetch_or(&u->sigpending, 1ul << (sig - 1));
	}
	/* Delivered by the target itself at its next trap return; make that come soon. */
	if (u != ulp_tg_current(cb) && !(u->wait_mask & (1ul << (sig - 1)))) {
		kick(u);
		/* A call parked on the ring (pause, read, nanosleep...) ends too: the kick's
		 * fence orders the pending bit before the ring's look (ulp_io_signalled). */
		ulp_io_recheck_waiters();
	}
	return 1;
}

int ulp_tg_sigtag(const struct ulp_cb *cb, const struct ulp_uthread *u)
{
	if (u == &u->tg->leader)
		return 0xffff;
	return u->tid - (ULP_TID_BASE + cb->pvid * ULP_TID_SPAN) + 1; /* 1..ULP_TID_SPAN */
}

int ulp_tg_take(struct ulp_cb *cb, struct ulp_uthread *u, unsigned long want, siginfo_t *si)
{
	unsigned long p, skip = 0, bit;
	struct ulp_sigq_info in;
	int sig;

	while ((p = atomic_load(&u->sigpending) & want & ~skip) != 0) {
		sig = __builtin_ctzl(p) + 1;
		bit = 1ul << (sig - 1);
		memset(si, 0, sizeof(*si));
		si->si_signo = sig;
		if (ULP_SIG_QUEUED(sig)) {
			if (!ulp_sigq_take(cb->pvid, ulp_tg_sigtag(cb, u), sig, &in,
					   &u->sigpending)) {
				skip |= bit; /* being queued: its sender kicks */
				continue;
			}
			si->si_code = in.code;
			si->si_pid = in.pid;
			si->si_uid = (uid_t)in.uid;
			si->si_value.sival_ptr = (void *)in.value;
			return sig;
		}
		if (!(atomic_fetch_and(&u->sigpending, ~bit) & bit))
			continue;
		si->si_code = SI_TKILL;
		si->si_pid = (int)leader_tid(cb);
		si->si_uid = (uid_t)sys(SYS_getuid, 0, 0, 0, 0, 0, 0);
		return sig;
	}
	return 0;
}

void ulp_tg_trap_return(struct ulp_cb *cb, void *uc)
{
	struct ulp_tg *tg = cb->tg;

	if (!tg || ulp_sys_in_child())
		return;
	if (tg->dying)
		end_current(cb);
	ulp_sig_stopped_wait(cb); /* another thread of it took a stop signal */
	if (tg->dying)
		end_current(cb);
	ulp_tg_deliver(cb, uc);
}

void ulp_tg_deliver(struct ulp_cb *cb, void *uc)
{
	struct ulp_uthread *u;
	ucontext_t none;
	siginfo_t si;
	int sig;

	if (!cb->tg || ulp_sys_in_child())
		return;
	if (!uc) { /* no frame at hand (a restarted wait): the handler gets an empty one */
		memset(&none, 0, sizeof(none));
		uc = &none;
	}
	u = ulp_tg_current(cb);
	/* the mask read again after each handler, as the kernel does at each delivery (which
	 * sets up the process's due signals above this one's: signal.c) */
	while ((sig = ulp_tg_take(cb, u, ~*ulp_sig_mask(cb), &si)) > 0)
		ulp_sig_handle(cb, sig, &si, uc);
}

void ulp_tg_kick(struct ulp_cb *cb, void *uc)
{
	uintptr_t pc = ulp_arch_trap_pc(uc);

	/* Only where the thread runs its own code: inside the runtime (a trap in progress, or a
	 * trampoline of the fast path) the trap's or the fast call's own return does it. */
	if (cb->tg && in_region(cb, pc, 1) && !ulp_fast_in_slots(cb, pc))
		ulp_tg_trap_return(cb, uc);
}

/* ---- affinity: the ULP sees its task's workers as its CPUs, or the CPUs it set ---- */

/*
 * The affinity a ULP set (sched_setaffinity of itself or its threads), by pvid: what it reads
 * back, what its fork children start with, as a process's children inherit it, and its
 * placeholder's (what `taskset -p PID` shows from outside); never applied to the workers, which
 * run other ULPs too. Kept across its execve (`taskset -c 0 nproc`
 * printed 2, the task's workers, before 27 Nov), forgotten when another ULP starts in the
 * partition. One mask for the whole ULP: its threads share it.
 */
#define AFF_LONGS 16 /* 1024 CPUs */
struct aff {
	_Atomic uint32_t gen1; /* ulp_sig_gen + 1 of the ULP that set it; 0: none */
	unsigned long mask[AFF_LONGS];
	unsigned long allowed[AFF_LONGS]; /* its placeholder's before the first set */
};
static struct aff *_Atomic affs;

static struct aff *aff_of(const struct ulp_cb *cb, int create)
{
	struct aff *t = atomic_load(&affs), *none = NULL;
	size_t len = cb->region->nparts * sizeof(*t);

	if (!t && create) {
		t = ulp_raw_mmap(len, MAP_NORESERVE);
		if (t && !atomic_compare_exchange_strong(&affs, &none, t)) {
			ulp_raw_munmap(t, len);
			t = none;
		}
	}
	return t && (unsigned)cb->pvid < cb->region->nparts ? &t[cb->pvid] : NULL;
}

/* cb's record if it set one since it started (NULL: none). */
static const struct aff *aff_set(const struct ulp_cb *cb)
{
	struct aff *a = aff_of(cb, 0);

	return a && atomic_load(&a->gen1) == ulp_sig_gen(cb->pvid) + 1 ? a : NULL;
}

/*
 * sched_setscheduler, sched_getscheduler, sched_setparam, sched_getparam, sched_setattr,
 * sched_getattr of the ULP (0, its pid, one of its threads): its placeholder's policy, which the
 * kernel checks and keeps for it and `chrt -p PID` shows; the worker's would be every ULP's of
 * the task (before 27 Nov `chrt -i 0 prog` made the worker SCHED_IDLE, and the ULP read back
 * SCHED_OTHER through its pid). Its fork children start with it (ulp_sys_sched_child).
 */
static int not_ours(struct ulp_cb *cb, long tid);

long ulp_sys_sched_policy(struct ulp_cb *cb, struct ulp_sys *s)
{
	const long *a = s->a;
	long pid = (int)a[0];

	if (!ulp_sys_in_child() && cb->pid && !not_ours(cb, pid))
		pid = cb->pid;
	return sys(s->nr, pid, a[1], a[2], a[3], 0, 0);
}

#define KSCHED_DEADLINE 6
#define KSCHED_RESET_ON_FORK 0x40000000

void ulp_sys_sched_child(struct ulp_cb *cb, int inherited)
{
	const struct aff *set = aff_set(cb);
	struct sched_param sp = {0};
	long mine, ulps, pol;

	if (set)
		sys(SYS_sched_setaffinity, 0, sizeof(set->mask), (long)set->mask, 0, 0, 0);
	/* A child the placeholder made has them from it, as a process's child from its parent
	 * (SCHED_RESET_ON_FORK applied by the kernel) */
	if (!cb->pid || inherited)
		return;
	/* The policy, and the nice value (the raw call's 20 - nice, both sides). With
	 * SCHED_RESET_ON_FORK a real-time policy and a negative nice are not the child's, as
	 * sched(7) says; the flag itself is not either. */
	pol = sys(SYS_sched_getscheduler, cb->pid, 0, 0, 0, 0, 0);
	if (pol >= 0 && (pol & ~KSCHED_RESET_ON_FORK) != KSCHED_DEADLINE &&
	    sys(SYS_sched_getparam, cb->pid, (long)&sp, 0, 0, 0, 0) == 0) {
		if ((pol & KSCHED_RESET_ON_FORK) && ((pol & ~KSCHED_RESET_ON_FORK) == SCHED_FIFO ||
						     (pol & ~KSCHED_RESET_ON_FORK) == SCHED_RR)) {
			pol = SCHED_OTHER;
			sp.sched_priority = 0;
		}
		pol &= ~KSCHED_RESET_ON_FORK;
		if (pol != sys(SYS_sched_getscheduler, 0, 0, 0, 0, 0, 0))
			sys(SYS_sched_setscheduler, 0, pol, (long)&sp, 0, 0, 0);
	}
	ulps = sys(SYS_getpriority, PRIO_PROCESS, cb->pid, 0, 0, 0, 0);
	mine = sys(SYS_getpriority, PRIO_PROCESS, 0, 0, 0, 0, 0);
	if (ulps > 20 &&
	    (sys(SYS_sched_getscheduler, cb->pid, 0, 0, 0, 0, 0) & KSCHED_RESET_ON_FORK))
		ulps = 20;
	if (ulps > 0 && mine > 0 && ulps != mine)
		sys(SYS_setpriority, PRIO_PROCESS, 0, 20 - ulps, 0, 0, 0);
	/* I/O priority, IOPRIO_WHO_PROCESS (1) */
	ulps = sys(SYS_ioprio_get, 1, cb->pid, 0, 0, 0, 0);
	mine = sys(SYS_ioprio_get, 1, 0, 0, 0, 0, 0);
	if (ulps >= 0 && mine >= 0 && ulps != mine)
		sys(SYS_ioprio_set, 1, 0, ulps, 0, 0, 0);
}

/* tid names neither the calling thread (0 or its own id) nor another thread of its ULP: a
 * process of its own, whose affinity is the kernel's business. */
static int not_ours(struct ulp_cb *cb, long tid)
{
	struct ulp_tg *tg = cb->tg;
	int ours = 0;

	if (!tid || tid == cur_tid(cb))
		return 0;
	if (tg) {
		ulp_spin_lock(&tg->lock);
		ours = find_locked(tg, tid) != NULL;
		ulp_spin_unlock(&tg->lock);
	}
	return !ours;
}

long ulp_sys_sched_getaffinity(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	unsigned long real[AFF_LONGS], *out = (unsigned long *)a[2];
	const struct aff *set = aff_set(cb);
	unsigned n = ulp_worker_self()->rt->nworkers, have = 0, i;
	size_t len = (size_t)a[1];
	long r;

	if (not_ours(cb, a[0]))
		return sys(SYS_sched_getaffinity, a[0], a[1], a[2], 0, 0, 0);
	memset(real, 0, sizeof(real));
	r = sys(SYS_sched_getaffinity, 0, sizeof(real), (long)real, 0, 0, 0);
	if (r < 0)
		return r;
	if (len < (size_t)r || (len & 7))
		return -EINVAL;
	if (!in_region(cb, (uintptr_t)out, (size_t)r))
		return -EFAULT;
	if (set) { /* what it set, of the CPUs it may have, as the kernel keeps it */
		for (i = 0; i < AFF_LONGS; i++)
			real[i] = set->mask[i] & set->allowed[i];
		memcpy(out, real, (size_t)r);
		return r;
	}
	/* The worker's own CPUs first, then the lowest others, n in all. */
	for (i = 0; i < (unsigned)r * 8 && have < n; i++)
		if (real[i / 64] & (1ul << (i % 64)))
			have++;
	for (i = 0; i < (unsigned)r * 8 && have < n; i++) {
		if (!(real[i / 64] & (1ul << (i % 64)))) {
			real[i / 64] |= 1ul << (i % 64);
			have++;
		}
	}
	for (have = 0, i = 0; i < (unsigned)r * 8; i++) {
		if (!(real[i / 64] & (1ul << (i % 64))))
			continue;
		if (++have > n)
			real[i / 64] &= ~(1ul << (i % 64));
	}
	memcpy(out, real, (size_t)r);
	return r;
}

long ulp_sys_sched_setaffinity(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	unsigned long want[AFF_LONGS], any = 0;
	size_t len = (size_t)a[1], i;
	struct aff *rec;
	long r = 0;

	if (not_ours(cb, a[0]))
		return sys(SYS_sched_setaffinity, a[0], a[1], a[2], 0, 0, 0);
	if (!in_region(cb, (uintptr_t)a[2], len))
		return -EFAULT;
	/* Recorded, not applied: a ULP thread runs on whichever worker of its task is free;
	 * pinning the worker would pin every other ULP on it too. CPUs past 1024 are dropped,
	 * as the kernel drops those past its own count. */
	memset(want, 0, sizeof(want));
	memcpy(want, (const void *)a[2], len < sizeof(want) ? len : sizeof(want));
	rec = aff_of(cb, 1);
	if (!rec)
		return -ENOMEM;
	if (!aff_set(cb)) { /* the first: the CPUs it may name are its placeholder's now */
		memset(rec->allowed, 0, sizeof(rec->allowed));
		r = sys(SYS_sched_getaffinity, cb->pid, sizeof(rec->allowed), (long)rec->allowed, 0,
			0, 0);
		if (r < 0)
			return r;
	}
	for (i = 0; i < AFF_LONGS; i++)
		any |= want[i] & rec->allowed[i];
	if (!any)
		return -EINVAL; /* no CPU it may run on, as the kernel says */
	memcpy(rec->mask, want, sizeof(want));
	atomic_store(&rec->gen1, ulp_sig_gen(cb->pvid) + 1);
	sys(SYS_sched_setaffinity, cb->pid, sizeof(want), (long)want, 0, 0, 0);
	return 0;
}

long ulp_sys_futex(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (ulp_sys_in_child()) /* a fork child is a real process: the kernel's */
		return sys(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4], s->a[5]);
	const long *a = s->a;
	struct ulp_uthread *u;

	if (!in_region(cb, (uintptr_t)a[0], 4))
		return sys(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (!tg_get(cb))
		return -ENOMEM;
	u = ulp_tg_current(cb);
	return ulp_futex(u, a, *ulp_sig_mask(cb));
}

/* The worker thread's rseq area belongs to the host libc. */
long ulp_sys_rseq(struct ulp_cb *cb, struct ulp_sys *s)
{
	return -ENOSYS;
}
