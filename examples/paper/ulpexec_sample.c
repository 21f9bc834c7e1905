/* SPDX-License-Identifier: MIT */
/* The paper's sample, part 2: ULP 0 creates ULPs 1 and 2 in its own PVAS task with
 * pvas_ulp_exec; each new ULP runs at once, the caller goes on when it ends or switches back. */
#include <stdio.h>
#include <string.h>

#include "pvas.h"

int main(int argc, char **argv)
{
	char exe[4096], *slash;
	char *args[] = {exe, NULL}, *env[] = {NULL};
	int pvid, rc;

	(void)argc;
	snprintf(exe, sizeof(exe), "%s", argv[0]);
	slash = strrchr(exe, '/');
	snprintf(slash ? slash + 1 : exe, sizeof(exe) - (size_t)(slash ? slash + 1 - exe : 0),
		 "ulpprogram_sample");
	for (pvid = 1; pvid <= 2; pvid++) {
		rc = pvas_ulp_exec(pvid, exe, args, env);
		if (rc != pvid) {
			fprintf(stderr, "pvas_ulp_exec(%d): %d\n", pvid, rc);
			return 1;
		}
	}
	return 0;
}
