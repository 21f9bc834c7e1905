/* SPDX-License-Identifier: MIT */
/*
 * ulpspawn: launch N ranks of a program as ULPs spread over PVAS tasks, the way mpiexec launches
 * processes. The command line is parsed here; the job runs in launch/job.c over include/pvas.h.
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
	    "usage: ulpspawn -n N [-t TASKS] [-w WORKERS] [OPTIONS] [--] PROG [ARGS...]\n"
	    "       ulpspawn [OPTIONS] -n N PROG [ARGS...] : -n M PROG2 [ARGS...] ...\n"
	    "Run N ranks of PROG as user-level processes (ULPs) spread over TASKS PVAS tasks:\n"
	    "kernel-level processes (own PID, own file descriptors) sharing one address space.\n"
	    "  -n N                  ranks of this program (default 1)\n"
	    "  -t TASKS              PVAS tasks; ranks are given to them in blocks (default 1;\n"
	    "                        with -l or --output-filename: one per rank; an MPI job\n"
	    "                        without -t and -w: one per usable CPU, of one worker each)\n"
	    "  -w WORKERS            kernel threads per task (default: usable CPUs / TASKS, at "
	    "least 1)\n"
	    "  --bind CPULIST        pin the workers round robin to these CPUs (e.g. 0-3,6)\n"
	    "  --partition-size SIZE partition size, a power of two >= 128m (default 4g)\n"
	    "  --quantum US          preempt a ULP that ran US microseconds without yielding or\n"
	    "                        blocking (default 1000; 0: never; ULP_QUANTUM_US sets it "
	    "too)\n"
	    "  --stats               print a table per ULP at the end: task, switches, CPU time, "
	    "status\n"
	    "  --backend NAME        PVAS backend: user or kmod (/dev/pvas); default: kmod when\n"
	    "                        /dev/pvas exists, else user (ULP_BACKEND sets it too)\n"
	    "  -l, --tag-output      prefix each line of output with \"[RANK] \"; lines of\n"
	    "                        different ranks never mix\n"
	    "  --output-filename DIR rank R's output in DIR/R/stdout and DIR/R/stderr\n"
	    "  -genv NAME VALUE      set NAME=VALUE in every rank's environment\n"
	    "  -x NAME[=VALUE]       the same; NAME alone passes on our value of NAME\n"
	    "  --wdir DIR            the ranks' working directory\n"
	    "  --keep-going          when a rank is killed by a signal, let the others finish\n"
	    "                        (default: end the job at once, as mpiexec does)\n"
	    "  --pmi                 serve PMI-1 (PMI_FD...) to the ranks: MPICH programs;\n"
	    "                        MPI_Abort, or a rank ending before MPI_Finalize, ends the "
	    "job;\n"
	    "                        the default when a program links MPICH (ULP_PMI=1 or 0\n"
	    "                        decides otherwise)\n"
	    "  --no-pmi              no PMI server, even for an MPI program\n"
	    "  --no-fallback         refuse a non-PIE program (exit 126) instead of running its\n"
	    "                        ranks as ordinary processes in the job\n"
	    "  -h, --help            this text\n"
	    "Each ULP gets ULP_RANK, ULP_SIZE and ULP_TASK. Exit status: 0 when every rank exits\n"
	    "0, else the first non-zero status by rank (128+signal for a killed rank, the one "
	    "that\n"
	    "ended the job when it was aborted); 127: a program is missing, 126: it cannot run.\n"
	    "SIGUSR1/SIGUSR2 and the first SIGINT/SIGTERM go on to every rank; a second\n"
	    "SIGINT/SIGTERM, or SIGHUP, ends every task (status 128+signal). A job of one rank\n"
	    "killed by a signal, or one ended by SIGINT/SIGTERM/SIGHUP, ends ulpspawn by that\n"
	    "signal.\n"
	    "Standard input is rank 0's; the other ranks read /dev/null.\n");
}

static int tasks_given, workers_given;

static int parse_segment(int argc, char **argv, struct segment *seg, int first, void *ctx)
{
	enum {
		O_PSIZE = 256,
		O_BIND,
		O_STATS,
		O_BACKEND,
		O_OUTDIR,
		O_WDIR,
		O_KEEP,
		O_PMI,
		O_NOPMI,
		O_QUANTUM,
		O_NOFB
	};
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"partition-size", required_argument, NULL, O_PSIZE},
	    {"bind", required_argument, NULL, O_BIND},
	    {"stats", no_argument, NULL, O_STATS},
	    {"backend", required_argument, NULL, O_BACKEND},
	    {"tag-output", no_argument, NULL, 'l'},
	    {"output-filename", required_argument, NULL, O_OUTDIR},
	    {"wdir", required_argument, NULL, O_WDIR},
	    {"keep-going", no_argument, NULL, O_KEEP},
	    {"pmi", no_argument, NULL, O_PMI},
	    {"no-pmi", no_argument, NULL, O_NOPMI},
	    {"quantum", required_argument, NULL, O_QUANTUM},
	    {"no-fallback", no_argument, NULL, O_NOFB},
	    {NULL, 0, NULL, 0},
	};
	struct job_opts *o = ctx;
	int c;

	optind = 1;
	seg->n = 1;
	for (;;) {
		/* -genv NAME VALUE (MPICH's spelling, one dash, two arguments) */
		int genv = optind < argc &&
			   (!strcmp(argv[optind], "-genv") || !strcmp(argv[optind], "--genv"));

		if (genv && optind + 2 < argc) {
			if (!first)
				goto global_only;
			if (job_setenv(o, argv[optind + 1], argv[optind + 2]))
				exit(2);
			optind += 3;
			continue;
		}
		if (genv) {
			fprintf(stderr, "ulpspawn: -genv needs NAME and VALUE\n");
			exit(2);
		}
		c = getopt_long(argc, argv, "+hn:t:w:lx:", longopts, NULL);
		if (c == -1)
			break;
		if (!first && c != 'n' && c != 'h' && c != '?')
			goto global_only;
		switch (c) {
		case 't':
			o->tasks = cmd_count("ulpspawn", "-t", optarg, 1 << 20);
			tasks_given = 1;
			break;
		case 'w':
			o->workers = cmd_count("ulpspawn", "-w", optarg, 256);
			workers_given = 1;
			break;
		case 'l':
			o->tag = 1;
			break;
		case 'x': {
			char *eq = strchr(optarg, '=');

			if (eq)
				*eq = 0;
			if (job_setenv(o, optarg, eq ? eq + 1 : NULL))
				exit(2);
			break;
		}
		case O_BIND:
			o->ncpus = cmd_cpulist("ulpspawn", optarg, o->cpus, JOB_MAX_CPUS);
			break;
		case O_STATS:
			o->stats = 1;
			break;
		case O_OUTDIR:
			o->outdir = optarg;
			break;
		case O_WDIR:
			o->wdir = optarg;
			break;
		case O_KEEP:
			o->keep_going = 1;
			break;
		case O_PMI:
			o->pmi = 1;
			break;
		case O_NOPMI:
			o->pmi = -1;
			break;
		case O_QUANTUM:
			cmd_quantum("ulpspawn", optarg);
			break;
		case O_NOFB:
			o->no_fallback = 1;
			break;
		case O_BACKEND:
			if (strcmp(optarg, "user") && strcmp(optarg, "kmod")) {
				fprintf(stderr, "ulpspawn: --backend: '%s' is not user or kmod\n",
					optarg);
				exit(2);
			}
			setenv("ULP_BACKEND", optarg, 1);
			break;
		case O_PSIZE:
			o->psize = cmd_partition_size("ulpspawn", optarg);
			break;
		default: /* -h, -n, or bad usage */
			cmd_segment_opt("ulpspawn", c, seg, usage);
		}
	}
	return cmd_segment_prog("ulpspawn", argc, optind, first, usage);
global_only:
	fprintf(stderr, "ulpspawn: only -n may follow ':'; other options go first\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct job_opts o;
	struct segment segs[64];
	long total = 0, cpus = ulp_cpus();
	int nsegs, i, rc;

	o.tool = "ulpspawn";
	o.tasks = 1;
	o.task_env = 1;
	nsegs = cmd_split("ulpspawn", argc, argv, segs, 64, parse_segment, &o);
	for (i = 0; i < nsegs; i++)
		total += segs[i].n;
	cmd_check_map_count("ulpspawn", segs, nsegs);
	if ((o.tag || o.outdir) && !tasks_given) {
		o.tasks = total; /* a rank's stdout and stderr are its task's descriptors 1 and 2 */
	} else if ((o.tag || o.outdir) && o.tasks != total) {
		fprintf(stderr,
			"ulpspawn: -l and --output-filename give each rank its own output, so each "
			"rank its own PVAS task (the ULPs of a task share its descriptors): use -t "
			"%ld or leave -t out\n",
			total);
		return 2;
	}
	if (o.tasks > total) {
		fprintf(stderr, "ulpspawn: -t %ld: more tasks than the %ld ranks\n", o.tasks,
			total);
		return 2;
	}
	if (!o.workers)
		o.workers = cpus / o.tasks > 0 ? cpus / o.tasks : 1;
	/* An MPI job: a task per CPU (job.h); its CPUs are the --bind list where one is given */
	if (!tasks_given && !workers_given && !o.tag && !o.outdir)
		o.mpi_tasks = o.ncpus ? (long)o.ncpus : cpus;
	rc = job_run(&o, segs, nsegs);
	cmd_free_segments(segs, nsegs);
	return job_exit(&o, rc);
}
