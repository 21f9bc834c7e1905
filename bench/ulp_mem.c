/* SPDX-License-Identifier: MIT */
/*
 * Memory per idle program: N (256) copies of a static-pie hello world (bench/ulp_guest_idle.c)
 * that printed its greeting and now waits for end of file on a pipe,
 *   ulp      as ULPs of this process (one worker; they yield while they wait): VmRSS of this
 *            process with them alive minus VmRSS just before they were loaded, divided by N
 *   process  as processes, started by the helper process (they block in read): the sum of their
 *            VmRSS, divided by N
 * also split into RssAnon and RssFile, with the page tables (VmPTE, not part of VmRSS) beside, and
 * the kernel memory of the whole machine (KernelStack + PageTables + SUnreclaim of /proc/meminfo)
 * before and after: what a process costs the kernel beyond its RSS (noisy: other jobs move it).
 * Their stdout goes to /dev/null.
 */
#include "bench.h"
#include "ulp_common.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "bench/ulp_mem"
#define N_DEFAULT 256
#define REPS 3

enum { ULP, PROC, NIMPL };
enum { RSS, ANON, FILE_, PTE, PSS, USS, KERN, NFIG };
enum { OP_PROCS = 1 };

extern char **environ;

static char *guest;
static struct ulp_cb **cbs;

static void figures(const struct ulpb_mem *m, long kern, double *v)
{
	v[RSS] = (double)m->rss;
	v[ANON] = (double)m->anon;
	v[FILE_] = (double)m->file;
	v[PTE] = (double)m->pte;
	v[PSS] = (double)m->pss;
	v[USS] = (double)m->uss;
	v[KERN] = (double)kern;
}

/* ---- ULPs ---- */

/* v: kB per ULP. */
static void run_ulps(long n, double *v)
{
	char stop_s[16], ready_s[16], c[256];
	char *argv[] = {guest, stop_s, ready_s, NULL};
	int stop[2], ready[2], out, null;
	struct ulpb_mem m0, m1;
	double before[NFIG], after[NFIG];
	long i, got = 0, k0, k1;
	ssize_t k;

	/* The ULPs share our descriptors: the ends they read must not block their worker. */
	if (pipe2(stop, O_CLOEXEC) || pipe2(ready, O_CLOEXEC | O_NONBLOCK) ||
	    fcntl(stop[0], F_SETFL, O_NONBLOCK))
		bench_give_up(PROG, "pipe", errno);
	snprintf(stop_s, sizeof(stop_s), "%d", stop[0]);
	snprintf(ready_s, sizeof(ready_s), "%d", ready[1]);
	fflush(stdout);
	out = dup(1);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (out < 0 || null < 0 || dup2(null, 1) < 0)
		bench_give_up(PROG, "redirecting stdout to /dev/null", errno);

	k0 = ulpb_kernel_kb();
	if (ulpb_mem_read(0, &m0))
		bench_give_up(PROG, "/proc/self/status", errno);
	for (i = 0; i < n; i++)
		cbs[i] = ulpb_ulp_start(PROG, argv, (int)i, (int)n);
	while (got < n) {
		ulp_thread_yield(); /* every ready ULP runs up to its next pvas_yield */
		k = read(ready[0], c, sizeof(c));
		if (k > 0)
			got += k;
	}
	if (ulpb_mem_read(0, &m1))
		bench_give_up(PROG, "/proc/self/status", errno);
	k1 = ulpb_kernel_kb();
	close(stop[1]); /* end of file: they exit */
	for (i = 0; i < n; i++)
		if (ulpb_ulp_reap(PROG, cbs[i]))
			bench_give_up(PROG, "a ULP did not exit 0", EIO);

	dup2(out, 1);
	close(out);
	close(null);
	close(stop[0]);
	close(ready[0]);
	close(ready[1]);
	figures(&m0, k0, before);
	figures(&m1, k1, after);
	for (i = 0; i < NFIG; i++)
		v[i] = (after[i] - before[i]) / (double)n;
}

/* ---- processes, in the helper ---- */

static int move_up(int fd)
{
	int to = fcntl(fd, F_DUPFD_CLOEXEC, 10);

	close(fd);
	return to;
}

static int spawn_idle(long n, pid_t *pids, long *kern_delta, struct ulpb_mem *sum)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {guest, "3", "4", NULL};
	int stop[2], ready[2], rc = 0, null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct ulpb_mem m;
	long i, started, got = 0, k0 = ulpb_kernel_kb();
	char c[256];
	ssize_t k;

	memset(sum, 0, sizeof(*sum));
	*kern_delta = 0;
	if (null < 0 || pipe2(stop, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		return errno;
	/* Never 3 or 4 themselves: dup2 onto the same number would keep close-on-exec. */
	stop[0] = move_up(stop[0]);
	ready[1] = move_up(ready[1]);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, stop[0], 3);
	posix_spawn_file_actions_adddup2(&fa, ready[1], 4);
	posix_spawn_file_actions_adddup2(&fa, null, 1);
	for (started = 0; started < n && !rc; started++)
		rc = posix_spawn(&pids[started], guest, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(ready[1]);
	while (!rc && got < n) {
		k = read(ready[0], c, sizeof(c));
		if (k <= 0)
			rc = EIO;
		got += k;
	}
	for (i = 0; i < started && !rc; i++) {
		rc = -ulpb_mem_read(pids[i], &m);
		sum->rss += m.rss;
		sum->anon += m.anon;
		sum->file += m.file;
		sum->pte += m.pte;
		sum->pss += m.pss;
		sum->uss += m.uss;
	}
	*kern_delta = ulpb_kernel_kb() - k0;
	close(stop[1]);
	for (i = 0; i < started; i++)
		waitpid(pids[i], NULL, 0);
	close(stop[0]);
	close(ready[0]);
	close(null);
	return rc;
}

/* v: kB per process. */
static void serve(const struct ulpb_req *req, struct ulpb_rep *rep)
{
	pid_t *pids = calloc((size_t)req->n, sizeof(pid_t));
	struct ulpb_mem sum;
	long kern;
	int i;

	if (!pids) {
		rep->err = ENOMEM;
		return;
	}
	rep->err = spawn_idle(req->n, pids, &kern, &sum);
	figures(&sum, kern, rep->v);
	for (i = 0; i < NFIG; i++)
		rep->v[i] /= (double)req->n;
	free(pids);
}

static void run_procs(long n, double *v)
{
	struct ulpb_req q = {.op = OP_PROCS, .n = n};
	struct ulpb_rep a;

	ulpb_helper_ask(PROG, &q, &a);
	memcpy(v, a.v, NFIG * sizeof(double));
}

/* ---- driver ---- */

int main(void)
{
	static const char *const fig_names[NFIG] = {"rss", "anon", "file",  "pte",
						    "pss", "uss",  "kernel"};
	const char *s = getenv("BENCH_MEM_N");
	long n = s && atol(s) > 0 && atol(s) <= 4096 ? atol(s) : N_DEFAULT;
	int reps = bench_reps(REPS), r, f;
	double *fig[NIMPL][NFIG], *ratio, *ratio_own, v[NIMPL][NFIG], m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	guest = ulpb_sibling(PROG, "ulp_guest_idle");
	if (access(guest, X_OK))
		bench_give_up(PROG, guest, ENOENT);
	cbs = calloc((size_t)n, sizeof(*cbs));
	ratio = calloc((size_t)reps, sizeof(double));
	ratio_own = calloc((size_t)reps, sizeof(double));
	for (r = 0; r < NIMPL; r++)
		for (f = 0; f < NFIG; f++)
			if (!(fig[r][f] = calloc((size_t)reps, sizeof(double))))
				cbs = NULL;
	if (!cbs || !ratio || !ratio_own)
		bench_give_up(PROG, "calloc", ENOMEM);
	ulpb_helper_start(PROG, serve);
	ulpb_runtime_start(PROG, 1);

	run_ulps(n, v[ULP]); /* warm-up: the runtime's own first allocations */
	for (r = 0; r < reps; r++) {
		run_ulps(n, v[ULP]);
		run_procs(n, v[PROC]);
		for (f = 0; f < NFIG; f++) {
			fig[ULP][f][r] = v[ULP][f];
			fig[PROC][f][r] = v[PROC][f];
		}
		ratio[r] = v[ULP][RSS] / v[PROC][RSS];
		/* What one more costs the machine: pages no one else maps, page tables, kernel. */
		ratio_own[r] = (v[ULP][USS] + v[ULP][PTE] + v[ULP][KERN]) /
			       (v[PROC][USS] + v[PROC][PTE] + v[PROC][KERN]);
	}

	printf("BENCH ulp_mem_env n=%ld reps=%d workers=1 guest=ulp_guest_idle\n", n, reps);
	for (r = 0; r < NIMPL; r++) {
		printf("BENCH ulp_mem impl=%s", r == ULP ? "ulp" : "process");
		for (f = 0; f < NFIG; f++)
			printf(" %s_kb=%.1f", fig_names[f], bench_median(fig[r][f], reps));
		printf("\n");
	}
	m = bench_median(ratio, reps);
	printf("BENCH ulp_mem_target name=ulp_rss_vs_process_rss ratio=%.3f target_max=0.25 met=%s "
	       "uss_pte_kernel_ratio=%.3f\n",
	       m, bench_met(m, 0.25, 1), bench_median(ratio_own, reps));

	ulpb_runtime_stop();
	ulpb_helper_stop();
	return 0;
}
