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

#include "proc.h"

extern char **environ;

struct segment {
	long n;
	char **argv; /* argv[0] = PROG as given */
	char *path;  /* resolved file */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ulpexec [-n N] [-w WORKERS] [--partition-size SIZE] [--] PROG [ARGS...]\n"
		"       ulpexec -n N PROG [ARGS...] : -n M PROG2 [ARGS...] ...\n"
		"Run N copies of PROG (an unmodified PIE, static-pie or dynamic) as user-level\n"
		"processes in partitions of one address space, scheduled by WORKERS kernel threads.\n"
		"  -n N                  copies of the program (default 1)\n"
		"  -w WORKERS            worker threads (default: ULP_WORKERS, else online CPUs)\n"
		"  --partition-size SIZE partition size, a power of two >= 16m (default 4g)\n"
		"  -h, --help            this text\n"
		"Each ULP gets ULP_RANK (0..total-1) and ULP_SIZE in its environment.\n"
		"Exit status: 0 when every ULP exits 0, else the first non-zero status by rank\n"
		"(128+signal for a killed ULP); each failed ULP is reported on stderr.\n");
}

static long parse_count(const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "ulpexec: %s: '%s' is not a number from 1 to %ld\n", opt, s, max);
		exit(2);
	}
	return v;
}

/* PROG without a slash is looked up in PATH, as execvp does. */
static char *resolve(const char *prog)
{
	const char *p = getenv("PATH");
	char buf[4096];
	struct stat st;

	if (strchr(prog, '/') || !p)
		return strdup(prog);
	while (*p) {
		size_t len = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		p += len + (p[len] == ':');
	}
	return strdup(prog); /* let the loader say what is wrong */
}

/* Options of one segment; returns the index of PROG. */
static int parse_segment(int argc, char **argv, struct segment *seg, long *workers,
			 size_t *psize, int first)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"partition-size", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	long long v;
	int c;

	optind = 1;
	seg->n = 1;
	while ((c = getopt_long(argc, argv, "+hn:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'n':
			seg->n = parse_count("-n", optarg, 1 << 20);
			break;
		case 'w':
			if (!first)
				goto global_only;
			*workers = parse_count("-w", optarg, 1024);
			break;
		case 'P':
			if (!first)
				goto global_only;
			v = ulp_parse_size(optarg);
			if (v < (long long)ULP_MIN_PARTITION || (v & (v - 1))) {
				fprintf(stderr, "ulpexec: --partition-size: '%s' is not a power of two "
						"of at least 16m\n", optarg);
				exit(2);
			}
			*psize = (size_t)v;
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

/* The environment of one ULP: ours without ULP_RANK/ULP_SIZE, plus its own. */
static char **make_env(long rank, long size)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(char *));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "ULP_RANK=", 9) && strncmp(environ[i], "ULP_SIZE=", 9))
			env[k++] = environ[i];
	if (asprintf(&env[k++], "ULP_RANK=%ld", rank) < 0 ||
	    asprintf(&env[k++], "ULP_SIZE=%ld", size) < 0)
		return NULL;
	return env;
}

int main(int argc, char **argv)
{
	struct segment segs[64];
	int nsegs = 0, i, rc, status = 0, at = 0;
	long workers = 0, total = 0, rank;
	size_t psize = 0;
	struct pvas_region *region;
	struct ulp_cb **cbs;
	char err[512];

	/* Split at ':' into segments, each with its own options. */
	while (at < argc) {
		int end = at + 1, prog;
		char *saved;

		while (end < argc && strcmp(argv[end], ":"))
			end++;
		if (nsegs == 64) {
			fprintf(stderr, "ulpexec: more than 64 programs\n");
			return 2;
		}
		saved = argv[at];
		argv[at] = "ulpexec";
		prog = parse_segment(end - at, argv + at, &segs[nsegs], &workers, &psize,
				     nsegs == 0);
		argv[at] = saved;
		segs[nsegs].argv = argv + at + prog;
		argv[end < argc ? end : argc] = NULL; /* ends this segment's argv */
		segs[nsegs].path = resolve(segs[nsegs].argv[0]);
		total += segs[nsegs].n;
		nsegs++;
		at = end; /* at ':' (now NULL) or argc; the next segment starts there */
	}

	rc = pvas_region_create(&region, 0, 0, psize);
	if (rc) {
		fprintf(stderr, "ulpexec: reserving the PVAS region: %s\n", strerror(-rc));
		return 1;
	}
	if (total > region->nparts) {
		fprintf(stderr, "ulpexec: %ld ULPs do not fit: the address space has %u partitions "
				"of this size\n", total, region->nparts);
		return 1;
	}
	ulp_rt.worker_hook = ulp_trap_worker_init;
	rc = ulp_trap_install(region);
	if (rc) {
		fprintf(stderr, "ulpexec: installing the syscall trap (seccomp): %s\n",
			strerror(-rc));
		return 1;
	}
	rc = ulp_init((unsigned)workers);
	if (rc) {
		fprintf(stderr, "ulpexec: starting the workers: %s\n", strerror(-rc));
		return 1;
	}
	cbs = calloc((size_t)total, sizeof(*cbs));
	rank = 0;
	for (i = 0; i < nsegs && !status; i++) {
		long k;

		for (k = 0; k < segs[i].n; k++, rank++) {
			char **env = make_env(rank, total);

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
		ulp_proc_release(cbs[rank]);
	}
	ulp_fini();
	pvas_region_destroy(region);
	return status;
}
