/* SPDX-License-Identifier: MIT */
/*
 * A guest for the pvas/ulpspawn tests; what it does is argv[1]:
 *   exit N          exit with status N
 *   exitrank M      exit with ULP_RANK % M
 *   pidfile PATH    write getpid() to PATH.<ULP_RANK or pvid>, exit 0
 *   switch PVID     exit with -pvas_ulp_switch(PVID) (0 when it worked)
 *   spin            print "pid P" and yield forever
 *   crash           dereference NULL
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
	return 100;
}
