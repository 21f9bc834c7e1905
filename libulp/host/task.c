/* SPDX-License-Identifier: MIT */
/*
 * PVAS tasks. The manager (the launching process) clones a child with CLONE_VM and without
 * CLONE_THREAD: a process of its own (PID, fd table, signal dispositions) in the same address
 * space. Its workers are threads of that child. The child never runs libc code: the manager's
 * libc state (TLS, malloc) belongs to the manager's threads, so the child runs with fs = 0 (any
 * stray TLS access faults at once), raw system calls and memory the manager prepared. It ends
 * (exit_group) once its last ULP ended.
 */
#include "pvas_int.h"
#include "sys.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#define CLONE_FS 0x00000200
#define CLONE_FILES 0x00000400
#define CLONE_SIGHAND 0x00000800
#define CLONE_THREAD 0x00010000
#define CLONE_SYSVSEM 0x00040000
#endif

static void bind_cpu(struct pvas_task *t, unsigned i)
{
	unsigned long mask[16];
	int cpu;

	if (!t->ncpus)
		return;
	cpu = t->cpus[i % t->ncpus];
	if (cpu < 0 || cpu >= 1024)
		return;
	memset(mask, 0, sizeof(mask));
	mask[cpu / 64] = 1ul << (cpu % 64);
	ulp_arch_syscall(SYS_sched_setaffinity, 0, sizeof(mask), (long)mask, 0, 0, 0);
}

static int task_worker(void *arg)
{
	struct ulp_worker *w = arg;
	struct pvas_task *t = (struct pvas_task *)w->rt; /* rt is the first member */

	bind_cpu(t, w->id);
	ulp_worker_enter(w);
	ulp_worker_loop(w);
	return 0;
}

static int task_main(void *arg)
{
	static const int dfl[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};
	struct pvas_task *t = arg;
	struct ulp_ksigaction sa = {0};
	unsigned long none = 0;
	unsigned i;

	/* Die with the manager; it may already be gone. */
	ulp_arch_syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
	if (ulp_arch_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0) != t->manager_pid)
		ulp_arch_syscall(SYS_exit_group, 137, 0, 0, 0, 0, 0);
	/* The manager's handlers were copied at clone; they would run its libc here. */
	sa.handler = SIG_DFL;
	for (i = 0; i < sizeof(dfl) / sizeof(dfl[0]); i++)
		ulp_arch_syscall(SYS_rt_sigaction, dfl[i], (long)&sa, 0, ULP_KSIGSET_SIZE, 0, 0);
	ulp_trap_task_init();
	ulp_arch_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, ULP_KSIGSET_SIZE, 0, 0);
	ulp_arch_tls_set(0);
	bind_cpu(t, 0);
	ulp_worker_enter(t->rt.workers[0]);
	for (i = 1; i < t->rt.nworkers; i++) {
		long r = ulp_arch_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
					    CLONE_THREAD | CLONE_SYSVSEM,
					t->stacks + (size_t)(i + 1) * PVAS_TASK_STACK, task_worker,
					t->rt.workers[i]);
		if (r < 0)
			break; /* run with the workers we have: they steal from each other */
	}
	ulp_worker_loop(t->rt.workers[0]);
	ulp_arch_syscall(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	return 0;
}

void pvas_task_free(struct pvas_task *t)
{
	unsigned i;

	if (!t)
		return;
	for (i = 0; t->rt.workers && i < t->rt.nworkers; i++) {
		if (!t->rt.workers[i])
			continue;
		ulp_worker_destroy(t->rt.workers[i], 0);
		free(t->rt.workers[i]);
	}
	free(t->rt.workers);
	if (t->stacks)
		munmap(t->stacks, t->stacks_len);
	free(t);
}

int pvas_task_create(struct pvas *pv, const struct pvas_task_attr *attr, struct ulp_cb *first,
		     struct pvas_task **out)
{
	unsigned n = attr && attr->workers ? attr->workers : 1, i;
	struct pvas_task *t;
	long pid;

	if (n > PVAS_TASK_MAX_WORKERS)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pv = pv;
	t->rt.nworkers = n;
	t->rt.exit_when_idle = 1;
	t->rt.accounting = attr ? attr->accounting : 0;
	t->rt.workers = calloc(n, sizeof(*t->rt.workers));
	if (!t->rt.workers)
		goto nomem;
	for (i = 0; i < n; i++) {
		size_t sz = (sizeof(struct ulp_worker) + 63) & ~(size_t)63;

		t->rt.workers[i] = aligned_alloc(64, sz);
		if (!t->rt.workers[i])
			goto nomem;
		memset(t->rt.workers[i], 0, sizeof(struct ulp_worker));
		if (ulp_worker_init(t->rt.workers[i], i, &t->rt) != 0)
			goto nomem;
	}
	if (attr && attr->cpus && attr->ncpus) {
		t->ncpus =
		    attr->ncpus < PVAS_TASK_MAX_WORKERS ? attr->ncpus : PVAS_TASK_MAX_WORKERS;
		memcpy(t->cpus, attr->cpus, t->ncpus * sizeof(int));
	}
	t->stacks_len = (size_t)(n + 1) * PVAS_TASK_STACK;
	t->stacks = mmap(NULL, t->stacks_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (t->stacks == MAP_FAILED) {
		t->stacks = NULL;
		goto nomem;
	}
	/* The first ULP is queued before the task exists: nothing can race with it. */
	first->task.worker = t->rt.workers[0];
	ulp_proc_set_running(first, t);
	t->held = attr && attr->hold;
	atomic_store(&t->rt.live_tasks, 1 + t->held);
	ulp_deque_push_bottom(&t->rt.workers[0]->dq, &first->task);
	t->manager_pid = getpid();
	t->alive = 1;
	pid = ulp_arch_clone(CLONE_VM | SIGCHLD, t->stacks + PVAS_TASK_STACK, task_main, t);
	if (pid < 0) {
		first->state = ULP_CB_LOADED;
		first->ptask = NULL;
		first->region->running[first->pvid] = 0;
		first->region->slot_task[first->pvid] = NULL;
		pvas_task_free(t);
		return (int)pid;
	}
	t->pid = (pid_t)pid;
	*out = t;
	return 0;
nomem:
	pvas_task_free(t);
	return -ENOMEM;
}

/* Count one more ULP, unless the task already reached zero (and so is ending). */
static int live_inc(struct pvas_task *t)
{
	long n = atomic_load(&t->rt.live_tasks);

	while (n > 0)
		if (atomic_compare_exchange_weak(&t->rt.live_tasks, &n, n + 1))
			return 0;
	return -ESRCH;
}

int pvas_task_adopt(struct pvas_task *t, struct ulp_cb *cb, struct ulp_worker *near)
{
	if (!t->alive || live_inc(t))
		return -ESRCH;
	cb->task.worker = near ? near : t->rt.workers[t->next_worker++ % t->rt.nworkers];
	ulp_proc_set_running(cb, t);
	return 0;
}

int pvas_task_add(struct pvas_task *t, struct ulp_cb *cb, struct ulp_worker *near)
{
	int rc = pvas_task_adopt(t, cb, near);

	if (!rc)
		ulp_task_resume(&cb->task);
	return rc;
}

void pvas_task_unhold(struct pvas_task *t)
{
	if (!t->held)
		return;
	t->held = 0;
	if (atomic_fetch_sub(&t->rt.live_tasks, 1) == 1) {
		atomic_store(&t->rt.shutdown, 1);
		ulp_sched_wake_all(&t->rt);
	}
}
