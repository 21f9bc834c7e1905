/* SPDX-License-Identifier: MIT */
/*
 * mpi_like over ULPs. All ranks live in one address space (one or several PVAS tasks), so a
 * message is copied once, by the receiver, out of memory the sender owns.
 *
 * Mailboxes. Rank r allocates a struct ml_mbox in its own memory and exports it as
 * "ml.mbox.<r>". Its in[s] slot points to the ring that carries messages from s to r; the
 * ring is allocated by s in s's memory the first time s sends to r, and s alone ever writes the
 * slot (once, with a release store). So every ring has exactly one producer (s) and one consumer
 * (r), whatever workers or kernel processes they run on: no locks, only acquire/release on the
 * two ring indices:
 *   - the producer writes a cell at tail, then publishes it with a release store of tail+1;
 *   - the consumer reads cells in [head, tail) after an acquire load of tail, and frees them
 *     with a release store of head; the producer writes a cell again only after an acquire
 *     load of head shows it free. A full ring (ML_CELLS messages not yet received) makes the
 *     sender wait: memory per pair is bounded.
 * The consumer may take a later cell before an earlier one (a receive of another tag): it marks
 * the cell taken (the taken flag is the consumer's alone while the cell is in [head, tail)) and
 * moves head past the taken cells at the front. Scanning from head keeps (source, tag) FIFO.
 *
 * Messages up to ML_EAGER_BYTES travel inside the cell. A larger one (rendezvous) puts a pointer
 * to a request on the sender's stack into the cell and the sender waits until the receiver has
 * copied straight from the sender's buffer and set the request's done flag (its last access).
 * Messages to oneself do not use a ring (a full one would wait for ourselves): ml_self.c.
 *
 * Waiting (a full ring, no matching message, a rendezvous, a barrier) gives the CPU away with
 * pvas_yield or pvas_ulp_switch, and naps when it lasts (ml_wait); it never spins: with 64
 * ranks on 2 cores the rank that would end the wait needs the CPU.
 *
 * Collectives use rank 0's mailbox: a barrier is a counter with a generation number (the last
 * rank to arrive resets the counter and bumps the generation with a release store, the others
 * wait for the generation to change); the allreduce publishes a pointer to every rank's buffer,
 * rank 0 adds them in rank order and writes the sum into every buffer, between two barriers.
 * ml_finalize ends with a barrier (every message has been received, so nobody reads a ring
 * any more) after which each rank but 0 signals that it has left rank 0's mailbox; rank 0 waits
 * for all of them before it returns, so its memory outlives every reader.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ml_self.h"
#include "mpi_like.h"
#include "pvas.h"

#define ML_CELLS 16 /* messages in flight per (sender, receiver) pair */
#define ML_LINE 64
#define ML_MAGIC 0x6d6c5f6d626f7831ull

enum { ML_EAGER, ML_RNDV };

/* The sender's side of a rendezvous, on its stack until done. */
struct ml_req {
	const void *buf;
	uint32_t done;
};

struct ml_cell {
	int32_t tag;
	uint32_t kind;
	uint64_t bytes;
	uint32_t taken; /* the consumer's, while the cell is in [head, tail) */
	uint32_t pad[3];
	union {
		unsigned char data[ML_EAGER_BYTES];
		struct ml_req *req; /* ML_RNDV */
	} u;
};
_Static_assert(sizeof(struct ml_cell) == 256, "a cell is four cache lines");

struct ml_ring {
	/* the sender's pvid */
	int pvid;
	uint32_t tail __attribute__((aligned(ML_LINE))); /* written by the sender */
	uint32_t head __attribute__((aligned(ML_LINE))); /* written by the receiver */
	struct ml_cell cell[ML_CELLS] __attribute__((aligned(ML_LINE)));
};

struct ml_mbox {
	uint64_t magic;
	int rank, size, pvid;
	/* rank 0's mailbox only: the collectives */
	double **slot; /* allreduce: every rank's buffer */
	int *pvids;    /* every rank's pvid, -1 until it has joined */
	uint32_t count __attribute__((aligned(ML_LINE))); /* ranks arrived at the barrier */
	uint32_t gen __attribute__((aligned(ML_LINE)));	  /* barriers completed */
	uint32_t departed __attribute__((aligned(ML_LINE)));
	/* in[s]: ring from rank s, NULL until s first sends here */
	struct ml_ring *in[] __attribute__((aligned(ML_LINE)));
};

static int me = -1, nranks = -1;
static struct ml_mbox *mine, *root;
static struct ml_mbox **boxes; /* other ranks' mailboxes, imported on first use */
static struct ml_ring **tx;    /* tx[d]: my ring to d */
static struct ml_ring **rx;    /* rx[s]: s's ring to me, once published */

#define load_acq(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_rel(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static int my_pvid = -1;

/* A wait loop's state: how often it has waited, since when (0: not yet timed) and its next nap. */
struct waiter {
	unsigned n;
	uint64_t since;
	long nap_ns;
};

#define ML_NAP_AFTER_NS 200000 /* waiting that long: nap */
#define ML_NAP_NS 20000	       /* the first nap; each next one twice as long, up to: */
#define ML_NAP_MAX_NS 1000000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Wait for something another rank does. pvid >= 0: the ULP we wait for; run it here and now if
 * it is ready to run (pvas_ulp_switch takes it from any worker's queue of our task), else let
 * whoever is ready run. Callers pass a pvid when running that one rank is what ends the wait:
 *   - a sender waiting for its receiver (full ring, rendezvous): always;
 *   - a receiver: from its second wait on. In exchanges such as the halo the partner is usually
 *     queued close behind us and has sent by the time we come back; running it at once instead
 *     would chain switches (it runs its own partner, ...) and every ULP switch writes the fs base,
 *     a system call costing microseconds on VMs without FSGSBASE;
 *   - a barrier: from its second wait on, the ranks in turn (we do not know who is missing).
 * The directed switch also brings the rank we wait for over from another worker's queue, instead
 * of whatever pvas_yield would take from there.
 *
 * A wait that lasts longer than ML_NAP_AFTER_NS also naps, 20 us at first and twice as long at
 * each next wait up to 1 ms. The rank that ends it may be in another PVAS task (another kernel
 * process: pvas_ulp_switch says -EPERM) or unknown (pvid -1), and with more workers than CPUs
 * that process may not be running at all while we cycle through our ranks. A nap parks only this
 * ULP (the runtime completes nanosleep on its ring while our other ranks run); once every rank of
 * the worker naps, the worker sleeps in the kernel and the CPU goes to the other processes. Naps
 * of a fixed 20 us never overlapped like that (16 ranks parking one after the other take longer
 * than that since nanosleep parks instead of blocking): ulpspawn -n 64 -t 4 ml_stress on 2 CPUs
 * took 35-100 s (and hung past the tests' 300 s now and then), 0.6-1.2 s with this. Waits for
 * ranks of our own task end before they nap, nearly always.
 */
static void ml_wait(struct waiter *w, int pvid)
{
	struct timespec nap;
	uint64_t now;

	w->n++;
	if (pvid >= 0 && pvid != my_pvid && pvas_ulp_switch(pvid) == 0)
		return;
	now = now_ns();
	if (!w->since) {
		w->since = now;
		w->nap_ns = ML_NAP_NS;
	} else if (now - w->since > ML_NAP_AFTER_NS) {
		nap.tv_sec = 0;
		nap.tv_nsec = w->nap_ns;
		nanosleep(&nap, NULL); /* then still let our task's other ranks run */
		if (w->nap_ns < ML_NAP_MAX_NS)
			w->nap_ns *= 2;
	}
	pvas_yield();
}

static int env_int(const char *name, int *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 1 << 24)
		return -1;
	*out = (int)v;
	return 0;
}

static struct ml_mbox *import_box(int rank)
{
	struct waiter w = {0, 0, 0};
	struct ml_mbox *b;
	char name[32];
	void *p;
	int rc;

	snprintf(name, sizeof(name), "ml.mbox.%d", rank);
	while ((rc = pvas_import(name, &p)) == -ENOENT)
		ml_wait(&w, -1); /* rank not started yet */
	if (rc) {
		fprintf(stderr, "ml_ulp: rank %d: import %s: %s\n", me, name, strerror(-rc));
		return NULL;
	}
	b = p;
	if (b->magic != ML_MAGIC || b->size != nranks || b->rank != rank) {
		fprintf(stderr, "ml_ulp: rank %d: %s is not rank %d of %d ranks\n", me, name, rank,
			nranks);
		return NULL;
	}
	return b;
}

int ml_init(int *argc, char ***argv)
{
	char name[32];
	int pvid, rc;

	(void)argc;
	(void)argv;
	if (pvas_get_pvid(&pvid) != 0) {
		fprintf(stderr, "ml_ulp: not running as a ULP; start the program with ulpexec or "
				"ulpspawn\n");
		return -ENOTSUP;
	}
	if (env_int("ULP_RANK", &me) || env_int("ULP_SIZE", &nranks) || nranks < 1 ||
	    me >= nranks) {
		fprintf(stderr, "ml_ulp: ULP_RANK/ULP_SIZE missing or inconsistent\n");
		me = nranks = -1;
		return -EINVAL;
	}
	/* ML_SIZE: the job is the first ML_SIZE ranks of the launch; the others run something
	 * else beside it (MPMD; bench/io.sh runs a spinning ULP next to the job). */
	if (!env_int("ML_SIZE", &nranks) && (nranks < 1 || me >= nranks)) {
		fprintf(stderr, "ml_ulp: ML_SIZE must be at least ULP_RANK + 1\n");
		me = nranks = -1;
		return -EINVAL;
	}
	mine = aligned_alloc(ML_LINE, (sizeof(*mine) + nranks * sizeof(mine->in[0]) + ML_LINE - 1) /
					  ML_LINE * ML_LINE);
	boxes = calloc(nranks, sizeof(*boxes));
	tx = calloc(nranks, sizeof(*tx));
	rx = calloc(nranks, sizeof(*rx));
	if (!mine || !boxes || !tx || !rx) {
		fprintf(stderr, "ml_ulp: rank %d: out of memory for %d ranks\n", me, nranks);
		return -ENOMEM;
	}
	memset(mine, 0, sizeof(*mine) + nranks * sizeof(mine->in[0]));
	mine->magic = ML_MAGIC;
	mine->rank = me;
	mine->size = nranks;
	mine->pvid = my_pvid = pvid;
	if (me == 0) {
		mine->slot = calloc(nranks, sizeof(*mine->slot));
		mine->pvids = malloc(nranks * sizeof(*mine->pvids));
		if (!mine->slot || !mine->pvids)
			return -ENOMEM;
		memset(mine->pvids, 0xff, nranks * sizeof(*mine->pvids));
	}
	boxes[me] = mine;
	snprintf(name, sizeof(name), "ml.mbox.%d", me);
	rc = pvas_export(name, mine); /* the name table's lock publishes the mailbox */
	if (rc) {
		fprintf(stderr, "ml_ulp: rank %d: export %s: %s\n", me, name, strerror(-rc));
		return rc;
	}
	root = me == 0 ? mine : (boxes[0] = import_box(0));
	if (!root)
		return -EPROTO;
	store_rel(&root->pvids[me], pvid);
	return 0;
}

int ml_rank(void)
{
	return me;
}

int ml_size(void)
{
	return nranks;
}

static struct ml_ring *tx_ring(int dest)
{
	struct ml_ring *r = tx[dest];

	if (r)
		return r;
	if (!boxes[dest] && !(boxes[dest] = import_box(dest)))
		return NULL;
	r = aligned_alloc(ML_LINE, sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->pvid = my_pvid;
	store_rel(&boxes[dest]->in[me], r);
	return tx[dest] = r;
}

int ml_send(const void *buf, size_t bytes, int dest, int tag)
{
	struct ml_req req = {buf, 0};
	struct waiter w = {0, 0, 0};
	struct ml_ring *r;
	struct ml_cell *c;
	uint32_t t;

	if (dest < 0 || dest >= nranks || tag < 0 || (!buf && bytes))
		return -EINVAL;
	if (dest == me)
		return ml_self_put(buf, bytes, tag);
	if (!(r = tx_ring(dest)))
		return -ENOMEM;
	t = r->tail;
	while (t - load_acq(&r->head) == ML_CELLS)
		ml_wait(&w, boxes[dest]->pvid); /* flow control: dest has ML_CELLS of ours unread */
	c = &r->cell[t % ML_CELLS];
	c->tag = tag;
	c->bytes = bytes;
	c->taken = 0;
	if (bytes <= ML_EAGER_BYTES) {
		c->kind = ML_EAGER;
		memcpy(c->u.data, buf, bytes);
	} else {
		c->kind = ML_RNDV;
		c->u.req = &req;
	}
	store_rel(&r->tail, t + 1);
	if (bytes > ML_EAGER_BYTES)
		while (!load_acq(&req.done))
			ml_wait(&w, boxes[dest]->pvid);
	return 0;
}

/* Copy the message out of c; the last access to the sender's request. */
static long deliver(struct ml_cell *c, void *buf, size_t bytes)
{
	size_t n = c->bytes < bytes ? c->bytes : bytes;

	switch (c->kind) {
	case ML_EAGER:
		memcpy(buf, c->u.data, n);
		break;
	default:
		memcpy(buf, c->u.req->buf, n);
		store_rel(&c->u.req->done, 1);
	}
	return c->bytes > bytes ? -EMSGSIZE : (long)n;
}

long ml_recv(void *buf, size_t bytes, int src, int tag)
{
	struct ml_ring *r;
	struct waiter w = {0, 0, 0};
	uint32_t h, i, t;
	long rc;

	if (src < 0 || src >= nranks || tag < 0 || (!buf && bytes))
		return -EINVAL;
	if (src == me)
		return ml_self_take(buf, bytes, tag);
	while (!(r = rx[src]) && !(r = rx[src] = load_acq(&mine->in[src])))
		ml_wait(&w, -1); /* src has never sent to us */
	for (;;) {
		h = r->head;
		t = load_acq(&r->tail);
		for (i = h; i != t; i++) {
			struct ml_cell *c = &r->cell[i % ML_CELLS];

			if (c->taken || c->tag != tag)
				continue;
			rc = deliver(c, buf, bytes);
			c->taken = 1;
			while (h != t && r->cell[h % ML_CELLS].taken)
				h++;
			store_rel(&r->head, h);
			return rc;
		}
		ml_wait(&w, w.n ? r->pvid : -1);
	}
}

/* last: the barrier of ml_finalize. A rank that has passed it may end, and its partition go away,
 * at any moment: no directed switch to anyone then (a switch reads the target's control block). */
static void barrier(int last)
{
	uint32_t gen = load_acq(&root->gen);
	struct waiter w = {0, 0, 0};

	if (__atomic_fetch_add(&root->count, 1, __ATOMIC_ACQ_REL) == (uint32_t)nranks - 1) {
		/* last one in: nobody touches count again before seeing the new generation */
		__atomic_store_n(&root->count, 0, __ATOMIC_RELAXED);
		store_rel(&root->gen, gen + 1);
		return;
	}
	while (load_acq(&root->gen) == gen)
		ml_wait(&w, w.n && !last ? load_acq(&root->pvids[(me + w.n) % nranks]) : -1);
}

int ml_barrier(void)
{
	if (!root)
		return -EINVAL;
	barrier(0);
	return 0;
}

int ml_allreduce_sum(double *inout, int count)
{
	int i, k;

	if (!root || count < 0 || (!inout && count))
		return -EINVAL;
	root->slot[me] = inout;
	barrier(0); /* every buffer published, nobody writes its buffer until the next barrier */
	if (me == 0) {
		for (i = 0; i < count; i++) {
			double s = root->slot[0][i];

			for (k = 1; k < nranks; k++)
				s += root->slot[k][i];
			for (k = 0; k < nranks; k++)
				root->slot[k][i] = s;
		}
	}
	barrier(0);
	return 0;
}

int ml_finalize(void)
{
	struct waiter w = {0, 0, 0};

	if (!root)
		return -EINVAL;
	barrier(1);
	if (me != 0) {
		/* our last access to rank 0's memory */
		__atomic_fetch_add(&root->departed, 1, __ATOMIC_RELEASE);
	} else {
		while (load_acq(&root->departed) != (uint32_t)nranks - 1)
			ml_wait(&w, -1);
	}
	root = NULL;
	return 0;
}
