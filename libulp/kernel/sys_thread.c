/* SPDX-License-Identifier: MIT */
/*
 * Thread syscalls of a ULP. A ULP runs as one scheduler task, never as a kernel thread: the calls
 * that would make or describe kernel threads are refused or answered for the worker.
 */
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>
#include <linux/sched.h>

void ulp_sys_tls_set(struct ulp_cb *cb, uintptr_t tls)
{
	ulp_task_set_tls(&cb->task, tls);
}

uintptr_t ulp_sys_tls_get(const struct ulp_cb *cb)
{
	return cb->task.tls;
}

/* No kernel threads inside a ULP; EAGAIN is what pthread_create reports as "no resources".
 * A new process (no CLONE_THREAD) is a fork: sys_fork.c. */
long ulp_sys_clone(struct ulp_cb *cb, struct ulp_sys *s)
{
	if (!(s->a[0] & CLONE_THREAD))
		return ulp_sys_fork(cb, s);
	return -EAGAIN;
}

/* ENOSYS makes glibc fall back to clone. */
long ulp_sys_clone3(struct ulp_cb *cb, struct ulp_sys *s)
{
	return -ENOSYS;
}

/* No clear-tid address: a ULP is no kernel thread, nothing would clear it. */
long ulp_sys_set_tid_address(struct ulp_cb *cb, struct ulp_sys *s)
{
	return cb->task.worker->tid;
}

/* The worker thread's rseq area belongs to the host libc. */
long ulp_sys_rseq(struct ulp_cb *cb, struct ulp_sys *s)
{
	return -ENOSYS;
}
