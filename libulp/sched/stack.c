/* SPDX-License-Identifier: MIT */
/*
 * Task descriptors and stacks, each on per-worker free lists of their own (a joinable thread's
 * stack goes back at exit, its descriptor only at join). Raw system calls: this runs on the exit
 * path, possibly with a ULP's TLS loaded.
 */
#include "ulp_sched.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "sys.h"

#define DESC_CHUNK 64 /* descriptors carved from one mapping */

/* The free list is empty: map DESC_CHUNK descriptors, hand out the first. */
struct ulp_task *ulp_task_alloc_slow(struct ulp_worker *w)
{
	struct ulp_task *t = ulp_raw_mmap(DESC_CHUNK * sizeof(*t), MAP_NORESERVE);
	unsigned i;

	if (!t)
		return NULL;
	for (i = 1; i < DESC_CHUNK; i++)
		ulp_task_free(w, &t[i]);
	return t;
}

int ulp_stack_alloc_slow(struct ulp_worker *w, struct ulp_task *t)
{
	size_t page = ulp_page_size(), size = w->rt->stack_size;
	char *p = ulp_raw_mmap(size + page, MAP_NORESERVE);

	if (!p)
		return -ENOMEM;
	if (ulp_arch_syscall(SYS_mprotect, (long)p, (long)page, PROT_NONE, 0, 0, 0) != 0) {
		ulp_raw_munmap(p, size + page);
		return -ENOMEM;
	}
	t->stack = p;
	t->stack_size = size;
	t->san_lo = p + page;
	t->san_size = size;
	return 0;
}

void ulp_stack_unmap(struct ulp_worker *w, void *stack)
{
	ulp_raw_munmap(stack, w->rt->stack_size + w->page_size);
}

/* The cache is full and an exiting thread, still running on its stack, must put it there:
 * unmap the most recently cached one instead (the exit path keeps its calls here, off its own
 * fast path). */
void ulp_stacks_trim(struct ulp_worker *w)
{
	void **f = w->free_stacks;

	if (!f)
		return;
	w->free_stacks = *f;
	w->nfree_stacks--;
	ulp_stack_unmap(w, (char *)f - w->page_size);
}

void ulp_stacks_drain(struct ulp_worker *w)
{
	size_t page = ulp_page_size();
	void **f;

	while ((f = w->free_stacks)) {
		w->free_stacks = *f;
		ulp_raw_munmap((char *)f - page, w->rt->stack_size + page);
	}
	w->nfree_stacks = 0;
}
