/* SPDX-License-Identifier: MIT */
/* Command-line pieces shared by ulpexec and ulpspawn: MPMD segments, PATH lookup, rank env. */
#ifndef ULP_CMDLINE_H
#define ULP_CMDLINE_H

#include <stddef.h>
#include <stdio.h>

struct segment {
	long n;	     /* copies (-n) */
	char **argv; /* argv[0] = PROG as given; NULL-terminated */
	char *path;  /* PROG resolved through PATH */
	int process; /* FALLBACK_ET_EXEC, FALLBACK_SETID, FALLBACK_SANITIZER (fallback.h): its
		      * ranks run as ordinary processes; 0: as ULPs */
};

/* Options of one segment: parse argv[0..argc) (argv[0] is the tool name), fill seg->n, and
 * return the index of PROG. first: this is the first segment (global options allowed). */
typedef int (*cmd_parse_fn)(int argc, char **argv, struct segment *seg, int first, void *ctx);

/* A tool's usage text, written to f. */
typedef void (*cmd_usage_fn)(FILE *f);

/* The end of a tool's option switch (its default case): the options every segment takes and the
 * unknown ones. -h writes usage to stdout and exits 0; -n N sets seg->n; anything else (getopt's
 * '?', which has already named the option) writes usage to stderr and exits 2. */
void cmd_segment_opt(const char *tool, int c, struct segment *seg, cmd_usage_fn usage);

/* After a segment's options, at: the first argument left (getopt's optind). Returns at, the index
 * of PROG, or exits 2 saying that PROG is missing. */
int cmd_segment_prog(const char *tool, int argc, int at, int first, cmd_usage_fn usage);

/* Split argv at ':' into at most max segments, each marked `process` when its program is not a
 * PIE. Returns their count; exits 2 on bad usage and 127 (as a shell does) when a program does
 * not exist, before any rank is started. */
int cmd_split(const char *tool, int argc, char **argv, struct segment *segs, int max,
	      cmd_parse_fn parse, void *ctx);

/* A number from 1 to max, or exit 2 with a message naming the option. */
long cmd_count(const char *tool, const char *opt, const char *s, long max);

/* --quantum US: checked (0..10000000; exit 2 with a message otherwise), then set as
 * ULP_QUANTUM_US for the runtime. */
void cmd_quantum(const char *tool, const char *s);
/* --partition-size: a size with an optional k/m/g/t suffix, a power of two from
 * PVAS_PARTITION_MIN to PVAS_PARTITION_MAX; else exit 2 with a message saying which bound. */
size_t cmd_partition_size(const char *tool, const char *s);

/* --bind: a CPU list such as 0-3,6 into cpus (at most max entries); every CPU must be online,
 * else exit 2 with a message naming the online CPUs. Returns the count (>= 1). */
unsigned cmd_cpulist(const char *tool, const char *s, int *cpus, unsigned max);

/* Before any rank starts: estimate the memory mappings the job's ULP ranks will add to this
 * process (they share one address space; `process` segments do not count) from each program's ELF
 * headers, and exit 1 naming vm.max_map_count and the command to raise it when
 * /proc/sys/vm/max_map_count minus the mappings already there cannot hold them. A job that would
 * hit the limit fails halfway (mmap returns ENOMEM inside some ULP), so refuse it whole. */
void cmd_check_map_count(const char *tool, const struct segment *segs, int nsegs);
/* After a rank failed: when this address space holds nearly vm.max_map_count mappings (the
 * estimate above counts neither the libraries a program dlopens nor what ranks map of each
 * other: an MPICH rank maps about 2 more per peer), say so and how to raise the limit, once;
 * a rank's mmap or shmat failing with ENOMEM there is the likely cause. */
void cmd_map_count_hint(const char *tool);
/* The MPI library a program links (a DT_NEEDED of its own; not followed further, nor dlopen):
 * MPICH's (simple PMI-1, which ulpspawn serves) or Open MPI's (PMIx, which it does not). Its
 * soname goes to lib (len bytes) when one is found. */
enum cmd_mpi { CMD_MPI_NONE, CMD_MPI_PMI1, CMD_MPI_PMIX };
enum cmd_mpi cmd_mpi_library(const char *path, char *lib, size_t len);
/* The estimate for one rank of path (also used by the tests). */
long cmd_maps_per_rank(const char *path);

/* PROG without a slash is looked up in PATH, as execvp does. */
char *cmd_resolve(const char *prog);

/* The environment of one ULP: ours without ULP_RANK/ULP_SIZE/ULP_TASK, plus rank and size, and
 * the task number when task >= 0. NULL when out of memory. */
char **cmd_rank_env(long rank, long size, long task);

/* Frees what cmd_split allocated (each segment's resolved path). */
void cmd_free_segments(struct segment *segs, int n);

#endif
