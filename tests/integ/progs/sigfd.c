/* SPDX-License-Identifier: MIT */
/*
 * signalfd and SIGCHLD as a process sees them, checked by the program itself (tests/integ/
 * signals.sh runs it as a process and as ULPs, several in one task). Each check prints
 * "NAME: ok" or "NAME: FAIL (why)".
 *
 *   sigfd          a signalfd of SIGUSR1/SIGTERM/SIGCHLD, blocked: empty (EAGAIN), a short
 *                  buffer (EINVAL), kill to itself read with its siginfo, readable to poll and
 *                  epoll only while a signal waits, two signals in one read, a child's end
 *                  (pid, status), a blocking read woken by a child that ends later, a new
 *                  mask, a descriptor that is no signalfd (EINVAL)
 *   chld N         N children that end at once: SIGCHLD reaches the handler (the kernel keeps
 *                  one pending per task: the ULPs of a task lost theirs)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failed;

static void check(const char *name, int ok, const char *why)
{
	if (ok) {
		printf("%s: ok\n", name);
	} else {
		printf("%s: FAIL (%s)\n", name, why);
		failed = 1;
	}
	fflush(stdout);
}

static int readable(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void sigfd(void)
{
	struct signalfd_siginfo si[4];
	struct epoll_event ev;
	sigset_t m, m2;
	ssize_t r;
	pid_t c;
	int fd, bfd, ep, st;

	sigemptyset(&m);
	sigaddset(&m, SIGCHLD);
	sigaddset(&m, SIGUSR1);
	sigaddset(&m, SIGTERM);
	sigprocmask(SIG_BLOCK, &m, NULL);
	fd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
	check("signalfd made", fd >= 0, strerror(errno));
	r = read(fd, si, sizeof(si));
	check("empty: EAGAIN", r < 0 && errno == EAGAIN, "read");
	check("empty: not readable", !readable(fd, 0), "poll");
	r = read(fd, si, 10);
	check("short buffer: EINVAL", r < 0 && errno == EINVAL, "read");

	kill(getpid(), SIGUSR1);
	check("kill to itself: readable", readable(fd, 30000), "poll");
	r = read(fd, si, sizeof(si));
	check("kill to itself: its record",
	      r == sizeof(si[0]) && si[0].ssi_signo == SIGUSR1 && si[0].ssi_code == SI_USER &&
		  si[0].ssi_pid == (unsigned)getpid() && si[0].ssi_uid == getuid(),
	      "record");
	check("taken: not readable", !readable(fd, 0), "poll");

	c = fork();
	if (c == 0)
		_exit(7);
	check("child's end: readable", readable(fd, 30000), "poll");
	r = read(fd, si, sizeof(si));
	check("child's end: its record",
	      r == sizeof(si[0]) && si[0].ssi_signo == SIGCHLD && si[0].ssi_code == CLD_EXITED &&
		  si[0].ssi_pid == (unsigned)c && si[0].ssi_status == 7,
	      "record");
	check("child waited for", waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 7, "waitpid");

	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	check("epoll: nothing", epoll_wait(ep, &ev, 1, 50) == 0, "epoll_wait");
	kill(getpid(), SIGTERM);
	kill(getpid(), SIGUSR1);
	check("epoll: readable", epoll_wait(ep, &ev, 1, 30000) == 1, "epoll_wait");
	r = read(fd, si, sizeof(si));
	check("two in one read",
	      r == 2 * sizeof(si[0]) && si[0].ssi_signo == SIGUSR1 && si[1].ssi_signo == SIGTERM,
	      "read");
	close(ep);

	bfd = signalfd(-1, &m, 0);
	c = fork();
	if (c == 0) {
		usleep(200000);
		_exit(3);
	}
	r = read(bfd, si, sizeof(si));
	check("blocking read: a child that ends later",
	      r == sizeof(si[0]) && si[0].ssi_signo == SIGCHLD && si[0].ssi_status == 3, "read");
	waitpid(c, NULL, 0);
	sigemptyset(&m2);
	sigaddset(&m2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m2, NULL);
	check("new mask", signalfd(bfd, &m2, 0) == bfd, strerror(errno));
	kill(getpid(), SIGUSR1);
	check("new mask: another signal not read", !readable(bfd, 50) && readable(fd, 0), "poll");
	kill(getpid(), SIGUSR2);
	r = read(bfd, si, sizeof(si));
	check("new mask: its signal", r == sizeof(si[0]) && si[0].ssi_signo == SIGUSR2, "read");
	r = read(fd, si, sizeof(si));
	check("the other's signal", r == sizeof(si[0]) && si[0].ssi_signo == SIGUSR1, "read");
	check("no signalfd: EINVAL", signalfd(0, &m2, 0) < 0 && errno == EINVAL, "signalfd");
	close(fd);
	close(bfd);
}

static volatile sig_atomic_t chlds;

static void on_chld(int sig)
{
	(void)sig;
	chlds++;
}

static void chld(int n)
{
	struct timespec t0, t;
	pid_t kids[64];
	int i, ended = 0;

	signal(SIGCHLD, on_chld);
	for (i = 0; i < n && i < 64; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do { /* SIGCHLD interrupts the sleep; its handler counts */
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!chlds && t.tv_sec - t0.tv_sec < 30);
	check("SIGCHLD of children that end at once", chlds > 0, "no SIGCHLD in 30 s");
	for (i = 0; i < n && i < 64; i++)
		ended += waitpid(kids[i], NULL, 0) == kids[i];
	check("children waited for", ended == n, "waitpid");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "sigfd"))
		sigfd();
	else if (argc > 2 && !strcmp(argv[1], "chld"))
		chld(atoi(argv[2]));
	else
		return fprintf(stderr, "usage: sigfd sigfd | chld N\n"), 2;
	return failed;
}
