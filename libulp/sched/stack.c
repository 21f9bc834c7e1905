/* SPDX-License-Identifier: MIT */
/*
 * Task descriptors and stacks, each on per-worker free lists of their own (a joinable thread's
 * stack goes back at exit, its descriptor only at join). Raw system calls: this runs on the exit
 * path, possibly with a ULP's TLS loaded.
 */
#include "ulp_sched.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "sys.h"

#define DESC_CHUNK 64	   /* descriptors carved from one mapping */
#define MAX_FREE_STACKS 64 /* per worker; beyond that stacks are unmapped */

struct free_stack {
	struct free_stack *next;
};

struct ulp_task *ulp_task_alloc(struct ulp_worker *w)
{
	struct ulp_task *t = w->free_tasks;

	if (!t) {
		unsigned i;

		t = ulp_raw_mmap(DESC_CHUNK * sizeof(*t), MAP_NORESERVE);
		if (!t)
			return NULL;
		for (i = 1; i < DESC_CHUNK; i++) {
			t[i].next = w->free_tasks;
			w->free_tasks = &t[i];
		}
		w->nfree_tasks += DESC_CHUNK - 1;
	} else {
		w->free_tasks = t->next;
		w->nfree_tasks--;
	}
	memset(t, 0, sizeof(*t));
	return t;
}

void ulp_task_free(struct ulp_worker *w, struct ulp_task *t)
{
	t->next = w->free_tasks;
	w->free_tasks = t;
	w->nfree_tasks++;
}

/* Stacks: [guard page | usable stack]; t->stack is the mapping, t->stack_size its usable part. */
int ulp_stack_alloc(struct ulp_worker *w, struct ulp_task *t)
{
	size_t page = ulp_page_size(), size = w->rt->stack_size;
	struct free_stack *f = w->free_stacks;
	char *p;

	if (f) {
		w->free_stacks = f->next;
		w->nfree_stacks--;
		t->stack = (char *)f - page;
	} else {
		p = ulp_raw_mmap(size + page, MAP_NORESERVE);
		if (!p)
			return -ENOMEM;
		if (ulp_arch_syscall(SYS_mprotect, (long)p, (long)page, PROT_NONE, 0, 0, 0) != 0) {
			ulp_raw_munmap(p, size + page);
			return -ENOMEM;
		}
		t->stack = p;
	}
	t->stack_size = size;
	t->san_lo = (char *)t->stack + page;
	t->san_size = size;
	return 0;
}

void ulp_stack_free(struct ulp_worker *w, struct ulp_task *t)
{
	size_t page = ulp_page_size();
	struct free_stack *f = (struct free_stack *)((char *)t->stack + page);

	if (w && w->nfree_stacks < MAX_FREE_STACKS) {
		f->next = w->free_stacks;
		w->free_stacks = f;
		w->nfree_stacks++;
	} else {
		ulp_arch_syscall(SYS_munmap, (long)t->stack, (long)(t->stack_size + page), 0, 0, 0,
				 0);
	}
	t->stack = NULL;
}

void ulp_stacks_drain(struct ulp_worker *w)
{
	size_t page = ulp_page_size();
	struct free_stack *f;

	while ((f = w->free_stacks)) {
		w->free_stacks = f->next;
		ulp_arch_syscall(SYS_munmap, (long)((char *)f - page),
				 (long)(w->rt->stack_size + page), 0, 0, 0, 0);
	}
	w->nfree_stacks = 0;
}
