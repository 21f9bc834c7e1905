/* SPDX-License-Identifier: MIT */
/* A ULP checks that it is a process of its own. Usage: guest_check EXIT_STATUS [ARGS...]
 * Prints one line "rank R ok ..." or "rank R FAIL: what". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "pvas.h"

extern char **environ;

static int global = 100;
static __thread int tls_var = 200;
static char bss[1 << 16];
static int rank;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			printf("rank %d FAIL: %s\n", rank, #c);                                    \
			exit(99);                                                                  \
		}                                                                                  \
	} while (0)

static void at_exit_handler(void)
{
	printf("rank %d atexit\n", rank); /* buffered: must be flushed at exit */
}

int main(int argc, char **argv, char **envp)
{
	const char *r = getenv("ULP_RANK");
	int i, n = 0, pvid;
	void *p[256];

	CHECK(r != NULL && getenv("ULP_SIZE") != NULL);
	rank = atoi(r);
	CHECK(argc >= 2);
	CHECK(global == 100 && tls_var == 200 && bss[12345] == 0);
	global += rank;
	tls_var += rank;
	bss[12345] = (char)rank;
	errno = 1000 + rank;
	for (i = 0; i < 2000; i++) { /* heavy malloc/free/realloc, brk and mmap sized */
		size_t sz = (size_t)((i * 7919) % 300000) + 1;
		int k = i % 256;
		if (i >= 256)
			free(p[k]);
		p[k] = malloc(sz);
		CHECK(p[k] != NULL);
		memset(p[k], rank, sz < 64 ? sz : 64);
		if (i % 3 == 0) {
			p[k] = realloc(p[k], sz * 2);
			CHECK(p[k] != NULL);
		}
	}
	for (i = 0; i < 256; i++)
		free(p[i]);
	CHECK(pvas_yield() == 0);
	CHECK(pvas_get_pvid(&pvid) == 0 && pvid >= 0);
	/* others ran meanwhile: our state is still ours */
	CHECK(global == 100 + rank && tls_var == 200 + rank && bss[12345] == (char)rank);
	CHECK(errno == 1000 + rank);
	/* what a process sees at start */
	CHECK(getauxval(AT_PAGESZ) == (unsigned long)sysconf(_SC_PAGESIZE));
	CHECK(getauxval(AT_RANDOM) != 0);
	CHECK(getauxval(AT_EXECFN) && strcmp((char *)getauxval(AT_EXECFN), argv[0]) == 0);
	CHECK(getauxval(AT_ENTRY) != 0 && getauxval(AT_PHDR) != 0);
	CHECK(argv[argc] == NULL);
	while (envp[n])
		n++;
	CHECK(n > 0 && environ == envp);
	atexit(at_exit_handler);
	printf("rank %d ok pvid-set argc=%d", rank, argc);
	for (i = 2; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	return atoi(argv[1]);
}
