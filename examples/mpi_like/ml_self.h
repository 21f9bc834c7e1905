/* SPDX-License-Identifier: MIT */
/* Messages a rank sends to itself, shared by both implementations (internal). */
#ifndef ML_SELF_H
#define ML_SELF_H

#include <stddef.h>

/* Keep a copy of buf until ml_self_take. 0 or -ENOMEM. */
int ml_self_put(const void *buf, size_t bytes, int tag);
/* Take the oldest message with tag, as ml_recv does. -EDEADLK: there is none, so waiting for one
 * would wait for ourselves forever. */
long ml_self_take(void *buf, size_t bytes, int tag);

#endif
