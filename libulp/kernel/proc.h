/* SPDX-License-Identifier: MIT */
/*
 * User-level processes (ULPs): the PVAS region and its partitions, the control block on top of
 * each partition, the syscall trap, and the life of a ULP. Internal to libulp; the tools and the
 * pvas_* API are built on it.
 */
#ifndef ULP_PVAS_PROC_H
#define ULP_PVAS_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "pvas.h"
#include "sys.h"
#include "uapi/pvas_cb.h"
#include "uapi/pvas_ioctl.h"
#include "ulp_sched.h"

#define ULP_CB_MAGIC PVAS_CB_MAGIC
#define ULP_CB_SIZE (64 * 1024) /* the control block area at offset 0 of a partition */
#define ULP_AT_PVAS_CB PVAS_AT_CB
#define ULP_MAX_EXTENTS 1024		   /* free ranges of the mmap area */
#define ULP_DEFAULT_PARTITION (4ull << 30) /* 4 GiB */
/* The smallest partition the API takes. The layout (include/uapi/pvas_ioctl.h) leaves a program
 * the room between the control block plus the stack (S/32) and S/8: nearly 12 MiB at 128 MiB. */
#define ULP_MIN_PARTITION PVAS_PARTITION_MIN
_Static_assert(PVAS_LAYOUT_IMAGE_END(ULP_MIN_PARTITION) >=
		   PVAS_LAYOUT_IMAGE(ULP_MIN_PARTITION) + (11u << 20),
	       "the smallest partition leaves a program nearly 12 MiB");
#define ULP_MAX_KIDS 256 /* child processes of one ULP not yet waited for */
#ifndef ULP_SANITIZE
#define ULP_DEFAULT_BASE 0x100000000000ull /* 16 TiB */
#define ULP_DEFAULT_REGION (64ull << 40)   /* 64 TiB */
#else
/* ASan's x86_64 high shadow is [0x02008fff7000, 0x10007fff7fff]: 16 TiB would overlap its top,
 * and 64 TiB from 32 TiB would reach the PIE executables' 0x55.. area. 32 TiB from 32 TiB
 * leaves both (and ASan's allocator at 0x6000..) alone; 8192 partitions of 4 GiB. */
#define ULP_DEFAULT_BASE 0x200000000000ull /* 32 TiB */
#define ULP_DEFAULT_REGION (32ull << 40)   /* 32 TiB */
#endif

/*
 * The state of a ULP, one per partition, kept in the region (never unmapped, unlike the control
 * block) and written only by proc.c, through the transitions its table allows:
 *
 *   FREE -> CLAIMED -> LOADED -> RUNNING -> ZOMBIE -> (released) FREE
 *   RUNNING -> EXEC -> RUNNING | ZOMBIE   (replaced in place by execve)
 *   RUNNING -> LOADED                     (its PVAS task could not be started)
 *
 * A release goes through CLAIMED (unpublished, then unmapped) to FREE.
 */
enum ulp_proc_state {
	ULP_PROC_FREE,	  /* no ULP */
	ULP_PROC_CLAIMED, /* being loaded or released: its control block may not be mapped */
	ULP_PROC_LOADED,  /* loaded, not started */
	ULP_PROC_RUNNING, /* started: ready, running or blocked */
	ULP_PROC_ZOMBIE,  /* ended; status valid; the exit path is done with the control block */
	ULP_PROC_EXEC,	  /* being replaced by another program in place */
};

/* A partition as others may see it without touching its control block. */
struct ulp_proc_slot {
	_Atomic uint32_t state;	    /* enum ulp_proc_state */
	void *task;		    /* the PVAS task it runs in (NULL: the launching process) */
	_Atomic uint32_t held;	    /* host calls about it posted, not done: no release */
	_Atomic uint32_t own_marks; /* its program's MADV_DONTFORK/DOFORK stand (fork_copy.c) */
};

struct pvas_region;
struct ulp_backend_image;
struct ulp_backend_ops;
struct ulp_cb;
struct ulp_tg;

/* Guest op of the name tables (names.c). */
int pvas_names_barrier(struct ulp_cb *cb, const char *name, int count);

/* Loads asked for by a ULP (pvas_ulp_exec): served by whoever owns the region (host/), which
 * registers it with ulp_proc_set_exec. */
typedef int (*ulp_exec_fn)(struct ulp_cb *cb, int pvid, const char *file, char *const argv[],
			   char *const envp[]);

/* Work that needs the hosted libc (the loader, malloc), handed by ULP-side code to the process
 * that owns the region (host/ serves it on its request thread): fn(c) runs there, once. */
struct ulp_host_call {
	struct ulp_host_call *next;
	void (*fn)(struct ulp_host_call *c);
};
typedef void (*ulp_host_post_fn)(struct pvas_region *r, struct ulp_host_call *c);

struct ulp_extent {
	uintptr_t lo, hi;
};

#define ULP_MAX_TIMERS 32 /* POSIX timers of one ULP (timer_create), alarm's own not counted */

/*
 * A ULP's signal state (signal.c): what a process has per process. Written only from the ULP's
 * own context (its trapped calls, its deliveries); what others post to it (pending signals) lives
 * outside the control block, in the region-wide table signal.c keeps by pvid.
 */
struct ulp_sigstate {
	struct ulp_ksigaction act[ULP_NSIG + 1]; /* by signal number; zero: SIG_DFL */
	unsigned long mask;			 /* its first thread's signal mask */
	uintptr_t alt_sp;			 /* sigaltstack (alt_size 0: none) */
	size_t alt_size;
	int alarm_timer; /* the kernel timer of alarm/ITIMER_REAL, + 1 (0: none yet) */
	int alarm_slot;	 /* its record in signal.c's timer table */
	int ntimers;
	struct {
		int kid;  /* the kernel's timer id */
		int slot; /* its record */
	} timers[ULP_MAX_TIMERS];
};

struct ulp_cb {
	/* What the guest library reads (include/uapi/pvas_cb.h): magic, pvid, state, ops. */
	union {
		struct pvas_cb hdr;
		struct {
			PVAS_CB_FIELDS
		};
	};
	struct ulp_task task; /* the ULP as a scheduler task */
	struct pvas_region *region;
	uintptr_t part_lo, part_hi;
	uintptr_t brk_start, brk_cur, brk_max; /* brk heap; pages mapped up to brk_mapped */
	uintptr_t brk_mapped;
	uintptr_t mmap_lo, mmap_hi; /* the mmap area */
	uint32_t mm_lock;	    /* guards the extents (one ULP runs on one worker at a time,
				     * but the manager may read them) */
	unsigned nfree;
	struct ulp_extent free_ext[ULP_MAX_EXTENTS]; /* sorted, coalesced */
	uintptr_t entry, sp;			     /* where the program starts */
	int exit_status; /* exit code, valid once ZOMBIE and !term_sig */
	int term_sig;	 /* killed by this signal (0: exited) */
	uintptr_t fault_addr, fault_pc;
	/* The largest mmap or mremap its partition had no room for (sys_mem.c), 0: none. A ULP
	 * that then fails is told why (ulp_proc_describe): a process would have had the room. */
	uint64_t mm_refused;
	unsigned std_closed; /* fds 0-2 this ULP closed (kept open for the others) */
	int std_own[3];	     /* its own 0-2 where it redirected them (stdfds.c); 0: the task's */
	int std_null_in;     /* its launcher gave it /dev/null as stdin (ulp_std_start) */
	int rank;	     /* for the tools: ULP_RANK */
	int pid;	     /* its process id: its placeholder process's (ident.c), 0 before */
	uint32_t kids_lock;  /* guards nkids and kids[]: its threads fork and wait on several
			      * workers at once (sys_fork.c) */
	int nkids;	     /* its child processes not yet waited for (sys_fork.c) */
	int kids[ULP_MAX_KIDS];
	/* Its process group and session ids once it left its task's (setpgid, setsid:
	 * sys_pgrp.c); 0: the task's, where a ULP starts */
	int pgid, sid;
	struct ulp_tg *tg; /* its threads (uthread.h), NULL until the first thread call */
	struct ulp_sigstate sig;
	/* CPU time its threads used, user and system (the runtime on its behalf), in ns: charged by
	 * the preemption tick of the worker that runs it (preempt.c) */
	_Atomic uint64_t cpu_ns[2];
	/* What that CPU time sets off (cputime.c): ITIMER_VIRTUAL's [0] and ITIMER_PROF's [1]
	 * expiry (0: off) and interval, in ns of it; the CPU time at which its RLIMIT_CPU is
	 * looked at next (0: at the next tick) */
	_Atomic uint64_t itimer[2][2];
	_Atomic uint64_t cpu_limit_at;
	/* What the child processes it waited for used, as the kernel's RUSAGE_CHILDREN counts it
	 * (the task's counts every ULP's): user and system CPU in ns, the largest maxrss (KiB), the
	 * sums of minflt, majflt, inblock, oublock, nvcsw, nivcsw (sys_proc.c) */
	_Atomic uint64_t kids_cpu_ns[2];
	_Atomic long kids_maxrss;
	_Atomic long kids_cnt[6];
	int nnp; /* it set no_new_privs, which its child processes get (sys_cred.c) */
	/* Its soft RLIMIT_NOFILE as last read from its placeholder, 0: not yet (sys_rlimit.c) */
	_Atomic uint64_t nofile;
	/* Its RLIMIT_AS [0] and RLIMIT_DATA [1] (soft, hard) once it set them, kept here and not on
	 * its placeholder, whose fork children must not start with them (sys_rlimit.c); lim_set:
	 * which it set (bit per limit); lim_lock guards both */
	uint64_t lim[2][2];
	_Atomic unsigned lim_set;
	uint32_t lim_lock;
	/* Its private opens of the files it locks (sys_lock.c): how many, and the table entry of
	 * the last one looked up */
	_Atomic int nlocks;
	int lock_hint;
	/* The lock it waits for, parked in F_SETLKW (lock_waiting): type, range from the start of
	 * the file (dev, ino), for another ULP's look for a circle of waits (EDEADLK) */
	int lock_waiting;
	short lock_wait_type;
	long long lock_wait_start, lock_wait_len;
	uint64_t lock_wait_dev, lock_wait_ino;
	char path[256];
	char exe[4096]; /* its program's absolute path, as /proc/self/exe names it */
	/* Its current directory (fs.c): device and inode (0, 0: not kept), and its path (kept
	 * where the placeholder process cannot be followed); its umask. */
	uint64_t cwd_dev, cwd_ino;
	unsigned umask;
	char cwd[4096];
	/* Where its argument and environment strings lie on its stack (/proc/self/cmdline and
	 * environ, sys_proc.c), [lo, hi) */
	uintptr_t args_lo, args_hi, env_lo, env_hi;
	/* execve in place (exec.c): the prepared program (hosted memory) between its checks and
	 * its load; the mask and the thread-directed pending signals of the thread that asked
	 * (the new program's first thread takes them over, as in the kernel). */
	void *exec_prep;
	unsigned long exec_mask, exec_pend;
};

#define PVAS_NAME_MAX 64
#define PVAS_MAX_NAMES 4096

/* An address exported by a ULP under a name (pvas_export); plain pointer: the space is shared. */
struct pvas_name {
	char name[PVAS_NAME_MAX];
	uintptr_t addr;
	int pvid; /* exporter; its names go when its partition is released */
};

#define PVAS_MAX_BARRIERS 256

/* A barrier across ULPs (pvas_barrier), named; the waiting ULPs are suspended on it. */
struct pvas_bar {
	char name[PVAS_NAME_MAX];
	int count, arrived;
	struct ulp_task *waiters;
};

struct pvas_region {
	uintptr_t base;
	size_t size, part_size;
	unsigned nparts;
	uint32_t lock;		     /* claiming a free partition */
	struct ulp_proc_slot *procs; /* nparts: each partition's ULP state (proc.c) */
	/* One bit per partition, 64 a word, so that finding ULPs skips free partitions a word at
	 * a time: not FREE; ZOMBIE. */
	_Atomic uint64_t *used_map, *zombie_map;
	unsigned nused;
	uint32_t names_lock;
	unsigned nnames;
	struct pvas_name *names;    /* PVAS_MAX_NAMES */
	_Atomic uint32_t ended_seq; /* futex: bumped each time a ULP ends */
	uint32_t bar_lock;
	unsigned nbars;
	struct pvas_bar *bars; /* PVAS_MAX_BARRIERS */
	void *owner;	       /* the pvas handle that created it */
	const struct ulp_backend_ops *backend;
	int backend_fd;	  /* the backend's own descriptor (kmod: the address-space object), -1 */
	ulp_exec_fn exec; /* pvas_ulp_exec server, or NULL (-ENOSYS) */
	ulp_host_post_fn host_post; /* runs ulp_host_calls in the owner (NULL: none) */
	int end_efd;		    /* host's eventfd, written each time a ULP ends (-1: none) */
	uint32_t fork_lock;	    /* a fork's marks and clone (fork_copy.c) */
	_Atomic unsigned fork_waiters;
	_Atomic unsigned nown_marks; /* partitions whose own_marks is set */
};

/* What a fork of a ULP copies (fork_copy.c): its partition and the runtime, not the other
 * ULPs'. setup reads ULP_FORK_COPY_ALL; begin (0: nothing done, else held) before the clone and
 * end after it, in the parent; own before a program's MADV_DONTFORK or MADV_DOFORK; release
 * when the partition is freed. */
extern int ulp_fork_copy_all;
void ulp_fork_copy_setup(void);
int ulp_fork_copy_begin(struct ulp_cb *cb);
void ulp_fork_copy_end(struct ulp_cb *cb, int held);
void ulp_fork_copy_own(struct ulp_cb *cb);
void ulp_fork_copy_release(struct pvas_region *r, int pvid);

/* The state of partition pvid's ULP (enum ulp_proc_state); pvid must be in range. */
static inline int ulp_proc_state(const struct pvas_region *r, int pvid)
{
	return (int)atomic_load_explicit(&r->procs[pvid].state, memory_order_acquire);
}

/* Export/import table (names.c). 0 or -errno; callable from ULP context. */
int pvas_names_export(struct pvas_region *r, int pvid, const char *name, uintptr_t addr);
int pvas_names_import(struct pvas_region *r, const char *name, uintptr_t *addr);
void pvas_names_drop(struct pvas_region *r, int pvid);

/* Reserve a region (base/size/part_size 0: defaults) on the user backend. The region and
 * partition sizes are powers of two, partitions >= 16 MiB, base a multiple of the partition size
 * and of 4 GiB. */
int pvas_region_create(struct pvas_region **out, uintptr_t base, size_t size, size_t part_size);
/* Load programs through another backend (backend.h) from now on; before any ULP is loaded. */
int pvas_region_set_backend(struct pvas_region *r, const struct ulp_backend_ops *b);
void pvas_region_destroy(struct pvas_region *r);
/* Partition pvid's control block; NULL when pvid is out of range. */
struct ulp_cb *pvas_cb(struct pvas_region *r, int pvid);

/* Parse a size such as 4g, 512m (env.c). */
long long ulp_parse_size(const char *s);

/*
 * The ULP process object (proc.c), the one writer of a ULP's state. Load `path` into a free
 * partition (pvid < 0: the lowest free one) as a new ULP, LOADED. Returns 0 and the control block,
 * or -errno with "path: reason" in err.
 */
int ulp_proc_load(struct pvas_region *r, int pvid, const char *path, char *const argv[],
		  char *const envp[], struct ulp_cb **out, char *err, size_t errlen);
/* LOADED -> RUNNING in PVAS task `ptask` (NULL: the launching process); -EINVAL otherwise. */
int ulp_proc_set_running(struct ulp_cb *cb, void *ptask);
/* RUNNING -> LOADED for a ULP that never ran (its task could not be started). */
void ulp_proc_unstart(struct ulp_cb *cb);
/* Queue a LOADED ULP on ulp_rt (call from inside the runtime); -EINVAL when not LOADED. */
int ulp_proc_start(struct ulp_cb *cb);
/* Wait for a started ULP to end (from a runtime thread); -EINVAL when not started. */
int ulp_proc_wait(struct ulp_cb *cb);
/* Give the partition back (LOADED, ZOMBIE, or RUNNING in a task that died). A RUNNING one is
 * waited for until its exit path is done with it, unless gone(arg) says its task died. */
void ulp_proc_release(struct ulp_cb *cb, int (*gone)(void *arg), void *arg);
/* End the calling ULP (from its own context): exit status, or the signal that killed it. */
void ulp_proc_exit(struct ulp_cb *cb, int status, int sig) __attribute__((noreturn));
/* Where the fault that is about to end the calling ULP happened. */
void ulp_proc_set_fault(struct ulp_cb *cb, uintptr_t addr, uintptr_t pc);
/* Every RUNNING ULP of PVAS task `task`, which died of sig: ZOMBIE, killed by sig. */
void ulp_proc_kill_task(struct pvas_region *r, void *task, int sig);

/* Lookups, no partition scanned. find: the ULP of partition pvid once loaded: its state, and its
 * control block in *out; -ESRCH for a free (or claimed) partition, -EINVAL out of range. next:
 * the first partition after `after` that is not FREE (zombies: that is ZOMBIE), or -1. task: the
 * PVAS task a ULP runs in. */
int ulp_proc_find(struct pvas_region *r, int pvid, struct ulp_cb **out);
int ulp_proc_next(struct pvas_region *r, int after, int zombies);
void *ulp_proc_task(const struct ulp_cb *cb);
/* ULPs of PVAS task `task` that have not ended. */
unsigned ulp_proc_count_task(struct pvas_region *r, void *task);

/* Hooks for a scheduler instance that runs ULPs started with ulp_proc_start (ulp_rt: set them
 * with ulp_sched_set_hooks before ulp_init): the trap's per-worker set-up, the ULP exit path. */
const struct ulp_sched_hooks *ulp_proc_sched_hooks(void);
/* The exit path of a ULP's task (for a task_exit hook): RUNNING -> ZOMBIE, its waiter woken; it
 * stops touching the control block (the partition may go right after). Drops no reference.
 * Returns 1 when the ULP did not end but execs (exec.c): its task goes on, keep its reference. */
int ulp_proc_exited(struct ulp_task *t);
/* exec.c's state changes: RUNNING -> EXEC (0, or -EINVAL); the new program loaded: EXEC ->
 * RUNNING, started afresh at img's entry (host side); the load failed past the point of no return:
 * EXEC -> RUNNING on a small stack, ending at once killed by SIGKILL. */
int ulp_proc_exec_begin(struct ulp_cb *cb);
/* A host call about cb is posted (hold, before the post) and done (unhold, its last touch of
 * cb): its partition is not released in between (exec.c: a task may die meanwhile). */
void ulp_proc_hold(struct ulp_cb *cb);
void ulp_proc_unhold(struct pvas_region *r, int pvid);
void ulp_proc_exec_loaded(struct ulp_cb *cb, const struct ulp_backend_image *img);
void ulp_proc_exec_failed(struct ulp_cb *cb);
/* execve from a ULP (exec.c, the trap): does not return once the new program is ready;
 * ULP_EXEC_CHILD when the target is one to run as a child process instead; else -errno, the old
 * program goes on. */
#define ULP_EXEC_CHILD 1
long ulp_proc_exec(struct ulp_cb *cb, long nr, const long a[6]);
/* From the exit path of an EXEC ULP, in its task: what exec does to the process (signals, fds),
 * then the load is handed to the host. 0, or -ENOSYS when nobody loads (the ULP ends). */
int ulp_exec_reload(struct ulp_cb *cb);
/* Serve pvas_ulp_exec for the ULPs of r (the host registers it). */
void ulp_proc_set_exec(struct pvas_region *r, ulp_exec_fn fn);
/* Wait-status-like code: exit status, or 128 + signal. */
int ulp_proc_exit_code(const struct ulp_cb *cb);
/* One line describing how it ended ("exited with status 3", "killed by SIGSEGV at 0x..."). */
void ulp_proc_describe(const struct ulp_cb *cb, char *buf, size_t len);

/* mmap area of a partition (partition.c) */
uintptr_t ulp_mm_alloc(struct ulp_cb *cb, size_t len);
void ulp_mm_free(struct ulp_cb *cb, uintptr_t lo, size_t len);
void ulp_mm_init(struct ulp_cb *cb, uintptr_t lo, uintptr_t hi);
/* Mark [lo, lo+len) as used (a MAP_FIXED mapping the program placed itself). */
void ulp_mm_take(struct ulp_cb *cb, uintptr_t lo, size_t len);

/* A ULP's cwd and umask (fs.c): each worker thread has its own (worker_init, on the worker),
 * loaded with the ULP's before the ULP runs there (switch_in: the instances' switch_in hook;
 * start: the ULP's first run, before its program). */
void ulp_fs_worker_init(struct ulp_worker *w);
void ulp_fs_switch_in(struct ulp_worker *w, struct ulp_task *t, void *arg);
void ulp_fs_start(struct ulp_cb *cb);
/* The switch_in hook of the ULP layer's instances (proc.c, libulp/host/task.c): the worker's
 * tick unblocked when a tick's handler switches (preempt.c), the ULP's cwd and umask. */
void ulp_proc_switch_in(struct ulp_worker *w, struct ulp_task *t, void *arg);

/* The syscall trap (trap.c): installed once per process, before ULPs run. */
int ulp_trap_install(struct pvas_region *r);
/* Install fn as the handler of sig, one of the runtime's own signals (trap.c, preempt.c,
 * ident.c; hosted: libc's sigaction), with SA_SIGINFO | flags and no signal blocked: 0 or
 * -errno. */
int ulp_trap_handler_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags);
/* In a PVAS task's first thread: re-install the trap's signal handlers (raw). */
void ulp_trap_task_init(void);
/* The runtime's own signal handlers (the trap's, the faults', the tick's...) as the task has
 * them, installed again (raw): in a fork child whose actions were cleared at the clone. */
void ulp_trap_own_actions(void);
/* Per worker: alternate signal stack for faults (called on each worker's kernel thread). */
void ulp_trap_worker_init(struct ulp_worker *w);

/* The ULP currently running on this worker, or NULL. */
static inline struct ulp_cb *ulp_current_cb(void)
{
	struct ulp_worker *w = ulp_worker_self();
	struct ulp_task *t = w ? w->cur : NULL;

	return t && t->owner ? (struct ulp_cb *)t->owner : NULL;
}

#endif
