/* SPDX-License-Identifier: MIT */
/*
 * PVAS tasks. The manager (the launching process) clones a child with CLONE_VM and without
 * CLONE_THREAD: a process of its own (PID, fd table, signal dispositions) in the same address
 * space. Its workers are threads of that child. The child never runs libc code: the manager's
 * libc state (TLS, malloc) belongs to the manager's threads, so the child runs with fs = 0 (any
 * stray TLS access faults at once), raw system calls and memory the manager prepared. It ends
 * (exit_group) once its last ULP ended.
 */
#include "io.h"
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

/* attr.redirect: the task's 0, 1, 2 become the launcher's stdio[] (its pipes or files for the
 * ranks of this task), and it keeps no other descriptor of the launcher's (another task's pipe
 * end kept open here would hide that task's EOF) but t->keep: the runtime's own and attr.keep. */
static void take_stdio(struct pvas_task *t)
{
	long lo = 3;
	unsigned i;

	for (i = 0; i < 3; i++)
		if (t->stdio[i] >= 0 && t->stdio[i] != (int)i)
			ulp_arch_syscall(SYS_dup2, t->stdio[i], i, 0, 0, 0, 0);
	for (i = 0; i < t->nkeep; i++) { /* ascending: close the gaps between them */
		if (t->keep[i] < lo)
			continue;
		if (t->keep[i] > lo)
			ulp_arch_syscall(SYS_close_range, lo, t->keep[i] - 1, 0, 0, 0, 0);
		lo = t->keep[i] + 1;
	}
	ulp_arch_syscall(SYS_close_range, lo, ~0u, 0, 0, 0, 0);
}

/* t->keep: attr's descriptors and the runtime's, ascending (take_stdio runs without libc). */
static int keep_set(struct pvas_task *t, const struct pvas_task_attr *attr)
{
	int add[2] = {t->pv->end_efd, t->pv->region->backend_fd};
	unsigned i, n = attr ? attr->nkeep : 0;

	if (n > PVAS_TASK_MAX_KEEP || (n && !attr->keep))
		return -EINVAL;
	for (i = 0; i < n + 2; i++) {
		int fd = i < n ? attr->keep[i] : add[i - n];
		unsigned k = t->nkeep;

		if (fd < 0)
			continue;
		for (; k > 0 && t->keep[k - 1] > fd; k--)
			t->keep[k] = t->keep[k - 1];
		t->keep[k] = fd;
		t->nkeep++;
	}
	return 0;
}

static int task_worker(void *arg)
{
	struct ulp_worker *w = arg;
	struct pvas_task *t = (struct pvas_task *)w->rt; /* rt is the first member */

	bind_cpu(t, w->id);
	ulp_sched_worker_run(&t->rt, w->id);
	return 0;
}

/* Task-exit hook: the ULP's own exit path, then the task ends with its last ULP (or hold). */
static void task_ulp_exit(struct ulp_task *ut, void *arg)
{
	struct pvas_task *t = arg;

	if (ulp_proc_exited(ut))
		return; /* it execs: goes on in its partition */
	if (ulp_sched_unref(&t->rt) == 0)
		ulp_sched_stop(&t->rt);
}

static void task_worker_start(struct ulp_worker *w, void *arg)
{
	(void)arg;
	ulp_trap_worker_init(w);
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
	if (t->redirect)
		take_stdio(t);
	ulp_trap_task_init();
	ulp_arch_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, ULP_KSIGSET_SIZE, 0, 0);
	ulp_arch_tls_set(0);
	bind_cpu(t, 0);
	for (i = 1; i < t->rt.nworkers; i++) {
		long r = ulp_arch_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
					    CLONE_THREAD | CLONE_SYSVSEM,
					t->stacks + (size_t)(i + 1) * PVAS_TASK_STACK, task_worker,
					t->rt.workers[i]);
		if (r < 0)
			break; /* run with the workers we have: they steal from each other */
	}
	ulp_sched_worker_run(&t->rt, 0);
	ulp_arch_syscall(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	return 0;
}

void pvas_task_free(struct pvas_task *t)
{
	if (!t)
		return;
	ulp_sched_destroy(&t->rt);
	if (t->stacks)
		munmap(t->stacks, t->stacks_len);
	free(t);
}

int pvas_task_create(struct pvas *pv, const struct pvas_task_attr *attr, struct ulp_cb *first,
		     struct pvas_task **out)
{
	unsigned n = attr && attr->workers ? attr->workers : 1;
	struct ulp_sched_hooks hooks = {
	    .worker_start = task_worker_start,
	    .task_exit = task_ulp_exit,
	    /* idle workers sleep in the task's io_uring (libulp/kernel/io_ring.c) */
	    .idle = ulp_io_hook_idle,
	    .poll = ulp_io_hook_poll,
	    .wake = ulp_io_hook_wake,
	    /* the ULP's cwd and umask, the tick (libulp/kernel/proc.c) */
	    .switch_in = ulp_proc_switch_in,
	};
	struct ulp_sched_attr sa = {0};
	struct pvas_task *t;
	long pid;
	int rc;

	if (n > PVAS_TASK_MAX_WORKERS)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pv = pv;
	t->pidfd = -1;
	t->redirect = attr && attr->redirect;
	t->stdio[0] = attr ? attr->stdio[0] : -1;
	t->stdio[1] = attr ? attr->stdio[1] : -1;
	t->stdio[2] = attr ? attr->stdio[2] : -1;
	if (keep_set(t, attr)) {
		free(t);
		return -EINVAL;
	}
	hooks.arg = t;
	sa.nworkers = n;
	sa.accounting = attr ? attr->accounting : 0;
	sa.hooks = &hooks;
	sa.no_libc = 1; /* task_main runs its workers with fs = 0 */
	rc = ulp_sched_create(&t->rt, &sa);
	if (rc) {
		free(t);
		return rc;
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
	/* The first ULP is queued before the task exists: nothing can race with it. The task
	 * holds one reference per ULP, and one for the hold. */
	ulp_task_place(&first->task, ulp_sched_worker(&t->rt, 0));
	ulp_proc_set_running(first, t);
	t->held = attr && attr->hold;
	ulp_sched_ref(&t->rt);
	if (t->held)
		ulp_sched_ref(&t->rt);
	ulp_sched_start(&t->rt);
	ulp_task_resume(&first->task);
	t->manager_pid = getpid();
	t->alive = 1;
	pid = ulp_arch_clone(CLONE_VM | SIGCHLD, t->stacks + PVAS_TASK_STACK, task_main, t);
	if (pid < 0) {
		ulp_proc_unstart(first);
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

int pvas_task_adopt(struct pvas_task *t, struct ulp_cb *cb, struct ulp_worker *near)
{
	/* One more reference, unless the task already reached zero (and so is ending). */
	if (!t->alive || ulp_sched_tryref(&t->rt))
		return -ESRCH;
	ulp_task_place(&cb->task, near ? near : ulp_sched_worker(&t->rt, t->next_worker++));
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
	if (ulp_sched_unref(&t->rt) == 0)
		ulp_sched_stop(&t->rt);
}
