/* SPDX-License-Identifier: MIT */
/*
 * ulps: list the PVAS jobs running on this machine (launched by ulpexec or ulpspawn, user or
 * kmod backend) and, per rank: PVAS id, task PID, state (running / ready / blocked in which call /
 * exited with what), CPU time, switches, program. Each launcher answers on a socket in
 * ULP_JOBS_DIR (launch/status.h says why a socket and not a shared page); a name nobody answers
 * on is a job that died, and is removed, never shown.
 *
 *   ulps [-w] [-d SECONDS] [-c COUNT] [PID...]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "status.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ulps [-w] [-d SECONDS] [-c COUNT] [PID...]\n"
		"List the PVAS jobs running on this machine (ulpexec, ulpspawn) and their ranks:\n"
		"PVAS id, task PID, state, CPU time, switches, program.\n"
		"  PID...        only the jobs of these launcher PIDs\n"
		"  -w            refresh the list every SECONDS until interrupted\n"
		"  -d SECONDS    refresh period for -w (default 1)\n"
		"  -c COUNT      with -w: stop after COUNT lists\n"
		"  -h, --help    this text\n"
		"Jobs publish themselves in %s (ULP_JOBS_DIR sets another folder).\n",
		STATUS_DIR_DEFAULT);
}

/* The name is the launcher's PID: no such process, the job is gone. Its listening socket may
 * outlive it for a moment, held by a task that dies with it (PR_SET_PDEATHSIG): a connect there
 * succeeds and is then reset, which is no answer from a job that runs. */
static int launcher_gone(const char *name)
{
	long pid = strtol(name, NULL, 10);

	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The answer on the socket at PATH, or NULL with *why set (0: nobody listens there, or the name
 * went: the job ended). */
static char *ask_socket(const char *path, int *why)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {2, 0};
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int fd;

	*why = 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*why = errno;
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		*why = errno;
		close(fd);
		/* nobody listens: the launcher died (SIGKILL...); or it ended since the listing */
		if (*why == ECONNREFUSED || *why == ENOENT)
			*why = 0;
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!b) {
				*why = ENOMEM;
				break;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*why = errno == EAGAIN ? ETIMEDOUT : errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!*why && len == 0)
		*why = ENODATA; /* accepted but closed: too many asking at once */
	if (*why) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* The launcher's answer (status.h), or NULL with *why set: 0 the job is gone (its name was
 * stale and is removed), else an errno-style reason to show. */
static char *ask(const char *dir, const char *name, int *why)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *text;

	*why = 0;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		*why = ENAMETOOLONG;
		return NULL;
	}
	text = launcher_gone(name) ? NULL : ask_socket(path, why);
	if (!text && (!*why || launcher_gone(name))) {
		unlink(path);
		*why = 0;
	}
	return text;
}

static void show_job(char *text)
{
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char tool[32], backend[16], state[16], what[64], sw[32], cpu[32];
		long long started;
		long ranks, tasks, rank;
		int pid, pvid, task, acc, off = 0;

		if (sscanf(line, "job %d %31s %15s %ld %ld %lld %d", &pid, tool, backend, &ranks,
			   &tasks, &started, &acc) == 7) {
			long up = (long)(time(NULL) - started);

			printf("JOB %d  %s, %s backend, %ld rank%s in %ld task%s, up %ld:%02ld%s\n",
			       pid, tool, backend, ranks, ranks == 1 ? "" : "s", tasks,
			       tasks == 1 ? "" : "s", up / 60, up % 60,
			       acc ? "" : " (CPU time per ULP: with ulpspawn --stats)");
			printf("  %5s %5s %8s  %-26s %9s %9s  %s\n", "RANK", "PVID", "PID", "STATE",
			       "CPU(s)", "SWITCHES", "PROGRAM");
			continue;
		}
		if (sscanf(line, "rank %ld %d %d %15s %63s %31s %31s %n", &rank, &pvid, &task,
			   state, what, sw, cpu, &off) == 7 &&
		    off > 0) {
			char st[96], pv[16], cs[32];

			if (strcmp(what, "-"))
				snprintf(st, sizeof(st), "%s (%s)", state, what);
			else
				snprintf(st, sizeof(st), "%s", state);
			if (pvid >= 0)
				snprintf(pv, sizeof(pv), "%d", pvid);
			else
				snprintf(pv, sizeof(pv), "%s", task > 0 ? "proc" : "-");
			if (strcmp(cpu, "-"))
				snprintf(cs, sizeof(cs), "%.2f", strtod(cpu, NULL) / 1e9);
			else
				snprintf(cs, sizeof(cs), "-");
			printf("  %5ld %5s %8d  %-26s %9s %9s  %s\n", rank, pv, task, st, cs, sw,
			       line + off);
		}
	}
}

static int wanted(const char *name, char **pids, int npids)
{
	int i;

	if (!npids)
		return 1;
	for (i = 0; i < npids; i++)
		if (!strcmp(pids[i], name))
			return 1;
	return 0;
}

/* One list of every job; how many were shown. */
static int list(char **pids, int npids)
{
	const char *dir = status_dir();
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, versionsort), i, shown = 0;

	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *text;
		int why;

		if (name[0] < '1' || name[0] > '9' || strspn(name, "0123456789") != strlen(name) ||
		    !wanted(name, pids, npids))
			continue;
		text = ask(dir, name, &why);
		if (text) {
			if (shown)
				printf("\n");
			show_job(text);
			free(text);
			shown++;
		} else if (why) {
			if (shown)
				printf("\n");
			printf("JOB %s  (no answer: %s%s)\n", name, strerror(why),
			       why == EACCES ? "; another user's job: run as root" : "");
			shown++;
		}
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	if (n >= 0)
		free(ents);
	if (!shown)
		printf("no PVAS jobs running\n");
	return shown;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	double period = 1;
	long count = 0, k;
	int watch = 0, c;
	char *end;

	while ((c = getopt_long(argc, argv, "hwd:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'w':
			watch = 1;
			break;
		case 'd':
			period = strtod(optarg, &end);
			if (end == optarg || *end || !(period >= 0.1 && period <= 3600)) {
				fprintf(stderr,
					"ulps: -d: '%s' is not a number of seconds from 0.1 "
					"to 3600\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			count = strtol(optarg, &end, 10);
			if (end == optarg || *end || count < 1) {
				fprintf(stderr, "ulps: -c: '%s' is not a count >= 1\n", optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (c = optind; c < argc; c++) {
		if (!*argv[c] || strspn(argv[c], "0123456789") != strlen(argv[c])) {
			fprintf(stderr, "ulps: '%s' is not a PID\n", argv[c]);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_DFL);
	if (!watch) {
		list(argv + optind, argc - optind);
		return 0;
	}
	for (k = 0; !count || k < count; k++) {
		struct timespec ts = {(time_t)period, (long)((period - (time_t)period) * 1e9)};

		if (k) {
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
		if (isatty(1))
			printf("\033[H\033[2J"); /* a fresh screen each time, as watch(1) */
		else if (k)
			printf("\n");
		list(argv + optind, argc - optind);
		fflush(stdout);
	}
	return 0;
}
