/* SPDX-License-Identifier: MIT */
/* Two ULPs hand the CPU to each other with pvas_ulp_switch. Outside ulpexec: reports the error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pvas.h"

int main(void)
{
	int pvid, i, ok = 0, again = 0, rc;

	rc = pvas_get_pvid(&pvid);
	if (rc) {
		printf("not a ULP: pvas_get_pvid=%d (%s) switch=%d yield=%d\n", rc, strerror(-rc),
		       pvas_ulp_switch(0), pvas_yield());
		return rc == -ENOTSUP ? 0 : 1;
	}
	/* The launcher loads ranks one by one and the first may run before its partner exists
	 * (a PVAS task starts at once): wait for the partner (at most about 10 s). */
	for (i = 0; i < 100000 && pvas_ulp_switch(pvid ^ 1) == -ESRCH; i++)
		usleep(100);
	for (i = 0; i < 1000; i++) {
		rc = pvas_ulp_switch(pvid ^ 1);
		if (rc == 0)
			ok++;
		else if (rc == -EAGAIN || rc == -ESRCH)
			again++; /* partner running elsewhere, or ended */
		else
			return 2;
	}
	printf("pvid %d switched %d\n", pvid, ok + again == 1000 ? ok : -1);
	return 0;
}
