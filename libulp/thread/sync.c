/* SPDX-License-Identifier: MIT */
/*
 * Mutex, condition variable, barrier. A waiter is suspended (queued FIFO on the object) and the
 * object's spin lock is released only once the waiter is saved (ulp_after_unlock), so a wake-up
 * can never be lost or reach a half-saved task. Mutex ownership is handed over to the first
 * waiter: no barging, no starvation.
 */
#include "ulp_sched.h"

#include <errno.h>

#define MUTEX_SPINS 64

static struct ulp_task *current(void)
{
	struct ulp_worker *w = ulp_worker_self();

	return w ? w->cur : NULL;
}

static void q_push(void **head, void **tail, struct ulp_task *t)
{
	t->next = NULL;
	if (*tail)
		((struct ulp_task *)*tail)->next = t;
	else
		*head = t;
	*tail = t;
}

static struct ulp_task *q_pop(void **head, void **tail)
{
	struct ulp_task *t = *head;

	if (t) {
		*head = t->next;
		if (!*head)
			*tail = NULL;
	}
	return t;
}

int ulp_mutex_init(ulp_mutex_t *m)
{
	*m = (ulp_mutex_t)ULP_MUTEX_INITIALIZER;
	return 0;
}

int ulp_mutex_destroy(ulp_mutex_t *m)
{
	return __atomic_load_n(&m->held, __ATOMIC_ACQUIRE) || m->head ? -EBUSY : 0;
}

static int mutex_try(ulp_mutex_t *m, struct ulp_task *self)
{
	uint32_t zero = 0;

	if (__atomic_compare_exchange_n(&m->held, &zero, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		m->owner = self;
		return 1;
	}
	return 0;
}

int ulp_mutex_trylock(ulp_mutex_t *m)
{
	struct ulp_task *self = current();

	if (!self)
		return -EINVAL;
	return mutex_try(m, self) ? 0 : -EBUSY;
}

int ulp_mutex_lock(ulp_mutex_t *m)
{
	struct ulp_task *self = current();
	int i;

	if (!self)
		return -EINVAL;
	for (i = 0; i < MUTEX_SPINS; i++) {
		if (mutex_try(m, self))
			return 0;
		if (m->owner == self)
			return -EDEADLK;
		ulp_arch_relax();
	}
	ulp_spin_lock(&m->lock);
	if (mutex_try(m, self)) {
		ulp_spin_unlock(&m->lock);
		return 0;
	}
	if (m->owner == self) {
		ulp_spin_unlock(&m->lock);
		return -EDEADLK;
	}
	q_push(&m->head, &m->tail, self);
	ulp_task_suspend(self, ulp_after_unlock, &m->lock);
	/* Woken by unlock, which made us the owner. */
	return 0;
}

int ulp_mutex_unlock(ulp_mutex_t *m)
{
	struct ulp_task *self = current(), *next;

	if (!self)
		return -EINVAL;
	ulp_spin_lock(&m->lock);
	if (!__atomic_load_n(&m->held, __ATOMIC_RELAXED) || m->owner != self) {
		ulp_spin_unlock(&m->lock);
		return -EPERM;
	}
	next = q_pop(&m->head, &m->tail);
	if (next) {
		m->owner = next; /* hand over: held stays 1 */
		ulp_spin_unlock(&m->lock);
		ulp_task_resume(next);
		return 0;
	}
	m->owner = NULL;
	__atomic_store_n(&m->held, 0, __ATOMIC_RELEASE);
	ulp_spin_unlock(&m->lock);
	return 0;
}

int ulp_cond_init(ulp_cond_t *c)
{
	*c = (ulp_cond_t)ULP_COND_INITIALIZER;
	return 0;
}

int ulp_cond_destroy(ulp_cond_t *c)
{
	return c->head ? -EBUSY : 0;
}

int ulp_cond_wait(ulp_cond_t *c, ulp_mutex_t *m)
{
	struct ulp_task *self = current();
	int rc;

	if (!self)
		return -EINVAL;
	if (m->owner != self || !__atomic_load_n(&m->held, __ATOMIC_RELAXED))
		return -EPERM;
	ulp_spin_lock(&c->lock);
	q_push(&c->head, &c->tail, self); /* queued before m is released: no lost signal */
	rc = ulp_mutex_unlock(m);
	if (rc) {
		c->head = c->tail = NULL; /* unreachable: ownership was checked above */
		ulp_spin_unlock(&c->lock);
		return rc;
	}
	ulp_task_suspend(self, ulp_after_unlock, &c->lock);
	return ulp_mutex_lock(m);
}

int ulp_cond_signal(ulp_cond_t *c)
{
	struct ulp_task *t;

	ulp_spin_lock(&c->lock);
	t = q_pop(&c->head, &c->tail);
	ulp_spin_unlock(&c->lock);
	if (t)
		ulp_task_resume(t);
	return 0;
}

int ulp_cond_broadcast(ulp_cond_t *c)
{
	struct ulp_task *t, *next;

	ulp_spin_lock(&c->lock);
	t = c->head;
	c->head = c->tail = NULL;
	ulp_spin_unlock(&c->lock);
	for (; t; t = next) {
		next = t->next;
		ulp_task_resume(t);
	}
	return 0;
}

int ulp_barrier_init(ulp_barrier_t *b, unsigned count)
{
	if (count == 0)
		return -EINVAL;
	b->lock = 0;
	b->count = count;
	b->waiting = 0;
	b->generation = 0;
	b->head = b->tail = NULL;
	return 0;
}

int ulp_barrier_destroy(ulp_barrier_t *b)
{
	return b->waiting ? -EBUSY : 0;
}

int ulp_barrier_wait(ulp_barrier_t *b)
{
	struct ulp_task *self = current(), *t, *next;

	if (!self)
		return -EINVAL;
	ulp_spin_lock(&b->lock);
	if (++b->waiting < b->count) {
		q_push(&b->head, &b->tail, self);
		ulp_task_suspend(self, ulp_after_unlock, &b->lock);
		return 0;
	}
	t = b->head;
	b->head = b->tail = NULL;
	b->waiting = 0;
	b->generation++;
	ulp_spin_unlock(&b->lock);
	for (; t; t = next) {
		next = t->next;
		ulp_task_resume(t);
	}
	return ULP_BARRIER_SERIAL_THREAD;
}
