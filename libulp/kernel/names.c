/* SPDX-License-Identifier: MIT */
/*
 * Addresses exported by name between ULPs. The table lives in the launching process's memory,
 * which every ULP and every PVAS task sees (one address space), so an imported address is a
 * plain pointer. No libc calls that touch errno: this runs in ULP context.
 */
#include "proc.h"

#include <errno.h>
#include <string.h>

static int name_ok(const char *name)
{
	size_t n;

	if (!name)
		return 0;
	for (n = 0; n < PVAS_NAME_MAX && name[n]; n++)
		;
	return n > 0 && n < PVAS_NAME_MAX;
}

static struct pvas_name *find(struct pvas_region *r, const char *name)
{
	unsigned i;

	for (i = 0; i < r->nnames; i++)
		if (!strcmp(r->names[i].name, name))
			return &r->names[i];
	return NULL;
}

int pvas_names_export(struct pvas_region *r, int pvid, const char *name, uintptr_t addr)
{
	int rc = 0;

	if (!name_ok(name))
		return -EINVAL;
	ulp_spin_lock(&r->names_lock);
	if (find(r, name))
		rc = -EEXIST;
	else if (r->nnames == PVAS_MAX_NAMES)
		rc = -ENOSPC;
	else {
		struct pvas_name *n = &r->names[r->nnames];

		memcpy(n->name, name, strlen(name) + 1);
		n->addr = addr;
		n->pvid = pvid;
		/* publish the entry only once it is complete */
		__atomic_store_n(&r->nnames, r->nnames + 1, __ATOMIC_RELEASE);
	}
	ulp_spin_unlock(&r->names_lock);
	return rc;
}

int pvas_names_import(struct pvas_region *r, const char *name, uintptr_t *addr)
{
	struct pvas_name *n;
	int rc = -ENOENT;

	if (!name_ok(name) || !addr)
		return -EINVAL;
	ulp_spin_lock(&r->names_lock);
	n = find(r, name);
	if (n) {
		*addr = n->addr;
		rc = 0;
	}
	ulp_spin_unlock(&r->names_lock);
	return rc;
}

void pvas_names_drop(struct pvas_region *r, int pvid)
{
	unsigned i = 0;

	ulp_spin_lock(&r->names_lock);
	while (i < r->nnames) {
		if (r->names[i].pvid == pvid)
			r->names[i] = r->names[--r->nnames];
		else
			i++;
	}
	ulp_spin_unlock(&r->names_lock);
}

/* ---- barriers across ULPs ---- */

int pvas_names_barrier(struct ulp_cb *cb, const char *name, int count)
{
	struct pvas_region *r = cb->region;
	struct pvas_bar *b = NULL;
	struct ulp_task *t, *next;
	unsigned i;

	if (!name_ok(name) || count < 1)
		return -EINVAL;
	ulp_spin_lock(&r->bar_lock);
	for (i = 0; i < r->nbars && !b; i++)
		if (!strcmp(r->bars[i].name, name))
			b = &r->bars[i];
	if (!b) {
		if (r->nbars == PVAS_MAX_BARRIERS) {
			ulp_spin_unlock(&r->bar_lock);
			return -ENOSPC;
		}
		b = &r->bars[r->nbars++];
		memcpy(b->name, name, strlen(name) + 1);
		b->count = count;
	}
	if (b->count != count) {
		ulp_spin_unlock(&r->bar_lock);
		return -EINVAL;
	}
	if (++b->arrived < count) {
		cb->task.next = b->waiters;
		b->waiters = &cb->task;
		/* resumed by the last arrival, maybe from another PVAS task */
		ulp_task_suspend(&cb->task, ulp_after_unlock, &r->bar_lock);
		return 0;
	}
	t = b->waiters;
	b->waiters = NULL;
	b->arrived = 0;
	ulp_spin_unlock(&r->bar_lock);
	for (; t; t = next) {
		next = t->next;
		ulp_task_resume(t);
	}
	return 1;
}
