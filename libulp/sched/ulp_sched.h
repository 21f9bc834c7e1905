/* SPDX-License-Identifier: MIT */
/*
 * Scheduler internals: tasks, workers, deques. ULTs and ULPs are both tasks and share the switch
 * and the queues.
 *
 * Rule for everything in this header: the code may run while a ULP's TLS is loaded, so it uses no
 * __thread variable, no errno and no libc call that does; the worker is reached through
 * ulp_arch_self_get() or through task->worker, and system calls are raw (libulp/sys.h).
 * After any switch, a task may be running on another worker: re-read the worker.
 */
#ifndef ULP_ULP_SCHED_H
#define ULP_ULP_SCHED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "deque.h"
#include "ulp.h"

enum ulp_task_kind {
	ULP_TASK_ULT,	/* lightweight thread with a libulp stack */
	ULP_TASK_MAIN,	/* the thread that called ulp_init, on its own stack */
	ULP_TASK_SCHED, /* a worker's scheduler loop */
	ULP_TASK_ULP,	/* a user-level process (stack and TLS are the program's) */
};

enum ulp_task_state {
	ULP_READY,
	ULP_RUNNING,
	ULP_BLOCKED,
	ULP_EXITED,
};

struct ulp_worker;

/*
 * A task descriptor. The fields above the "--" are those switch, yield, create and join touch
 * (kept together for the cache); ulp_thread_create sets every field a ULT reads before writing
 * it (descriptors are recycled without clearing: see ulp_task_alloc).
 */
struct ulp_task {
	ulp_ctx_t ctx;
	struct ulp_worker *worker; /* the worker running it, or that ran it last */
	uint8_t own_tls;	   /* 0: runs on the TLS of whatever worker runs it */
	uint8_t kind;		   /* enum ulp_task_kind */
	uint8_t detached;
	uint8_t pinned; /* resumed only on `home` (through its inbox) */
	int state;	/* enum ulp_task_state (informative) */
	/* join: NULL, a waiting task, or ULP_JOIN_DONE once ended */
	_Atomic(struct ulp_task *) joiner;
	void *(*fn)(void *);
	void *arg;
	void *ret;
	struct ulp_task *next; /* wait queues, yield queue and free lists */
	void *stack;	       /* libulp stack (mapping start, guard page included) or NULL */
	/* -- */
	uintptr_t tls;		 /* TLS register value, used when own_tls */
	void **keys;		 /* ULP_KEYS_MAX slots, allocated on first ulp_key_set */
	void *owner;		 /* the ULP this task belongs to (its control block), or NULL */
	uint64_t switches;	 /* times switched to */
	struct ulp_worker *home; /* for pinned tasks */
	size_t stack_size;
	uint64_t cpu_ns; /* time spent running (when accounting is on) */
	uint64_t run_start_ns;
	/* 1 + the number of the trapped system call the task is in, 0: none (the syscall trap
	 * writes it; informative, for tools such as ulps: what a blocked ULP waits in) */
	uint32_t in_syscall;
	/* times preempted in a row without a trapped call between (the trap resets it): a ULP
	 * that busy-polls memory, as MPICH's ranks do, gets a shorter quantum (preempt.c) */
	uint32_t spins;
	/* A yielder that only waits for memory to change (a rewritten wait loop, spinyield.c):
	 * while probe is set, ulp_task_yield_wait asks it before switching to the task and passes
	 * the task over while it answers 0. The task sets it before it yields; it is cleared once
	 * the task runs. probe_code, probe_regs: the probe's own (the loop's, the thread's). */
	int (*probe)(struct ulp_task *t);
	uintptr_t probe_code;
	void *probe_regs;
	uint32_t probe_scan; /* the worker's wait_scan that last passed the task over */
	const void *san_lo;  /* stack bounds for the ASan build's fiber annotations */
	size_t san_size;
};

#define ULP_ALTSTACK_SIZE (64 * 1024)
#define ULP_JOIN_DONE ((struct ulp_task *)1)
#define ULP_JOIN_DETACHED ((struct ulp_task *)2)

struct ulp_runtime;

struct ulp_worker {
	struct ulp_worker *self; /* first: x86_64 reads it as %gs:0 */
	unsigned id;
	struct ulp_runtime *rt; /* the scheduler instance this worker belongs to */
	struct ulp_task *cur;
	struct ulp_task sched; /* this worker's scheduler loop */
	uintptr_t host_tls;    /* the kernel thread's own TLS */
	uintptr_t cur_tls;     /* what the TLS register holds now */
	/* 0 only while cur_tls == host_tls and accounting is off: then a switch to a task without
	 * a TLS of its own needs neither a TLS write nor a clock read (the switch's fast path). */
	int slow_switch;
	struct ulp_deque dq;
	/* Yielders waiting behind the deque's work, FIFO through task->next. Owner only: a yield
	 * takes no locked instruction. They move into the deque (stealable) whenever it is empty
	 * (ulp_sched.c: next_ready, yield_queue). */
	struct ulp_task *yq_head, *yq_tail;
	/* tasks that must run on this worker (pinned tasks woken elsewhere), locked list */
	uint32_t inbox_lock;
	struct ulp_task *inbox;
	/* 1: the only worker of its instance. Nobody else takes tasks from this worker's queues
	 * or waits on its tasks, so queueing and the join hand-over need no atomic RMW and a task
	 * may be queued before it is switched away from. */
	int solo;
	size_t page_size;	     /* ulp_page_size(), here for the inline stack cache */
	struct ulp_task *free_tasks; /* descriptor free list */
	void *free_stacks;	     /* stack free list (linked through the stacks themselves) */
	unsigned nfree_tasks, nfree_stacks;
	uint64_t rng;
	uint64_t steals, sleeps;
	/* Tasks started here minus tasks ended here. Per worker, written only by its own kernel
	 * thread: a shared counter cost the 2-worker fib run its speedup (bench/fib.c). The sum
	 * over workers plus the instance's references (live_tasks) is the number of live tasks. */
	long live;
	void *sched_stack;
	struct ulp_task *san_from; /* ASan build: the task we switched away from */
	void *altstack;		   /* alternate signal stack (ulp_worker_altstack) */
	int tid;
	void *pthread; /* pthread_t, opaque here */
	/* The wait probe running on this thread now (a task's probe_code), or 0: while set, the
	 * thread runs runtime code however its pc looks (preempt.c, trap.c's fault handler). */
	uintptr_t probing;
	uint32_t wait_scan; /* ulp_task_yield_wait's rounds, to see a task twice */
	char pad[64];
};

/*
 * Hooks of a scheduler instance: how the layers above adapt it without writing its fields. All of
 * them may run while a ULP's TLS is loaded (see the rule above). arg is the hooks' own argument.
 */
struct ulp_sched_hooks {
	/* On each worker's kernel thread once it is the worker, before it runs any task (e.g. an
	 * alternate signal stack for the syscall trap). */
	void (*worker_start)(struct ulp_worker *w, void *arg);
	/*
	 * Called instead of the futex sleep when a worker found nothing to run. Return when the
	 * 32-bit word at `word` no longer holds `seq`: whoever makes work visible to an idle worker
	 * (a push, a resume, stop) changes the word and then FUTEX_WAKEs it (private futex; the
	 * waker may be another process sharing the address space, e.g. the manager). So a hook may
	 * block on its own fds (an io_uring with an IORING_OP_FUTEX_WAIT on word/seq next to its
	 * reads, kernel >= 6.7) and still be woken for new work. Returning early is harmless: the
	 * worker looks for work and comes back here.
	 */
	void (*idle)(struct ulp_worker *w, const _Atomic uint32_t *word, uint32_t seq, void *arg);
	/*
	 * On the exit path of a ULP_TASK_ULP task, instead of the join hand-over, once the task has
	 * left its stack (we run on the next task's). It owns what is left of the task: waking a
	 * waiter, its last store to it, then usually ulp_sched_unref (and ulp_sched_stop at zero
	 * where the instance should end with its last ULP).
	 */
	void (*task_exit)(struct ulp_task *t, void *arg);
	/*
	 * At every turn of a worker's scheduler loop, before it looks for work: pick up finished
	 * work without blocking (an io_uring's completions), so that it is seen while the worker is
	 * busy, not only once it is idle.
	 */
	void (*poll)(struct ulp_worker *w, void *arg);
	/*
	 * After the futex wake of idle workers (n of them, all when n < 0): wake those an idle hook
	 * keeps asleep elsewhere than on the futex. Needed where the kernel cannot wait on the
	 * futex word next to the hook's fds (io_uring's FUTEX_WAIT is 6.7+; the VM tests boot 6.1),
	 * and the waker may be another process, which cannot reach the sleeper's fds: a tgkill can.
	 */
	void (*wake)(struct ulp_runtime *rt, int n, void *arg);
	/*
	 * Before the worker switches to a task that has an owner (a ULP's): what the kernel keeps
	 * per thread and the owner has its own of (its cwd and umask) is loaded here. Called on
	 * every such switch: it must cost nothing when nothing differs.
	 */
	void (*switch_in)(struct ulp_worker *w, struct ulp_task *t, void *arg);
	void *arg;
};

/* What ulp_sched_create makes. */
struct ulp_sched_attr {
	unsigned nworkers;  /* >= 1 */
	size_t stack_size;  /* ULT stacks (page multiple); 0: 64 KiB */
	int accounting;	    /* measure cpu_ns per task */
	size_t sched_stack; /* worker 0's scheduler stack (ulp_sched_adopt_caller), 0: none */
	const struct ulp_sched_hooks *hooks; /* copied; NULL: none */
	int no_libc; /* no libc TLS on the workers (PVAS tasks: fs = 0): no sanitizer fiber calls */
};

/*
 * A scheduler instance: its workers steal only from each other. ulp_rt is the instance of
 * ulp_init; every PVAS task (a kernel process in the shared address space) runs one of its own,
 * so a ULP never leaves its task. Only libulp/sched writes these fields: other folders call the
 * functions below (reading started, nworkers and workers is fine).
 */
struct ulp_runtime {
	unsigned nworkers;
	struct ulp_worker **workers;
	size_t stack_size;
	_Atomic int started;
	_Atomic int shutdown;
	struct ulp_steal_gate gate; /* workers that steal or remove now (deque.h) */
	_Atomic uint32_t idle_seq;  /* futex word idle workers sleep on */
	_Atomic int sleepers;
	_Atomic long live_tasks; /* references: tasks started from outside the workers, holds */
	int accounting;		 /* measure cpu_ns per task */
	int no_libc;		 /* see struct ulp_sched_attr */
	size_t sched_stack;
	struct ulp_sched_hooks hooks;
	_Atomic(void *) ctx; /* the hooks' own state for this instance (ulp_sched_set_ctx) */
};

extern struct ulp_runtime ulp_rt;

/* The system page size (set before main runs; no system call, no TLS). */
size_t ulp_page_size(void);

/* The worker running the caller (NULL outside the runtime's kernel threads). */
static inline struct ulp_worker *ulp_worker_self(void)
{
	return (struct ulp_worker *)ulp_arch_self_get();
}

/*
 * Instance life cycle (instance.c). create: allocate and set up the workers (rt zeroed or
 * destroyed before; -EBUSY while rt is in use, -EINVAL, -ENOMEM). Kernel threads then become its
 * workers through ulp_sched_worker_run (or ulp_sched_adopt_caller for worker 0 keeping the
 * caller's stack). start marks the instance up (ulp_sched_running). stop asks every worker loop to
 * return once it has nothing to run, waking the idle ones. destroy frees what create made, once no
 * worker runs. set_hooks replaces the hooks of an instance not started yet (-EBUSY otherwise).
 */
int ulp_sched_create(struct ulp_runtime *rt, const struct ulp_sched_attr *attr);
int ulp_sched_set_hooks(struct ulp_runtime *rt, const struct ulp_sched_hooks *hooks);
void ulp_sched_start(struct ulp_runtime *rt);
void ulp_sched_stop(struct ulp_runtime *rt);
void ulp_sched_destroy(struct ulp_runtime *rt);
/* Workers that did not get a kernel thread are dropped (only before any task was queued). */
void ulp_sched_trim(struct ulp_runtime *rt, unsigned nworkers);
static inline int ulp_sched_running(struct ulp_runtime *rt)
{
	return atomic_load_explicit(&rt->started, memory_order_acquire) == 1;
}

/* Run worker i of rt on the calling kernel thread until rt stops; the thread's TLS and self
 * pointer are restored before it returns. */
void ulp_sched_worker_run(struct ulp_runtime *rt, unsigned i);
/* The calling thread becomes worker 0 and keeps running `main` (a pinned task) on its own stack;
 * worker 0's scheduler loop gets the sched_stack of the attributes. */
int ulp_sched_adopt_caller(struct ulp_runtime *rt, struct ulp_task *main);

/*
 * References that keep an instance's work alive from outside its workers (ULPs started by
 * another thread, holds): ulp_live_count includes them. tryref fails (-ESRCH) once the count
 * dropped to zero, for instances that end at zero. unref returns what is left.
 */
void ulp_sched_ref(struct ulp_runtime *rt);
int ulp_sched_tryref(struct ulp_runtime *rt);
long ulp_sched_unref(struct ulp_runtime *rt);
long ulp_sched_refs(struct ulp_runtime *rt);

/* State the hooks' owner attaches to a running instance (the ULP layer's io_uring, made in the
 * instance's own process by its first worker): set once (-EBUSY when set already), read any time.
 */
int ulp_sched_set_ctx(struct ulp_runtime *rt, void *ctx);
static inline void *ulp_sched_ctx(struct ulp_runtime *rt)
{
	return atomic_load_explicit(&rt->ctx, memory_order_acquire);
}

/* 1 when w has a task ready to run in its deque, yield queue or inbox (what a yield would
 * switch to). Called by w's owner only. */
int ulp_worker_has_ready(struct ulp_worker *w);
/* 1 when a worker of w's instance other than w runs a task of owner now (a ULP's thread, in its
 * own code or in the runtime on its behalf). A moment's answer: a task of owner that another
 * worker resumes right after it starts where it stopped, in the runtime. */
int ulp_sched_owner_runs_elsewhere(struct ulp_worker *w, const void *owner);

/* Worker i of rt, i taken modulo the number of workers. */
struct ulp_worker *ulp_sched_worker(struct ulp_runtime *rt, unsigned i);
/* Before t is first queued: the worker it starts on (resumes from outside go there). */
void ulp_task_place(struct ulp_task *t, struct ulp_worker *w);
/* w's alternate signal stack (ULP_ALTSTACK_SIZE bytes, mapped on first use, unmapped with the
 * instance; raw system calls only). NULL when out of memory. */
void *ulp_worker_altstack(struct ulp_worker *w);

/* Start t (its stack set, its context not: t never ran) with entry(t) now on self's worker,
 * queueing self at the bottom of the deque (work-first creation). A pinned self (the ulp_init
 * thread) queues t instead (help-first), unless it is the instance's only worker. */
void ulp_task_run_first(struct ulp_task *self, struct ulp_task *t, ulp_arch_fn entry);

/* Make t runnable: queued on the calling worker (or on t's worker when pinned), an idle worker is
 * woken. Safe from any worker and from non-runtime threads. */
void ulp_task_resume(struct ulp_task *t);

/* Make two tasks of the same worker runnable at once through its inbox, `first` to run before
 * `then` (no idle worker can take `then` in between). For pvas_ulp_exec: the new ULP, then the
 * caller. */
void ulp_task_resume_pair(struct ulp_task *first, struct ulp_task *then);

/*
 * Suspend the current task `self`. Once its context is saved and we run on the next task's stack,
 * after(arg) runs: that is where the task is published (queued somewhere, a lock released), so no
 * other worker can resume it before it is fully saved.
 */
void ulp_task_suspend(struct ulp_task *self, void (*after)(void *), void *arg);

/* Queue self behind the ready work of its worker (stealing some when it has none) and run the
 * next task; returns at once when there is none. */
int ulp_task_yield(struct ulp_task *self); /* 0 when there was nothing else to run */
/* ulp_task_yield of a task that only waits (self->probe set): the next ready task of the worker
 * runs, but those whose probe says they would go on waiting are passed over (to the end of the
 * yield queue) without a switch. 0 when no task was ready to run (self goes on); no stealing. */
int ulp_task_yield_wait(struct ulp_task *self);

/* Switch straight to `to` (which must be READY and not queued: the caller took it from where it
 * was), queueing self behind the ready work as a yield does. Used by pvas_ulp_switch. */
void ulp_task_yield_to(struct ulp_task *self, struct ulp_task *to);

/* End the current task: wake its joiner, release its stack (and descriptor if detached), run
 * something else. */
/* Functions that end a task run no ASan hook (sched.c, ulp_task_exit). */
#ifdef ULP_SANITIZE
#define ULP_NO_ASAN __attribute__((no_sanitize_address))
#else
#define ULP_NO_ASAN
#endif
void ulp_task_exit(struct ulp_task *self, void *ret) __attribute__((noreturn));

/* Count a task as started / ended on worker w, from w's own kernel thread. */
static inline void ulp_worker_live_add(struct ulp_worker *w, long d)
{
	__atomic_store_n(&w->live, w->live + d, __ATOMIC_RELAXED);
}

/* The same from the calling worker, or globally outside the workers (w NULL). */
static inline void ulp_live_add(struct ulp_worker *w, long d)
{
	if (w)
		ulp_worker_live_add(w, d);
	else
		atomic_fetch_add(&ulp_rt.live_tasks, d);
}
long ulp_live_count(struct ulp_runtime *rt);

/* Wait until t ended (one waiter per task). -EDEADLK for self, -EINVAL when detached or
 * waited for already. */
int ulp_task_wait(struct ulp_task *self, struct ulp_task *t);

/* Take t out of whichever inbox or deque of rt, or the caller's own yield queue, holds it
 * (directed switches). 1 when taken. Compares pointers only: t need not be valid memory. Another
 * worker's yield queue is not searched (it is that worker's alone): 0 until t moves on. */
int ulp_task_unqueue(struct ulp_runtime *rt, struct ulp_task *t);

/* Set the TLS a task runs with (own_tls=1) and load it when t is the running task. */
void ulp_task_set_tls(struct ulp_task *t, uintptr_t tls);

/*
 * Descriptor and stack management: per-worker free lists, the list operations inline (they are
 * most of create and exit), mapping and unmapping in stack.c.
 */
#define ULP_MAX_FREE_STACKS 64 /* per worker; beyond that stacks are unmapped */

struct ulp_task *ulp_task_alloc_slow(struct ulp_worker *w);
int ulp_stack_alloc_slow(struct ulp_worker *w, struct ulp_task *t);
void ulp_stack_unmap(struct ulp_worker *w, void *stack); /* a stack of w's instance */
void ulp_stacks_drain(struct ulp_worker *w);		 /* unmap the cached stacks */
void ulp_stacks_trim(struct ulp_worker *w); /* unmap one cached stack: room for another */

/* Not cleared: the creator sets what the task kind needs (ulp_thread_create); fresh descriptors
 * come zeroed from their mapping. */
static inline struct ulp_task *ulp_task_alloc(struct ulp_worker *w)
{
	struct ulp_task *t = w->free_tasks;

	if (__builtin_expect(!t, 0))
		return ulp_task_alloc_slow(w);
	w->free_tasks = t->next;
	w->nfree_tasks--;
	return t;
}

static inline void ulp_task_free(struct ulp_worker *w, struct ulp_task *t)
{
	t->next = w->free_tasks;
	w->free_tasks = t;
	w->nfree_tasks++;
}

/* Stacks: [guard page | usable stack]; t->stack is the mapping, t->stack_size its usable part.
 * A cached stack is linked through its lowest usable word. */
static inline int ulp_stack_alloc(struct ulp_worker *w, struct ulp_task *t)
{
	void **f = (void **)w->free_stacks;
	size_t page = w->page_size;

	if (__builtin_expect(!f, 0))
		return ulp_stack_alloc_slow(w, t);
	w->free_stacks = *f;
	w->nfree_stacks--;
	t->stack = (char *)f - page;
	t->stack_size = w->rt->stack_size;
	t->san_lo = f;
	t->san_size = w->rt->stack_size;
	return 0;
}

/* Off the stack, or (the cache not full) on it until this worker's next switch. */
static inline void ulp_stack_free(struct ulp_worker *w, struct ulp_task *t)
{
	if (__builtin_expect(w->nfree_stacks < ULP_MAX_FREE_STACKS, 1)) {
		void **f = (void **)((char *)t->stack + w->page_size);

		*f = w->free_stacks;
		w->free_stacks = f;
		w->nfree_stacks++;
	} else {
		ulp_stack_unmap(w, t->stack);
	}
	t->stack = NULL;
}

/* Worker set-up (sched.c), internal to libulp/sched: other folders use the instance API. */
int ulp_worker_init(struct ulp_worker *w, unsigned id, struct ulp_runtime *rt);
/* Run w's scheduler loop on the calling kernel thread until rt shuts down (after enter). */
void ulp_worker_loop(struct ulp_worker *w);
int ulp_worker0_sched_stack(struct ulp_worker *w, size_t size);
void ulp_worker_enter(struct ulp_worker *w);
void ulp_worker_run(struct ulp_worker *w);
void ulp_worker_destroy(struct ulp_worker *w, size_t sched_stack_size);
void ulp_sched_wake_all(struct ulp_runtime *rt);
/* First thing a new task does on its own stack (ASan build: finish the fiber switch). */
#ifdef ULP_SANITIZE
void ulp_task_arrive(struct ulp_task *self);
#else
static inline void ulp_task_arrive(struct ulp_task *self)
{
}
#endif

/* Spin locks (no futex: they guard a few instructions, never a switch). */
static inline void ulp_spin_lock(uint32_t *l)
{
	for (;;) {
		if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
			return;
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			ulp_arch_relax();
	}
}

static inline int ulp_spin_trylock(uint32_t *l)
{
	return !__atomic_load_n(l, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
}

static inline void ulp_spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* after() callback for ulp_task_suspend that releases a spin lock once the task is saved. */
void ulp_after_unlock(void *spinlock);

uint64_t ulp_now_ns(void);

#endif
