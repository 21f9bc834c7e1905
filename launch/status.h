/* SPDX-License-Identifier: MIT */
/*
 * How a running job tells `ulps` about its ranks. Each launcher listens on a Unix socket named
 * after its PID in ULP_JOBS_DIR (default /tmp/ulp-jobs, a sticky world-writable folder like
 * /tmp; not in /dev/shm, where MPI libraries' segments are and are checked for leftovers) and,
 * in its event loop, answers each connection with a text snapshot of its ranks, then
 * closes it. Chosen over a shared-memory page that the runtime keeps up to date because:
 * - nothing is written anywhere while nobody asks: the counters a snapshot reads (state,
 *   switches, CPU time) are the ones the scheduler keeps anyway, with plain stores; the switch
 *   path gains no store and no system call;
 * - a job that was killed (even with SIGKILL) cannot be shown as running: nobody accepts on its
 *   socket any more, connect() is refused and `ulps` removes the stale name;
 * - the snapshot comes from the one process that knows ranks, tasks, ended ranks and process
 *   ranks (launch/fallback.h), for the user and kmod backends alike.
 *
 * The snapshot, one record a line, fields separated by one space, the program path last:
 *   job PID TOOL BACKEND RANKS TASKS STARTED_UNIX_S ACCOUNTING
 *   rank RANK PVID PID STATE WHAT SWITCHES CPU_NS PATH
 * STATE: loading, ready, running, blocked, exited, or for a process rank running/blocked/exited;
 * WHAT: for blocked, the system call ("nanosleep", "syscall_N" for one without a name here) or "-";
 * for exited, "status=N" or the signal
 * ("SIGSEGV"); else "-". PVID is -1 for a process rank; SWITCHES and CPU_NS are "-" where not
 * measured (CPU time per ULP needs accounting: ulpspawn --stats).
 */
#ifndef ULP_LAUNCH_STATUS_H
#define ULP_LAUNCH_STATUS_H

#include <stdio.h>
#include <sys/types.h>

#define STATUS_DIR_ENV "ULP_JOBS_DIR"
#define STATUS_DIR_DEFAULT "/tmp/ulp-jobs"
#define STATUS_MAX_CLIENTS 16

/* The folder of the sockets. */
const char *status_dir(void);

struct status_server;

/* Listen as this process; NULL (nothing published, the job runs anyway) when the folder cannot
 * be made or is not a safe one (owned by root or us, and sticky when others may write to it). */
struct status_server *status_open(void);
/* Stop listening and remove the name. NULL is fine. */
void status_close(struct status_server *s);

/* The descriptors to poll and for what: at most 1 + STATUS_MAX_CLIENTS; returns how many. */
int status_pollfds(const struct status_server *s, int *fds, short *events, int max);
/* fd was ready: accept and answer (snapshot writes the text), or go on writing an answer. */
void status_io(struct status_server *s, int fd, void (*snapshot)(void *arg, FILE *f), void *arg);

/* "read", "futex"... for a system call number one may wait in; NULL for others. */
const char *status_sysname(int nr);

#endif
