/* SPDX-License-Identifier: MIT */
/*
 * What a fork child of a ULP holds (libulp/kernel/fork_copy.c): all of its ULP's memory (stack,
 * heap, a mapping made just before the fork), copy-on-write, while other ranks of the job fork
 * too; with argument "own", also one the program marked MADV_DONTFORK and then MADV_DOFORK, and
 * not one it marked MADV_DONTFORK. Each rank forks ROUNDS times; each child checks its memory and
 * exits 0 or with the number of the first check that failed; the parent checks its own memory
 * after. Rank 0's children also count the mappings of this program's file that lie far from their
 * own copy (other ranks' partitions, which stay while it forks): printed as "others N", the most a
 * child saw (0 when the other partitions are left out of a fork child; more with
 * ULP_FORK_COPY_ALL=1). Rank 0 first waits until it sees the other ranks' copies in its own
 * /proc/self/maps (first argument: the number of ranks running this same file), so that a 0 means
 * something. Prints "forkmarks R: ok" and exits 0, or what failed and exits 1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 12
#define PG 4096

static int rank;

/* Copies of this program's file (path: its mapping at offset 0) more than 1 GiB away from main:
 * in other partitions. */
static int far_copies(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo = strtoul(line, NULL, 16), off = 1;
		long d = (long)(lo - (unsigned long)(uintptr_t)&far_copies);
		size_t len = strlen(line);
		char perms[8];

		if (len && line[len - 1] == '\n')
			line[len - 1] = 0;
		if (sscanf(line, "%*lx-%*lx %7s %lx", perms, &off) == 2 && off == 0 &&
		    strstr(line, path) && (d > (1l << 30) || d < -(1l << 30)))
			n++;
	}
	fclose(f);
	return n;
}

static int filled(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

static void *map(size_t n, unsigned char c)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("forkmarks %d: mmap: %s\n", rank, strerror(errno));
		exit(1);
	}
	memset(p, c, n);
	return p;
}

static int absent(void *p, size_t n)
{
	unsigned char v[4];

	return mincore(p, n, v) != 0 && errno == ENOMEM;
}

int main(int argc, char **argv)
{
	const char *r = getenv("ULP_RANK");
	int nranks = argc > 1 ? atoi(argv[1]) : 1, bad = 0, i, others = -1;
	int own = argc > 2 && !strcmp(argv[2], "own");
	unsigned char *a, *a2, *b, *heap, stack[3000];
	char path[4096];
	ssize_t pl;

	rank = r ? atoi(r) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	pl = readlink("/proc/self/exe", path, sizeof(path) - 1);
	path[pl > 0 ? pl : 0] = 0;
	a = map(3 * PG, 'A');
	a2 = map(2 * PG, 'a');
	b = map(3 * PG, 'B');
	heap = malloc(100000);
	memset(heap, 'H', 100000);
	memset(stack, 'S', sizeof(stack));
	if (own && (madvise(a, 3 * PG, MADV_DONTFORK) || madvise(a2, 2 * PG, MADV_DONTFORK) ||
		    madvise(a2, 2 * PG, MADV_DOFORK))) {
		printf("forkmarks %d: madvise: %s\n", rank, strerror(errno));
		return 1;
	}
	if (rank == 0 && nranks > 1) { /* the other ranks loaded: their copies in the task's maps */
		struct timespec ts = {0, 20 * 1000 * 1000};

		for (i = 0; i < 500 && far_copies(path) < nranks - 1; i++)
			nanosleep(&ts, NULL);
		if (i == 500) {
			printf("forkmarks 0: the other ranks' copies never showed (%d)\n",
			       far_copies(path));
			return 1;
		}
	}
	for (i = 0; i < ROUNDS && !bad; i++) {
		unsigned char *c = map(2 * PG, (unsigned char)('0' + i)); /* made just now */
		int st, p[2], n = 0;
		pid_t pid;

		if (pipe(p))
			return 1;
		pid = fork();
		if (pid == 0) {
			int n = rank == 0 ? far_copies(path) : 0, e = 0;

			if (own ? !absent(a, 3 * PG) : !filled(a, 3 * PG, 'A'))
				e = 2;
			else if (!filled(a2, 2 * PG, 'a'))
				e = 3;
			else if (!filled(b, 3 * PG, 'B'))
				e = 4;
			else if (!filled(c, 2 * PG, (unsigned char)('0' + i)))
				e = 5;
			else if (!filled(heap, 100000, 'H') || !filled(stack, sizeof(stack), 'S'))
				e = 6;
			memset(b, 'x', 3 * PG); /* its copy only */
			if (write(p[1], &n, sizeof(n)) != sizeof(n))
				e = 7;
			_exit(e);
		}
		close(p[1]);
		if (pid < 0 || read(p[0], &n, sizeof(n)) != sizeof(n) ||
		    waitpid(pid, &st, 0) != pid) {
			printf("forkmarks %d: round %d: fork, read or wait failed\n", rank, i);
			bad = 1;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("forkmarks %d: round %d: child %s %d\n", rank, i,
			       WIFEXITED(st) ? "failed check" : "killed by signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			bad = 1;
		} else if (!filled(b, 3 * PG, 'B') || !filled(a, 3 * PG, 'A')) {
			printf("forkmarks %d: round %d: the parent's memory changed\n", rank, i);
			bad = 1;
		}
		close(p[0]);
		munmap(c, 2 * PG);
		others = n > others ? n : others;
	}
	if (rank && nranks > 1) { /* still there while rank 0's children count */
		struct timespec ts = {0, 400 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	if (rank == 0)
		printf("others %d\n", others);
	printf(bad ? "forkmarks %d: FAIL\n" : "forkmarks %d: ok\n", rank);
	return bad;
}
