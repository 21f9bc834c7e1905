/* SPDX-License-Identifier: MIT */
/* The pvas_* API's own state: address spaces (struct pvas) and PVAS tasks. */
#ifndef ULP_PVAS_INT_H
#define ULP_PVAS_INT_H

#include <pthread.h>
#include <sys/types.h>

#include "proc.h"
#include "pvas.h"

#define PVAS_TASK_MAX_WORKERS 256
#define PVAS_TASK_STACK (256 * 1024)

/* A PVAS task: a kernel-level process (own PID, own fd table) sharing the address space, running
 * its own scheduler instance over its ULPs. Allocated by the manager; the task process reads it
 * (same address space) but runs no libc code. */
struct pvas_task {
	struct ulp_runtime rt;
	struct pvas *pv;
	pid_t pid, manager_pid;
	int pidfd;	/* readable once the task has ended: in the event loop's epoll set; -1 */
	int alive;	/* not reaped yet */
	int held;	/* spawned with attr.hold and not released */
	int status;	/* wait(2) status once reaped */
	int first_pvid; /* the ULP it was spawned with (pvas_task_pvid) */
	unsigned next_worker;
	int cpus[PVAS_TASK_MAX_WORKERS];
	unsigned ncpus;
	int redirect; /* attr.redirect: fds 0..2 from stdio[] (-1: keep), no other of ours */
	int stdio[3];
	/* what take_stdio leaves open from 3 up, ascending: attr.keep and the runtime's two */
	int keep[PVAS_TASK_MAX_KEEP + 2];
	unsigned nkeep;
	char *stacks; /* one PVAS_TASK_STACK per worker */
	size_t stacks_len;
};

/* A request a ULP posts to the manager (pvas_ulp_exec): the loader runs only there. */
struct pvas_req {
	struct pvas_req *next;
	struct ulp_cb *from;
	int pvid;
	const char *file;
	char *const *argv, *const *envp;
	int result;
};

struct pvas {
	struct pvas_region *region;
	int backend;
	pthread_mutex_t lock; /* tasks[]; never held while blocking */
	/* The event loop: an epoll set of end_efd (written by every ULP end, region->end_efd)
	 * and each live task's pidfd. pvas_wait sleeps in it; launchers poll it
	 * (pvas_event_fd_get) next to their own descriptors. */
	int epfd, end_efd;
	struct pvas_task **tasks;
	unsigned ntasks, cap;
	pthread_t server;
	int server_started;
	uint32_t req_lock;
	struct pvas_req *reqs;
	struct ulp_host_call *calls; /* the runtime's (proc.h), run in the order posted */
	_Atomic uint32_t req_seq;    /* futex the server sleeps on */
	_Atomic int stop;
	/* Test hook (ULP_WAIT_TEST=gap): pvas_ulp_wait sleeps 2 ms between its scan for ended
	 * ULPs and its scan for running ones, where an end once went unseen (tests/integ). */
	int wait_gap;
};

/* task.c */
int pvas_task_create(struct pvas *pv, const struct pvas_task_attr *attr, struct ulp_cb *first,
		     struct pvas_task **out);
/* Add a loaded ULP to a live task; -ESRCH when the task has ended. From the manager. */
int pvas_task_add(struct pvas_task *t, struct ulp_cb *cb, struct ulp_worker *near);
/* The same without queueing it yet: counted (so the task cannot end) and placed. */
int pvas_task_adopt(struct pvas_task *t, struct ulp_cb *cb, struct ulp_worker *near);
void pvas_task_unhold(struct pvas_task *t);
void pvas_task_free(struct pvas_task *t);

/* api.c: the reason of the last failure, for pvas_errmsg(). */
void pvas_set_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
