/* SPDX-License-Identifier: MIT */
/*
 * PVAS: partitioned virtual address space, user-level processes (ULPs).
 *
 * Guest API: for programs that know they may run as ULPs (under ulpexec). Link libpvas-guest.a
 * (no other part of libulp goes into the guest): it finds the runtime through the control block
 * of its partition, whose address the loader passes in a private auxv entry, so it works in
 * static-pie and dynamic PIE guests alike. Run as an ordinary process, every call returns
 * -ENOTSUP instead of crashing.
 *
 * All functions return 0 or a negative errno code.
 *
 * Host API (the launching process, "manager"; link libulp.a -lelf -lpthread): create a PVAS
 * address space, spawn PVAS tasks (kernel-level processes with their own PID and fd table that
 * share the address space), put ULPs into them, wait for ULPs and tasks. Names and argument order
 * follow the User-level Process paper (Shimada et al.); what runtime authors also need (waiting
 * with an exit status, export/import, a barrier) follows PiP.
 */
#ifndef PVAS_H
#define PVAS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- host API ---------------- */

typedef int pvd_t; /* a PVAS address space descriptor */

#define PVAS_BACKEND_DEFAULT 0 /* kmod when /dev/pvas exists, else user; ULP_BACKEND=user|kmod */
#define PVAS_BACKEND_USER 1
#define PVAS_BACKEND_KMOD 2

/* Partition sizes: a power of two in [PVAS_PARTITION_MIN, PVAS_PARTITION_MAX]. In a partition of
 * S the program lies between the 64 KiB control block plus the stack (S/32, at most 8 MiB) and S/8
 * (the layout of include/uapi/pvas_ioctl.h): the smallest leaves a program nearly 12 MiB. */
#define PVAS_PARTITION_MIN (128ull << 20)
#define PVAS_PARTITION_MAX (64ull << 40) /* the whole region: one partition */

struct pvas_attr {
	size_t partition_size; /* power of two >= PVAS_PARTITION_MIN (128 MiB); 0: 4 GiB */
	int backend;	       /* PVAS_BACKEND_* */
};

/* Create a PVAS address space: the region is reserved and the syscall trap installed.
 * -EBUSY: this process has one already (one per process); -EADDRINUSE: the region is taken;
 * -EINVAL: bad partition size; -ENODEV: the kmod backend was asked for and /dev/pvas is absent. */
int pvas_create(pvd_t *pvd);
int pvas_create_attr(pvd_t *pvd, const struct pvas_attr *attr);

/* PVAS_BACKEND_USER or PVAS_BACKEND_KMOD, or -EBADF. */
int pvas_backend(pvd_t pvd);

/* Destroy it. -EBUSY while PVAS tasks are alive (not yet waited for); -EBADF: no such pvd. */
int pvas_destroy(pvd_t pvd);
/* Kill the live tasks (SIGKILL), reap them, then destroy. */
int pvas_destroy_force(pvd_t pvd);

/* What one ULP gets beyond its program (NULL: nothing more). */
struct pvas_ulp_attr {
	/* its standard input is /dev/null, its own: the task's descriptor 0 stays for its other
	 * ULPs (an MPI launcher's ranks other than 0 read nothing of the job's input) */
	int stdin_null;
};

struct pvas_task_attr {
	unsigned workers; /* kernel threads of the task (0: 1) */
	const int *cpus;  /* pin worker i to cpus[i % ncpus] (NULL: no pinning) */
	unsigned ncpus;
	int accounting; /* measure CPU time per ULP (pvas_stats) */
	int hold;	/* keep the task alive until pvas_task_release, even with no ULP */
	/* redirect: the task's descriptors 0, 1, 2 become stdio[0..2] (-1 keeps that one), and
	 * the task keeps no other descriptor of the launcher's; the launcher may close its copies
	 * once pvas_spawn_attr returned. Its ULPs share them (one fd table per task). */
	int redirect;
	int stdio[3];
	/* redirect: these descriptors of the launcher's stay open in the task too (an MPI
	 * launcher's PMI_FD ends for the task's ranks); at most PVAS_TASK_MAX_KEEP, else -EINVAL */
	const int *keep;
	unsigned nkeep;
	const struct pvas_ulp_attr *ulp; /* the first ULP's (NULL: none) */
};
#define PVAS_TASK_MAX_KEEP 64

/*
 * Spawn a PVAS task whose first ULP, pvid (-1: the lowest free partition), runs file with argv
 * and envp. Returns the task's PID (> 0) or -errno; the reason of a failed load (file: reason) is
 * in pvas_errmsg(). The task ends when its last ULP ends.
 */
pid_t pvas_spawn(pvd_t pvd, int pvid, const char *file, char *const argv[], char *const envp[]);
pid_t pvas_spawn_attr(pvd_t pvd, int pvid, const char *file, char *const argv[], char *const envp[],
		      const struct pvas_task_attr *attr);

/* Start one more ULP (pvid, or -1) in the running task `task`. Returns the pvid or -errno;
 * -ESRCH: no such live task of this pvd. */
int pvas_task_exec(pvd_t pvd, pid_t task, int pvid, const char *file, char *const argv[],
		   char *const envp[]);
/* The same, with what the ULP gets beyond its program (uattr may be NULL). */
int pvas_task_exec_attr(pvd_t pvd, pid_t task, int pvid, const char *file, char *const argv[],
			char *const envp[], const struct pvas_ulp_attr *uattr);

/* Drop the hold of a task spawned with attr.hold: it ends once its ULPs have ended. A held
 * task counts as alive for pvas_destroy. Releasing twice is harmless. */
int pvas_task_release(pvd_t pvd, pid_t task);

/*
 * Wait for ULP pvid (-1: any ULP of this pvd) to end; its partition is then free again.
 * *status (may be NULL) is a wait(2)-style status: WIFEXITED/WEXITSTATUS, or WIFSIGNALED/WTERMSIG
 * for a ULP killed by a fault or abort, or whose task was killed. Returns the pvid, or -ECHILD
 * when there is no such ULP left to wait for.
 */
int pvas_wait(pvd_t pvd, int pvid, int *status);

/* pvas_wait with options; flags: 0 or PVAS_WNOHANG (-EAGAIN while the ULPs waited for are
 * still running, as waitpid's WNOHANG). st (may be NULL) gets the ended ULP's counters. */
#define PVAS_WNOHANG 1
struct pvas_ulp_stats;
int pvas_ulp_wait(pvd_t pvd, int pvid, int *status, struct pvas_ulp_stats *st, int flags);

/*
 * The host's event loop as a descriptor: in *fd, one that polls readable (POLLIN, EPOLLIN) when
 * pvas_ulp_wait(pvd, -1, ..., PVAS_WNOHANG) may have something to report: a ULP ended or a PVAS
 * task died. It is an epoll set of an eventfd every ULP end writes and a pidfd per task; add it
 * to the launcher's own poll/epoll set, and on readiness call pvas_ulp_wait with PVAS_WNOHANG
 * until -EAGAIN (that drains it) or -ECHILD. Owned by pvd: do not close it or read from it.
 * 0, -EBADF (no such pvd) or -EINVAL (fd NULL).
 */
int pvas_event_fd_get(pvd_t pvd, int *fd);

/* Wait for a PVAS task to end (its ULPs' statuses stay for pvas_wait). Returns the PID. Blocks
 * in poll on the task's pidfd; another thread's pvas_kill is never held up by it. */
pid_t pvas_task_wait(pvd_t pvd, pid_t task, int *status);

/* Send sig to every live task of pvd. Takes a lock: not async-signal-safe; handle signals in
 * the event loop (signalfd or a self-pipe next to pvas_event_fd_get's fd). */
int pvas_kill(pvd_t pvd, int sig);

struct pvas_ulp_stats {
	int pvid;
	pid_t task;
	uint64_t switches; /* times it was switched to */
	uint64_t cpu_ns;   /* with attr.accounting */
	int ended;
	int status; /* wait(2)-style, when ended */
	char path[256];
	/* when ended: "exited with status N", "killed by SIGSEGV (fault address A, pc P)"; a ULP
	 * that failed after its partition had no room for a mapping adds "; its partition had no
	 * room for an mmap of 287 MiB" */
	char how[128];
	pid_t pid; /* its own process id, getpid() in it (0 before it started) */
};
/* Counters of ULP pvid (valid until pvas_wait released it). */
int pvas_stats(pvd_t pvd, int pvid, struct pvas_ulp_stats *st);

/* What ULP pvid is doing (for tools such as ulps; a snapshot read without locks, possibly one
 * switch old): one of the values below, or -ESRCH (no ULP there) / -EBADF. For a blocked ULP,
 * *sysno (may be NULL) gets the number of the system call it waits in, or -1 when it waits in
 * the runtime itself (a pvas_barrier, a task start). */
#define PVAS_ULP_LOADING 0 /* loaded, not started yet (or being replaced by execve) */
#define PVAS_ULP_READY 1   /* waiting for a worker */
#define PVAS_ULP_RUNNING 2
#define PVAS_ULP_BLOCKED 3
#define PVAS_ULP_EXITED 4 /* ended, not waited for yet */
int pvas_ulp_state(pvd_t pvd, int pvid, int *sysno);

/* The pvid of the ULP that pvas_spawn started task with; -ESRCH: no such task of pvd. */
int pvas_task_pvid(pvd_t pvd, pid_t task);
/* pvas_wait that also returns the ended ULP's counters (st may be NULL). */
int pvas_wait_stats(pvd_t pvd, int pvid, int *status, struct pvas_ulp_stats *st);

/* A launcher's own descriptor moved from PVAS_FD_HIGH up, close-on-exec: PVAS tasks start with a
 * copy of the launcher's descriptor table, so what it opened before (a signalfd, a socket) sits
 * where the ULPs' first opens should land (3, 4...: `exec 3>file`, socket activation). libulp
 * puts its own there too. Returns the new descriptor, or fd itself where RLIMIT_NOFILE is lower;
 * fd < 0 is returned as is, so the call can wrap the one that opens it. Inline: launch/'s
 * status and PMI code, linked into tools without libulp (ulps), use it too. */
#define PVAS_FD_HIGH 800
static inline int pvas_fd_high(int fd)
{
	int hi;

	if (fd < 0 || fd >= PVAS_FD_HIGH)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, PVAS_FD_HIGH);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/* The message of the last failed call in this thread ("file: reason"). */
const char *pvas_errmsg(void);

/* ---------------- guest API ---------------- */

/* The caller's PVAS id (its partition number) in *pvid. */
int pvas_get_pvid(int *pvid);

/* Switch straight to ULP pvid, as in the User-level Process paper; the caller is queued behind
 * the ready work. 0 once the caller runs again (or at once when pvid is the caller).
 * -EINVAL: no such partition; -ESRCH: no running ULP there; -EAGAIN: it is running on another
 * worker or blocked, so it cannot be switched to now. */
int pvas_ulp_switch(int pvid);

/* Let other ULPs and threads run; the caller goes behind the ready work. */
int pvas_yield(void);

/* Create ULP pvid (-1: any free partition) in the caller's PVAS task running file, and run it
 * at once; the caller goes on later. Returns the new pvid or -errno (the load is done by the
 * launching process, which also prints the reason of a failure on stderr). */
int pvas_ulp_exec(int pvid, const char *file, char *const argv[], char *const envp[]);

/* Wait until `count` ULPs called pvas_barrier with the same name (< 64 bytes), in any task.
 * Returns 1 in one of them, 0 in the others; -EINVAL when counts disagree. */
int pvas_barrier(const char *name, int count);

/* Publish addr under name (< 64 bytes) for the other ULPs of the address space, in any PVAS
 * task: the space is shared, so the address is usable as it is. -EEXIST: name taken; -ENOSPC:
 * table full. The name goes away when the exporting ULP's partition is released. */
int pvas_export(const char *name, void *addr);

/* Look name up. -ENOENT while nobody exported it (retry after pvas_yield to wait for it). */
int pvas_import(const char *name, void **addr);

#ifdef __cplusplus
}
#endif
#endif
