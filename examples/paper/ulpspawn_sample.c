/* SPDX-License-Identifier: MIT */
/*
 * The User-level Process paper's sample (Fig. 5), part 1: the launcher. It creates a PVAS
 * address space and spawns a PVAS task whose first ULP (pvid 0) runs ulpexec_sample, which
 * creates two more ULPs running ulpprogram_sample.
 *   build/examples/paper/ulpspawn_sample
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "pvas.h"

int main(int argc, char **argv)
{
	char exe[4096], *slash;
	char *args[] = {exe, NULL}, *env[] = {NULL};
	int status, pvid, rc = 0;
	pvd_t pvd;
	pid_t task;

	/* the sample programs sit next to this one */
	snprintf(exe, sizeof(exe), "%s", argv[0]);
	slash = strrchr(exe, '/');
	snprintf(slash ? slash + 1 : exe, sizeof(exe) - (size_t)(slash ? slash + 1 - exe : 0),
		 "ulpexec_sample");
	(void)argc;
	if (pvas_create(&pvd) != 0) {
		fprintf(stderr, "pvas_create: %s\n", pvas_errmsg());
		return 1;
	}
	task = pvas_spawn(pvd, 0, exe, args, env);
	if (task < 0) {
		fprintf(stderr, "pvas_spawn: %s\n", pvas_errmsg());
		return 1;
	}
	while ((pvid = pvas_wait(pvd, -1, &status)) >= 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	pvas_task_wait(pvd, task, NULL);
	pvas_destroy(pvd);
	return rc;
}
