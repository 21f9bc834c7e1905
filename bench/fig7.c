/* SPDX-License-Identifier: MIT */
/*
 * The User-level Process paper's Fig. 7: time of one context switch among P "processes" that all
 * run on ONE CPU, P = 2, 4, ..., 1024, each switching away 1000 times:
 *   procs           P kernel processes calling sched_yield
 *   threads         P kernel threads of one process calling sched_yield
 *   ult             P ulp threads on one worker calling ulp_thread_yield
 *   ulp_arch_prctl  P ULPs of bench/fig7_guest.c on one worker calling pvas_yield, the TLS
 *                   register written by arch_prctl (forced, the PiP way; on a kernel without
 *                   FSGSBASE support this is also libulp's own way)
 *   ulp_wrfsbase    the same with wrfsbase: only where the kernel supports FSGSBASE, or, as
 *                   ulp_wrfsbase_unsafe, when BENCH_ULP_UNSAFE_WRFSBASE=1 forces it where it
 *                   does not (see bench/README.md: it usually crashes there)
 * Everything runs in one run, pinned to one CPU (bench_cpu()); the variants of each P run one
 * after the other, repetition after repetition (BENCH_REPS, default 3); medians are reported.
 *
 * Time per switch = (end - start) / (P * switches), start and end taken where all P have met at
 * a barrier; the yields of one run are the only switches in between. For the kernel variants,
 * csw_per_yield = context switches the kernel counted during the yield loops / yields: 1.00 says
 * every sched_yield did switch.
 *
 * Bounded time: a kernel or ULP switch costs microseconds on the development VM, so P * 1000 of
 * them at P = 1024 would take seconds per point. The slow variants (all but ult) make
 * min(FIG7_SWITCHES, FIG7_BUDGET / P) switches each (defaults 1000 and 65536: 1000 up to
 * P = 64, then 512, 256, 128, 64); the lines say switches_each. FIG7_PMAX (default 1024) caps P.
 *
 * The process and thread variants run in a helper process forked before the syscall trap is
 * installed (bench/ulp_common.h), so they run without the seccomp filter.
 *
 * fig7_cost lines give what explains the numbers on a given machine, measured first (pinned, no
 * seccomp filter yet): a system call (getppid), arch_prctl(ARCH_SET_FS) (how ULP switches load
 * the TLS register without FSGSBASE), a page fault, and a page fault that also needs a new
 * page-table page.
 */
#include "bench.h"
#include "ulp.h"
#include "ulp_common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "bench/fig7"
#define REPS 3
#define MAX_POINTS 16

enum { PROCS, THREADS, ULT, ULP_PRCTL, ULP_WRFS, NIMPL };
enum { OP_PROCS = 1, OP_THREADS };

static const char *impl_name[NIMPL] = {"procs", "threads", "ult", "ulp_arch_prctl", "ulp_wrfsbase"};

static char *guest;
static int res_rd, res_wr;

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	long v = s && *s ? atol(s) : def;

	return v >= lo && v <= hi ? v : def;
}

/* ---- kernel processes and threads (in the helper) ---- */

/* Where the P members meet twice; the last to arrive takes the time and wakes the others. In a
 * MAP_SHARED page for processes, hence the non-private futex operations. */
struct meet {
	_Atomic int arrived[2];
	uint32_t go[2];
	uint64_t t[2];
	_Atomic long csw;
	int count;
	long yields;
};

static void futex(uint32_t *addr, int op, uint32_t val)
{
	syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static void meet_at(struct meet *m, int which)
{
	if (atomic_fetch_add(&m->arrived[which], 1) + 1 == m->count) {
		m->t[which] = bench_now_ns();
		__atomic_store_n(&m->go[which], 1, __ATOMIC_RELEASE);
		futex(&m->go[which], FUTEX_WAKE, INT_MAX);
		return;
	}
	while (!__atomic_load_n(&m->go[which], __ATOMIC_ACQUIRE))
		futex(&m->go[which], FUTEX_WAIT, 0);
}

static long switches_counted(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void member(struct meet *m, int who)
{
	long i, c0;

	meet_at(m, 0);
	c0 = switches_counted(who);
	for (i = 0; i < m->yields; i++)
		sched_yield();
	atomic_fetch_add(&m->csw, switches_counted(who) - c0);
	meet_at(m, 1);
}

static void *thread_member(void *arg)
{
	member(arg, RUSAGE_THREAD);
	return NULL;
}

/* P processes or threads, each making `yields` sched_yield calls: ns per switch in v[0],
 * counted context switches per yield in v[1]. */
static void kernel_run(const struct ulpb_req *req, struct ulpb_rep *rep)
{
	struct meet *m =
	    mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_t *th = NULL;
	pthread_attr_t attr;
	long i, started = 0;
	pid_t pid;

	if (m == MAP_FAILED) {
		rep->err = errno;
		return;
	}
	m->count = (int)req->n;
	m->yields = req->iters;
	if (req->op == OP_THREADS) {
		th = calloc((size_t)req->n, sizeof(*th));
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
	}
	for (i = 0; i < req->n && !rep->err; i++) {
		if (req->op == OP_THREADS) {
			rep->err = th ? pthread_create(&th[i], &attr, thread_member, m) : ENOMEM;
		} else {
			pid = fork();
			if (pid == 0) {
				member(m, RUSAGE_SELF);
				_exit(0);
			}
			if (pid < 0)
				rep->err = errno;
		}
		started += !rep->err;
	}
	if (rep->err) { /* let those started run through: they would wait for `count` members */
		for (i = 0; i < 2; i++) {
			__atomic_store_n(&m->go[i], 1, __ATOMIC_RELEASE);
			futex(&m->go[i], FUTEX_WAKE, INT_MAX);
		}
	}
	for (i = 0; i < started; i++) {
		if (req->op == OP_THREADS)
			pthread_join(th[i], NULL);
		else
			wait(NULL);
	}
	if (req->op == OP_THREADS) {
		pthread_attr_destroy(&attr);
		free(th);
	}
	rep->v[0] = (double)(m->t[1] - m->t[0]) / (double)(req->n * req->iters);
	rep->v[1] = (double)atomic_load(&m->csw) / (double)(req->n * req->iters);
	munmap(m, sizeof(*m));
}

/* ---- ulp threads (in this process: one worker, the pinned caller) ---- */

struct ult_run {
	ulp_barrier_t start, end;
	long yields;
	uint64_t t0, t1;
};

static void *ult_member(void *arg)
{
	struct ult_run *u = arg;
	long i;

	if (ulp_barrier_wait(&u->start) == ULP_BARRIER_SERIAL_THREAD)
		u->t0 = bench_now_ns();
	for (i = 0; i < u->yields; i++)
		ulp_thread_yield();
	if (ulp_barrier_wait(&u->end) == ULP_BARRIER_SERIAL_THREAD)
		u->t1 = bench_now_ns();
	return NULL;
}

static double ult_run(int p, long yields)
{
	ulp_thread_t *t = calloc((size_t)p, sizeof(*t));
	struct ult_run u = {.yields = yields};
	int i, rc;

	if (!t)
		bench_give_up(PROG, "calloc", ENOMEM);
	ulp_barrier_init(&u.start, (unsigned)p);
	ulp_barrier_init(&u.end, (unsigned)p);
	/* The caller is the ulp_init thread: help-first, so all P are queued before any runs. */
	for (i = 0; i < p; i++) {
		rc = ulp_thread_create(&t[i], ult_member, &u);
		if (rc)
			bench_give_up(PROG, "ulp_thread_create", -rc);
	}
	for (i = 0; i < p; i++)
		ulp_thread_join(t[i], NULL);
	ulp_barrier_destroy(&u.start);
	ulp_barrier_destroy(&u.end);
	free(t);
	return (double)(u.t1 - u.t0) / ((double)p * (double)yields);
}

/* ---- ULPs ---- */

enum { TLS_SYSCALL, TLS_WRFSBASE };

static double ulp_run(int p, long yields, int tls)
{
	char it[32], fd[16], buf[256], *line;
	char *argv[] = {guest, it, fd, NULL};
	struct ulp_cb **cb = calloc((size_t)p, sizeof(*cb));
	unsigned long long t[2] = {0, 0}, v;
	int i, which, bad = 0;
	ssize_t n;

	if (!cb)
		bench_give_up(PROG, "calloc", ENOMEM);
	snprintf(it, sizeof(it), "%ld", yields);
	snprintf(fd, sizeof(fd), "%d", res_wr);
	ulp_arch_tls_force_syscall(tls == TLS_SYSCALL);
	/* wrfsbase: what AT_HWCAP2 said, or forced by BENCH_ULP_UNSAFE_WRFSBASE */
	if (tls == TLS_WRFSBASE)
		ulp_x86_fsgsbase = 1;
	/* Loaded and queued by the pinned ulp_init thread: none runs before this one waits. */
	for (i = 0; i < p; i++)
		cb[i] = ulpb_ulp_start(PROG, argv, i, p);
	for (i = 0; i < p; i++)
		bad |= ulpb_ulp_reap(PROG, cb[i]);
	ulp_arch_tls_force_syscall(0);
	free(cb);
	n = read(res_rd, buf, sizeof(buf) - 1);
	if (bad || n <= 0)
		bench_give_up(PROG, "the fig7 guests did not report", EIO);
	buf[n] = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (sscanf(line, "%d %llu", &which, &v) == 2 && (which == 0 || which == 1))
			t[which] = v;
	if (!t[0] || t[1] < t[0])
		bench_give_up(PROG, "the fig7 guests' times", EIO);
	return (double)(t[1] - t[0]) / ((double)p * (double)yields);
}

/* ---- what kernel entries cost on this machine, to read the numbers above ---- */

enum { C_SYSCALL, C_PRCTL, C_FAULT, C_PTPAGE, NCOST };
static const char *cost_name[NCOST] = {"syscall", "arch_prctl_set_fs", "page_fault",
				       "page_fault_new_page_table"};

/* One sample of cost k: ns per operation. */
static double cost_sample(int k)
{
	const long n = k == C_SYSCALL ? 2000 : k == C_PRCTL ? 500 : 512;
	/* faults: 512 pages in one 2 MiB range (one page-table page for all), or one page in
	 * each of 512 ranges of 2 MiB (a new page-table page for each) */
	const size_t step = k == C_PTPAGE ? 2u << 20 : 4096, len = (size_t)n * step;
	unsigned long fs = 0;
	char *base = NULL, *p = NULL;
	uint64_t t0;
	long i;

	if (k == C_PRCTL)
		syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fs);
	if (k == C_FAULT || k == C_PTPAGE) {
		/* 2 MiB aligned, no transparent huge pages: one fault per touched 4 KiB page */
		base = mmap(NULL, len + (2u << 20), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED)
			return 0;
		madvise(base, len + (2u << 20), MADV_NOHUGEPAGE);
		p = (char *)(((uintptr_t)base + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
	}
	t0 = bench_now_ns();
	for (i = 0; i < n; i++) {
		if (k == C_SYSCALL)
			syscall(SYS_getppid);
		else if (k == C_PRCTL)
			syscall(SYS_arch_prctl, 0x1002 /* ARCH_SET_FS: the value it holds */, fs);
		else
			((volatile char *)p)[(size_t)i * step] = 1;
	}
	t0 = bench_now_ns() - t0;
	if (base)
		munmap(base, len + (2u << 20));
	return (double)t0 / (double)n;
}

/* Before the trap is installed: plain kernel entries, no seccomp filter on the way. */
static void print_costs(void)
{
	double v[7];
	int k, r;

	for (k = 0; k < NCOST; k++) {
		for (r = 0; r < 7; r++)
			v[r] = cost_sample(k);
		printf("BENCH fig7_cost op=%s ns=%.0f min_ns=%.0f\n", cost_name[k],
		       bench_median(v, 7), bench_min(v, 7));
	}
}

static void serve(const struct ulpb_req *req, struct ulpb_rep *rep)
{
	kernel_run(req, rep);
}

int main(void)
{
	int reps = bench_reps(REPS), cpu = bench_cpu(), np = 0, r, k, i, rc, fds[2];
	long pmax = env_long("FIG7_PMAX", 1024, 2, 65536);
	long sw = env_long("FIG7_SWITCHES", 1000, 1, 100000000);
	long budget = env_long("FIG7_BUDGET", 65536, 1, 1L << 40);
	int run[NIMPL] = {1, 1, 1, 1, 0};
	int pts[MAX_POINTS], unsafe_wrfs;
	long each[NIMPL][MAX_POINTS];
	double *ns[NIMPL][MAX_POINTS], csw[NIMPL][MAX_POINTS];
	const char *wrfs_how;
	struct ulpb_req q;
	struct ulpb_rep a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 2; i <= pmax && np < MAX_POINTS; i *= 2)
		pts[np++] = i;
	rc = bench_pin(cpu);
	if (rc)
		bench_give_up(PROG, "sched_setaffinity to BENCH_CPU", -rc);
	print_costs();
	ulpb_helper_start(PROG, serve);
	ulpb_runtime_start(PROG, 1);
	guest = ulpb_sibling(PROG, "fig7_guest");
	if (access(guest, X_OK))
		bench_give_up(PROG, guest, errno);
	if (pipe2(fds, O_NONBLOCK))
		bench_give_up(PROG, "pipe", errno);
	res_rd = fds[0];
	res_wr = fds[1];

	unsafe_wrfs = getenv("BENCH_ULP_UNSAFE_WRFSBASE") &&
		      !strcmp(getenv("BENCH_ULP_UNSAFE_WRFSBASE"), "1") && ulp_x86_rdbase;
	if (!strcmp(ulp_arch_tls_method(), "wrfsbase")) {
		run[ULP_WRFS] = 1;
		wrfs_how = "native";
	} else if (unsafe_wrfs) {
		run[ULP_WRFS] = 1;
		impl_name[ULP_WRFS] = "ulp_wrfsbase_unsafe";
		wrfs_how = "unsafe";
	} else {
		wrfs_how = "skipped";
		fprintf(stderr,
			"%s: ulp_wrfsbase skipped: the kernel does not support FSGSBASE "
			"(BENCH_ULP_UNSAFE_WRFSBASE=1 forces it, unsafely)\n",
			PROG);
	}
	for (k = 0; k < NIMPL; k++)
		for (i = 0; i < np; i++) {
			ns[k][i] = calloc((size_t)reps, sizeof(double));
			if (!ns[k][i])
				bench_give_up(PROG, "calloc", ENOMEM);
			csw[k][i] = 0;
			each[k][i] = k == ULT ? sw : sw < budget / pts[i] ? sw : budget / pts[i];
			if (each[k][i] < 1)
				each[k][i] = 1;
		}
	printf("BENCH fig7_env cpu=%d reps=%d pmax=%ld switches=%ld budget=%ld tls_method=%s "
	       "wrfsbase=%s\n",
	       cpu, reps, pmax, sw, budget, ulp_arch_tls_method(), wrfs_how);
	for (r = 0; r < reps; r++)
		for (i = 0; i < np; i++)
			for (k = 0; k < NIMPL; k++) {
				if (!run[k])
					continue;
				switch (k) {
				case PROCS:
				case THREADS:
					memset(&q, 0, sizeof(q));
					q.op = k == PROCS ? OP_PROCS : OP_THREADS;
					q.n = pts[i];
					q.iters = each[k][i];
					ulpb_helper_ask(PROG, &q, &a);
					ns[k][i][r] = a.v[0];
					csw[k][i] += a.v[1] / reps;
					break;
				case ULT:
					ns[k][i][r] = ult_run(pts[i], each[k][i]);
					break;
				default:
					ns[k][i][r] =
					    ulp_run(pts[i], each[k][i],
						    k == ULP_PRCTL ? TLS_SYSCALL : TLS_WRFSBASE);
				}
			}
	ulpb_helper_stop();
	for (i = 0; i < np; i++)
		for (k = 0; k < NIMPL; k++) {
			if (!run[k])
				continue;
			printf("BENCH fig7 impl=%s P=%d switches_each=%ld ns=%.1f min_ns=%.1f "
			       "max_ns=%.1f",
			       impl_name[k], pts[i], each[k][i], bench_median(ns[k][i], reps),
			       bench_min(ns[k][i], reps), bench_max(ns[k][i], reps));
			if (k == PROCS || k == THREADS)
				printf(" csw_per_yield=%.2f", csw[k][i]);
			printf("\n");
		}
	ulpb_runtime_stop();
	return 0;
}
