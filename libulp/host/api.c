/* SPDX-License-Identifier: MIT */
/* The host side of the pvas_* API (include/pvas.h), user-space backend. */
#include "pvas_int.h"
#include "io.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "pvas.h"

static struct pvas *pvd_table[1]; /* one address space per process: one syscall trap */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char errmsg[512];

void pvas_set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
}

const char *pvas_errmsg(void)
{
	return errmsg;
}

static struct pvas *get(pvd_t pvd)
{
	if (pvd < 0 || (size_t)pvd >= sizeof(pvd_table) / sizeof(pvd_table[0]))
		return NULL;
	return pvd_table[pvd];
}

/* Until *addr != val or a wake (destroy wakes it after setting stop). */
static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* ---- the request server: loads asked for from inside ULPs ---- */

static void serve_exec(struct pvas *pv, struct pvas_req *rq)
{
	struct ulp_cb *from = rq->from, *cb;
	struct pvas_task *t = ulp_proc_task(from);
	char err[512];
	int rc;

	if (!t) {
		rq->result = -ENOSYS; /* a ULP of the manager itself (ulpexec): no task to join */
		ulp_task_resume(&from->task);
		return;
	}
	rc = ulp_proc_load(pv->region, rq->pvid, rq->file, rq->argv, rq->envp, &cb, err,
			   sizeof(err));
	if (rc) {
		fprintf(stderr, "pvas_ulp_exec: %s\n", err);
		rq->result = rc;
		ulp_task_resume(&from->task);
		return;
	}
	cb->rank = -1;
	/* Counted while the caller still holds the task open; then both are queued at once, the
	 * new ULP to run first. Nothing of rq or of the caller is touched once it is resumed: it
	 * may end, and its partition go, at once. */
	if (pvas_task_adopt(t, cb, from->task.worker) != 0) {
		ulp_proc_release(cb, NULL, NULL); /* cannot happen: the caller holds the task */
		rq->result = -ESRCH;
		ulp_task_resume(&from->task);
		return;
	}
	rq->result = cb->pvid;
	ulp_task_resume_pair(&cb->task, &from->task);
}

/* The runtime's calls, oldest first (they were pushed on a stack). */
static void serve_calls(struct ulp_host_call *c)
{
	struct ulp_host_call *rev = NULL, *next;

	for (; c; c = next) {
		next = c->next;
		c->next = rev;
		rev = c;
	}
	for (c = rev; c; c = next) {
		next = c->next; /* c is the callee's from now on */
		c->fn(c);
	}
}

static void *server_main(void *arg)
{
	struct ulp_host_call *calls;
	struct pvas *pv = arg;

	for (;;) {
		/* The count before the stop flag: destroy sets stop, then counts and wakes. Read
		 * the other way round, a destroy between the two reads left this thread asleep on
		 * the new count for ever, and destroy in its pthread_join (kmod-vm's first pvas_*
		 * case, create then destroy, hung 300 s in two CI runs of 27 Nov). */
		uint32_t seq = atomic_load(&pv->req_seq);
		struct pvas_req *rq;

		if (atomic_load(&pv->stop))
			break;

		ulp_spin_lock(&pv->req_lock);
		rq = pv->reqs;
		pv->reqs = NULL;
		calls = pv->calls;
		pv->calls = NULL;
		ulp_spin_unlock(&pv->req_lock);
		serve_calls(calls);
		if (!rq) {
			if (!calls)
				futex_wait(&pv->req_seq, seq);
			continue;
		}
		while (rq) {
			struct pvas_req *next = rq->next;

			serve_exec(pv, rq);
			rq = next;
		}
	}
	/* What came meanwhile: each call lets go of its ULP (which pvas_destroy releases next). */
	ulp_spin_lock(&pv->req_lock);
	calls = pv->calls;
	pv->calls = NULL;
	ulp_spin_unlock(&pv->req_lock);
	serve_calls(calls);
	return NULL;
}

/* Something was queued for the server (any context: raw). */
static void server_wake(struct pvas *pv)
{
	atomic_fetch_add(&pv->req_seq, 1);
	ulp_arch_syscall(SYS_futex, (long)&pv->req_seq, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* Runs once the requesting ULP is saved (ULP context: no libc). */
static void post_request(void *arg)
{
	struct pvas_req *rq = arg;
	struct pvas *pv = rq->from->region->owner;

	ulp_spin_lock(&pv->req_lock);
	rq->next = pv->reqs;
	pv->reqs = rq;
	ulp_spin_unlock(&pv->req_lock);
	server_wake(pv);
}

/* The runtime hands work to this process (proc.h: ulp_host_call); from any context, no libc. */
static void host_post(struct pvas_region *r, struct ulp_host_call *c)
{
	struct pvas *pv = r->owner;

	ulp_spin_lock(&pv->req_lock);
	c->next = pv->calls;
	pv->calls = c;
	ulp_spin_unlock(&pv->req_lock);
	server_wake(pv);
}

/* pvas_ulp_exec from a ULP (registered with the process object at pvas_create). */
static int guest_exec(struct ulp_cb *cb, int pvid, const char *file, char *const argv[],
		      char *const envp[])
{
	struct pvas_req rq = {NULL, cb, pvid, file, argv, envp, 0};

	if (!file || !argv)
		return -EINVAL;
	ulp_task_suspend(&cb->task, post_request, &rq);
	return rq.result;
}

/* ---- address spaces ---- */

int pvas_create(pvd_t *pvd)
{
	return pvas_create_attr(pvd, NULL);
}

static int pick_backend(const struct pvas_attr *attr)
{
	const char *env = getenv("ULP_BACKEND");
	int b = attr ? attr->backend : PVAS_BACKEND_DEFAULT;

	if (b == PVAS_BACKEND_DEFAULT && env) {
		if (!strcmp(env, "user"))
			b = PVAS_BACKEND_USER;
		else if (!strcmp(env, "kmod"))
			b = PVAS_BACKEND_KMOD;
		else
			return -EINVAL;
	}
	if (b == PVAS_BACKEND_DEFAULT)
		b = access("/dev/pvas", R_OK | W_OK) == 0 ? PVAS_BACKEND_KMOD : PVAS_BACKEND_USER;
	if (b == PVAS_BACKEND_KMOD && access("/dev/pvas", R_OK | W_OK) != 0)
		return -ENODEV;
	return b;
}

int pvas_create_attr(pvd_t *pvd, const struct pvas_attr *attr)
{
	struct pvas *pv;
	int rc, backend;

	if (!pvd)
		return -EINVAL;
	backend = pick_backend(attr);
	if (backend < 0) {
		pvas_set_err(
		    backend == -ENODEV
			? "kmod backend: /dev/pvas is absent or not accessible (load pvas.ko)"
			: "ULP_BACKEND: expected 'user' or 'kmod'");
		return backend;
	}
	pthread_mutex_lock(&table_lock);
	if (pvd_table[0]) {
		pthread_mutex_unlock(&table_lock);
		pvas_set_err("pvas_create: this process has a PVAS address space already");
		return -EBUSY;
	}
	pv = calloc(1, sizeof(*pv));
	if (!pv) {
		pthread_mutex_unlock(&table_lock);
		return -ENOMEM;
	}
	pv->backend = backend;
	pv->epfd = pv->end_efd = -1;
	pv->wait_gap = getenv("ULP_WAIT_TEST") && !strcmp(getenv("ULP_WAIT_TEST"), "gap");
	pthread_mutex_init(&pv->lock, NULL);
	ulp_arch_init();
	rc = pvas_region_create(&pv->region, 0, 0, attr ? attr->partition_size : 0);
	if (rc) {
		pvas_set_err("pvas_create: reserving the region: %s", strerror(-rc));
		goto fail;
	}
	pv->region->owner = pv;
	ulp_proc_set_exec(pv->region, guest_exec);
	pv->region->host_post = host_post;
	/* Created before any task, so every task has it at the same number. */
	pv->end_efd = pvas_fd_high(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
	pv->epfd = pvas_fd_high(epoll_create1(EPOLL_CLOEXEC));
	if (pv->end_efd < 0 || pv->epfd < 0 ||
	    epoll_ctl(pv->epfd, EPOLL_CTL_ADD, pv->end_efd,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = -1}) != 0) {
		rc = -errno;
		pvas_set_err("pvas_create: the event loop's eventfd/epoll: %s", strerror(-rc));
		goto fail;
	}
	pv->region->end_efd = pv->end_efd;
	if (backend == PVAS_BACKEND_KMOD) {
		rc = pvas_region_set_backend(pv->region, &ulp_backend_kmod);
		if (rc) {
			pvas_set_err("pvas_create: /dev/pvas: %s", strerror(-rc));
			goto fail;
		}
	}
	/* ULPs run in PVAS tasks, with hooks of their own; these are for a program that also
	 * runs ulp_init (refused once its workers run: they would miss the worker set-up). */
	ulp_sched_set_hooks(&ulp_rt, ulp_proc_sched_hooks());
	rc = ulp_trap_install(pv->region);
	if (rc) {
		pvas_set_err("pvas_create: installing the syscall trap: %s", strerror(-rc));
		goto fail;
	}
	rc = -pthread_create(&pv->server, NULL, server_main, pv);
	if (rc) {
		pvas_set_err("pvas_create: starting the manager thread: %s", strerror(-rc));
		goto fail;
	}
	pv->server_started = 1;
	pvd_table[0] = pv;
	pthread_mutex_unlock(&table_lock);
	*pvd = 0;
	return 0;
fail:
	if (pv->region)
		pvas_region_destroy(pv->region);
	if (pv->end_efd >= 0)
		close(pv->end_efd);
	if (pv->epfd >= 0)
		close(pv->epfd);
	free(pv);
	pthread_mutex_unlock(&table_lock);
	return rc;
}

/* The ULPs of a task that died end with it (they cannot end by themselves any more). */
static void task_died(struct pvas *pv, struct pvas_task *t, int status)
{
	t->alive = 0;
	t->status = status;
	ulp_proc_kill_task(pv->region, t, WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL);
}

/* Reap task t if it has ended. Under pv->lock, never blocking: a blocking waitpid here once
 * held the lock while ulpspawn's signal handler wanted it for pvas_kill (Ctrl-C deadlock). */
static void reap_one(struct pvas *pv, struct pvas_task *t)
{
	int st;
	pid_t r;

	if (!t->alive)
		return;
	do
		r = waitpid(t->pid, &st, WNOHANG | __WALL);
	while (r < 0 && errno == EINTR);
	if (r != t->pid)
		return;
	task_died(pv, t, st);
	if (t->pidfd >= 0) {
		epoll_ctl(pv->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		close(t->pidfd);
		t->pidfd = -1;
	}
}

/* Wait, without the lock, until task t has ended: its pidfd turns readable. */
static void wait_ended(struct pvas_task *t)
{
	siginfo_t si;

	if (t->pidfd >= 0) {
		struct pollfd p = {t->pidfd, POLLIN, 0};

		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		return;
	}
	/* no pidfd (kernel < 5.3): wait without reaping, reap_one reaps */
	while (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOWAIT | __WALL) < 0 && errno == EINTR)
		;
}

/* Reap tasks that ended; with `block`, first wait for task `only` (or every task) to end. */
static void reap(struct pvas *pv, pid_t only, int block)
{
	unsigned i, n;

	for (i = 0; block; i++) {
		struct pvas_task *t;

		pthread_mutex_lock(&pv->lock); /* tasks[] may be reallocated by a spawn */
		n = pv->ntasks;
		t = i < n ? pv->tasks[i] : NULL;
		pthread_mutex_unlock(&pv->lock);
		if (!t)
			break;
		if (t->alive && (only <= 0 || t->pid == only))
			wait_ended(t); /* a task is freed only by destroy */
	}
	pthread_mutex_lock(&pv->lock);
	for (i = 0; i < pv->ntasks; i++)
		if (only <= 0 || pv->tasks[i]->pid == only)
			reap_one(pv, pv->tasks[i]);
	pthread_mutex_unlock(&pv->lock);
}

/* For ulp_proc_release: has the task died (reaped now if it has)? */
static int task_gone(void *arg)
{
	struct pvas_task *t = arg;

	reap(t->pv, t->pid, 0);
	return !t->alive;
}

static int gone_always(void *arg)
{
	(void)arg;
	return 1; /* pvas_destroy: every task has been reaped */
}

/* Tasks that still run ULPs. A task none of whose ULPs runs is exiting (or was killed on its
 * way out, before its count dropped): wait for it. */
static int live_tasks(struct pvas *pv)
{
	unsigned i;
	int n = 0;

	reap(pv, 0, 0);
	for (i = 0; i < pv->ntasks; i++) {
		struct pvas_task *t = pv->tasks[i];

		if (t->alive && !t->held &&
		    (ulp_sched_refs(&t->rt) == 0 || !ulp_proc_count_task(pv->region, t)))
			reap(pv, t->pid, 1);
		n += t->alive;
	}
	return n;
}

static void destroy(struct pvas *pv)
{
	struct pvas_region *r = pv->region;
	unsigned i;
	int k;

	atomic_store(&pv->stop, 1);
	atomic_fetch_add(&pv->req_seq, 1);
	syscall(SYS_futex, &pv->req_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (pv->server_started)
		pthread_join(pv->server, NULL);
	for (k = ulp_proc_next(r, -1, 0); k >= 0; k = ulp_proc_next(r, k, 0))
		if (ulp_proc_find(r, k, NULL) >= 0)
			ulp_proc_release(pvas_cb(r, k), gone_always, NULL);
	for (i = 0; i < pv->ntasks; i++) {
		if (pv->tasks[i]->pidfd >= 0)
			close(pv->tasks[i]->pidfd);
		pvas_task_free(pv->tasks[i]);
	}
	free(pv->tasks);
	r->end_efd = -1;
	close(pv->end_efd);
	close(pv->epfd);
	pvas_region_destroy(r);
	pthread_mutex_destroy(&pv->lock);
	free(pv);
	pvd_table[0] = NULL;
}

int pvas_backend(pvd_t pvd)
{
	struct pvas *pv = get(pvd);

	return pv ? pv->backend : -EBADF;
}

int pvas_destroy(pvd_t pvd)
{
	struct pvas *pv = get(pvd);

	if (!pv)
		return -EBADF;
	if (live_tasks(pv)) {
		pvas_set_err("pvas_destroy: PVAS tasks are still running");
		return -EBUSY;
	}
	destroy(pv);
	return 0;
}

int pvas_destroy_force(pvd_t pvd)
{
	struct pvas *pv = get(pvd);

	if (!pv)
		return -EBADF;
	pvas_kill(pvd, SIGKILL);
	reap(pv, 0, 1);
	destroy(pv);
	return 0;
}

/* Not async-signal-safe (takes pv->lock): a launcher handles its signals in its event loop
 * (signalfd, self-pipe), as ulpspawn does. */
int pvas_kill(pvd_t pvd, int sig)
{
	struct pvas *pv = get(pvd);
	unsigned i;

	if (!pv)
		return -EBADF;
	pthread_mutex_lock(&pv->lock);
	for (i = 0; i < pv->ntasks; i++)
		if (pv->tasks[i]->alive)
			kill(pv->tasks[i]->pid, sig);
	pthread_mutex_unlock(&pv->lock);
	return 0;
}

/* ---- tasks and ULPs ---- */

static int load(struct pvas *pv, int pvid, const char *file, char *const argv[], char *const envp[],
		const struct pvas_ulp_attr *uattr, struct ulp_cb **cb)
{
	char err[512];
	int rc;

	if (!file || !argv) {
		pvas_set_err("pvas: no program or no argv");
		return -EINVAL;
	}
	rc = ulp_proc_load(pv->region, pvid, file, argv, envp ? envp : (char *const[]){NULL}, cb,
			   err, sizeof(err));
	if (rc) {
		pvas_set_err("%s", err);
		return rc;
	}
	(*cb)->rank = -1;
	(*cb)->std_null_in = uattr && uattr->stdin_null;
	return 0;
}

pid_t pvas_spawn(pvd_t pvd, int pvid, const char *file, char *const argv[], char *const envp[])
{
	return pvas_spawn_attr(pvd, pvid, file, argv, envp, NULL);
}

/* A new PVAS task for the loaded ULP cb (of file), in pv's task list and its event loop: the
 * task's pid, or -errno with cb released. */
static pid_t start_task(struct pvas *pv, const struct pvas_task_attr *attr, struct ulp_cb *cb,
			const char *file)
{
	struct pvas_task *t;
	int rc;

	pthread_mutex_lock(&pv->lock);
	if (pv->ntasks == pv->cap) {
		unsigned cap = pv->cap ? pv->cap * 2 : 16;
		struct pvas_task **n = realloc(pv->tasks, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&pv->lock);
			ulp_proc_release(cb, NULL, NULL);
			return -ENOMEM;
		}
		pv->tasks = n;
		pv->cap = cap;
	}
	rc = pvas_task_create(pv, attr, cb, &t);
	if (rc) {
		pthread_mutex_unlock(&pv->lock);
		pvas_set_err("pvas_spawn: %s: creating the task: %s", file, strerror(-rc));
		ulp_proc_release(cb, NULL, NULL);
		return rc;
	}
	/* The event loop learns of the task's end through its pidfd. */
	/* tasks made later copy it: out of their ULPs' first numbers */
	t->pidfd = pvas_fd_high((int)syscall(SYS_pidfd_open, t->pid, 0));
	if (t->pidfd >= 0 &&
	    epoll_ctl(pv->epfd, EPOLL_CTL_ADD, t->pidfd,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = t->pidfd}) != 0) {
		close(t->pidfd);
		t->pidfd = -1;
	}
	t->first_pvid = cb->pvid;
	pv->tasks[pv->ntasks++] = t;
	pthread_mutex_unlock(&pv->lock);
	return t->pid;
}

pid_t pvas_spawn_attr(pvd_t pvd, int pvid, const char *file, char *const argv[], char *const envp[],
		      const struct pvas_task_attr *attr)
{
	struct pvas *pv = get(pvd);
	struct ulp_cb *cb;
	int rc;

	if (!pv)
		return -EBADF;
	rc = load(pv, pvid, file, argv, envp, attr ? attr->ulp : NULL, &cb);
	return rc ? rc : start_task(pv, attr, cb, file);
}

static struct pvas_task *find_task(struct pvas *pv, pid_t pid)
{
	struct pvas_task *t = NULL;
	unsigned i;

	pthread_mutex_lock(&pv->lock);
	for (i = 0; i < pv->ntasks && !t; i++)
		if (pv->tasks[i]->pid == pid)
			t = pv->tasks[i];
	pthread_mutex_unlock(&pv->lock);
	return t;
}

int pvas_task_pvid(pvd_t pvd, pid_t task)
{
	struct pvas *pv = get(pvd);
	struct pvas_task *t;

	if (!pv)
		return -EBADF;
	t = find_task(pv, task);
	return t ? t->first_pvid : -ESRCH;
}

int pvas_task_exec(pvd_t pvd, pid_t task, int pvid, const char *file, char *const argv[],
		   char *const envp[])
{
	return pvas_task_exec_attr(pvd, task, pvid, file, argv, envp, NULL);
}

int pvas_task_exec_attr(pvd_t pvd, pid_t task, int pvid, const char *file, char *const argv[],
			char *const envp[], const struct pvas_ulp_attr *uattr)
{
	struct pvas *pv = get(pvd);
	struct pvas_task *t;
	struct ulp_cb *cb;
	int rc;

	if (!pv)
		return -EBADF;
	t = find_task(pv, task);
	if (!t || !t->alive) {
		pvas_set_err("pvas_task_exec: no live PVAS task %d", (int)task);
		return -ESRCH;
	}
	rc = load(pv, pvid, file, argv, envp, uattr, &cb);
	if (rc)
		return rc;
	rc = pvas_task_add(t, cb, NULL);
	if (rc) {
		pvas_set_err("pvas_task_exec: PVAS task %d has ended", (int)task);
		ulp_proc_release(cb, NULL, NULL);
		return rc;
	}
	return cb->pvid;
}

int pvas_task_release(pvd_t pvd, pid_t task)
{
	struct pvas *pv = get(pvd);
	struct pvas_task *t = pv ? find_task(pv, task) : NULL;

	if (!pv)
		return -EBADF;
	if (!t)
		return -ESRCH;
	pvas_task_unhold(t);
	return 0;
}

static int wait_status(const struct ulp_cb *cb)
{
	return cb->term_sig ? cb->term_sig & 0x7f : (cb->exit_status & 0xff) << 8;
}

/* A ULP of a PVAS task of pv, not waited for yet: 1 ended, 0 running, -1 none here. */
static int state_of(struct pvas *pv, int pvid)
{
	struct ulp_cb *cb;
	int s = ulp_proc_find(pv->region, pvid, &cb);

	if (s < 0 || s == ULP_PROC_LOADED || !ulp_proc_task(cb))
		return -1;
	return s == ULP_PROC_ZOMBIE;
}

int pvas_wait(pvd_t pvd, int pvid, int *status)
{
	return pvas_ulp_wait(pvd, pvid, status, NULL, 0);
}

int pvas_wait_stats(pvd_t pvd, int pvid, int *status, struct pvas_ulp_stats *st)
{
	return pvas_ulp_wait(pvd, pvid, status, st, 0);
}

int pvas_event_fd_get(pvd_t pvd, int *fd)
{
	struct pvas *pv = get(pvd);

	if (!pv)
		return -EBADF;
	if (!fd)
		return -EINVAL;
	*fd = pv->epfd;
	return 0;
}

/* Sleep until a ULP ends or a task dies (the event loop's epoll set). */
static void wait_event(struct pvas *pv)
{
	struct epoll_event ev[8];

	if (epoll_wait(pv->epfd, ev, 8, -1) < 0 && errno != EINTR)
		poll(NULL, 0, 10); /* cannot happen with a valid epfd; never spin */
}

static void fill_stats(struct ulp_cb *cb, int pvid, struct pvas_ulp_stats *st);

int pvas_ulp_wait(pvd_t pvd, int pvid, int *status, struct pvas_ulp_stats *st, int flags)
{
	struct pvas *pv = get(pvd);
	struct pvas_region *r;

	if (!pv)
		return -EBADF;
	r = pv->region;
	if (pvid < -1 || (pvid >= 0 && (unsigned)pvid >= r->nparts))
		return -EINVAL;
	if (flags & ~PVAS_WNOHANG)
		return -EINVAL;
	for (;;) {
		int most = 0, i;
		struct ulp_cb *cb;
		uint64_t n;

		/* Drained before looking: an end after this point writes it again, so the epoll set
		 * stays readable and no end is missed between the scan and the sleep. */
		while (read(pv->end_efd, &n, sizeof(n)) > 0)
			;
		reap(pv, 0, 0);
		/* The ended ULPs first (a bitmap of zombies), then any still running. */
		i = pvid >= 0 ? pvid : ulp_proc_next(r, -1, 1);
		while (i >= 0 && state_of(pv, i) != 1)
			i = pvid >= 0 ? -1 : ulp_proc_next(r, i, 1);
		if (i >= 0) {
			cb = pvas_cb(r, i);
			if (status)
				*status = wait_status(cb);
			if (st)
				fill_stats(cb, i, st);
			ulp_proc_release(cb, task_gone, ulp_proc_task(cb));
			return i;
		}
		/* The most advanced state of the rest: 0 none, 1 running, 2 ended. One that ended
		 * after the scan above is not running but is one to wait for: look again (before
		 * 28 Nov it counted as none, the answer was ECHILD though it waited, and ulpexec
		 * ended without reporting it: a rank's SIGSEGV unsaid in a CI run). */
		if (pv->wait_gap)
			usleep(2000);
		if (pvid >= 0)
			most = state_of(pv, pvid) + 1;
		for (i = ulp_proc_next(r, -1, 0); pvid < 0 && i >= 0 && most < 2;
		     i = ulp_proc_next(r, i, 0)) {
			int s = state_of(pv, i) + 1;

			most = s > most ? s : most;
		}
		if (!most)
			return -ECHILD;
		if (most == 2)
			continue;
		if (flags & PVAS_WNOHANG)
			return -EAGAIN;
		wait_event(pv);
	}
}

pid_t pvas_task_wait(pvd_t pvd, pid_t task, int *status)
{
	struct pvas *pv = get(pvd);
	struct pvas_task *t;

	if (!pv)
		return -EBADF;
	t = find_task(pv, task);
	if (!t)
		return -ECHILD;
	if (t->alive)
		reap(pv, task, 1); /* blocks in poll on its pidfd, not holding pv->lock */
	if (status)
		*status = t->status;
	return task;
}

/* Plain loads of what the ULP's worker writes with plain stores (task.state, task.in_syscall):
 * a snapshot that may be a switch old, never a lock or a store on the switch path. */
int pvas_ulp_state(pvd_t pvd, int pvid, int *sysno)
{
	struct pvas *pv = get(pvd);
	struct ulp_cb *cb;
	uint32_t in;
	int s;

	if (sysno)
		*sysno = -1;
	if (!pv)
		return -EBADF;
	if (pvid < 0 || (unsigned)pvid >= pv->region->nparts)
		return -ESRCH;
	s = ulp_proc_find(pv->region, pvid, &cb);
	if (s < 0 || s == ULP_PROC_CLAIMED)
		return -ESRCH;
	if (s == ULP_PROC_ZOMBIE)
		return PVAS_ULP_EXITED;
	if (s == ULP_PROC_LOADED || s == ULP_PROC_EXEC)
		return PVAS_ULP_LOADING;
	switch (__atomic_load_n(&cb->task.state, __ATOMIC_RELAXED)) {
	case ULP_RUNNING:
		return PVAS_ULP_RUNNING;
	case ULP_BLOCKED:
		in = __atomic_load_n(&cb->task.in_syscall, __ATOMIC_RELAXED);
		if (sysno && in)
			*sysno = (int)in - 1;
		return PVAS_ULP_BLOCKED;
	case ULP_EXITED:
		return PVAS_ULP_EXITED;
	default:
		return PVAS_ULP_READY;
	}
}

int pvas_stats(pvd_t pvd, int pvid, struct pvas_ulp_stats *st)
{
	struct pvas *pv = get(pvd);

	if (!pv || !st)
		return pv ? -EINVAL : -EBADF;
	if (pvid < 0 || (unsigned)pvid >= pv->region->nparts || state_of(pv, pvid) < 0)
		return -ESRCH;
	fill_stats(pvas_cb(pv->region, pvid), pvid, st);
	return 0;
}

static void fill_stats(struct ulp_cb *cb, int pvid, struct pvas_ulp_stats *st)
{
	uint64_t start;

	memset(st, 0, sizeof(*st));
	st->pvid = pvid;
	st->task = ((struct pvas_task *)ulp_proc_task(cb))->pid;
	st->pid = cb->pid;
	st->switches = cb->task.switches;
	st->cpu_ns = cb->task.cpu_ns;
	/* cpu_ns grows at each switch away (with accounting): a ULP that runs now, maybe for
	 * long without a switch, has also run since run_start_ns. */
	start = __atomic_load_n(&cb->task.run_start_ns, __ATOMIC_RELAXED);
	if (start && __atomic_load_n(&cb->task.state, __ATOMIC_RELAXED) == ULP_RUNNING &&
	    ulp_now_ns() > start)
		st->cpu_ns += ulp_now_ns() - start;
	st->ended = ulp_proc_state(cb->region, pvid) == ULP_PROC_ZOMBIE;
	st->status = st->ended ? wait_status(cb) : 0;
	if (st->ended)
		ulp_proc_describe(cb, st->how, sizeof(st->how));
	snprintf(st->path, sizeof(st->path), "%s", cb->path);
}
