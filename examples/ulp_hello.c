/* SPDX-License-Identifier: MIT */
/*
 * A guest that shows a ULP is a process of its own: its pvid, its globals, its __thread data,
 * its errno, its heap, its atexit handlers.
 *   ulpexec -n 4 build/examples/ulp_hello          (static-pie)
 *   ulpexec -n 4 build/examples/ulp_hello_dyn      (dynamic PIE)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvas.h"

static int counter;            /* one per ULP */
static __thread int per_thread; /* one per ULP too: each has its own TLS */

static void bye(void)
{
	printf("ULP %d: atexit handler ran, counter=%d\n", counter, counter);
}

int main(void)
{
	const char *rank = getenv("ULP_RANK");
	int pvid = -1, rc, i;
	char *buf;

	rc = pvas_get_pvid(&pvid);
	counter = rank ? atoi(rank) : 0;
	per_thread = counter * 10;
	atexit(bye);
	errno = 0;
	if (fopen("/nonexistent/file", "r") == NULL && errno != ENOENT)
		return 3;
	buf = malloc(1 << 20);
	for (i = 0; i < 100; i++)
		buf = realloc(buf, (size_t)(1 << 20) + (size_t)i * 4096);
	memset(buf, counter, 1 << 20);
	pvas_yield(); /* others run; our globals stay ours */
	printf("I am ULP rank %s, pvid %d%s; counter=%d per_thread=%d errno=%s heap=%p\n",
	       rank ? rank : "-", pvid, rc ? " (not under ulpexec)" : "", counter, per_thread,
	       strerror(errno), (void *)buf);
	free(buf);
	return 0;
}
