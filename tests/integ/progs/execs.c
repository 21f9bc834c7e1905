/* SPDX-License-Identifier: MIT */
/*
 * execve from a ULP replaces it in place, as a process image is replaced (tests/integ/process.sh).
 *
 *   execs first DIR [thread]   chdir DIR, umask 027, an fd without and one with FD_CLOEXEC, a
 *                               handler, an ignored signal, a blocked and pending one, an alarm, a
 *                               POSIX timer, an alternate stack; failed execs (missing file, not
 *                               executable, malformed ELF) return their errors and the program
 *                               goes on intact; then it execs ./execs (relative to DIR) "second"
 *                               with a new environment ("thread": with a second thread running,
 *                               "fromthread": from a second thread while the first one waits).
 *   execs second ...            checks that all of that is as execve leaves it; exits 7.
 *   execs simple               execs itself "again" with its pid; prints "rank R: exec ok".
 *   execs fexec                the same through fexecve of its own file (execveat, AT_EMPTY_PATH).
 *   execs chain N              execs itself N times (/proc/self/exe), then prints "chain done"
 *                              (what an exec costs: bench, not a test).
 *   execs loop                 prints "looping", then execs itself for ever (a signal must reach
 *                              it between two programs).
 * Every check prints one line; the output is the same as a process and as a ULP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static char keep_me[] = "old image data";

static void on_usr1(int sig)
{
	(void)sig;
}

static void *spin(void *arg)
{
	volatile long *n = arg;

	for (;;) {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
		(*n)++;
	}
	return NULL;
}

static char **exec_argv, **exec_envp;

static void *exec_thread(void *arg)
{
	(void)arg;
	execve("./execs", exec_argv, exec_envp);
	printf("execve from a thread: %s\n", strerror(errno));
	exit(1);
}

static void try_exec(const char *what, const char *path, int want)
{
	char *argv[] = {(char *)path, NULL};
	int e;

	execv(path, argv);
	e = errno;
	printf("%s: %s%s\n", what, e == want ? "" : "WRONG ", strerrorname_np(e));
}

static int first(const char *dir, int thread)
{
	char fdk[16], fdg[16], tid[16], pid[16], *heap = strdup("old heap data"), *argv[8];
	char *envp[] = {"EXECS_VAR=hello", "OTHER=2", NULL};
	static volatile long ticks;
	stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536};
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2};
	sigset_t m;
	pthread_t th;
	timer_t t;
	int k, g, fd;

	if (chdir(dir) != 0)
		return 2;
	umask(027);
	k = open("keep", O_RDONLY);
	g = open("gone", O_RDONLY | O_CLOEXEC);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, SIG_IGN);
	sigemptyset(&m);
	sigaddset(&m, SIGINT);
	sigprocmask(SIG_BLOCK, &m, NULL);
	kill(getpid(), SIGINT); /* process-directed: pending for whichever thread execs */
	alarm(1000);
	sigaltstack(&ss, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0)
		printf("timer_create failed\n");
	try_exec("missing file", "./no-such-program", ENOENT);
	try_exec("not executable", "./keep", EACCES);
	fd = open("bad-elf", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (write(fd, "\177ELF\002\001\001", 7) != 7)
		return 2;
	close(fd);
	try_exec("malformed ELF", "./bad-elf", ENOEXEC);
	printf("old image after failed execs: %s, %s\n", keep_me, heap);
	if (thread == 1) {
		pthread_create(&th, NULL, spin, (void *)&ticks);
		while (ticks < 3)
			usleep(1000);
		printf("second thread running\n");
	}
	fflush(stdout);
	snprintf(fdk, sizeof(fdk), "%d", k);
	snprintf(fdg, sizeof(fdg), "%d", g);
	snprintf(tid, sizeof(tid), "%ld", (long)(intptr_t)t);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	argv[0] = "execs-second";
	argv[1] = "second";
	argv[2] = pid;
	argv[3] = fdk;
	argv[4] = fdg;
	argv[5] = tid;
	argv[6] = (char *)dir;
	argv[7] = NULL;
	if (thread == 2) { /* the exec comes from a second thread; this one waits in a join */
		exec_argv = argv;
		exec_envp = envp;
		pthread_create(&th, NULL, exec_thread, NULL);
		pthread_join(th, NULL);
		return 1;
	}
	execve("./execs", argv, envp);
	printf("execve: %s\n", strerror(errno));
	return 1;
}

static void check(const char *what, int good)
{
	printf("%s: %s\n", what, good ? "ok" : "WRONG");
}

static int second(char **argv)
{
	char buf[4096], self[4096], want[4096];
	struct sigaction sa;
	sigset_t m;
	stack_t ss;
	struct itimerspec its;
	int n, fd;

	check("same pid", getpid() == atoi(argv[2]));
	check("same cwd",
	      getcwd(buf, sizeof(buf)) && realpath(argv[6], want) && !strcmp(buf, want));
	n = (int)umask(0);
	check("same umask", n == 027);
	n = (int)read(atoi(argv[3]), buf, sizeof(buf) - 1);
	check("inherited fd without FD_CLOEXEC readable", n == 5 && !memcmp(buf, "keep\n", 5));
	check("fd with FD_CLOEXEC closed", fcntl(atoi(argv[4]), F_GETFD) < 0 && errno == EBADF);
	check("argv passed", !strcmp(argv[0], "execs-second") && !argv[7]);
	check("environment replaced", getenv("EXECS_VAR") &&
					  !strcmp(getenv("EXECS_VAR"), "hello") &&
					  !getenv("ULP_RANK_UNSET_CHECK") && getenv("OTHER"));
	sigaction(SIGUSR1, NULL, &sa);
	check("handler reset to SIG_DFL", sa.sa_handler == SIG_DFL);
	sigaction(SIGUSR2, NULL, &sa);
	check("SIG_IGN kept", sa.sa_handler == SIG_IGN);
	sigprocmask(SIG_BLOCK, NULL, &m);
	check("mask kept", sigismember(&m, SIGINT));
	sigpending(&m);
	check("pending kept", sigismember(&m, SIGINT));
	check("alarm kept", alarm(0) > 900);
	sigaltstack(NULL, &ss);
	check("no alternate stack", ss.ss_flags & SS_DISABLE);
	check("POSIX timer deleted",
	      timer_gettime((timer_t)(intptr_t)atol(argv[5]), &its) < 0 && errno == EINVAL);
	n = (int)readlink("/proc/self/exe", self, sizeof(self) - 1);
	check("/proc/self/exe is the new program",
	      n > 0 && (self[n] = 0, realpath("execs", want)) && !strcmp(self, want));
	fd = open("/proc/self/cmdline", O_RDONLY);
	n = (int)read(fd, buf, sizeof(buf));
	check("/proc/self/cmdline is the new argv",
	      n > 20 && !strcmp(buf, "execs-second") && !strcmp(buf + 13, "second"));
	fd = open("/proc/self/environ", O_RDONLY);
	n = (int)read(fd, buf, sizeof(buf));
	check("/proc/self/environ is the new environment",
	      n == 24 && !strcmp(buf, "EXECS_VAR=hello") && !strcmp(buf + 16, "OTHER=2"));
	fflush(stdout);
	return 7;
}

/* "thread": 1, "fromthread": 2, else 0 */
static int thread_mode(const char *m)
{
	return !strcmp(m, "thread") ? 1 : !strcmp(m, "fromthread") ? 2 : 0;
}

int main(int argc, char **argv)
{
	char pid[16], *again[] = {"execs", "again", pid, NULL};

	if (argc >= 3 && !strcmp(argv[1], "first"))
		return first(argv[2], argc < 4 ? 0 : thread_mode(argv[3]));
	if (argc == 7 && !strcmp(argv[1], "second"))
		return second(argv);
	if (argc == 2 && !strcmp(argv[1], "simple")) {
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		execv("/proc/self/exe", again);
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "fexec")) {
		char *fagain[] = {"execs", "again", pid, "fexecve", NULL};
		int fd = open(argv[0], O_RDONLY | O_CLOEXEC);

		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		fexecve(fd, fagain, environ);
		printf("fexecve: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "loop")) {
		char *forever[] = {"execs", "chain", "2000000000", NULL};

		printf("looping\n");
		fflush(stdout);
		execv("/proc/self/exe", forever);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "chain")) {
		char n[16], *next[] = {"execs", "chain", n, NULL};

		if (atoi(argv[2]) <= 0) {
			printf("chain done\n");
			return 0;
		}
		snprintf(n, sizeof(n), "%d", atoi(argv[2]) - 1);
		execv("/proc/self/exe", next);
		return 1;
	}
	if (argc >= 3 && !strcmp(argv[1], "again")) {
		if (argc == 4) /* no rank: the same line as a process */
			printf("%s: exec %s\n", argv[3],
			       getpid() == atoi(argv[2]) ? "ok" : "WRONG pid");
		else
			printf("rank %s: exec %s\n", getenv("ULP_RANK") ? getenv("ULP_RANK") : "?",
			       getpid() == atoi(argv[2]) ? "ok" : "WRONG pid");
		return 0;
	}
	fprintf(stderr, "usage: execs first DIR [thread] | simple\n");
	return 2;
}
