/* SPDX-License-Identifier: MIT */
/* The life of a ULP: load into a partition, start as a task, end, be waited for, be released. */
#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

#include "loader.h"

#define ENTRY_STACK (32 * 1024) /* below the initial sp: runs ulp_start, then the program's */

_Static_assert(offsetof(struct ulp_cb, magic) == 0 && offsetof(struct ulp_cb, pvid) == 8 &&
		   offsetof(struct ulp_cb, ops) == 16,
	       "libulp/guest reads these offsets");

/* ---- what a guest can call (from ULP context: no TLS use) ---- */

static int guest_get_pvid(struct ulp_cb *cb)
{
	return cb->pvid;
}

static int guest_yield(struct ulp_cb *cb)
{
	/* Nothing else to run in this task: the CPU may be wanted by another task (another
	 * process), which is waiting for us as much as we for it. */
	if (!ulp_task_yield(&cb->task))
		ulp_arch_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	return 0;
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
	 * region's own arrays (never unmapped), not from its control block, and take no lock a
	 * killed task could leave held. */
	if (!pvas_part_ready(r, pvid) || !__atomic_load_n(&r->running[pvid], __ATOMIC_ACQUIRE))
		return -ESRCH;
	if (__atomic_load_n(&r->slot_task[pvid], __ATOMIC_RELAXED) != cb->ptask)
		return -EPERM; /* another PVAS task: another process, it cannot run here */
	/* Found in a queue of our own task means ready, so alive: nobody else can run it now. The
	 * search compares pointers only, so a target that ended meanwhile is simply not found. */
	if (!ulp_task_unqueue(cb->task.worker->rt, &to->task))
		return -EAGAIN; /* running on another worker, blocked, or ended */
	ulp_task_yield_to(&cb->task, &to->task);
	return 0;
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

static const struct ulp_guest_ops guest_ops = {
    .version = 3,
    .exec = pvas_guest_exec,
    .barrier = pvas_names_barrier,
    .get_pvid = guest_get_pvid,
    .yield = guest_yield,
    .switch_to = guest_switch,
    .export_addr = guest_export,
    .import_addr = guest_import,
};

/* ---- life cycle ---- */

static void ulp_start(void *arg)
{
	struct ulp_cb *cb = arg;

	ulp_task_arrive(&cb->task);
	ulp_arch_enter_program(cb->entry, cb->sp);
}

/* Runs on another task's stack once the ULP has left its own. The order matters: after the
 * store to cb->final the waiter may unmap the partition, control block included. */
void ulp_proc_exited(struct ulp_task *t)
{
	struct ulp_cb *cb = t->owner;
	struct pvas_region *r = cb->region;
	struct ulp_task *joiner;

	__atomic_store_n(&r->running[cb->pvid], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cb->state, ULP_CB_EXITED, __ATOMIC_RELEASE);
	joiner = atomic_exchange(&t->joiner, ULP_JOIN_DONE);
	if (joiner && joiner != ULP_JOIN_DETACHED)
		ulp_task_resume(joiner);
	__atomic_store_n(&cb->final, 1, __ATOMIC_RELEASE);
	atomic_fetch_add(&r->ended_seq, 1);
	ulp_arch_syscall(SYS_futex, (long)&r->ended_seq, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0, 0, 0);
}

/* Task-exit hook of an instance running ULPs started by ulp_proc_start. */
static void proc_task_exit(struct ulp_task *t, void *arg)
{
	struct ulp_runtime *rt = t->worker->rt; /* t may be unmapped once it has exited */

	(void)arg;
	ulp_proc_exited(t);
	ulp_sched_unref(rt);
}

static void trap_worker_start(struct ulp_worker *w, void *arg)
{
	(void)arg;
	ulp_trap_worker_init(w);
}

static const struct ulp_sched_hooks proc_hooks = {
    .worker_start = trap_worker_start,
    .task_exit = proc_task_exit,
};

const struct ulp_sched_hooks *ulp_proc_sched_hooks(void)
{
	return &proc_hooks;
}

static int claim(struct pvas_region *r, int pvid)
{
	int rc = -ENOSPC;
	unsigned i;

	ulp_spin_lock(&r->lock);
	if (pvid >= 0) {
		if ((unsigned)pvid >= r->nparts)
			rc = -EINVAL;
		else if (r->used[pvid])
			rc = -EBUSY;
		else
			rc = pvid;
	} else {
		for (i = 0; i < r->nparts && rc < 0; i++)
			if (!r->used[i])
				rc = (int)i;
	}
	if (rc >= 0) {
		r->used[rc] = PVAS_SLOT_CLAIMED;
		r->nused++;
	}
	ulp_spin_unlock(&r->lock);
	return rc;
}

static void unclaim(struct pvas_region *r, int pvid)
{
	uintptr_t lo = r->base + (uintptr_t)pvid * r->part_size;

	/* Unpublish first (see guest_switch), then unmap. */
	__atomic_store_n(&r->used[pvid], PVAS_SLOT_CLAIMED, __ATOMIC_RELEASE);
	__atomic_store_n(&r->running[pvid], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->slot_task[pvid], NULL, __ATOMIC_RELAXED);
	mmap((void *)lo, r->part_size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	ulp_spin_lock(&r->lock);
	r->used[pvid] = 0;
	r->nused--;
	ulp_spin_unlock(&r->lock);
}

int ulp_proc_load(struct pvas_region *r, int pvid, const char *path, char *const argv[],
		  char *const envp[], struct ulp_cb **out, char *err, size_t errlen)
{
	size_t size = r->part_size, stack = size / 8 < (8u << 20) ? size / 8 : (8u << 20);
	struct ulp_load_req req;
	struct ulp_image img;
	struct ulp_cb *cb;
	uint64_t aux[1][2];
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

	if (r->kfd >= 0) {
		rc = ulp_kmod_load(cb, path, argv, envp, err, errlen);
		if (rc) {
			unclaim(r, pvid);
			return rc;
		}
		goto loaded;
	}
	memset(&req, 0, sizeof(req));
	req.path = path;
	req.argv = argv;
	req.envp = envp;
	/*
	 * Layout (S = partition size): [0, 64K) control block; the stack right above it (its
	 * guard page protects the control block); the program, then its brk heap, up to 3S/16;
	 * the interpreter at 3S/16; the mmap area from S/4 up, handed out bottom-up. Everything a
	 * small program touches sits in the partition's first S/4, so it needs few page-table
	 * pages: each new one costs a fault (~85 us on the development VM, bench/ulp_spawn.c)
	 * and 4 KiB per ULP.
	 */
	req.stack_lo = lo + ULP_CB_SIZE;
	req.stack_hi = req.stack_lo + stack;
	req.image_base = req.stack_hi;
	req.image_limit = lo + size / 8;
	req.interp_base = lo + size * 3 / 16;
	req.interp_limit = lo + size / 4;
	aux[0][0] = ULP_AT_PVAS_CB;
	aux[0][1] = (uint64_t)(uintptr_t)cb;
	req.extra_auxv = (const uint64_t(*)[2])aux;
	req.n_extra_auxv = 1;
	rc = ulp_load(&req, &img, err, errlen);
	if (rc) {
		unclaim(r, pvid);
		return rc;
	}
	cb->entry = img.entry;
	cb->sp = img.sp;
	cb->brk_start = cb->brk_cur = cb->brk_mapped = img.brk_start;
	cb->brk_max = req.interp_base;
	ulp_mm_init(cb, req.interp_limit, lo + size);
loaded:

	cb->task.kind = ULP_TASK_ULP;
	cb->task.owner = cb;
	cb->task.own_tls = 1; /* fs = 0 until the program's libc sets its TLS, as in a process */
	ulp_arch_ctx_init(&cb->task.ctx, (void *)(cb->sp - ENTRY_STACK), ENTRY_STACK - 512,
			  ulp_start, cb);
	cb->state = ULP_CB_LOADED;
	cb->magic = ULP_CB_MAGIC;
	__atomic_store_n(&r->used[pvid], PVAS_SLOT_READY, __ATOMIC_RELEASE);
	*out = cb;
	return 0;
}

void ulp_proc_set_running(struct ulp_cb *cb, void *ptask)
{
	struct pvas_region *r = cb->region;

	cb->ptask = ptask;
	cb->state = ULP_CB_RUNNING;
	__atomic_store_n(&r->slot_task[cb->pvid], ptask, __ATOMIC_RELAXED);
	__atomic_store_n(&r->running[cb->pvid], 1, __ATOMIC_RELEASE);
}

int ulp_proc_start(struct ulp_cb *cb)
{
	if (cb->state != ULP_CB_LOADED)
		return -EINVAL;
	ulp_proc_set_running(cb, NULL);
	ulp_sched_ref(&ulp_rt);
	ulp_task_resume(&cb->task);
	return 0;
}

int ulp_proc_wait(struct ulp_cb *cb)
{
	struct ulp_worker *w = ulp_worker_self();

	if (!w)
		return -EINVAL;
	if (cb->state == ULP_CB_LOADED)
		return -EINVAL;
	return ulp_task_wait(w->cur, &cb->task);
}

void ulp_proc_release(struct ulp_cb *cb, int (*gone)(void *arg), void *arg)
{
	/* The exit path may still be finishing on its worker: wait for its final store, unless
	 * the PVAS task running it is gone (killed, maybe right on that path). */
	while (cb->state == ULP_CB_EXITED && !__atomic_load_n(&cb->final, __ATOMIC_ACQUIRE)) {
		if (gone && gone(arg))
			break;
		sched_yield();
	}
	pvas_names_drop(cb->region, cb->pvid);
	if (cb->region->kfd >= 0)
		ulp_kmod_release(cb);
	cb->magic = 0;
	unclaim(cb->region, cb->pvid);
}

int ulp_proc_exit_code(const struct ulp_cb *cb)
{
	return cb->term_sig ? 128 + cb->term_sig : cb->exit_status;
}

void ulp_proc_describe(const struct ulp_cb *cb, char *buf, size_t len)
{
	const char *abbrev;

	if (!cb->term_sig) {
		snprintf(buf, len, "exited with status %d", cb->exit_status);
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
}
