/* SPDX-License-Identifier: MIT */
/*
 * ulpexec: run unmodified programs as user-level processes (ULPs) in one address space.
 *
 *   ulpexec [-n N] [-w WORKERS] [--partition-size SIZE] [--] PROG [ARGS...] [: -n M PROG2 ...]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdline.h"
#include "proc.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: ulpexec [-n N] [-w WORKERS] [--partition-size SIZE] [--] PROG [ARGS...]\n"
	    "       ulpexec -n N PROG [ARGS...] : -n M PROG2 [ARGS...] ...\n"
	    "Run N copies of PROG (an unmodified PIE, static-pie or dynamic) as user-level\n"
	    "processes in partitions of one address space, scheduled by WORKERS kernel threads.\n"
	    "  -n N                  copies of the program (default 1)\n"
	    "  -w WORKERS            worker threads (default: ULP_WORKERS, else online CPUs)\n"
	    "  --partition-size SIZE partition size, a power of two >= 128m (default 4g)\n"
	    "  -h, --help            this text\n"
	    "Each ULP gets ULP_RANK (0..total-1) and ULP_SIZE in its environment.\n"
	    "Exit status: 0 when every ULP exits 0, else the first non-zero status by rank\n"
	    "(128+signal for a killed ULP); each failed ULP is reported on stderr.\n");
}

/* Options of one segment; returns the index of PROG. */
struct opts {
	long workers;
	size_t psize;
};

static int parse_segment(int argc, char **argv, struct segment *seg, int first, void *ctx)
{
	struct opts *o = ctx;
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"partition-size", required_argument, NULL, 'P'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	seg->n = 1;
	while ((c = getopt_long(argc, argv, "+hn:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'n':
			seg->n = cmd_count("ulpexec", "-n", optarg, 1 << 20);
			break;
		case 'w':
			if (!first)
				goto global_only;
			o->workers = cmd_count("ulpexec", "-w", optarg, 1024);
			break;
		case 'P':
			if (!first)
				goto global_only;
			o->psize = cmd_partition_size("ulpexec", optarg);
			break;
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind >= argc || !strcmp(argv[optind], ":")) {
		fprintf(stderr, "ulpexec: missing PROG%s\n", first ? "" : " after ':'");
		usage(stderr);
		exit(2);
	}
	return optind;
global_only:
	fprintf(stderr, "ulpexec: -w and --partition-size go before the first program\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct segment segs[64];
	struct opts o = {0, 0};
	int nsegs, i, rc, status = 0;
	long total = 0, rank;
	struct pvas_region *region;
	struct ulp_cb **cbs;
	char err[512];

	nsegs = cmd_split("ulpexec", argc, argv, segs, 64, parse_segment, &o);
	for (i = 0; i < nsegs; i++)
		total += segs[i].n;
	cmd_check_map_count("ulpexec", segs, nsegs);
	rc = pvas_region_create(&region, 0, 0, o.psize);
	if (rc) {
		fprintf(stderr, "ulpexec: reserving the PVAS region: %s\n", strerror(-rc));
		return 1;
	}
	if (total > region->nparts) {
		fprintf(stderr,
			"ulpexec: %ld ULPs do not fit: the address space has %u partitions "
			"of this size\n",
			total, region->nparts);
		return 1;
	}
	ulp_sched_set_hooks(&ulp_rt, ulp_proc_sched_hooks());
	rc = ulp_trap_install(region);
	if (rc) {
		fprintf(stderr, "ulpexec: installing the syscall trap (seccomp): %s\n",
			strerror(-rc));
		return 1;
	}
	rc = ulp_init((unsigned)o.workers);
	if (rc) {
		fprintf(stderr, "ulpexec: starting the workers: %s\n", strerror(-rc));
		return 1;
	}
	cbs = calloc((size_t)total, sizeof(*cbs));
	rank = 0;
	for (i = 0; i < nsegs && !status; i++) {
		long k;

		for (k = 0; k < segs[i].n; k++, rank++) {
			char **env = cmd_rank_env(rank, total, -1);

			rc = env ? ulp_proc_load(region, -1, segs[i].path, segs[i].argv, env,
						 &cbs[rank], err, sizeof(err))
				 : -ENOMEM;
			if (rc) {
				fprintf(stderr, "ulpexec: %s\n", env ? err : "out of memory");
				status = rc == -ENOENT ? 127 : 126;
				break;
			}
			cbs[rank]->rank = (int)rank;
			ulp_proc_start(cbs[rank]);
		}
	}
	for (rank = 0; rank < total && cbs[rank]; rank++) {
		int code;

		ulp_proc_wait(cbs[rank]);
		code = ulp_proc_exit_code(cbs[rank]);
		if (code) {
			char how[256];
			ulp_proc_describe(cbs[rank], how, sizeof(how));
			fprintf(stderr, "ulpexec: rank %ld (%s): %s\n", rank, cbs[rank]->path, how);
			if (!status)
				status = code;
		}
		ulp_proc_release(cbs[rank], NULL, NULL);
	}
	ulp_fini();
	pvas_region_destroy(region);
	return status;
}
