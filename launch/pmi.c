/* SPDX-License-Identifier: MIT */
/*
 * PMI-1 server engine (launch/pmi.h). The wire format is one command per line of space-separated
 * key=value tokens ("cmd=put kvsname=kvs_0 key=K value=V"); every command but barrier_in and abort
 * gets its answer at once, barrier_in is answered when every rank of the job has entered.
 * What Debian's MPICH 4.0.2 (ch4:ucx, simple PMI client) sends was read off the wire with a probe
 * server: init, get_maxes, get_appnum, get_my_kvsname, get of PMI_process_mapping, then rounds of
 * put + barrier_in + get, finalize; MPI_Abort sends "cmd=abort exitcode=N" and waits for death.
 * PMI_Spawn_multiple (MPICH's simple PMI-1 client in builds whose device can spawn) is the one
 * multi-line command: per application a block "mcmd=spawn", "nprocs=N", ..., "totspawns=T",
 * "spawnssofar=S", ..., "endcmd", and one "cmd=spawn_result" answers the last block.
 */
#include "pmi.h"
#include "pvas.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KVSNAME "kvs_0"
#define KEYLEN_MAX 64
#define VALLEN_MAX 1024
#define LINE_MAX_LEN (KEYLEN_MAX + VALLEN_MAX + 256) /* the longest put, with room to spare */

struct pmi_conn {
	int sfd, cfd; /* server end (ours), client end (the rank's, until handed over) */
	int in_barrier, finalized;
	int in_mcmd;		  /* inside an "mcmd=" block, up to its "endcmd" */
	int mcmd_tot, mcmd_sofar; /* its totspawns= and spawnssofar= */
	size_t inlen;
	char in[LINE_MAX_LEN];
	char *out;
	size_t outlen, outcap;
};

struct kv {
	char *key, *val;
};

struct launch_pmi {
	int n;
	int *appnum;
	struct pmi_conn *c;
	int barrier_count;
	int nfinalized;
	struct kv *kvs; /* open addressing, kvcap a power of two, at most half full */
	size_t kvcount, kvcap;
	struct launch_pmi_ops ops;
	void *arg;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct kv *kv_slot(struct launch_pmi *p, const char *key)
{
	size_t i = hash(key) & (p->kvcap - 1);

	while (p->kvs[i].key && strcmp(p->kvs[i].key, key))
		i = (i + 1) & (p->kvcap - 1);
	return &p->kvs[i];
}

static int kv_grow(struct launch_pmi *p)
{
	struct kv *old = p->kvs;
	size_t oldcap = p->kvcap, i;

	p->kvcap = oldcap ? oldcap * 2 : 256;
	p->kvs = calloc(p->kvcap, sizeof(*p->kvs));
	if (!p->kvs) {
		p->kvs = old;
		p->kvcap = oldcap;
		return -ENOMEM;
	}
	for (i = 0; i < oldcap; i++)
		if (old[i].key)
			*kv_slot(p, old[i].key) = old[i];
	free(old);
	return 0;
}

static int kv_put(struct launch_pmi *p, const char *key, const char *val)
{
	struct kv *s;
	char *v;

	if ((p->kvcount + 1) * 2 > p->kvcap && kv_grow(p))
		return -ENOMEM;
	s = kv_slot(p, key);
	v = strdup(val);
	if (!v)
		return -ENOMEM;
	if (s->key) { /* a put of an existing key replaces it, as hydra does */
		free(s->val);
		s->val = v;
		return 0;
	}
	s->key = strdup(key);
	if (!s->key) {
		free(v);
		return -ENOMEM;
	}
	s->val = v;
	p->kvcount++;
	return 0;
}

static const char *kv_get(struct launch_pmi *p, const char *key)
{
	return p->kvcap ? kv_slot(p, key)->val : NULL;
}

static int emit(struct pmi_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Queue one reply line; launch_pmi_io writes it out as the socket takes it. */
static int emit(struct pmi_conn *c, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (c->outlen + (size_t)len + 2 > c->outcap) {
		size_t cap = (c->outlen + (size_t)len + 2) * 2;
		char *o = realloc(c->out, cap);

		if (!o)
			return -ENOMEM;
		c->out = o;
		c->outcap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(c->out + c->outlen, (size_t)len + 1, fmt, ap);
	va_end(ap);
	c->outlen += (size_t)len;
	c->out[c->outlen++] = '\n';
	return 0;
}

/* The value of key= in a command line's tokens, or NULL. */
static const char *arg(char **tok, int ntok, const char *key)
{
	size_t kl = strlen(key);
	int i;

	for (i = 0; i < ntok; i++)
		if (!strncmp(tok[i], key, kl) && tok[i][kl] == '=')
			return tok[i] + kl + 1;
	return NULL;
}

static void conn_close(struct launch_pmi *p, int rank, int report)
{
	struct pmi_conn *c = &p->c[rank];

	if (c->sfd < 0)
		return;
	close(c->sfd);
	c->sfd = -1;
	if (c->in_barrier) {
		c->in_barrier = 0;
		p->barrier_count--;
	}
	if (report && !c->finalized && p->ops.lost)
		p->ops.lost(p->arg, rank);
}

static int do_barrier(struct launch_pmi *p, struct pmi_conn *c)
{
	int r, rc;

	if (c->in_barrier)
		return -EPROTO; /* a client waits for barrier_out before anything else */
	c->in_barrier = 1;
	if (++p->barrier_count < p->n)
		return 0;
	for (r = 0; r < p->n; r++) {
		p->c[r].in_barrier = 0;
		rc = emit(&p->c[r], "cmd=barrier_out rc=0");
		if (rc)
			return rc;
	}
	p->barrier_count = 0;
	return 0;
}

static int do_put(struct launch_pmi *p, struct pmi_conn *c, char **tok, int ntok)
{
	const char *kvs = arg(tok, ntok, "kvsname"), *key = arg(tok, ntok, "key");
	const char *val = arg(tok, ntok, "value");

	if (!kvs || strcmp(kvs, KVSNAME))
		return emit(c, "cmd=put_result rc=-1 msg=unknown_kvsname");
	if (!key || !*key || strlen(key) > KEYLEN_MAX)
		return emit(c, "cmd=put_result rc=-1 msg=bad_key");
	if (!val)
		val = "";
	if (strlen(val) > VALLEN_MAX)
		return emit(c, "cmd=put_result rc=-1 msg=value_too_long");
	if (kv_put(p, key, val))
		return emit(c, "cmd=put_result rc=-1 msg=out_of_memory");
	return emit(c, "cmd=put_result rc=0 msg=success");
}

static int do_get(struct launch_pmi *p, struct pmi_conn *c, char **tok, int ntok)
{
	const char *kvs = arg(tok, ntok, "kvsname"), *key = arg(tok, ntok, "key"), *v;

	if (!kvs || strcmp(kvs, KVSNAME))
		return emit(c, "cmd=get_result rc=-1 msg=unknown_kvsname");
	if (!key)
		return emit(c, "cmd=get_result rc=-1 msg=no_key");
	/* One node: every rank is local, in one block starting at node 0. */
	if (!strcmp(key, "PMI_process_mapping"))
		return emit(c, "cmd=get_result rc=0 msg=success value=(vector,(0,1,%d))", p->n);
	v = kv_get(p, key);
	if (!v)
		return emit(c, "cmd=get_result rc=-1 msg=key_%s_not_found", key);
	return emit(c, "cmd=get_result rc=0 msg=success value=%s", v);
}

/* spawn, publish_name, lookup_name...: a clear no rather than a hang, and the launcher told. */
static int refuse(struct launch_pmi *p, int rank, const char *cmd)
{
	if (p->ops.refused)
		p->ops.refused(p->arg, rank, cmd);
	return emit(&p->c[rank], "cmd=%s_result rc=-1 msg=%s_not_supported_by_ulpspawn", cmd, cmd);
}

/* A line of an mcmd=spawn block (see the top): only the last block's endcmd is answered. */
static int mcmd_line(struct launch_pmi *p, int rank, const char *line)
{
	struct pmi_conn *c = &p->c[rank];

	if (!strncmp(line, "totspawns=", 10))
		c->mcmd_tot = atoi(line + 10);
	else if (!strncmp(line, "spawnssofar=", 12))
		c->mcmd_sofar = atoi(line + 12);
	if (strcmp(line, "endcmd"))
		return 0;
	c->in_mcmd = 0;
	return c->mcmd_sofar < c->mcmd_tot ? 0 : refuse(p, rank, "spawn");
}

/* One command line (NUL-terminated, no newline). */
static int serve_line(struct launch_pmi *p, int rank, char *line)
{
	struct pmi_conn *c = &p->c[rank];
	char *tok[32], *save = NULL, *t, *msg;
	const char *cmd, *v;
	int ntok = 0;

	if (c->in_mcmd)
		return mcmd_line(p, rank, line);
	if (!strcmp(line, "mcmd=spawn")) {
		c->in_mcmd = 1;
		c->mcmd_tot = c->mcmd_sofar = 0;
		return 0;
	}
	/* abort's msg= (when a client sends one) runs to the end of the line, spaces included */
	msg = strstr(line, " msg=");
	if (msg)
		*msg = 0, msg += 5;
	for (t = strtok_r(line, " ", &save); t && ntok < 32; t = strtok_r(NULL, " ", &save))
		tok[ntok++] = t;
	cmd = arg(tok, ntok, "cmd");
	if (!cmd)
		return -EPROTO;
	if (!strcmp(cmd, "init")) {
		v = arg(tok, ntok, "pmi_version");
		if (!v || strcmp(v, "1"))
			return emit(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
		return emit(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
	}
	if (!strcmp(cmd, "get_maxes"))
		return emit(c, "cmd=maxes kvsname_max=256 keylen_max=%d vallen_max=%d rc=0",
			    KEYLEN_MAX, VALLEN_MAX);
	if (!strcmp(cmd, "get_appnum"))
		return emit(c, "cmd=appnum appnum=%d rc=0", p->appnum[rank]);
	if (!strcmp(cmd, "get_my_kvsname"))
		return emit(c, "cmd=my_kvsname kvsname=" KVSNAME " rc=0");
	if (!strcmp(cmd, "get_universe_size"))
		return emit(c, "cmd=universe_size size=%d rc=0", p->n);
	if (!strcmp(cmd, "put"))
		return do_put(p, c, tok, ntok);
	if (!strcmp(cmd, "get"))
		return do_get(p, c, tok, ntok);
	if (!strcmp(cmd, "barrier_in"))
		return do_barrier(p, c);
	if (!strcmp(cmd, "finalize")) {
		if (!c->finalized) {
			c->finalized = 1;
			p->nfinalized++;
		}
		return emit(c, "cmd=finalize_ack rc=0");
	}
	if (!strcmp(cmd, "abort")) {
		v = arg(tok, ntok, "exitcode");
		if (p->ops.abort)
			p->ops.abort(p->arg, rank, v ? atoi(v) : 1, msg ? msg : "");
		return 0;
	}
	return refuse(p, rank, cmd);
}

static int flush_out(struct pmi_conn *c)
{
	ssize_t w;

	while (c->outlen) {
		w = send(c->sfd, c->out, c->outlen, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		memmove(c->out, c->out + w, c->outlen - (size_t)w);
		c->outlen -= (size_t)w;
	}
	return 0;
}

static int read_in(struct launch_pmi *p, int rank)
{
	struct pmi_conn *c = &p->c[rank];
	ssize_t r;
	char *nl;
	int rc;

	for (;;) {
		r = recv(c->sfd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
		if (r == 0)
			return 1;
		if (r < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->inlen += (size_t)r;
		while ((nl = memchr(c->in, '\n', c->inlen))) {
			size_t len = (size_t)(nl - c->in) + 1;

			*nl = 0;
			rc = serve_line(p, rank, c->in);
			memmove(c->in, c->in + len, c->inlen - len);
			c->inlen -= len;
			if (rc)
				return rc;
			if (c->sfd < 0)
				return 0;
		}
		if (c->inlen == sizeof(c->in))
			return -EMSGSIZE; /* no command is that long */
	}
}

int launch_pmi_io(struct launch_pmi *p, int rank)
{
	int rc, r;

	if (rank < 0 || rank >= p->n || p->c[rank].sfd < 0)
		return -EBADF;
	rc = read_in(p, rank);
	/* A barrier completed by this rank queued replies on every connection. */
	for (r = 0; r < p->n; r++)
		if (p->c[r].sfd >= 0 && p->c[r].outlen) {
			int w = flush_out(&p->c[r]);

			if (w && r != rank)
				conn_close(p, r, 1);
			else if (w && !rc)
				rc = w;
		}
	if (rc == 1) { /* EOF: finalized ranks close normally, others died */
		conn_close(p, rank, 1);
		return 0;
	}
	if (rc < 0)
		conn_close(p, rank, 1);
	return rc;
}

int launch_pmi_create(struct launch_pmi **out, int nranks, const int *appnum,
		      const struct launch_pmi_ops *ops, void *arg)
{
	struct launch_pmi *p;
	int r;

	if (nranks < 1)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->n = nranks;
	p->c = calloc((size_t)nranks, sizeof(*p->c));
	p->appnum = calloc((size_t)nranks, sizeof(int));
	if (!p->c || !p->appnum) {
		launch_pmi_destroy(p);
		return -ENOMEM;
	}
	for (r = 0; r < nranks; r++)
		p->c[r].sfd = p->c[r].cfd = -1;
	for (r = 0; r < nranks; r++)
		p->appnum[r] = appnum ? appnum[r] : 0;
	if (ops)
		p->ops = *ops;
	p->arg = arg;
	*out = p;
	return 0;
}

void launch_pmi_destroy(struct launch_pmi *p)
{
	size_t i;
	int r;

	if (!p)
		return;
	for (r = 0; p->c && r < p->n; r++) {
		if (p->c[r].sfd >= 0)
			close(p->c[r].sfd);
		if (p->c[r].cfd >= 0)
			close(p->c[r].cfd);
		free(p->c[r].out);
	}
	for (i = 0; i < p->kvcap; i++) {
		free(p->kvs[i].key);
		free(p->kvs[i].val);
	}
	free(p->kvs);
	free(p->c);
	free(p->appnum);
	free(p);
}

int launch_pmi_open(struct launch_pmi *p, int rank)
{
	int sv[2];

	if (rank < 0 || rank >= p->n || p->c[rank].sfd >= 0 || p->c[rank].cfd >= 0)
		return -EINVAL;
	/* The rank's end is inherited across execve, as hydra's PMI_FD is: a rank that is a
	 * script exec'ing the MPI program (sh -c 'exec prog'), alone in its task, drops every
	 * close-on-exec descriptor there, as the process it stands for would, and its MPI_Init
	 * found no PMI_FD (the job ended: "rank 0 ended before MPI_Finalize"). It lives in the
	 * launcher only while its task is made (or its process started), when nothing is exec'd. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -errno;
	/* The server's end stays in the launcher, so in the tasks made later: out of the numbers
	 * their ULPs' first opens get */
	p->c[rank].sfd = pvas_fd_high(sv[0]);
	fcntl(p->c[rank].sfd, F_SETFD, FD_CLOEXEC);
	p->c[rank].cfd = sv[1];
	return 0;
}

int launch_pmi_client_fd(const struct launch_pmi *p, int rank)
{
	return rank >= 0 && rank < p->n ? p->c[rank].cfd : -1;
}

void launch_pmi_close_client(struct launch_pmi *p, int rank)
{
	if (rank >= 0 && rank < p->n && p->c[rank].cfd >= 0) {
		close(p->c[rank].cfd);
		p->c[rank].cfd = -1;
	}
}

int launch_pmi_server_fd(const struct launch_pmi *p, int rank)
{
	return rank >= 0 && rank < p->n ? p->c[rank].sfd : -1;
}

short launch_pmi_events(const struct launch_pmi *p, int rank)
{
	if (rank < 0 || rank >= p->n || p->c[rank].sfd < 0)
		return 0;
	return (short)(POLLIN | (p->c[rank].outlen ? POLLOUT : 0));
}

int launch_pmi_env(const struct launch_pmi *p, int rank, int fd, char *buf, size_t len,
		   char *vars[6])
{
	const char *fmt[6] = {"PMI_FD=%d",	    "PMI_RANK=%d",	  "PMI_SIZE=%d",
			      "MPI_LOCALNRANKS=%d", "MPI_LOCALRANKID=%d", "PMI_SPAWNED=%d"};
	int val[6] = {fd, rank, p->n, p->n, rank, 0};
	size_t off = 0;
	int i, w;

	for (i = 0; i < 6; i++) {
		w = snprintf(buf + off, len - off, fmt[i], val[i]);
		if (w < 0 || (size_t)w >= len - off)
			return -ENOSPC;
		vars[i] = buf + off;
		off += (size_t)w + 1;
	}
	return 6;
}

void launch_pmi_rank_ended(struct launch_pmi *p, int rank)
{
	if (rank < 0 || rank >= p->n || p->c[rank].sfd < 0)
		return;
	/* what it wrote before it ended (a finalize) counts: serve it first */
	launch_pmi_io(p, rank);
	conn_close(p, rank, 1);
}

int launch_pmi_finalized(const struct launch_pmi *p)
{
	return p->nfinalized;
}
