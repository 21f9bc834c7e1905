/* SPDX-License-Identifier: MIT */
/*
 * ulpexec: run unmodified programs as user-level processes (ULPs) in one address space, all in
 * one PVAS task (one kernel-level process beside the launcher) scheduled by WORKERS threads.
 * The command line is parsed here; the job runs in launch/job.c over include/pvas.h.
 *
 *   ulpexec [-n N] [-w WORKERS] [--partition-size SIZE] [--] PROG [ARGS...] [: -n M PROG2 ...]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "job.h"
#include "ulp.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: ulpexec [-n N] [-w WORKERS] [--partition-size SIZE] [--] PROG [ARGS...]\n"
	    "       ulpexec -n N PROG [ARGS...] : -n M PROG2 [ARGS...] ...\n"
	    "Run N copies of PROG (an unmodified PIE, static-pie or dynamic) as user-level\n"
	    "processes in partitions of one address space, scheduled by WORKERS kernel threads.\n"
	    "  -n N                  copies of the program (default 1)\n"
	    "  -w WORKERS            worker threads (default: ULP_WORKERS, else usable CPUs)\n"
	    "  --partition-size SIZE partition size, a power of two >= 128m (default 4g)\n"
	    "  --quantum US          preempt a ULP that ran US microseconds without yielding or\n"
	    "                        blocking (default 1000; 0: never; ULP_QUANTUM_US sets it "
	    "too)\n"
	    "  --no-fallback         refuse a non-PIE program (exit 126) instead of running its\n"
	    "                        copies as ordinary processes beside the ULPs\n"
	    "  -h, --help            this text\n"
	    "Each ULP gets ULP_RANK (0..total-1) and ULP_SIZE in its environment.\n"
	    "Exit status: 0 when every ULP exits 0, else the first non-zero status by rank\n"
	    "(128+signal for a killed ULP); each failed ULP is reported on stderr. A job of\n"
	    "one ULP killed by a signal, or one ended by SIGINT/SIGTERM/SIGHUP, ends ulpexec by\n"
	    "that signal.\n"
	    "127: a program is missing, 126: it cannot run.\n"
	    "Standard input is rank 0's; the other ULPs read /dev/null.\n");
}

static int parse_segment(int argc, char **argv, struct segment *seg, int first, void *ctx)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"partition-size", required_argument, NULL, 'P'},
	    {"quantum", required_argument, NULL, 'Q'},
	    {"no-fallback", no_argument, NULL, 'F'},
	    {NULL, 0, NULL, 0},
	};
	struct job_opts *o = ctx;
	int c;

	optind = 1;
	seg->n = 1;
	while ((c = getopt_long(argc, argv, "+hn:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (!first)
				goto global_only;
			o->workers = cmd_count("ulpexec", "-w", optarg, 256);
			break;
		case 'P':
			if (!first)
				goto global_only;
			o->psize = cmd_partition_size("ulpexec", optarg);
			break;
		case 'Q':
			if (!first)
				goto global_only;
			cmd_quantum("ulpexec", optarg);
			break;
		case 'F':
			if (!first)
				goto global_only;
			o->no_fallback = 1;
			break;
		default: /* -h, -n, or bad usage */
			cmd_segment_opt("ulpexec", c, seg, usage);
		}
	}
	return cmd_segment_prog("ulpexec", argc, optind, first, usage);
global_only:
	fprintf(stderr,
		"ulpexec: -w, --partition-size, --quantum and --no-fallback go before the first "
		"program\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct job_opts o;
	struct segment segs[64];
	const char *w = getenv("ULP_WORKERS");
	int nsegs, rc;

	o.tool = "ulpexec";
	o.tasks = 1;
	o.keep_going = 1; /* ULPs end alone; the others finish */
	nsegs = cmd_split("ulpexec", argc, argv, segs, 64, parse_segment, &o);
	cmd_check_map_count("ulpexec", segs, nsegs);
	if (!o.workers && w && *w)
		o.workers = cmd_count("ulpexec", "ULP_WORKERS", w, 256);
	if (!o.workers)
		o.workers = ulp_cpus();
	rc = job_run(&o, segs, nsegs);
	cmd_free_segments(segs, nsegs);
	return job_exit(&o, rc);
}
