/* SPDX-License-Identifier: MIT */
/*
 * A PMI-1 server (the "simple PMI" wire protocol of MPICH's PMI_FD clients) for the ranks of one
 * job, run by the launcher. Each rank gets one end of a socketpair (launch_pmi_open) as PMI_FD; the
 * launcher polls the other ends and calls launch_pmi_io() when one is ready. The engine never
 * blocks: lines are read and answered as they come, replies that do not fit the socket are
 * buffered.
 *
 * Served: init, get_maxes, get_appnum, get_my_kvsname, get_universe_size, put, get (with
 * PMI_process_mapping for one node), barrier_in/out across all ranks, finalize, abort. Not served:
 * spawn and the name service (publish/lookup), which answer rc=-1 with a message.
 */
#ifndef ULP_LAUNCH_PMI_H
#define ULP_LAUNCH_PMI_H

#include <stddef.h>

struct launch_pmi;

/* What the engine tells its launcher. */
struct launch_pmi_ops {
	/* Rank asked to abort the job with code (PMI "abort"); msg may be empty. */
	void (*abort)(void *arg, int rank, int code, const char *msg);
	/* Rank closed its PMI connection without finalize (it died or exited early). */
	void (*lost)(void *arg, int rank);
	/* Rank asked for what this server does not serve (cmd: "spawn", "publish_name",
	 * "lookup_name"...); it is answered rc=-1. May be NULL. */
	void (*refused)(void *arg, int rank, const char *cmd);
};

/* A server for nranks ranks; appnum[r] is rank r's program index in an MPMD job (NULL: all 0).
 * 0 or -errno. */
int launch_pmi_create(struct launch_pmi **out, int nranks, const int *appnum,
		      const struct launch_pmi_ops *ops, void *arg);
void launch_pmi_destroy(struct launch_pmi *p);

/* Make rank's connection (a socketpair). Done per rank, just before the rank's process or PVAS
 * task is made, so that no other rank's process inherits this rank's end: a rank's exit must close
 * the last copy of its end for the server to see EOF. 0 or -errno. */
int launch_pmi_open(struct launch_pmi *p, int rank);

/* The rank's end (to become its PMI_FD; close-on-exec is set: the launcher dups or clears it for
 * the one process that runs the rank). -1 once closed with launch_pmi_close_client. */
int launch_pmi_client_fd(const struct launch_pmi *p, int rank);
/* The launcher is done handing the rank's end over: close our copy, so the rank's exit is seen as
 * EOF on the server end. */
void launch_pmi_close_client(struct launch_pmi *p, int rank);

/* The server end to poll, and the poll events it wants (POLLIN, plus POLLOUT while replies are
 * pending); -1 / 0 once the rank's connection is closed. */
int launch_pmi_server_fd(const struct launch_pmi *p, int rank);
short launch_pmi_events(const struct launch_pmi *p, int rank);
/* Serve what is readable / writable on rank's connection. 0, or -errno on a protocol or I/O
 * error (then the connection is closed and reported as lost). */
int launch_pmi_io(struct launch_pmi *p, int rank);

/* The launcher saw the rank end (its process or ULP exited): the same as EOF on its connection.
 * Ranks of one PVAS task share a descriptor table, so the task keeps a dead rank's end open and
 * no EOF comes while the task lives; the launcher reports the end itself. Reports `lost` when the
 * rank had not sent finalize; nothing when its connection is already closed. */
void launch_pmi_rank_ended(struct launch_pmi *p, int rank);

/* PMI_FD, PMI_RANK, PMI_SIZE, MPI_LOCALNRANKS, MPI_LOCALRANKID, PMI_SPAWNED as "NAME=value"
 * strings in buf (NUL-separated, each pointer stored in vars[0..5]). fd is the descriptor number
 * the rank will see. Returns the number of variables, or -ENOSPC. */
int launch_pmi_env(const struct launch_pmi *p, int rank, int fd, char *buf, size_t len,
		   char *vars[6]);

/* Ranks that sent finalize. */
int launch_pmi_finalized(const struct launch_pmi *p);

#endif
