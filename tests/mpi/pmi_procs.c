/* SPDX-License-Identifier: MIT */
/*
 * pmi_procs -n N PROG [ARGS]: run N processes of PROG under launch/pmi.c's PMI-1 server, the way
 * mpiexec would, to test the server against real MPI libraries independently of ULPs. Exit
 * status: 0 when every rank exits 0, the code given to MPI_Abort, or the first failure by rank
 * (128+signal for a killed rank); a rank that aborts or dies before finalize ends the job.
 */
#include "pmi.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pid_t *pids;
static int nranks, job_code = -1, culprit = -1;

static void end_job(void)
{
	int r;

	for (r = 0; r < nranks; r++)
		if (pids[r] > 0)
			kill(pids[r], SIGKILL);
}

static void on_abort(void *arg, int rank, int code, const char *msg)
{
	fprintf(stderr, "pmi_procs: rank %d called abort with exit code %d%s%s; ending the job\n",
		rank, code, *msg ? ": " : "", msg);
	if (job_code < 0)
		job_code = code;
	end_job();
}

/* The first rank to go without finalize ends the job; the job's status becomes that rank's. */
static void on_lost(void *arg, int rank)
{
	if (job_code >= 0 || culprit >= 0)
		return; /* ranks we killed ourselves */
	fprintf(stderr, "pmi_procs: rank %d ended before MPI_Finalize; ending the job\n", rank);
	culprit = rank;
	end_job();
}

static pid_t start_rank(struct launch_pmi *p, int rank, char **argv)
{
	char buf[256], *vars[6];
	int fd = launch_pmi_client_fd(p, rank), i, n;
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* the child: the rank's end without close-on-exec, the other ranks' ends closed on exec */
	if (fd < 0 || (fd = dup(fd)) < 0)
		_exit(127);
	n = launch_pmi_env(p, rank, fd, buf, sizeof(buf), vars);
	for (i = 0; i < n; i++)
		putenv(vars[i]);
	execvp(argv[0], argv);
	fprintf(stderr, "pmi_procs: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	struct launch_pmi_ops ops = {on_abort, on_lost, NULL};
	struct launch_pmi *p;
	struct pollfd *pfd;
	int r, rc, status, first_bad = 0, left;

	if (argc < 4 || strcmp(argv[1], "-n") || (nranks = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: pmi_procs -n N PROG [ARGS]\n");
		return 2;
	}
	rc = launch_pmi_create(&p, nranks, NULL, &ops, NULL);
	pids = calloc((size_t)nranks, sizeof(*pids));
	pfd = calloc((size_t)nranks, sizeof(*pfd));
	if (rc || !pids || !pfd) {
		fprintf(stderr, "pmi_procs: PMI server: %s\n", strerror(rc ? -rc : ENOMEM));
		return 1;
	}
	for (r = 0; r < nranks; r++) {
		rc = launch_pmi_open(p, r);
		if (rc) {
			fprintf(stderr, "pmi_procs: rank %d: socketpair: %s\n", r, strerror(-rc));
			return 1;
		}
		pids[r] = start_rank(p, r, argv + 3);
		launch_pmi_close_client(p, r);
	}
	for (left = nranks; left;) {
		for (r = 0; r < nranks; r++) {
			pfd[r].fd = launch_pmi_server_fd(p, r);
			pfd[r].events = launch_pmi_events(p, r);
		}
		if (poll(pfd, (nfds_t)nranks, 100) < 0 && errno != EINTR)
			break;
		for (r = 0; r < nranks; r++)
			if (pfd[r].fd >= 0 && pfd[r].revents)
				launch_pmi_io(p, r);
		while ((rc = waitpid(-1, &status, WNOHANG)) > 0) {
			for (r = 0; r < nranks && pids[r] != rc; r++)
				;
			if (r == nranks)
				continue;
			pids[r] = 0;
			left--;
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			if (r == culprit) {
				fprintf(stderr, "pmi_procs: rank %d: %s %d\n", r,
					WIFEXITED(status) ? "exited with status"
							  : "killed by signal",
					WIFEXITED(status) ? rc : WTERMSIG(status));
				first_bad = rc ? rc : 1;
			} else if (rc && !first_bad && culprit < 0) {
				first_bad = rc;
			}
		}
	}
	launch_pmi_destroy(p);
	return job_code >= 0 ? job_code : first_bad;
}
