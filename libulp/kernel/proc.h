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
#include "uapi/pvas_cb.h"
#include "ulp_sched.h"

#define ULP_CB_MAGIC PVAS_CB_MAGIC
#define ULP_CB_SIZE (64 * 1024) /* the control block area at offset 0 of a partition */
#define ULP_AT_PVAS_CB PVAS_AT_CB
#define ULP_MAX_EXTENTS 1024		   /* free ranges of the mmap area */
#define ULP_DEFAULT_BASE 0x100000000000ull /* 16 TiB */
#define ULP_DEFAULT_REGION (64ull << 40)   /* 64 TiB */
#define ULP_DEFAULT_PARTITION (4ull << 30) /* 4 GiB */
/* The smallest partition whose layout (ulp_proc_load) leaves room for a program: below S/8 sit
 * the control block and a stack of min(S/8, 8 MiB); at 64 MiB and less nothing is left. */
#define ULP_MIN_PARTITION PVAS_PARTITION_MIN
_Static_assert(ULP_MIN_PARTITION / 8 > ULP_CB_SIZE + (8u << 20) &&
		   ULP_MIN_PARTITION / 16 <= ULP_CB_SIZE + (8u << 20),
	       "ULP_MIN_PARTITION is the smallest power of two with an image area");
#define ULP_MAX_KIDS 256 /* child processes of one ULP not yet waited for */

enum ulp_cb_state {
	ULP_CB_FREE,
	ULP_CB_LOADED,	/* loaded, not started */
	ULP_CB_RUNNING, /* started (ready, running or blocked) */
	ULP_CB_EXITED,	/* ended; status valid; partition kept until reaped */
};

struct pvas_region;

/* Guest ops implemented with the API (api.c) and the name tables (names.c). */
int pvas_guest_exec(struct ulp_cb *cb, int pvid, const char *file, char *const argv[],
		    char *const envp[]);
int pvas_names_barrier(struct ulp_cb *cb, const char *name, int count);

struct ulp_extent {
	uintptr_t lo, hi;
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
	int exit_status; /* exit code, valid when state == EXITED and !term_sig */
	int term_sig;	 /* killed by this signal (0: exited) */
	uintptr_t fault_addr, fault_pc;
	int final;	     /* 1 once the exit path is done with this control block */
	void *ptask;	     /* the PVAS task it runs in (NULL: the launching process) */
	unsigned std_closed; /* fds 0-2 this ULP closed (kept open for the others) */
	int rank;	     /* for the tools: ULP_RANK */
	int nkids;	     /* its child processes not yet waited for (sys_fork.c) */
	int kids[ULP_MAX_KIDS];
	void *user; /* for the owner of the ULP */
	char path[256];
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

/* Partition states: a claimed partition is being loaded and its control block may not be mapped
 * yet; only a ready one may be looked at by others. */
#define PVAS_SLOT_FREE 0
#define PVAS_SLOT_CLAIMED 1
#define PVAS_SLOT_READY 2

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
	uint32_t lock;
	unsigned char *used; /* nparts bytes: PVAS_SLOT_FREE / _CLAIMED / _READY */
	/* What other ULPs may ask of a partition without touching its control block, which may
	 * be unmapped at any moment: started and not ended, and the PVAS task it runs in. */
	unsigned char *running;
	void **slot_task;
	unsigned nused;
	uint32_t names_lock;
	unsigned nnames;
	struct pvas_name *names;    /* PVAS_MAX_NAMES */
	_Atomic uint32_t ended_seq; /* futex: bumped each time a ULP ends */
	uint32_t bar_lock;
	unsigned nbars;
	struct pvas_bar *bars; /* PVAS_MAX_BARRIERS */
	void *owner;	       /* the pvas handle that created it */
	int kfd;	       /* kmod backend: the address-space object's fd, else -1 */
};

static inline int pvas_part_ready(const struct pvas_region *r, int pvid)
{
	return __atomic_load_n(&r->used[pvid], __ATOMIC_ACQUIRE) == PVAS_SLOT_READY;
}

/* Export/import table (names.c). 0 or -errno; callable from ULP context. */
int pvas_names_export(struct pvas_region *r, int pvid, const char *name, uintptr_t addr);
int pvas_names_import(struct pvas_region *r, const char *name, uintptr_t *addr);
void pvas_names_drop(struct pvas_region *r, int pvid);

/* Reserve a region (base/size/part_size 0: defaults). The region and partition sizes are powers of
 * two, partitions >= 16 MiB, base a multiple of the partition size and of 4 GiB. */
int pvas_region_create(struct pvas_region **out, uintptr_t base, size_t size, size_t part_size);
void pvas_region_destroy(struct pvas_region *r);
/* Partition pvid's control block; NULL when pvid is out of range. */
struct ulp_cb *pvas_cb(struct pvas_region *r, int pvid);
/* The ULP whose partition holds addr, or NULL. */
struct ulp_cb *pvas_cb_of_addr(struct pvas_region *r, uintptr_t addr);

/* kmod backend (kmod.c): /dev/pvas claims partitions and loads programs in the kernel. */
int ulp_kmod_open(struct pvas_region *r);
void ulp_kmod_close(struct pvas_region *r);
int ulp_kmod_load(struct ulp_cb *cb, const char *path, char *const argv[], char *const envp[],
		  char *err, size_t errlen);
void ulp_kmod_release(struct ulp_cb *cb);

/* Parse a size such as 4g, 512m (env.c). */
long long ulp_parse_size(const char *s);

/*
 * Load `path` into a free partition (pvid < 0: the lowest free one) as a new ULP, not started.
 * Returns 0 and the control block, or -errno with "path: reason" in err.
 */
int ulp_proc_load(struct pvas_region *r, int pvid, const char *path, char *const argv[],
		  char *const envp[], struct ulp_cb **out, char *err, size_t errlen);
/* Mark a loaded ULP as running in PVAS task `ptask` (NULL: the launching process). */
void ulp_proc_set_running(struct ulp_cb *cb, void *ptask);
/* Hooks for a scheduler instance that runs ULPs started with ulp_proc_start (ulp_rt: set them
 * with ulp_sched_set_hooks before ulp_init): the trap's per-worker set-up, the ULP exit path. */
const struct ulp_sched_hooks *ulp_proc_sched_hooks(void);
/* The exit path of a ULP's task (for a task_exit hook): marks it ended, wakes its waiter, and
 * then stops touching it (the partition may go right after). Drops no scheduler reference. */
void ulp_proc_exited(struct ulp_task *t);
/* Queue a loaded ULP on the scheduler (call from inside the runtime). */
int ulp_proc_start(struct ulp_cb *cb);
/* Wait for the ULP to end (from a runtime thread); the status stays in the control block. */
int ulp_proc_wait(struct ulp_cb *cb);
/* Give the partition back (after it ended, was never started, or its task died). If it ended,
 * wait until its exit path is done with it, unless gone(arg) says the task running it died. */
void ulp_proc_release(struct ulp_cb *cb, int (*gone)(void *arg), void *arg);
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

/* The syscall trap (trap.c): installed once per process, before ULPs run. */
int ulp_trap_install(struct pvas_region *r);
/* In a PVAS task's first thread: re-install the trap's signal handlers (raw). */
void ulp_trap_task_init(void);
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
