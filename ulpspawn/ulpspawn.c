/* SPDX-License-Identifier: MIT */
/*
 * ulpspawn: launch N ranks of a program as ULPs spread over PVAS tasks, the way mpiexec launches
 * processes.
 *
 *   ulpspawn -n N [-t TASKS] [-w WORKERS] [--bind CPULIST] [--partition-size SIZE] [--stats]
 *            [--backend user|kmod] [--] PROG [ARGS...] [: -n M PROG2 ...]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdline.h"
#include "pvas.h"

#define MAX_CPUS 1024

struct opts {
	long tasks, workers;
	long long psize;
	int stats;
	int cpus[MAX_CPUS];
	unsigned ncpus;
};

struct rank_info {
	int pvid;
	pid_t task;
	int status, ended;
	struct pvas_ulp_stats st;
};

static volatile sig_atomic_t stop_signal;
static pvd_t the_pvd = -1;

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: ulpspawn -n N [-t TASKS] [-w WORKERS] [--bind CPULIST] [--partition-size "
	       "SIZE]\n"
	       "                [--stats] [--backend user|kmod] [--] PROG [ARGS...] [: -n M PROG2 "
	       "...]\n"
	       "Run N ranks of PROG as user-level processes (ULPs) spread over TASKS PVAS tasks:\n"
	       "kernel-level processes (own PID, own file descriptors) sharing one address space.\n"
	       "  -n N              ranks of this program (default 1)\n"
	       "  -t TASKS          PVAS tasks; ranks are given to them in blocks (default 1)\n"
	       "  -w WORKERS        kernel threads per task (default: online CPUs / TASKS, at "
	       "least 1)\n"
	       "  --bind CPULIST    pin the workers round robin to these CPUs (e.g. 0-3,6)\n"
	       "  --partition-size  partition size, a power of two >= 128m (default 4g)\n"
	       "  --stats           print a table per ULP at the end: task, switches, CPU time, "
	       "status\n"
	       "  --backend NAME    PVAS backend: user or kmod (/dev/pvas); default: kmod when\n"
	       "                    /dev/pvas exists, else user (ULP_BACKEND sets it too);\n"
	       "                    --stats shows the one in use\n"
	       "Each ULP gets ULP_RANK, ULP_SIZE and ULP_TASK. Exit status: 0 when every rank "
	       "exits 0,\n"
	       "else the first non-zero status by rank (128+signal for a killed rank).\n"
	       "SIGINT/SIGTERM end every task.\n");
}

static int parse_segment(int argc, char **argv, struct segment *seg, int first, void *ctx)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"partition-size", required_argument, NULL, 'P'},
	    {"bind", required_argument, NULL, 'B'},
	    {"stats", no_argument, NULL, 'S'},
	    {"backend", required_argument, NULL, 'K'},
	    {NULL, 0, NULL, 0},
	};
	struct opts *o = ctx;
	int c;

	optind = 1;
	seg->n = 1;
	while ((c = getopt_long(argc, argv, "+hn:t:w:", longopts, NULL)) != -1) {
		if (!first && c != 'n' && c != 'h' && c != '?') {
			fprintf(stderr,
				"ulpspawn: only -n may follow ':'; other options go first\n");
			exit(2);
		}
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'n':
			seg->n = cmd_count("ulpspawn", "-n", optarg, 1 << 20);
			break;
		case 't':
			o->tasks = cmd_count("ulpspawn", "-t", optarg, 4096);
			break;
		case 'w':
			o->workers = cmd_count("ulpspawn", "-w", optarg, 256);
			break;
		case 'B':
			o->ncpus = cmd_cpulist("ulpspawn", optarg, o->cpus, MAX_CPUS);
			break;
		case 'S':
			o->stats = 1;
			break;
		case 'K':
			if (strcmp(optarg, "user") && strcmp(optarg, "kmod")) {
				fprintf(stderr, "ulpspawn: --backend: '%s' is not user or kmod\n",
					optarg);
				exit(2);
			}
			setenv("ULP_BACKEND", optarg, 1);
			break;
		case 'P':
			o->psize = (long long)cmd_partition_size("ulpspawn", optarg);
			break;
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ulpspawn: missing PROG%s\n", first ? "" : " after ':'");
		usage(stderr);
		exit(2);
	}
	return optind;
}

/* The rank of an ended ULP. pvas_spawn returns the task, not the pvid, so the first rank of a
 * task is recorded as -2 and recognised by its task. */
static long find_rank(const struct rank_info *ri, long total, int pvid, pid_t task)
{
	long r;

	for (r = 0; r < total; r++)
		if (ri[r].pvid == pvid)
			return r;
	for (r = 0; r < total; r++)
		if (ri[r].pvid == -2 && ri[r].task == task)
			return r;
	return -1;
}

static void on_signal(int sig)
{
	stop_signal = sig;
	if (the_pvd >= 0)
		pvas_kill(the_pvd, SIGKILL); /* kill(2) only: async-signal-safe */
}

static void print_stats(const struct rank_info *ri, long total)
{
	long r;

	printf("ulpspawn: backend %s\n",
	       pvas_backend(the_pvd) == PVAS_BACKEND_KMOD ? "kmod" : "user");
	printf("%-6s %-5s %-8s %-10s %-12s %-8s %s\n", "rank", "pvid", "task", "switches", "cpu_ms",
	       "status", "program");
	for (r = 0; r < total; r++) {
		const struct rank_info *x = &ri[r];
		char st[32];

		if (!x->ended)
			snprintf(st, sizeof(st), "-");
		else if (WIFSIGNALED(x->status))
			snprintf(st, sizeof(st), "SIG%s", sigabbrev_np(WTERMSIG(x->status)) ?: "?");
		else
			snprintf(st, sizeof(st), "%d", WEXITSTATUS(x->status));
		printf("%-6ld %-5d %-8d %-10llu %-12.3f %-8s %s\n", r, x->pvid, (int)x->task,
		       (unsigned long long)x->st.switches, x->st.cpu_ns / 1e6, st, x->st.path);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	struct segment segs[64];
	struct pvas_attr pattr = {0};
	struct pvas_task_attr tattr = {0};
	struct rank_info *ri;
	struct sigaction sa;
	pid_t *tasks;
	long total = 0, r, k, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nsegs, i, rc, status = 0, failed_load = 0;

	memset(&o, 0, sizeof(o));
	o.tasks = 1;
	nsegs = cmd_split("ulpspawn", argc, argv, segs, 64, parse_segment, &o);
	for (i = 0; i < nsegs; i++)
		total += segs[i].n;
	cmd_check_map_count("ulpspawn", segs, nsegs);
	if (o.tasks > total) {
		fprintf(stderr, "ulpspawn: -t %ld: more tasks than the %ld ranks\n", o.tasks,
			total);
		return 2;
	}
	if (!o.workers)
		o.workers = cpus / o.tasks > 0 ? cpus / o.tasks : 1;
	pattr.partition_size = (size_t)o.psize;
	rc = pvas_create_attr(&the_pvd, &pattr);
	if (rc) {
		fprintf(stderr, "ulpspawn: %s\n", pvas_errmsg());
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ri = calloc((size_t)total, sizeof(*ri));
	tasks = calloc((size_t)o.tasks, sizeof(*tasks));
	tattr.workers = (unsigned)o.workers;
	tattr.accounting = o.stats;
	tattr.hold = 1; /* a task must not end before all its ranks are in */
	for (r = 0; r < total; r++)
		ri[r].pvid = -1;
	/* Ranks in blocks: task k gets ranks [k*total/tasks, (k+1)*total/tasks). */
	for (k = 0, r = 0, i = 0; r < total && !stop_signal; r++) {
		long seg_first = 0, s = 0, task = r * o.tasks / total;
		char **env = cmd_rank_env(r, total, task);
		struct segment *sg;

		while (r >= seg_first + segs[s].n)
			seg_first += segs[s++].n;
		sg = &segs[s];
		if (!env) {
			fprintf(stderr, "ulpspawn: out of memory\n");
			failed_load = 1;
			break;
		}
		if (task == k) { /* first rank of a new task */
			if (o.ncpus) {
				/* tasks take consecutive runs of the CPU list */
				static int shifted[MAX_CPUS];
				unsigned c;

				for (c = 0; c < o.ncpus; c++)
					shifted[c] =
					    o.cpus[(c + (unsigned)(k * o.workers)) % o.ncpus];
				tattr.cpus = shifted;
				tattr.ncpus = o.ncpus;
			}
			rc = pvas_spawn_attr(the_pvd, -1, sg->path, sg->argv, env, &tattr);
			if (rc > 0)
				tasks[k++] = rc;
		} else {
			rc = pvas_task_exec(the_pvd, tasks[task], -1, sg->path, sg->argv, env);
		}
		if (rc < 0) {
			fprintf(stderr, "ulpspawn: rank %ld: %s\n", r, pvas_errmsg());
			failed_load = rc == -ENOENT ? 127 : 126; /* as ulpexec and a shell */
			break;
		}
		ri[r].pvid = task == k - 1 && rc == tasks[task] ? -2 : rc; /* see find_rank */
		ri[r].task = tasks[task];
	}
	for (i = 0; i < k; i++)
		pvas_task_release(the_pvd, tasks[i]);

	for (;;) {
		struct pvas_ulp_stats st;
		int pvid = pvas_wait_stats(the_pvd, -1, &rc, &st);
		long x = find_rank(ri, total, pvid, st.task);

		if (pvid < 0)
			break;
		if (x < 0)
			continue;
		ri[x].pvid = pvid;
		ri[x].ended = 1;
		ri[x].status = rc;
		ri[x].st = st;
	}
	for (r = 0; r < total; r++) {
		int code;

		if (!ri[r].ended)
			continue;
		code = WIFSIGNALED(ri[r].status) ? 128 + WTERMSIG(ri[r].status)
						 : WEXITSTATUS(ri[r].status);
		if (code) {
			if (WIFSIGNALED(ri[r].status))
				fprintf(stderr,
					"ulpspawn: rank %ld (%s, task %d): killed by SIG%s\n", r,
					ri[r].st.path, (int)ri[r].task,
					sigabbrev_np(WTERMSIG(ri[r].status)) ?: "?");
			else
				fprintf(stderr,
					"ulpspawn: rank %ld (%s, task %d): exited with "
					"status %d\n",
					r, ri[r].st.path, (int)ri[r].task, code);
			if (!status)
				status = code;
		}
	}
	if (o.stats)
		print_stats(ri, total);
	for (i = 0; i < k; i++)
		pvas_task_wait(the_pvd, tasks[i], NULL);
	pvas_destroy(the_pvd);
	if (stop_signal)
		return 128 + stop_signal;
	if (failed_load && !status)
		status = failed_load;
	return status;
}
