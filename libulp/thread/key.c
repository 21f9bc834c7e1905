/* SPDX-License-Identifier: MIT */
/* Per-thread data (ulp_key_*), the ULT counterpart of pthread keys. */
#include "ulp_sched.h"

#include <errno.h>
#include <stdlib.h>

#define DTOR_ROUNDS 4 /* as PTHREAD_DESTRUCTOR_ITERATIONS */

static uint32_t keys_lock;
static unsigned char key_used[ULP_KEYS_MAX];
static void (*key_dtor[ULP_KEYS_MAX])(void *);

static struct ulp_task *current(void)
{
	struct ulp_worker *w = atomic_load(&ulp_rt.started) ? ulp_worker_self() : NULL;

	return w ? w->cur : NULL;
}

int ulp_key_create(ulp_key_t *key, void (*dtor)(void *))
{
	unsigned i;

	if (!key)
		return -EINVAL;
	ulp_spin_lock(&keys_lock);
	for (i = 0; i < ULP_KEYS_MAX; i++) {
		if (!key_used[i]) {
			key_used[i] = 1;
			key_dtor[i] = dtor;
			ulp_spin_unlock(&keys_lock);
			*key = i;
			return 0;
		}
	}
	ulp_spin_unlock(&keys_lock);
	return -EAGAIN;
}

int ulp_key_delete(ulp_key_t key)
{
	if (key >= ULP_KEYS_MAX || !key_used[key])
		return -EINVAL;
	ulp_spin_lock(&keys_lock);
	key_used[key] = 0;
	key_dtor[key] = NULL;
	ulp_spin_unlock(&keys_lock);
	return 0;
}

int ulp_key_set(ulp_key_t key, const void *value)
{
	struct ulp_task *self = current();

	if (!self || key >= ULP_KEYS_MAX || !key_used[key])
		return -EINVAL;
	if (!self->keys) {
		self->keys = calloc(ULP_KEYS_MAX, sizeof(void *));
		if (!self->keys)
			return -ENOMEM;
	}
	self->keys[key] = (void *)value;
	return 0;
}

void *ulp_key_get(ulp_key_t key)
{
	struct ulp_task *self = current();

	if (!self || !self->keys || key >= ULP_KEYS_MAX || !key_used[key])
		return NULL;
	return self->keys[key];
}

/* At thread exit: call destructors for non-NULL values, again while destructors set new ones. */
void ulp_keys_run_dtors(struct ulp_task *t)
{
	int round, again = 1;
	unsigned i;

	if (!t->keys)
		return;
	for (round = 0; round < DTOR_ROUNDS && again; round++) {
		again = 0;
		for (i = 0; i < ULP_KEYS_MAX; i++) {
			void *v = t->keys[i];
			void (*dtor)(void *) = key_dtor[i];

			if (!v || !key_used[i])
				continue;
			t->keys[i] = NULL;
			if (dtor) {
				dtor(v);
				again = 1;
			}
		}
	}
	free(t->keys);
	t->keys = NULL;
}
