/* SPDX-License-Identifier: MIT */
/*
 * Messages to oneself: a FIFO list in the rank's own heap. A send to oneself cannot wait for its
 * receive (the same rank would post it only afterwards), so it never waits, whatever its size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ml_self.h"

struct self_msg {
	struct self_msg *next;
	int tag;
	size_t bytes;
	unsigned char data[];
};

static struct self_msg *head, **tail = &head;

int ml_self_put(const void *buf, size_t bytes, int tag)
{
	struct self_msg *m = malloc(sizeof(*m) + bytes);

	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->tag = tag;
	m->bytes = bytes;
	if (bytes)
		memcpy(m->data, buf, bytes);
	*tail = m;
	tail = &m->next;
	return 0;
}

long ml_self_take(void *buf, size_t bytes, int tag)
{
	struct self_msg **p, *m;
	long n;

	for (p = &head; (m = *p); p = &m->next) {
		if (m->tag != tag)
			continue;
		if (!(*p = m->next))
			tail = p;
		n = (long)(m->bytes < bytes ? m->bytes : bytes);
		if (n)
			memcpy(buf, m->data, n);
		n = m->bytes > bytes ? -EMSGSIZE : n;
		free(m);
		return n;
	}
	return -EDEADLK;
}
