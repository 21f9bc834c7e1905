/* SPDX-License-Identifier: MIT */
/*
 * The ULP process object: load into a partition, start as a task, end, be waited for, be
 * released. This file is the one writer of a ULP's state (struct ulp_proc_slot, see proc.h for
 * the state machine) and of its exit status; others read the state and call these functions.
 */
#include "backend.h"
#include "proc.h"
#include "io.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

#include "ulp_signal.h"
#include "uthread.h"

#define ENTRY_STACK (32 * 1024) /* below the initial sp: runs ulp_start, then the program's */

_Static_assert(offsetof(struct ulp_cb, magic) == 0 && offsetof(struct ulp_cb, pvid) == 8 &&
		   offsetof(struct ulp_cb, ops) == 16,
	       "libulp/guest reads these offsets");

/* ---- the state machine ---- */

#define BIT(s) (1u << ULP_PROC_##s)

/* Which states each state may go to. */
static const uint8_t next_ok[] = {
    [ULP_PROC_FREE] = BIT(CLAIMED),
    [ULP_PROC_CLAIMED] = BIT(LOADED) | BIT(FREE),
    [ULP_PROC_LOADED] = BIT(RUNNING) | BIT(CLAIMED),
    [ULP_PROC_RUNNING] = BIT(ZOMBIE) | BIT(EXEC) | BIT(LOADED) | BIT(CLAIMED),
    [ULP_PROC_ZOMBIE] = BIT(CLAIMED),
    [ULP_PROC_EXEC] = BIT(RUNNING) | BIT(ZOMBIE) | BIT(CLAIMED),
};

/* from -> to for partition pvid; 0, or -EINVAL when the ULP is not in state `from` (or the
 * transition is not one of the machine's). Raw atomics only: the exit path runs with the ULP's
 * TLS loaded. */
static int move(struct pvas_region *r, int pvid, unsigned from, unsigned to)
{
	uint32_t cur = from;

	if (!(next_ok[from] & (1u << to)))
		return -EINVAL;
	return atomic_compare_exchange_strong_explicit(&r->procs[pvid].state, &cur, to,
						       memory_order_acq_rel, memory_order_acquire)
		   ? 0
		   : -EINVAL;
}

static void map_set(_Atomic uint64_t *map, int pvid, int on)
{
	uint64_t bit = 1ull << (pvid % 64);

	if (on)
		atomic_fetch_or(&map[pvid / 64], bit);
	else
		atomic_fetch_and(&map[pvid / 64], ~bit);
}

/* ---- what a guest can call (from ULP context: no TLS use) ---- */

static int guest_get_pvid(struct ulp_cb *cb)
{
	return cb->pvid;
}

/* A signal that came while the runtime ran for the ULP (a guest call is not a trap, whose end
 * would act on it) is acted on when the call returns. A ULP waiting in a loop of pvas_yield or
 * pvas_ulp_switch makes no system call: with no preemption (quantum 0) nothing else would ever
 * end it, and a SIGTERM that ulpspawn sent on never did. */
static int guest_return(struct ulp_cb *cb, int rc)
{
	ulp_sig_deliver(cb, NULL);
	return rc;
}

static int guest_yield(struct ulp_cb *cb)
{
	/* Nothing else to run in this task: the CPU may be wanted by another task (another
	 * process), which is waiting for us as much as we for it. */
	if (!ulp_task_yield(ulp_worker_self()->cur)) /* the calling thread of the ULP */
		ulp_arch_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	return guest_return(cb, 0);
}

static int guest_switch(struct ulp_cb *cb, int pvid)
{
	struct ulp_cb *to = pvas_cb(cb->region, pvid);
	struct pvas_region *r = cb->region;

	if (!to)
		return -EINVAL;
	if (to == cb)
		return 0;
	/* The target may end and its partition be unmapped at any moment: decide from the
	 * region's slots (never unmapped), not from its control block, and take no lock a killed
	 * task could leave held. */
	if (ulp_proc_state(r, pvid) != ULP_PROC_RUNNING)
		return -ESRCH;
	if (r->procs[pvid].task != r->procs[cb->pvid].task)
		return -EPERM; /* another PVAS task: another process, it cannot run here */
	/* Found in a queue of our own task means ready, so alive: nobody else can run it now. The
	 * search compares pointers only, so a target that ended meanwhile is simply not found. */
	if (!ulp_task_unqueue(cb->task.worker->rt, &to->task))
		return -EAGAIN; /* running on another worker, blocked, or ended */
	ulp_task_yield_to(ulp_worker_self()->cur, &to->task);
	return guest_return(cb, 0);
}

static int guest_export(struct ulp_cb *cb, const char *name, void *addr)
{
	return pvas_names_export(cb->region, cb->pvid, name, (uintptr_t)addr);
}

static int guest_import(struct ulp_cb *cb, const char *name, void **addr)
{
	uintptr_t a;
	int rc = pvas_names_import(cb->region, name, &a);

	if (!rc)
		*addr = (void *)a;
	return rc;
}

static int guest_exec(struct ulp_cb *cb, int pvid, const char *file, char *const argv[],
		      char *const envp[])
{
	ulp_exec_fn fn = cb->region->exec;

	return fn ? fn(cb, pvid, file, argv, envp) : -ENOSYS; /* no server: ulpexec */
}

static const struct ulp_guest_ops guest_ops = {
    .version = 3,
    .exec = guest_exec,
    .barrier = pvas_names_barrier,
    .get_pvid = guest_get_pvid,
    .yield = guest_yield,
    .switch_to = guest_switch,
    .export_addr = guest_export,
    .import_addr = guest_import,
};

void ulp_proc_set_exec(struct pvas_region *r, ulp_exec_fn fn)
{
	r->exec = fn;
}

/* ---- life cycle ---- */

static void ulp_start(void *arg)
{
	struct ulp_cb *cb = arg;

	ulp_task_arrive(&cb->task);
	ulp_sig_start(cb);
	ulp_fs_start(cb); /* before its placeholder, which starts in its directory */
	if (ulp_ident_start(cb) < 0) {
		static const char msg[] =
		    "libulp: a ULP gets no process id of its own (clone of its "
		    "placeholder process failed: pid_max or RLIMIT_NPROC "
		    "reached?); it ends with status 126\n";

		ulp_arch_syscall(SYS_write, 2, (long)msg, sizeof(msg) - 1, 0, 0, 0);
		ulp_proc_exit(cb, 126, 0);
	}
	ulp_std_start(cb);
	ulp_arch_enter_program(cb->entry, cb->sp);
}

/* Runs on another task's stack once the ULP has left its own. The order matters: after the
 * store of ZOMBIE the waiter may unmap the partition, control block included. */
int ulp_proc_exited(struct ulp_task *t)
{
	struct ulp_cb *cb = t->owner;
	struct pvas_region *r = cb->region;
	struct ulp_task *joiner;
	int pvid = cb->pvid;
	int efd = r->end_efd;

	if (t != &cb->task) { /* one thread of the ULP, not the ULP (sys_thread.c) */
		ulp_tg_thread_exited(t);
		return 0;
	}
	/* Its last thread left for an execve: the old program is off every stack now. */
	if (ulp_proc_state(r, pvid) == ULP_PROC_EXEC && ulp_exec_reload(cb) == 0)
		return 1;
	/* Its descriptors, as a process's end closes them: a reader in another ULP sees EOF
	 * before anyone hears that this one ended, its pid gone included (fds.c). */
	ulp_fd_close_owned(cb, 0);
	ulp_sig_exit(cb);	 /* its timers: nothing signals an ended ULP */
	ulp_ident_exit(cb);	 /* its pid goes with it */
	ulp_sigq_reset(pvid, 0); /* its queued signals, with nobody left to send them */
	joiner = atomic_exchange(&t->joiner, ULP_JOIN_DONE);
	if (joiner && joiner != ULP_JOIN_DETACHED)
		ulp_task_resume(joiner);
	map_set(r->zombie_map, pvid, 1);
	if (move(r, pvid, ULP_PROC_RUNNING, ULP_PROC_ZOMBIE))
		move(r, pvid, ULP_PROC_EXEC, ULP_PROC_ZOMBIE);
	atomic_fetch_add(&r->ended_seq, 1);
	ulp_arch_syscall(SYS_futex, (long)&r->ended_seq, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0, 0, 0);
	if (efd >= 0) { /* the host's event loop (libulp/host/api.c) */
		uint64_t one = 1;

		ulp_arch_syscall(SYS_write, efd, (long)&one, sizeof(one), 0, 0, 0);
	}
	return 0;
}

void ulp_proc_exit(struct ulp_cb *cb, int status, int sig)
{
	cb->exit_status = status & 0xff;
	cb->term_sig = sig;
	ulp_task_exit(&cb->task, NULL);
}

void ulp_proc_set_fault(struct ulp_cb *cb, uintptr_t addr, uintptr_t pc)
{
	cb->fault_addr = addr;
	cb->fault_pc = pc;
}

void ulp_proc_kill_task(struct pvas_region *r, void *task, int sig)
{
	int i;

	for (i = ulp_proc_next(r, -1, 0); i >= 0; i = ulp_proc_next(r, i, 0)) {
		struct ulp_cb *cb = pvas_cb(r, i);
		int s = ulp_proc_state(r, i);

		if ((s != ULP_PROC_RUNNING && s != ULP_PROC_EXEC) || r->procs[i].task != task)
			continue;
		/* The task is dead: nothing else writes this ULP any more. */
		ulp_ident_exit(cb); /* its placeholder process */
		ulp_sigq_reset(i, 0);
		cb->exit_status = 0;
		cb->term_sig = sig;
		map_set(r->zombie_map, i, 1);
		move(r, i, (unsigned)s, ULP_PROC_ZOMBIE);
	}
}

/* Task-exit hook of an instance running ULPs started by ulp_proc_start. */
static void proc_task_exit(struct ulp_task *t, void *arg)
{
	struct ulp_runtime *rt = t->worker->rt; /* t may be unmapped once it has exited */

	(void)arg;
	if (!ulp_proc_exited(t))
		ulp_sched_unref(rt);
}

static void trap_worker_start(struct ulp_worker *w, void *arg)
{
	(void)arg;
	ulp_trap_worker_init(w);
}

void ulp_proc_switch_in(struct ulp_worker *w, struct ulp_task *t, void *arg)
{
	ulp_preempt_switch_in(w);    /* the tick, if a tick's handler switches (preempt.c) */
	ulp_fs_switch_in(w, t, arg); /* the ULP's cwd and umask (fs.c) */
}

static const struct ulp_sched_hooks proc_hooks = {
    .worker_start = trap_worker_start,
    .task_exit = proc_task_exit,
    /* idle workers sleep in the instance's io_uring (io_ring.c) */
    .idle = ulp_io_hook_idle,
    .poll = ulp_io_hook_poll,
    .wake = ulp_io_hook_wake,
    .switch_in = ulp_proc_switch_in,
};

const struct ulp_sched_hooks *ulp_proc_sched_hooks(void)
{
	return &proc_hooks;
}

/* The argument and environment strings the loader put on the initial stack (argc at sp, then
 * argv[], NULL, envp[], NULL), consecutive as the kernel lays them out: their areas, which
 * /proc/self/cmdline and environ show as they are now. Checked to lie in the partition. */
static void strings_area(struct ulp_cb *cb)
{
	const uintptr_t *sp = (const uintptr_t *)cb->sp;
	long argc = (long)sp[0], i;
	const char *const *argv = (const char *const *)(sp + 1), *const *envp = argv + argc + 1;
	uintptr_t lo = cb->part_lo + ULP_CB_SIZE, hi = cb->part_hi;

	cb->args_lo = cb->args_hi = cb->env_lo = cb->env_hi = 0;
	if (argc > 0 && (uintptr_t)argv[0] >= lo && (uintptr_t)argv[argc - 1] < hi) {
		cb->args_lo = (uintptr_t)argv[0];
		cb->args_hi = (uintptr_t)argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	}
	for (i = 0; envp[i]; i++)
		;
	if (i > 0 && (uintptr_t)envp[0] >= lo && (uintptr_t)envp[i - 1] < hi) {
		cb->env_lo = (uintptr_t)envp[0];
		cb->env_hi = (uintptr_t)envp[i - 1] + strlen(envp[i - 1]) + 1;
	}
}

/* FREE -> CLAIMED: partition pvid, or the lowest free one. */
static int claim(struct pvas_region *r, int pvid)
{
	int rc = -ENOSPC;
	unsigned i;

	ulp_spin_lock(&r->lock);
	if (pvid >= 0) {
		if ((unsigned)pvid >= r->nparts)
			rc = -EINVAL;
		else if (ulp_proc_state(r, pvid) != ULP_PROC_FREE)
			rc = -EBUSY;
		else
			rc = pvid;
	} else {
		/* The used map finds the first free partition 64 at a time. */
		for (i = 0; i < (r->nparts + 63) / 64 && rc < 0; i++) {
			uint64_t free_bits = ~atomic_load(&r->used_map[i]);

			if (free_bits && i * 64 + (unsigned)__builtin_ctzll(free_bits) < r->nparts)
				rc = (int)(i * 64 + (unsigned)__builtin_ctzll(free_bits));
		}
	}
	if (rc >= 0) {
		move(r, rc, ULP_PROC_FREE, ULP_PROC_CLAIMED);
		map_set(r->used_map, rc, 1);
		r->nused++;
	}
	ulp_spin_unlock(&r->lock);
	return rc;
}

/* Any state -> CLAIMED (unpublished: others stop looking at it), unmapped, -> FREE. */
static void unclaim(struct pvas_region *r, int pvid)
{
	uintptr_t lo = r->base + (uintptr_t)pvid * r->part_size;
	unsigned s = (unsigned)ulp_proc_state(r, pvid);

	if (s != ULP_PROC_CLAIMED)
		move(r, pvid, s, ULP_PROC_CLAIMED);
	r->procs[pvid].task = NULL;
	map_set(r->zombie_map, pvid, 0);
	ulp_fork_copy_release(r, pvid);
	mmap((void *)lo, r->part_size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	ulp_spin_lock(&r->lock);
	move(r, pvid, ULP_PROC_CLAIMED, ULP_PROC_FREE);
	map_set(r->used_map, pvid, 0);
	r->nused--;
	ulp_spin_unlock(&r->lock);
}

/* Where the backend placed the program: its start, its brk heap and its mmap area. */
static void set_image(struct ulp_cb *cb, const struct ulp_backend_image *img)
{
	cb->entry = img->entry;
	cb->sp = img->sp;
	cb->brk_start = cb->brk_cur = cb->brk_mapped = img->brk_start;
	cb->brk_max = img->brk_max;
	ulp_mm_init(cb, img->mmap_lo, cb->part_hi);
}

int ulp_proc_load(struct pvas_region *r, int pvid, const char *path, char *const argv[],
		  char *const envp[], struct ulp_cb **out, char *err, size_t errlen)
{
	size_t size = r->part_size;
	struct ulp_backend_image img;
	struct ulp_cb *cb;
	uintptr_t lo;
	int rc;

	pvid = claim(r, pvid);
	if (pvid < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 pvid == -ENOSPC  ? "address space full: no free partition"
			 : pvid == -EBUSY ? "partition already in use"
					  : "partition number out of range");
		return pvid;
	}
	lo = r->base + (uintptr_t)pvid * size;
	cb = mmap((void *)lo, ULP_CB_SIZE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (cb == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "%s: control block: %s", path, strerror(errno));
		unclaim(r, pvid);
		return rc;
	}
	cb->pvid = pvid;
	cb->region = r;
	cb->ops = &guest_ops;
	cb->part_lo = lo;
	cb->part_hi = lo + size;
	snprintf(cb->path, sizeof(cb->path), "%s", path);
	/* It starts where its launcher is now, with its umask, as a child process would. */
	if (!getcwd(cb->cwd, sizeof(cb->cwd)))
		cb->cwd[0] = 0;
	cb->umask = umask(022);
	umask(cb->umask);
	if (!realpath(path, cb->exe))
		snprintf(cb->exe, sizeof(cb->exe), "%s", path); /* the load fails and says why */
	rc = r->backend->load(cb, path, argv, envp, &img, err, errlen);
	if (rc) {
		unclaim(r, pvid);
		return rc;
	}
	set_image(cb, &img);
	strings_area(cb);
	cb->task.kind = ULP_TASK_ULP;
	cb->task.owner = cb;
	cb->task.own_tls = 1; /* fs = 0 until the program's libc sets its TLS, as in a process */
	ulp_arch_ctx_init(&cb->task.ctx, (void *)(cb->sp - ENTRY_STACK), ENTRY_STACK - 512,
			  ulp_start, cb);
	cb->magic = ULP_CB_MAGIC;
	move(r, pvid, ULP_PROC_CLAIMED, ULP_PROC_LOADED); /* published */
	*out = cb;
	return 0;
}

int ulp_proc_set_running(struct ulp_cb *cb, void *ptask)
{
	struct pvas_region *r = cb->region;

	if (ulp_proc_state(r, cb->pvid) != ULP_PROC_LOADED)
		return -EINVAL;
	r->procs[cb->pvid].task = ptask; /* before RUNNING: published by it */
	return move(r, cb->pvid, ULP_PROC_LOADED, ULP_PROC_RUNNING);
}

void ulp_proc_unstart(struct ulp_cb *cb)
{
	struct pvas_region *r = cb->region;

	if (!move(r, cb->pvid, ULP_PROC_RUNNING, ULP_PROC_LOADED))
		r->procs[cb->pvid].task = NULL;
}

/* ---- execve in place (exec.c does the work) ---- */

int ulp_proc_exec_begin(struct ulp_cb *cb)
{
	return move(cb->region, cb->pvid, ULP_PROC_RUNNING, ULP_PROC_EXEC);
}

void ulp_proc_hold(struct ulp_cb *cb)
{
	atomic_fetch_add(&cb->region->procs[cb->pvid].held, 1);
}

void ulp_proc_unhold(struct pvas_region *r, int pvid)
{
	atomic_fetch_sub(&r->procs[pvid].held, 1);
}

/* The new program's first run: as ulp_start, but the ULP keeps its pid, signals and directory. */
static void exec_start(void *arg)
{
	struct ulp_cb *cb = arg;

	ulp_task_arrive(&cb->task);
	ulp_arch_enter_program(cb->entry, cb->sp);
}

/* A fresh start of the ULP's task: nothing of its old context (a trap frame on a stack that is
 * gone) is kept. */
static void restart(struct ulp_cb *cb, uintptr_t sp, void (*fn)(void *))
{
	cb->task.in_syscall = 0;
	cb->task.tls = 0; /* the new libc sets its own, as in a new process */
	cb->task.own_tls = 1;
	ulp_arch_ctx_init(&cb->task.ctx, (void *)(sp - ENTRY_STACK), ENTRY_STACK - 512, fn, cb);
	/* not when its task died meanwhile (ulp_proc_kill_task made it a zombie) */
	if (move(cb->region, cb->pvid, ULP_PROC_EXEC, ULP_PROC_RUNNING) == 0)
		ulp_task_resume(&cb->task);
}

void ulp_proc_exec_loaded(struct ulp_cb *cb, const struct ulp_backend_image *img)
{
	set_image(cb, img);
	strings_area(cb);
	cb->fault_addr = cb->fault_pc = 0;
	cb->mm_refused = 0;
	cb->exit_status = cb->term_sig = 0;
	restart(cb, cb->sp, exec_start);
}

static void exec_killed(void *arg)
{
	struct ulp_cb *cb = arg;

	ulp_task_arrive(&cb->task);
	ulp_proc_exit(cb, 0, SIGKILL);
}

void ulp_proc_exec_failed(struct ulp_cb *cb)
{
	/* Room to run its exit path: the top of its (emptied) stack range. */
	uintptr_t top = cb->part_lo + PVAS_LAYOUT_IMAGE(cb->part_hi - cb->part_lo);

	mmap((void *)(top - 2 * ENTRY_STACK), 2 * ENTRY_STACK, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	restart(cb, top - 256, exec_killed);
}

int ulp_proc_start(struct ulp_cb *cb)
{
	int rc = ulp_proc_set_running(cb, NULL);

	if (rc)
		return rc;
	ulp_sched_ref(&ulp_rt);
	ulp_task_resume(&cb->task);
	return 0;
}

int ulp_proc_wait(struct ulp_cb *cb)
{
	int s = ulp_proc_state(cb->region, cb->pvid);
	struct ulp_worker *w;

	if (s != ULP_PROC_RUNNING && s != ULP_PROC_EXEC && s != ULP_PROC_ZOMBIE)
		return -EINVAL;
	/* The self pointer is only there on the runtime's threads (x86_64: gs 0 elsewhere). */
	w = ulp_sched_running(&ulp_rt) ? ulp_worker_self() : NULL;
	if (!w)
		return -EINVAL;
	return ulp_task_wait(w->cur, &cb->task);
}

void ulp_proc_release(struct ulp_cb *cb, int (*gone)(void *arg), void *arg)
{
	struct pvas_region *r = cb->region;
	int pvid = cb->pvid, s;

	/* Started and not ended: its exit path may still be finishing on its worker. Wait for
	 * ZOMBIE, unless the PVAS task running it is gone (killed, maybe right on that path). */
	while ((s = ulp_proc_state(r, pvid)) == ULP_PROC_RUNNING || s == ULP_PROC_EXEC) {
		if (gone && gone(arg))
			break;
		sched_yield();
	}
	while (atomic_load(&r->procs[pvid].held)) /* host calls about it (exec.c), short */
		sched_yield();
	pvas_names_drop(r, pvid);
	ulp_tg_release(cb);
	r->backend->release(cb);
	cb->magic = 0;
	unclaim(r, pvid);
}

/* ---- lookups ---- */

int ulp_proc_find(struct pvas_region *r, int pvid, struct ulp_cb **out)
{
	int s;

	if (!r || pvid < 0 || (unsigned)pvid >= r->nparts)
		return -EINVAL;
	s = ulp_proc_state(r, pvid);
	if (s == ULP_PROC_FREE || s == ULP_PROC_CLAIMED)
		return -ESRCH;
	if (out)
		*out = pvas_cb(r, pvid);
	return s;
}

int ulp_proc_next(struct pvas_region *r, int after, int zombies)
{
	_Atomic uint64_t *map = zombies ? r->zombie_map : r->used_map;
	unsigned i = (unsigned)(after + 1), words = (r->nparts + 63) / 64;

	while (i < r->nparts && i / 64 < words) {
		uint64_t bits = atomic_load(&map[i / 64]) & (~0ull << (i % 64));

		if (bits) {
			i = (i & ~63u) + (unsigned)__builtin_ctzll(bits);
			return i < r->nparts ? (int)i : -1;
		}
		i = (i & ~63u) + 64;
	}
	return -1;
}

void *ulp_proc_task(const struct ulp_cb *cb)
{
	return cb->region->procs[cb->pvid].task;
}

unsigned ulp_proc_count_task(struct pvas_region *r, void *task)
{
	unsigned n = 0;
	int i, s;

	for (i = ulp_proc_next(r, -1, 0); i >= 0; i = ulp_proc_next(r, i, 0)) {
		s = ulp_proc_state(r, i);
		n += (s == ULP_PROC_RUNNING || s == ULP_PROC_EXEC) && r->procs[i].task == task;
	}
	return n;
}

/* ---- how it ended ---- */

int ulp_proc_exit_code(const struct ulp_cb *cb)
{
	return cb->term_sig ? 128 + cb->term_sig : cb->exit_status;
}

/* "; its partition had no room for an mmap of 4 GiB" when one was refused (sys_mem.c). */
static void describe_refused(const struct ulp_cb *cb, char *buf, size_t len)
{
	size_t at = strlen(buf);
	uint64_t n = cb->mm_refused;
	const char *unit = "KiB";

	if (!n || at >= len)
		return;
	if (n >= 1ull << 30) {
		n = (n + (1ull << 29)) >> 30;
		unit = "GiB";
	} else if (n >= 1ull << 20) {
		n = (n + (1ull << 19)) >> 20;
		unit = "MiB";
	} else {
		n = (n + 512) >> 10;
	}
	snprintf(buf + at, len - at, "; its partition had no room for an mmap of %llu %s",
		 (unsigned long long)n, unit);
}

void ulp_proc_describe(const struct ulp_cb *cb, char *buf, size_t len)
{
	const char *abbrev;

	if (!cb->term_sig) {
		snprintf(buf, len, "exited with status %d", cb->exit_status);
		if (cb->exit_status)
			describe_refused(cb, buf, len);
		return;
	}
	abbrev = sigabbrev_np(cb->term_sig);
	if (cb->term_sig == SIGSEGV || cb->term_sig == SIGBUS || cb->term_sig == SIGILL ||
	    cb->term_sig == SIGFPE)
		snprintf(buf, len, "killed by SIG%s (fault address %#lx, pc %#lx)",
			 abbrev ? abbrev : "?", (unsigned long)cb->fault_addr,
			 (unsigned long)cb->fault_pc);
	else
		snprintf(buf, len, "killed by SIG%s", abbrev ? abbrev : "?");
	describe_refused(cb, buf, len);
}
