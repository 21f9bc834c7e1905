/* SPDX-License-Identifier: MIT */
/* A job of ranks over PVAS tasks and the launcher's event loop (job.h). */
#include "job.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "execfile.h"
#include "fallback.h"
#include "pmi.h"
#include "status.h"
#include "topo.h"
#include "pvas.h"

#define LINE_MAX_BUF (64 * 1024) /* a longer line is passed on in pieces of this size */

/* One output stream of a rank under -l: the pipe we read, the partial line, where lines go. */
struct stream {
	int fd;	  /* read end, -1 once at EOF */
	int sink; /* our 1 or 2, or the rank's file under --output-filename */
	char *buf;
	size_t len, cap;
};

struct rank {
	int pvid;    /* -2: the first ULP of task `task` (pvas_spawn returns the task) */
	pid_t task;  /* for a process rank: its PID */
	int process; /* its program is not PIE: an ordinary child process (fallback.h) */
	int pidfd;   /* process rank: readable once it ended; -1 once reaped */
	int status, ended, by_abort;
	struct pvas_ulp_stats st;
	struct stream out, err;
	int file_out, file_err; /* --output-filename */
};

struct job {
	struct job_opts *o;
	struct rank *r;
	long total;
	pvd_t pvd;
	int sigfd, evfd;
	int stop_signal;
	int running;   /* every rank was started: SIGINT/SIGTERM are forwarded from then on */
	int forwarded; /* SIGINT or SIGTERM sent on to every rank (the first one); 0: none */
	pid_t
	    fwd_from; /* ... who sent it, and when (CLOCK_MONOTONIC, ms): its echo is no request */
	long long fwd_ms;
	long abort_rank; /* -1: no abort */
	int ulps_done;
	long procs_live; /* process ranks not yet reaped */
	int killed; /* end_job or an abort sent SIGKILL: the SIGKILLed ranks are not failures */
	struct status_server *status; /* answers ulps (status.h); NULL: not published */
	time_t started;
	struct launch_pmi *pmi; /* --pmi */
	int *pmi_fd;		/* rank r's PMI_FD: the number its end has in its task */
	long pmi_abort_rank, pmi_lost_rank; /* -1: none */
	int pmi_abort_code;
};

int job_setenv(struct job_opts *o, const char *name, const char *value)
{
	char **n;

	if (!*name || strchr(name, '=')) {
		fprintf(stderr, "%s: '%s' is not a variable name\n", o->tool, name);
		return -1;
	}
	if (!value)
		value = getenv(name);
	if (!value) {
		fprintf(stderr, "%s: -x %s: %s is not set in this environment\n", o->tool, name,
			name);
		return -1;
	}
	n = realloc(o->setenv, (size_t)(o->nsetenv + 1) * sizeof(*n));
	if (!n || asprintf(&n[o->nsetenv], "%s=%s", name, value) < 0) {
		fprintf(stderr, "%s: out of memory\n", o->tool);
		free(n);
		return -1;
	}
	o->setenv = n;
	o->nsetenv++;
	return 0;
}

/* env (from cmd_rank_env) with the -genv/-x settings: a setting replaces the same name. */
static char **with_settings(const struct job_opts *o, char **env)
{
	size_t n = 0, i, k;
	char **out;
	int s;

	if (!env || !o->nsetenv)
		return env;
	while (env[n])
		n++;
	out = calloc(n + (size_t)o->nsetenv + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0, k = 0; i < n; i++) {
		for (s = 0; s < o->nsetenv; s++) {
			size_t l = strcspn(o->setenv[s], "=") + 1;

			if (!strncmp(env[i], o->setenv[s], l))
				break;
		}
		if (s == o->nsetenv)
			out[k++] = env[i];
	}
	for (s = 0; s < o->nsetenv; s++)
		out[k++] = o->setenv[s];
	free(env);
	return out;
}

/* A path given relative to where the launcher was started, made absolute before --wdir. */
static char *absolute(const char *p)
{
	char cwd[4096], *r;

	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return strdup(p);
	return asprintf(&r, "%s/%s", cwd, p) < 0 ? NULL : r;
}

static int mkdirs(const char *dir)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = 0;
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -errno;
			*p = c;
			if (!c)
				return 0;
		}
	}
}

static int open_outputs(struct job *j)
{
	long r;

	for (r = 0; r < j->total; r++) {
		char d[4096], f[4200];
		int rc;

		snprintf(d, sizeof(d), "%s/%ld", j->o->outdir, r);
		rc = mkdirs(d);
		if (!rc) {
			snprintf(f, sizeof(f), "%s/stdout", d);
			j->r[r].file_out =
			    pvas_fd_high(open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
			snprintf(f, sizeof(f), "%s/stderr", d);
			j->r[r].file_err =
			    pvas_fd_high(open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
			if (j->r[r].file_out < 0 || j->r[r].file_err < 0)
				rc = -errno;
		}
		if (rc) {
			fprintf(stderr, "%s: --output-filename: %s: %s\n", j->o->tool, d,
				strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static void write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* our output is gone (EPIPE): drop, as a process would die */
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

/* One whole line, tagged, in one writev: lines of different ranks never interleave. */
static void emit(long rank, struct stream *s, const char *line, size_t len)
{
	char tag[32];
	struct iovec iov[3];

	iov[0].iov_base = tag;
	iov[0].iov_len = (size_t)snprintf(tag, sizeof(tag), "[%ld] ", rank);
	iov[1].iov_base = (void *)line;
	iov[1].iov_len = len;
	iov[2].iov_base = "\n";
	iov[2].iov_len = 1;
	write_all(s->sink, iov, 3);
}

/* Read what the rank wrote; pass on each complete line. At EOF the partial line goes too. */
static void pump(long rank, struct stream *s)
{
	char chunk[16384];
	ssize_t n = read(s->fd, chunk, sizeof(chunk));
	size_t start = 0, i;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (s->len)
			emit(rank, s, s->buf, s->len);
		s->len = 0;
		close(s->fd);
		s->fd = -1;
		return;
	}
	if (s->len + (size_t)n > s->cap) {
		size_t cap = s->len + (size_t)n + 4096;
		char *b = realloc(s->buf, cap);

		if (!b) {
			emit(rank, s, s->buf, s->len); /* out of memory: pass it on unfinished */
			s->len = 0;
			b = s->buf;
			cap = s->cap;
			if (s->cap < (size_t)n)
				return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, chunk, (size_t)n);
	s->len += (size_t)n;
	for (i = 0; i < s->len; i++) {
		if (s->buf[i] != '\n' && i - start < LINE_MAX_BUF)
			continue;
		emit(rank, s, s->buf + start, i - start);
		start = i + (s->buf[i] == '\n');
	}
	memmove(s->buf, s->buf + start, s->len - start);
	s->len -= start;
}

static long find_rank(const struct job *j, int pvid, pid_t task)
{
	long r;

	for (r = 0; r < j->total; r++)
		if (j->r[r].pvid == pvid && !j->r[r].ended)
			return r;
	for (r = 0; r < j->total; r++)
		if (j->r[r].pvid == -2 && j->r[r].task == task)
			return r;
	return -1;
}

static int exit_code(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* Every task and every process rank still running. */
static void kill_all(struct job *j)
{
	long r;

	pvas_kill(j->pvd, SIGKILL);
	for (r = 0; r < j->total; r++)
		if (j->r[r].process && j->r[r].pidfd >= 0)
			kill(j->r[r].task, SIGKILL); /* not reaped yet: the PID is still its own */
}

static void end_job(struct job *j, int sig)
{
	if (!j->stop_signal)
		j->stop_signal = sig;
	j->killed = 1;
	kill_all(j);
}

/* sig to every rank still running: each task's runtime gives a signal from outside to each of its
 * ULPs, which take their own actions for it (docs/usage.md); process ranks get it from the kernel.
 */
static void forward(struct job *j, int sig)
{
	long r;

	pvas_kill(j->pvd, sig);
	for (r = 0; r < j->total; r++)
		if (j->r[r].process && j->r[r].pidfd >= 0)
			kill(j->r[r].task, sig);
}

/* A rank ended by the SIGINT/SIGTERM the launcher forwarded did what it was asked: it does not
 * end the others, which take their own actions for the same signal. */
static int by_forwarded(const struct job *j, int status)
{
	return j->forwarded && WIFSIGNALED(status) && WTERMSIG(status) == j->forwarded;
}

/* A rank called MPI_Abort (PMI abort): the job ends with its code, as under mpiexec. */
static void pmi_abort(void *arg, int rank, int code, const char *msg)
{
	struct job *j = arg;

	if (j->killed)
		return;
	fprintf(stderr, "%s: rank %d called MPI_Abort with exit code %d%s%s; ending the job\n",
		j->o->tool, rank, code, *msg ? ": " : "", msg);
	cmd_map_count_hint(j->o->tool); /* before the ranks go: their mappings count */
	j->pmi_abort_rank = rank;
	j->pmi_abort_code = code;
	j->killed = 1;
	kill_all(j);
}

/* A rank closed its PMI connection before finalize: it ended (or closed PMI_FD) inside MPI, and
 * the others would wait for it forever in a PMI barrier. */
static void pmi_lost(void *arg, int rank)
{
	struct job *j = arg;

	/* After a forwarded SIGINT/SIGTERM, ranks end before MPI_Finalize as asked (or go on
	 * after a handler): the job ends when all have ended, or at the second signal. */
	if (j->killed || j->forwarded)
		return;
	fprintf(stderr,
		"%s: rank %d ended before MPI_Finalize (its PMI connection closed); ending "
		"the job\n",
		j->o->tool, rank);
	j->pmi_lost_rank = rank;
	j->killed = 1;
	kill_all(j);
}

/* A rank asked for a PMI service we do not give (it gets rc=-1, and its MPI library an error):
 * say so, naming the MPI call, so that the job's failure is not a mystery. */
static void pmi_refused(void *arg, int rank, const char *cmd)
{
	static const char *const calls[][2] = {{"spawn", "MPI_Comm_spawn"},
					       {"publish_name", "MPI_Publish_name"},
					       {"unpublish_name", "MPI_Unpublish_name"},
					       {"lookup_name", "MPI_Lookup_name"}};
	struct job *j = arg;
	const char *call = NULL;
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(cmd, calls[i][0]))
			call = calls[i][1];
	fprintf(stderr,
		"%s: rank %d asked for PMI %s%s%s%s, which %s does not serve: answered "
		"with an error\n",
		j->o->tool, rank, cmd, call ? " (" : "", call ? call : "", call ? ")" : "",
		j->o->tool);
}

/* A death a shell does not report: SIGPIPE once the reader of the launcher's own stdout went
 * away (`ulpexec seq 1000000 | head -1`; a pipe's write end polls POLLERR then). The status
 * says it (141), as a shell's $? does; stderr stays quiet. A SIGPIPE from anything else (a
 * rank's socket) is reported as every other death. */
static int quiet_death(int status)
{
	struct pollfd p = {1, POLLOUT, 0};

	return WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE && poll(&p, 1, 0) == 1 &&
	       (p.revents & POLLERR);
}

/* A rank whose partition had no room for a mapping (the runtime says so in its st.how): once,
 * how large the partitions are and how to make them larger. */
static void partition_hint(const struct job *j, const char *how)
{
	static int said;
	unsigned long long ps = j->o->psize ? j->o->psize : 4ull << 30, more = 2 * ps;

	if (said || !strstr(how, "its partition had no room"))
		return;
	said = 1;
	fprintf(stderr,
		"%s: each ULP of this job lives in a partition of %llu MiB (its program, heap, "
		"mappings and stacks): --partition-size %llu%c or more gives it more room\n",
		j->o->tool, ps >> 20, more >= 1ull << 30 ? more >> 30 : more >> 20,
		more >= 1ull << 30 ? 'g' : 'm');
}

/* Rank x ended with a wait(2)-style status: record it, and end the job when a signal killed it
 * (unless --keep-going or the job is ending already). */
static void rank_ended(struct job *j, long x, int status, const struct pvas_ulp_stats *st)
{
	j->r[x].ended = 1;
	j->r[x].status = status;
	j->r[x].st = *st;
	if (j->killed) {
		j->r[x].by_abort = WIFSIGNALED(status);
		return;
	}
	if ((WIFSIGNALED(status) && !by_forwarded(j, status)) ||
	    (WIFEXITED(status) && WEXITSTATUS(status)))
		cmd_map_count_hint(j->o->tool);
	if (WIFSIGNALED(status) && !j->o->keep_going && !by_forwarded(j, status)) {
		j->abort_rank = x;
		j->killed = 1;
		if (!quiet_death(status)) {
			fprintf(stderr,
				"%s: rank %ld (%s, %s %d) %s: ending the job (--keep-going lets "
				"the other ranks finish)\n",
				j->o->tool, x, st->path, j->r[x].process ? "process" : "task",
				(int)st->task, st->how);
			partition_hint(j, st->how);
		}
		kill_all(j);
	}
}

/* The ULPs that ended since the last call (the event fd was readable). */
static void collect(struct job *j)
{
	for (;;) {
		struct pvas_ulp_stats st;
		int status, pvid = pvas_ulp_wait(j->pvd, -1, &status, &st, PVAS_WNOHANG);
		long x;

		if (pvid == -ECHILD)
			j->ulps_done = 1;
		if (pvid < 0)
			return;
		x = find_rank(j, pvid, st.task);
		if (x < 0)
			continue; /* a ULP a rank started with pvas_ulp_exec */
		j->r[x].pvid = pvid;
		rank_ended(j, x, status, &st);
		/* its PMI end may stay open in its task (shared with other ranks): EOF for it */
		if (j->pmi)
			launch_pmi_rank_ended(j->pmi, (int)x);
	}
}

/* Process rank x's pidfd is readable (block: wait for it, the job is being torn down). */
static void collect_process(struct job *j, long x, int block)
{
	struct rank *p = &j->r[x];
	struct pvas_ulp_stats st;
	int status;
	struct rusage ru;
	pid_t got;

	memset(&ru, 0, sizeof(ru));
	do
		got = wait4(p->task, &status, block ? 0 : WNOHANG, &ru);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return;
	if (got < 0) /* cannot happen for our own child; do not wait for it forever */
		status = 127 << 8;
	close(p->pidfd);
	p->pidfd = -1;
	j->procs_live--;
	memset(&st, 0, sizeof(st));
	st.pvid = -1;
	st.task = p->task;
	st.ended = 1;
	st.status = status;
	st.cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
		    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	snprintf(st.path, sizeof(st.path), "%s", p->st.path);
	if (WIFSIGNALED(status))
		snprintf(st.how, sizeof(st.how), "killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(st.how, sizeof(st.how), "exited with status %d", WEXITSTATUS(status));
	rank_ended(j, x, status, &st);
}

/* Tear-down after a failure of the loop itself: the job was ended; wait for every rank. */
static void reap_all(struct job *j)
{
	long r;

	while (pvas_wait(j->pvd, -1, NULL) >= 0)
		;
	for (r = 0; r < j->total; r++)
		if (j->r[r].process && j->r[r].pidfd >= 0)
			collect_process(j, r, 1);
}

/* A signal the same sender repeats within this many ms is its echo (signals()); a person's
 * second Ctrl-C comes later. */
#define ECHO_MS 100

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void signals(struct job *j)
{
	struct signalfd_siginfo si;

	while (read(j->sigfd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		/* As mpiexec: SIGUSR1/SIGUSR2 go on to every rank, and so does the first SIGINT
		 * or SIGTERM once every rank runs; a second one (a rank that ignores or survives
		 * it), SIGHUP, or any of them while ranks are still being started end the job. */
		if (sig == SIGUSR1 || sig == SIGUSR2) {
			forward(j, sig);
		} else if (sig == j->forwarded && !j->killed && (pid_t)si.ssi_pid == j->fwd_from &&
			   now_ms() - j->fwd_ms < ECHO_MS) {
			/* The same signal from the same sender at once: `timeout` sends its SIGTERM
			 * to the launcher and then to its whole process group, the launcher again
			 * (a terminal's Ctrl-C reaches the group once). Not a second request: ranks
			 * with a SIGTERM handler were killed by it before. */
			continue;
		} else if ((sig == SIGINT || sig == SIGTERM) && j->running && !j->forwarded &&
			   !j->killed) {
			j->forwarded = sig;
			j->fwd_from = (pid_t)si.ssi_pid;
			j->fwd_ms = now_ms();
			fprintf(stderr,
				"%s: SIG%s sent on to every rank; a second SIGINT or SIGTERM ends "
				"the job\n",
				j->o->tool, sigabbrev_np(sig));
			forward(j, sig);
		} else {
			if (j->forwarded && !j->killed)
				fprintf(stderr, "%s: SIG%s again: ending the job\n", j->o->tool,
					sigabbrev_np(sig));
			end_job(j, sig);
		}
	}
}

/* The event loop: until every rank is accounted for and every output pipe is at EOF. */
/* A process rank from /proc: state, the call it waits in, CPU time. */
static void process_state(pid_t pid, const char **state, char *what, size_t len, uint64_t *cpu_ns)
{
	char buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long nr = -1;
	FILE *f;

	*state = "running";
	snprintf(what, len, "-");
	snprintf(buf, sizeof(buf), "/proc/%d/stat", (int)pid);
	f = fopen(buf, "r");
	if (!f)
		return;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime stime */
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", buf, &ut,
			 &st) != 3)
		return;
	*cpu_ns = (ut + st) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK));
	if (buf[0] == 'Z' || buf[0] == 'X') {
		*state = "exited";
		return;
	}
	if (buf[0] != 'S' && buf[0] != 'D')
		return;
	*state = "blocked";
	snprintf(buf, sizeof(buf), "/proc/%d/syscall", (int)pid);
	f = fopen(buf, "r");
	if (f && fscanf(f, "%ld", &nr) == 1 && status_sysname((int)nr))
		snprintf(what, len, "%s", status_sysname((int)nr));
	if (f)
		fclose(f);
}

/* The answer to ulps (status.h). */
static void snapshot(void *arg, FILE *f)
{
	static const char *const names[] = {"loading", "ready", "running", "blocked", "exited"};
	struct job *j = arg;
	long r;

	fprintf(f, "job %d %s %s %ld %ld %lld %d\n", (int)getpid(), j->o->tool,
		pvas_backend(j->pvd) == PVAS_BACKEND_KMOD ? "kmod" : "user", j->total, j->o->tasks,
		(long long)j->started, j->o->stats);
	for (r = 0; r < j->total; r++) {
		const struct rank *x = &j->r[r];
		struct pvas_ulp_stats st = x->st;
		const char *state = "loading";
		char what[64] = "-", sw[32] = "-", cpu[32] = "-";
		int pvid = x->pvid, sysno;

		if (x->ended) {
			state = "exited";
			if (WIFSIGNALED(x->status))
				snprintf(what, sizeof(what), "SIG%s",
					 sigabbrev_np(WTERMSIG(x->status)) ?: "?");
			else
				snprintf(what, sizeof(what), "status=%d", WEXITSTATUS(x->status));
		} else if (x->process && x->task > 0) {
			st.cpu_ns = 0;
			process_state(x->task, &state, what, sizeof(what), &st.cpu_ns);
		} else if (x->task > 0) {
			int s;

			if (pvid == -2)
				pvid = pvas_task_pvid(j->pvd, x->task);
			s = pvas_ulp_state(j->pvd, pvid, &sysno);
			if (s >= 0 && s < 5 && pvas_stats(j->pvd, pvid, &st) == 0) {
				state = names[s];
				if (s == PVAS_ULP_BLOCKED && status_sysname(sysno))
					snprintf(what, sizeof(what), "%s", status_sysname(sysno));
				else if (s == PVAS_ULP_BLOCKED && sysno >= 0)
					snprintf(what, sizeof(what), "syscall_%d", sysno);
			}
		}
		if (!x->process && (x->ended || x->task > 0))
			snprintf(sw, sizeof(sw), "%llu", (unsigned long long)st.switches);
		if (x->process || j->o->stats)
			snprintf(cpu, sizeof(cpu), "%llu", (unsigned long long)st.cpu_ns);
		/* A ULP's own pid once it has one (libulp/kernel/ident.c), else its task's. */
		fprintf(f, "rank %ld %d %d %s %s %s %s %s\n", r, x->process ? -1 : pvid,
			!x->process && st.pid > 0 ? (int)st.pid : (int)x->task, state, what, sw,
			cpu, x->process ? x->st.path : st.path);
	}
}

/* What entry i of the poll set is: rank r's stdout (0), stderr (1), PMI connection (2),
 * pidfd (3), the status socket or one of its clients (4), or the topology's helper (5). */
struct pollwho {
	long r;
	int what;
};

/* The event loop: until every rank is accounted for and every output pipe is at EOF. Only open
 * descriptors go into the poll set: poll refuses more entries than RLIMIT_NOFILE (10,000 ranks
 * with two -1 entries each were over 20,000), closed ones included. */
static void loop(struct job *j)
{
	size_t max = (size_t)(2 + 4 * j->total + 1 + STATUS_MAX_CLIENTS + 1);
	struct pollfd *p = calloc(max, sizeof(*p));
	struct pollwho *who = calloc(max, sizeof(*who));
	long r;
	int i;

	if (!p || !who) {
		fprintf(stderr, "%s: out of memory; ending the job\n", j->o->tool);
		end_job(j, SIGTERM);
		reap_all(j);
		free(p);
		free(who);
		return;
	}
	collect(j); /* -ECHILD at once when no rank was started (a refused first program) */
	for (;;) {
		int n = 2, open = 0;

		p[0] = (struct pollfd){j->sigfd, POLLIN, 0};
		p[1] = (struct pollfd){j->ulps_done ? -1 : j->evfd, POLLIN, 0};
		for (r = 0; r < j->total; r++) {
			if (j->r[r].out.fd >= 0) {
				who[n] = (struct pollwho){r, 0};
				p[n++] = (struct pollfd){j->r[r].out.fd, POLLIN, 0};
			}
			if (j->r[r].err.fd >= 0) {
				who[n] = (struct pollwho){r, 1};
				p[n++] = (struct pollfd){j->r[r].err.fd, POLLIN, 0};
			}
		}
		open = n - 2;
		for (r = 0; j->pmi && r < j->total; r++) {
			if (launch_pmi_server_fd(j->pmi, (int)r) < 0)
				continue;
			who[n] = (struct pollwho){r, 2};
			p[n++] = (struct pollfd){launch_pmi_server_fd(j->pmi, (int)r),
						 launch_pmi_events(j->pmi, (int)r), 0};
		}
		for (r = 0; j->procs_live && r < j->total; r++) {
			if (!j->r[r].process || j->r[r].pidfd < 0)
				continue;
			who[n] = (struct pollwho){r, 3};
			p[n++] = (struct pollfd){j->r[r].pidfd, POLLIN, 0};
		}
		if (j->ulps_done && !open && !j->procs_live)
			break;
		if (topo_pollfd() >= 0) {
			who[n] = (struct pollwho){-1, 5};
			p[n++] = (struct pollfd){topo_pollfd(), POLLIN, 0};
		}
		if (j->status) {
			int sfd[1 + STATUS_MAX_CLIENTS], ns, k;
			short sev[1 + STATUS_MAX_CLIENTS];

			ns = status_pollfds(j->status, sfd, sev, 1 + STATUS_MAX_CLIENTS);
			for (k = 0; k < ns; k++) {
				who[n] = (struct pollwho){-1, 4};
				p[n++] = (struct pollfd){sfd[k], sev[k], 0};
			}
		}
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: poll: %s; ending the job\n", j->o->tool,
				strerror(errno));
			end_job(j, SIGTERM);
			reap_all(j);
			break;
		}
		if (p[0].revents)
			signals(j);
		if (p[1].revents)
			collect(j);
		for (i = 2; i < n; i++) {
			if (!p[i].revents)
				continue;
			r = who[i].r;
			if (who[i].what == 0)
				pump(r, &j->r[r].out);
			else if (who[i].what == 1)
				pump(r, &j->r[r].err);
			else if (who[i].what == 2)
				launch_pmi_io(j->pmi, (int)r);
			else if (who[i].what == 3)
				collect_process(j, r, 0);
			else if (who[i].what == 5)
				topo_end(); /* the topology's helper ended */
			else
				status_io(j->status, p[i].fd, snapshot, j);
		}
	}
	free(p);
	free(who);
}

static void print_stats(const struct job *j)
{
	long r;

	printf("%s: backend %s\n", j->o->tool,
	       pvas_backend(j->pvd) == PVAS_BACKEND_KMOD ? "kmod" : "user");
	printf("%-6s %-5s %-8s %-10s %-12s %-8s %s\n", "rank", "pvid", "task", "switches", "cpu_ms",
	       "status", "program");
	for (r = 0; r < j->total; r++) {
		const struct rank *x = &j->r[r];
		char st[32];

		if (!x->ended)
			snprintf(st, sizeof(st), "-");
		else if (WIFSIGNALED(x->status))
			snprintf(st, sizeof(st), "SIG%s", sigabbrev_np(WTERMSIG(x->status)) ?: "?");
		else
			snprintf(st, sizeof(st), "%d", WEXITSTATUS(x->status));
		printf("%-6ld %-5d %-8d %-10llu %-12.3f %-8s %s\n", r, x->pvid, (int)x->task,
		       (unsigned long long)x->st.switches, x->st.cpu_ns / 1e6, st, x->st.path);
	}
	fflush(stdout);
}

/* Each failed rank on stderr; the job's exit status, and in *from the rank whose status it is
 * (-1: none, or a PMI abort's code). */
static int report(struct job *j, long *from)
{
	long r, aborted = 0;
	int status = 0;

	*from = -1;

	for (r = 0; r < j->total; r++) {
		struct rank *x = &j->r[r];
		int code;

		if (!x->ended)
			continue;
		code = exit_code(x->status);
		if (!code)
			continue;
		if (x->by_abort) {
			aborted++;
			continue;
		}
		if (r != j->abort_rank && !quiet_death(x->status)) {
			fprintf(stderr, "%s: rank %ld (%s, %s %d): %s\n", j->o->tool, r, x->st.path,
				x->process ? "process" : "task", (int)x->task, x->st.how);
			partition_hint(j, x->st.how);
		}
		if (!status) {
			status = code;
			*from = r;
		}
	}
	if (j->abort_rank >= 0) {
		int sig = WTERMSIG(j->r[j->abort_rank].status);

		if (!quiet_death(j->r[j->abort_rank].status))
			fprintf(stderr,
				"%s: job aborted: rank %ld was killed by signal %d (%s); %ld other "
				"rank(s) ended by the abort\n",
				j->o->tool, j->abort_rank, sig, strsignal(sig), aborted);
		status = 128 + sig; /* as mpiexec: the status of the rank that brought it down */
		*from = j->abort_rank;
	}
	if (j->pmi_abort_rank >= 0) {
		status = j->pmi_abort_code;
		*from = -1;
	} else if (j->pmi_lost_rank >= 0 && !status) {
		status = 1; /* it left the job hanging: a failure even if it exited 0 */
	}
	return status;
}

/* --pmi: a PMI-1 server for the job, each rank's appnum its program's index (MPMD). */
static int pmi_create(struct job *j, struct segment *segs, int nsegs)
{
	static const struct launch_pmi_ops ops = {pmi_abort, pmi_lost, pmi_refused};
	int *appnum = calloc((size_t)j->total, sizeof(int)), s, rc;
	long r = 0, k;

	if (!appnum) {
		fprintf(stderr, "%s: out of memory\n", j->o->tool);
		return -1;
	}
	for (s = 0; s < nsegs; s++)
		for (k = 0; k < segs[s].n; k++)
			appnum[r++] = s;
	rc = launch_pmi_create(&j->pmi, (int)j->total, appnum, &ops, j);
	free(appnum);
	j->pmi_fd = calloc((size_t)j->total, sizeof(int));
	if (!rc && !j->pmi_fd)
		rc = -ENOMEM;
	if (rc)
		fprintf(stderr, "%s: PMI server: %s\n", j->o->tool, strerror(-rc));
	return rc;
}

/* Ranks [first, last) of task k, as the spawning loop assigns them. */
static void task_ranks(const struct job *j, long k, long *first, long *last)
{
	long r;

	for (r = 0; r < j->total && r * j->o->tasks / j->total < k; r++)
		;
	*first = r;
	while (r < j->total && r * j->o->tasks / j->total == k)
		r++;
	*last = r;
}

/* The connections of task k's ranks, made just before the task: it inherits their ends. */
static int pmi_open_rank(struct job *j, long r)
{
	int rc = launch_pmi_open(j->pmi, (int)r);

	j->pmi_fd[r] = launch_pmi_client_fd(j->pmi, (int)r);
	if (rc)
		fprintf(stderr, "%s: rank %ld: PMI connection: %s\n", j->o->tool, r, strerror(-rc));
	return rc ? -1 : 0;
}

/* Process ranks open theirs just before they start, and we close it at once: a task made
 * earlier or later never holds it, so the process's exit is EOF on ours. */
static int pmi_open_task(struct job *j, long k)
{
	long r, first, last;

	task_ranks(j, k, &first, &last);
	for (r = first; r < last; r++)
		if (!j->r[r].process && pmi_open_rank(j, r))
			return -1;
	return 0;
}

/* /dev/null for a process rank's stdin: the job's input is rank 0's only (as ULP ranks get it,
 * pvas_ulp_attr.stdin_null). */
static int null_input(const char *tool, long r)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "%s: rank %ld: /dev/null: %s\n", tool, r, strerror(errno));
	return fd;
}

/* A redirected task (attr.redirect) keeps only what it is told: its ranks' PMI ends too (before
 * 27 Nov `ulpspawn --pmi -l` closed them, and every rank's MPI_Init failed). */
static void pmi_task_keep(const struct job *j, long k, struct pvas_task_attr *attr)
{
	long first, last;

	task_ranks(j, k, &first, &last);
	attr->keep = &j->pmi_fd[first];
	attr->nkeep = (unsigned)(last - first);
}

/* Our copies of task k's ends go: a rank's exit then closes the last one (EOF on ours). */
static void pmi_close_task(struct job *j, long k)
{
	long r, first, last;

	task_ranks(j, k, &first, &last);
	for (r = first; r < last; r++)
		launch_pmi_close_client(j->pmi, (int)r);
}

/* env with n more variables at its end (env is freed when that fails: NULL). */
static char **env_append(char **env, char *const vars[], size_t n)
{
	size_t k = 0, i;
	char **out;

	while (env[k])
		k++;
	out = realloc(env, (k + n + 1) * sizeof(*out));
	if (!out) {
		free(env);
		return NULL;
	}
	for (i = 0; i < n; i++)
		out[k++] = vars[i];
	out[k] = NULL;
	return out;
}

/* env plus PMI_FD, PMI_RANK, PMI_SIZE, MPI_LOCALNRANKS, MPI_LOCALRANKID, PMI_SPAWNED. */
static char **with_pmi(struct job *j, long r, char **env)
{
	static char buf[256];
	char *vars[6];
	int nv;

	nv = launch_pmi_env(j->pmi, (int)r, j->pmi_fd[r], buf, sizeof(buf), vars);
	if (nv < 0) { /* the buffer is too small: never without the variables */
		free(env);
		return NULL;
	}
	return env_append(env, vars, (size_t)nv);
}

/*
 * --pmi: the library that makes a rank whose MPI polls without progress yield (libulp/guest/
 * mpi_yield.c, docs/mpi.md "Yield when idle"), looked for beside the launcher's bin/ folder (a
 * build tree: build/libulp-mpiyield.so; make install: PREFIX/lib/ulp/), then where the package
 * puts it (LIBDIR/ulp). NULL when ULP_MPI_YIELD=0, or (with a warning) when none has it.
 */
static const char *mpi_yield_lib(const char *tool)
{
	static const char *const rel[] = {"/../libulp-mpiyield.so",
					  "/../lib/ulp/libulp-mpiyield.so"};
	static char path[PATH_MAX];
	char exe[PATH_MAX], try[PATH_MAX + 64];
	const char *e = getenv("ULP_MPI_YIELD");
	ssize_t n;
	unsigned i;

	if (e && !strcmp(e, "0"))
		return NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && (exe[n] = 0, strrchr(exe, '/'))) {
		*strrchr(exe, '/') = 0;
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(try, sizeof(try), "%s%s", exe, rel[i]);
			if (realpath(try, path) && !access(path, R_OK))
				goto found;
		}
	}
	snprintf(try, sizeof(try), "%s/libulp-mpiyield.so", ULP_PKGLIBDIR);
	if (realpath(try, path) && !access(path, R_OK))
		goto found;
	fprintf(stderr,
		"%s: warning: libulp-mpiyield.so not found (beside %s's bin/, nor in %s): MPI "
		"ranks will not yield when idle\n",
		tool, tool, ULP_PKGLIBDIR);
	return NULL;
found:
	/* ld.so splits LD_PRELOAD at spaces and colons */
	if (strpbrk(path, ": ")) {
		fprintf(stderr,
			"%s: warning: %s: a space or colon in the path, which LD_PRELOAD cannot "
			"carry: MPI ranks will not yield when idle\n",
			tool, path);
		return NULL;
	}
	return path;
}

/* env with lib first in LD_PRELOAD (the library takes itself out again when loaded). */
static char **with_preload(const char *lib, char **env)
{
	static char var[8192];
	char *vars[1] = {var};
	size_t i;

	for (i = 0; env[i] && strncmp(env[i], "LD_PRELOAD=", 11); i++)
		;
	if (env[i] && env[i][11]) {
		if (snprintf(var, sizeof(var), "LD_PRELOAD=%s:%s", lib, env[i] + 11) >=
		    (int)sizeof(var))
			return env; /* left as the user gave it */
	} else {
		snprintf(var, sizeof(var), "LD_PRELOAD=%s", lib);
	}
	if (!env[i])
		return env_append(env, vars, 1);
	env[i] = var;
	return env;
}

/*
 * Whether the job serves PMI-1: --pmi or --no-pmi when given, else ULP_PMI (1 or 0) when set,
 * else when a program links MPICH (cmd_mpi_library). Without a PMI server each rank of an MPICH
 * program starts as a one-rank job of its own ("hello from 1 ranks" N times, exit 0: a wrong
 * result that nothing reported), as an Open MPI program's ranks do without PMIx, which no tool
 * here serves: such a job of more than one rank is refused (126) unless PMI is turned off.
 * Returns 0 or 1, or -1 after the message.
 */
static int want_pmi(const struct job_opts *o, const struct segment *segs, int nsegs, long total)
{
	const char *env = getenv("ULP_PMI");
	int pmi = o->pmi, i;
	char lib[256];

	if (!pmi && env && (!strcmp(env, "0") || !strcmp(env, "1")))
		pmi = *env == '1' ? 1 : -1;
	for (i = 0; i < nsegs; i++)
		switch (cmd_mpi_library(segs[i].path, lib, sizeof(lib))) {
		case CMD_MPI_PMI1:
			pmi = pmi ? pmi : 1;
			break;
		case CMD_MPI_PMIX:
			if (total > 1 && pmi >= 0) {
				fprintf(
				    stderr,
				    "%s: %s links Open MPI (%s), whose ranks find each other "
				    "through PMIx, which %s does not serve: its %ld ranks would "
				    "each run as an MPI job of one rank. Run it with "
				    "mpirun.openmpi, or build it with MPICH (mpicc.mpich); "
				    "--no-pmi (ULP_PMI=0) runs the copies anyway\n",
				    o->tool, segs[i].path, lib, o->tool, total);
				return -1;
			}
			break;
		case CMD_MPI_NONE:
			break;
		}
	return pmi > 0;
}

int job_run(struct job_opts *o, struct segment *segs, int nsegs)
{
	struct job j = {.o = o,
			.pvd = -1,
			.sigfd = -1,
			.abort_rank = -1,
			.pmi_abort_rank = -1,
			.pmi_lost_rank = -1};
	struct pvas_attr pattr = {0};
	struct pvas_task_attr tattr = {0};
	int per_rank = o->tag || o->outdir, i, rc, failed_load = 0, status;
	long r, k, from = -1;
	sigset_t sigs;
	pid_t *tasks = NULL;
	const char *yield_lib = NULL;
	char *topo_vars[2];
	int topo = 0;

	for (i = 0; i < nsegs; i++)
		j.total += segs[i].n;
	rc = want_pmi(o, segs, nsegs, j.total);
	if (rc < 0)
		return 126;
	o->pmi = rc;
	if (o->pmi && o->mpi_tasks > 1) {
		/* MPI ranks in one task of 2 workers took 1.05-1.46x as long as in 2 tasks of one
		 * worker each on 2 CPUs (docs/mpi.md, "Tasks of an MPI job") */
		o->tasks = o->mpi_tasks < j.total ? o->mpi_tasks : j.total;
		o->workers = 1;
	}
	if (per_rank && o->tasks != j.total) {
		fprintf(stderr, "%s: -l and --output-filename need a PVAS task per rank\n",
			o->tool);
		return 2;
	}
	j.r = calloc((size_t)j.total, sizeof(*j.r));
	tasks = calloc((size_t)o->tasks, sizeof(*tasks));
	if (!j.r || !tasks) {
		fprintf(stderr, "%s: out of memory\n", o->tool);
		status = 1;
		goto out;
	}
	for (r = 0; r < j.total; r++) {
		j.r[r].pvid = -1;
		j.r[r].pidfd = -1;
		j.r[r].out.fd = j.r[r].err.fd = j.r[r].file_out = j.r[r].file_err = -1;
	}
	for (i = 0, r = 0; i < nsegs; r += segs[i++].n) {
		long k;

		for (k = r; k < r + segs[i].n; k++)
			j.r[k].process = segs[i].process;
		if (!segs[i].process)
			continue;
		int kind = segs[i].process;
		const char *why = "not a position-independent executable (ET_EXEC)";
		char who[96], san[160];

		if (kind == FALLBACK_SETID) {
			why = "set-user-ID or set-group-ID (or holds file capabilities): only the "
			      "kernel's execve grants those";
		} else if (kind == FALLBACK_SANITIZER) {
			snprintf(san, sizeof(san), "built with %s, " ULP_EXEC_SHADOW_WHY,
				 ulp_exec_sanitizer(segs[i].path) ?: "a sanitizer");
			why = san;
		}
		if (o->no_fallback) {
			fprintf(stderr,
				"%s: %s: %s; %s (--no-fallback: nor run as an ordinary process)\n",
				o->tool, segs[i].path, why,
				kind == FALLBACK_ET_EXEC ? "rebuild with -fPIE -pie"
							 : "it cannot be a ULP");
			status = 126;
			goto out;
		}
		if (segs[i].n > 1)
			snprintf(who, sizeof(who), "ranks %ld-%ld run as ordinary processes", r,
				 r + segs[i].n - 1);
		else
			snprintf(who, sizeof(who), "rank %ld runs as an ordinary process", r);
		fprintf(stderr,
			"%s: warning: %s is %s, so it cannot be a ULP: %s (--no-fallback refuses "
			"instead)\n",
			o->tool, segs[i].path, why, who);
	}
	if (o->wdir) {
		struct stat sb;

		if (stat(o->wdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "%s: --wdir %s: %s\n", o->tool, o->wdir,
				access(o->wdir, F_OK) ? strerror(errno) : "not a directory");
			status = 2;
			goto out;
		}
		for (i = 0; i < nsegs; i++)
			if (strchr(segs[i].argv[0], '/') || segs[i].path[0] != '/')
				segs[i].path = absolute(segs[i].path);
		if (o->outdir)
			o->outdir = absolute(o->outdir);
	}
	if (o->outdir && open_outputs(&j)) {
		status = 1;
		goto out;
	}
	if (o->pmi && pmi_create(&j, segs, nsegs)) {
		status = 1;
		goto out;
	}
	if (o->pmi)
		yield_lib = mpi_yield_lib(o->tool);

	/* Signals are read from a signalfd in the loop, never handled asynchronously. Blocked
	 * before pvas_create so that its thread has them blocked too; the tasks unblock them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* Read by each rank's hwloc (topo.h): discovered while the ranks start where the yield
	 * library gates their MPI_Init, else now. topo_start's helper has these signals blocked
	 * too: a Ctrl-C to the job ends the ranks, the helper ends when the XML is written. */
	if (o->pmi)
		topo = (yield_lib && topo_start(topo_vars) == 0) || topo_export(topo_vars) == 0;
	j.sigfd = pvas_fd_high(signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC));
	pattr.partition_size = o->psize;
	rc = pvas_create_attr(&j.pvd, &pattr);
	if (rc || j.sigfd < 0) {
		fprintf(stderr, "%s: %s\n", o->tool, rc ? pvas_errmsg() : strerror(errno));
		if (!rc)
			pvas_destroy(j.pvd);
		status = 1;
		goto out;
	}
	pvas_event_fd_get(j.pvd, &j.evfd);
	j.started = time(NULL);
	if (o->wdir && chdir(o->wdir) != 0) {
		fprintf(stderr, "%s: --wdir %s: %s\n", o->tool, o->wdir, strerror(errno));
		pvas_destroy(j.pvd);
		status = 2;
		goto out;
	}

	j.status = status_open(); /* ulps sees the job from now on (answered once in the loop) */
	tattr.workers = (unsigned)o->workers;
	tattr.accounting = o->stats;
	tattr.hold = 1; /* a task must not end before all its ranks are in */
	/* Ranks in blocks: task k gets ranks [k*total/tasks, (k+1)*total/tasks). A task is made
	 * by its first ULP rank; one whose ranks are all processes is never made. */
	for (r = 0; r < j.total && !failed_load; r++) {
		long seg_first = 0, s = 0, task = r * o->tasks / j.total;
		char **env;
		struct segment *sg;
		int po[2] = {-1, -1}, pe[2] = {-1, -1}, stdio[3] = {-1, -1, -1}, make_task;
		int new_task = r == 0 || (r - 1) * o->tasks / j.total != task;
		/* the job's stdin is rank 0's only, as under mpiexec (ulp_std_start) */
		struct pvas_ulp_attr uattr = {.stdin_null = r > 0};
		static int shifted[JOB_MAX_CPUS];

		signals(&j);
		if (j.stop_signal)
			break;
		while (r >= seg_first + segs[s].n)
			seg_first += segs[s++].n;
		sg = &segs[s];
		make_task = !sg->process && !tasks[task];
		if (new_task && j.pmi && pmi_open_task(&j, task)) {
			failed_load = 1;
			break;
		}
		if (sg->process && j.pmi && pmi_open_rank(&j, r)) {
			failed_load = 1;
			break;
		}
		env = with_settings(o, cmd_rank_env(r, j.total, o->task_env ? task : -1));
		if (env && j.pmi)
			env = with_pmi(&j, r, env);
		if (env && yield_lib)
			env = with_preload(yield_lib, env);
		if (env && topo)
			env = env_append(env, topo_vars, 2);
		if (!env) {
			fprintf(stderr, "%s: out of memory\n", o->tool);
			failed_load = 1;
			break;
		}
		if (o->ncpus && (make_task || sg->process)) {
			/* tasks take consecutive runs of the CPU list */
			unsigned c;

			for (c = 0; c < o->ncpus; c++)
				shifted[c] =
				    o->cpus[(c + (unsigned)(task * o->workers)) % o->ncpus];
			tattr.cpus = shifted;
			tattr.ncpus = o->ncpus;
		}
		if (per_rank && (make_task || sg->process)) {
			if (o->tag && (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))) {
				fprintf(stderr, "%s: rank %ld: pipe: %s\n", o->tool, r,
					strerror(errno));
				free(env);
				failed_load = 1;
				break;
			}
			/* the read ends stay in the launcher (and in the tasks made later) */
			po[0] = pvas_fd_high(po[0]);
			pe[0] = pvas_fd_high(pe[0]);
			stdio[1] = o->tag ? po[1] : j.r[r].file_out;
			stdio[2] = o->tag ? pe[1] : j.r[r].file_err;
		}
		if (sg->process && r > 0 && (stdio[0] = null_input(o->tool, r)) < 0) {
			free(env);
			failed_load = 1;
			break;
		}
		if (sg->process) {
			struct fallback_spec fs = {
			    .path = sg->path,
			    .argv = sg->argv,
			    .envp = env,
			    .stdio = {stdio[0], stdio[1], stdio[2]},
			    .keep_fd = j.pmi ? j.pmi_fd[r] : -1,
			    .cpus = o->ncpus ? shifted : NULL,
			    .ncpus = o->ncpus < o->workers ? o->ncpus : (unsigned)o->workers};

			rc = fallback_start(&fs, &j.r[r].pidfd);
			if (stdio[0] >= 0)
				close(stdio[0]);
			if (j.pmi)
				launch_pmi_close_client(j.pmi, (int)r);
			if (rc > 0) {
				j.r[r].task = rc;
				j.procs_live++;
				snprintf(j.r[r].st.path, sizeof(j.r[r].st.path), "%s", sg->path);
			} else {
				fprintf(stderr, "%s: rank %ld: %s: %s\n", o->tool, r, sg->path,
					strerror(-rc));
			}
		} else if (make_task) {
			if (per_rank) {
				tattr.redirect = 1;
				tattr.stdio[0] = -1;
				tattr.stdio[1] = stdio[1];
				tattr.stdio[2] = stdio[2];
				if (j.pmi) /* its ranks' PMI_FD ends stay open in it */
					pmi_task_keep(&j, task, &tattr);
			}
			tattr.ulp = &uattr;
			rc = pvas_spawn_attr(j.pvd, -1, sg->path, sg->argv, env, &tattr);
			if (rc > 0)
				tasks[task] = rc;
			if (j.pmi) /* the task has its ranks' ends now; later tasks must not */
				pmi_close_task(&j, task);
		} else {
			rc = pvas_task_exec_attr(j.pvd, tasks[task], -1, sg->path, sg->argv, env,
						 &uattr);
		}
		if (o->tag && po[0] >= 0) {
			close(po[1]);
			close(pe[1]);
			j.r[r].out =
			    (struct stream){.fd = po[0], .sink = o->outdir ? j.r[r].file_out : 1};
			j.r[r].err =
			    (struct stream){.fd = pe[0], .sink = o->outdir ? j.r[r].file_err : 2};
			fcntl(po[0], F_SETFL, O_NONBLOCK);
			fcntl(pe[0], F_SETFL, O_NONBLOCK);
		}
		free(env);
		if (rc < 0) {
			if (!sg->process)
				fprintf(stderr, "%s: rank %ld: %s\n", o->tool, r, pvas_errmsg());
			failed_load = rc == -ENOENT ? 127 : 126;
			break;
		}
		if (sg->process)
			continue;
		j.r[r].pvid = make_task && rc == tasks[task] ? -2 : rc; /* see find_rank */
		j.r[r].task = tasks[task];
	}
	for (k = 0; k < o->tasks; k++)
		if (tasks[k])
			pvas_task_release(j.pvd, tasks[k]);
	if (failed_load)
		end_job(&j, 0); /* never a half-started job */
	j.running = 1;

	loop(&j);
	status_close(j.status);
	j.status = NULL;
	status = report(&j, &from);
	if (o->stats)
		print_stats(&j);
	for (k = 0; k < o->tasks; k++)
		if (tasks[k])
			pvas_task_wait(j.pvd, tasks[k], NULL);
	pvas_destroy(j.pvd);
	if (j.stop_signal) {
		status = 128 + j.stop_signal;
		o->end_signal = j.stop_signal;
	} else if (failed_load) {
		status = failed_load;
	} else if (from >= 0 && WIFSIGNALED(j.r[from].status) &&
		   status == 128 + WTERMSIG(j.r[from].status) &&
		   (j.total == 1 || WTERMSIG(j.r[from].status) == j.forwarded)) {
		/* the one rank's death, or the job's end by the SIGINT/SIGTERM it was sent */
		o->end_signal = WTERMSIG(j.r[from].status);
	}
out:
	for (r = 0; j.r && r < j.total; r++) {
		free(j.r[r].out.buf);
		free(j.r[r].err.buf);
		if (j.r[r].file_out >= 0)
			close(j.r[r].file_out);
		if (j.r[r].file_err >= 0)
			close(j.r[r].file_err);
	}
	free(j.r);
	free(tasks);
	topo_end();
	launch_pmi_destroy(j.pmi);
	free(j.pmi_fd);
	if (j.sigfd >= 0)
		close(j.sigfd);
	return status;
}

int job_exit(const struct job_opts *o, int status)
{
	struct rlimit rl;
	sigset_t s;
	int sig = o->end_signal;

	if (sig <= 0)
		return status;
	fflush(NULL);
	/* the rank's fault, not the launcher's: no core of the launcher's address space */
	if (getrlimit(RLIMIT_CORE, &rl) == 0) {
		rl.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &rl);
	}
	signal(sig, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	return status; /* a signal that does not end a process by default */
}
