/* SPDX-License-Identifier: MIT */
/*
 * One job of ranks over PVAS tasks, run through include/pvas.h: what ulpexec and ulpspawn share
 * once their command lines are parsed. The launcher's event loop polls the host's event fd
 * (pvas_event_fd_get), a signalfd for SIGINT/SIGTERM/SIGHUP, and the ranks' output pipes.
 */
#ifndef ULP_LAUNCH_JOB_H
#define ULP_LAUNCH_JOB_H

#include <stddef.h>

#include "cmdline.h"

#define JOB_MAX_CPUS 1024

struct job_opts {
	const char *tool;   /* prefix of every message */
	long tasks;	    /* PVAS tasks; ranks go to them in blocks */
	long workers;	    /* kernel threads per task */
	size_t psize;	    /* partition size (0: the default) */
	int stats;	    /* table per rank at the end */
	int tag;	    /* -l: "[R] " before each line of rank R's output */
	int keep_going;	    /* no job abort when a rank is killed by a signal */
	int task_env;	    /* ULP_TASK in the ranks' environment */
	const char *outdir; /* --output-filename: DIR/R/stdout, DIR/R/stderr */
	const char *wdir;   /* --wdir: the ranks' working directory */
	char **setenv;	    /* NAME=VALUE for every rank (-genv, -x) */
	int nsetenv;
	int pmi;		/* serve PMI-1 to the ranks (launch/pmi.h): 1 --pmi, -1 --no-pmi,
				 * 0 ULP_PMI or whether a program links MPICH (job_run) */
	int no_fallback;	/* refuse non-PIE programs instead of running them as processes */
	long mpi_tasks;		/* > 0: neither -t nor -w given: an MPI job (pmi) runs as this
				 * many tasks (at most one per rank) of one worker each (job_run) */
	int cpus[JOB_MAX_CPUS]; /* --bind */
	unsigned ncpus;
	int end_signal; /* out (job_run): the launcher ends by this signal (job_exit); 0: none */
};

/* Add NAME=VALUE (value NULL: NAME's value in our environment) to o->setenv; 0 or -1 with a
 * message when NAME is empty, has '=', or (value NULL) is not set. */
int job_setenv(struct job_opts *o, const char *name, const char *value);

/* Run the job; returns the launcher's exit status: 0 when every rank exited 0, else the first
 * non-zero status by rank (128+signal for a killed rank); 127 when a program is missing and 126
 * when it cannot be run (a non-PIE one under no_fallback); 128+signal when the launcher got
 * SIGINT/SIGTERM/SIGHUP. The ranks of `process` segments run as ordinary child processes
 * (launch/fallback.h) after one warning line per program. */
int job_run(struct job_opts *o, struct segment *segs, int nsegs);

/* The launcher's end, as a process that was the job would end: killed by o->end_signal (no core
 * of the launcher) when job_run set one, that is when the job had one rank and a signal killed
 * it, or when the launcher got SIGINT/SIGTERM/SIGHUP and the job ended by it (a shell loop stops
 * at a Ctrl-C only when its command died of SIGINT); else returns status, for main to return. */
int job_exit(const struct job_opts *o, int status);

#endif
