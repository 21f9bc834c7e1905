/* SPDX-License-Identifier: MIT */
/* Rank 0 exports a buffer; the other ranks import it, read it and add to a counter in it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvas.h"

struct shared {
	char text[32];
	int counter;
};

int main(void)
{
	int rank = atoi(getenv("ULP_RANK")), size = atoi(getenv("ULP_SIZE"));
	static struct shared mine;
	struct shared *s;
	void *p;
	int rc;

	if (rank == 0) {
		strcpy(mine.text, "hello from rank 0");
		if (pvas_export("share.buf", &mine) != 0 || pvas_export("share.buf", &mine) != -EEXIST)
			return 2;
		while (__atomic_load_n(&mine.counter, __ATOMIC_ACQUIRE) < size - 1)
			pvas_yield(); /* keep the buffer alive until everyone has read it */
		printf("rank 0 counter=%d\n", mine.counter);
		return 0;
	}
	while ((rc = pvas_import("share.buf", &p)) == -ENOENT)
		pvas_yield();
	if (rc)
		return 3;
	s = p;
	printf("rank %d read '%s'\n", rank, s->text);
	__atomic_fetch_add(&s->counter, 1, __ATOMIC_RELEASE);
	return 0;
}
