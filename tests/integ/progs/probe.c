/* SPDX-License-Identifier: MIT */
/*
 * A guest for the pvas/ulpspawn tests; what it does is argv[1]:
 *   exit N          exit with status N
 *   exitrank M      exit with ULP_RANK % M
 *   pidfile PATH    write getpid() to PATH.<ULP_RANK or pvid>, exit 0
 *   switch PVID     exit with -pvas_ulp_switch(PVID) (0 when it worked)
 *   spin            print "pid P" and yield forever
 *   yieldspin       print "pid P" and call pvas_yield forever, never a system call
 *   crash           dereference NULL
 *   crashrank R     rank R dereferences NULL once the others run; the others spin
 *   chatter N       N lines "rank R line I abc...z", each written in three pieces with a yield
 *                   and a pause between (raw writes: pieces of ranks mix unless the launcher
 *                   keeps lines whole), then "rank R to stderr" on stderr
 *   switchall       rank 0 keeps switching to every other rank while they end (the switch must
 *                   not touch a partition being released), the others yield a little and exit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvas.h"

int main(int argc, char **argv)
{
	const char *rank = getenv("ULP_RANK");
	int pvid = -1;

	pvas_get_pvid(&pvid);
	if (argc < 2)
		return 100;
	if (!strcmp(argv[1], "exit") && argc > 2)
		return atoi(argv[2]);
	if (!strcmp(argv[1], "exitrank") && argc > 2 && rank)
		return atoi(rank) % atoi(argv[2]);
	if (!strcmp(argv[1], "pidfile") && argc > 2) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s.%d", argv[2], rank ? atoi(rank) : pvid);
		f = fopen(path, "w");
		if (!f)
			return 101;
		fprintf(f, "%d\n", (int)getpid());
		return fclose(f) ? 102 : 0;
	}
	if (!strcmp(argv[1], "switch") && argc > 2)
		return -pvas_ulp_switch(atoi(argv[2]));
	if (!strcmp(argv[1], "spin")) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		for (;;) {
			pvas_yield();
			usleep(1000); /* blocks this worker a moment: enough for a test that kills
					 us */
		}
	}
	if (!strcmp(argv[1], "yieldspin")) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pvas_yield();
	}
	if (!strcmp(argv[1], "switchall") && rank) {
		int r = atoi(rank), size = atoi(getenv("ULP_SIZE")), i, gone;

		if (r) {
			for (i = 0; i < r * 3; i++)
				pvas_yield();
			return 0;
		}
		do {
			for (gone = 0, i = 1; i < size; i++) {
				int rc = pvas_ulp_switch(pvid + i);

				gone += rc == -ESRCH;
				if (rc == -EAGAIN) /* running elsewhere: let it (and others) go on */
					pvas_yield();
			}
		} while (gone != size - 1);
		return 0;
	}
	if (!strcmp(argv[1], "crash"))
		return *(volatile int *)8;
	if (!strcmp(argv[1], "crashrank") && argc > 2 && rank && atoi(rank) == atoi(argv[2])) {
		usleep(200000);
		return *(volatile int *)8;
	}
	if (!strcmp(argv[1], "crashrank"))
		return main(2, (char *[]){argv[0], "spin", NULL});
	if (!strcmp(argv[1], "chatter") && argc > 2 && rank) {
		int i, n = atoi(argv[2]);
		char a[64], b[64];

		for (i = 0; i < n; i++) {
			int la = snprintf(a, sizeof(a), "rank %s ", rank);
			int lb = snprintf(b, sizeof(b), "line %d ", i);

			if (write(1, a, (size_t)la) != la)
				return 103;
			pvas_yield();
			if (write(1, b, (size_t)lb) != lb)
				return 103;
			usleep(100);
			if (write(1, "abcdefghijklmnopqrstuvwxyz\n", 27) != 27)
				return 103;
		}
		snprintf(a, sizeof(a), "rank %s to stderr\n", rank);
		return write(2, a, strlen(a)) < 0 ? 104 : 0;
	}
	return 100;
}
