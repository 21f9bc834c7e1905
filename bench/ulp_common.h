/* SPDX-License-Identifier: MIT */
/*
 * Shared by the ULP benchmarks (bench/ulp_*.c): a ULP runtime in the benchmark's own process,
 * built on libulp's internal API as ulpexec is (libulp/kernel/proc.h), and a helper process for the
 * process baselines.
 *
 * The helper is forked before the syscall trap is installed, so the processes it starts (fork,
 * posix_spawn) run without the seccomp filter, as they would outside this benchmark; it serves
 * one request at a time over a pipe, so its measurements interleave with the ULP ones.
 */
#ifndef ULP_COMMON_H
#define ULP_COMMON_H

#include <sys/types.h>

#include "proc.h"

/* Reserve the PVAS region, install the syscall trap and start `workers` workers (0: online CPUs);
 * the caller becomes a thread of worker 0. A step that fails makes the benchmark give up. */
void ulpb_runtime_start(const char *prog, unsigned workers);
void ulpb_runtime_stop(void);

/* Path of a file next to this benchmark's executable (the guests live there); never NULL. */
char *ulpb_sibling(const char *prog, const char *name);

/* Load argv[0] as a ULP with our environment plus ULP_RANK/ULP_SIZE and start it. */
struct ulp_cb *ulpb_ulp_start(const char *prog, char *const argv[], int rank, int size);
/* Wait for a started ULP; its exit code (0, status or 128+signal), reported on stderr when not 0.
 * The partition stays taken until ulp_proc_release. */
int ulpb_ulp_wait(const char *prog, struct ulp_cb *cb);
/* ulpb_ulp_wait, then release the partition. */
int ulpb_ulp_reap(const char *prog, struct ulp_cb *cb);

/* Memory figures of /proc/<pid>/status and smaps_rollup (pid 0: this process), in kB: VmRSS,
 * RssAnon, RssFile, VmPTE, Pss, and Private_Clean + Private_Dirty (pages no one else maps).
 * 0 or -errno. */
struct ulpb_mem {
	long rss, anon, file, pte, pss, uss;
};
int ulpb_mem_read(pid_t pid, struct ulpb_mem *m);
/* Kernel memory of the whole system (/proc/meminfo KernelStack + PageTables + SUnreclaim), kB. */
long ulpb_kernel_kb(void);

/* ---- the helper process ---- */

struct ulpb_req {
	int op; /* meaning defined by the benchmark; 0 ends the helper */
	long n, iters;
	char path[512], path2[512];
};

struct ulpb_rep {
	int err; /* 0, or a positive errno value of what failed */
	double v[8];
};

typedef void (*ulpb_serve_fn)(const struct ulpb_req *req, struct ulpb_rep *rep);

/* Fork the helper (before ulpb_runtime_start); it calls serve for each request. */
void ulpb_helper_start(const char *prog, ulpb_serve_fn serve);
/* One request, answered in *rep. */
void ulpb_helper_ask(const char *prog, const struct ulpb_req *req, struct ulpb_rep *rep);
void ulpb_helper_stop(void);

#endif
