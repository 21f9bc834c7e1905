/* SPDX-License-Identifier: MIT */
/*
 * A process's identity, checked by the program itself (tests/integ/ident.sh runs it as a process
 * and as ULPs, many at once). Each check prints "NAME: ok" or "NAME: FAIL why".
 *   ident ids DIR         getpid is its own: DIR/t.PID is created exclusively (a t.$$ temp file),
 *                         gettid() == getpid() in the main thread, getppid() is not itself, a
 *                         fork child's getppid() is this pid, kill(pid, 0) and /proc/PID exist,
 *                         raise() and kill(getpid()) run this program's own handler
 *   ident wait DIR        writes its pid to DIR/pid.RANK, prints "waiting", and waits for SIGUSR1
 *                         (its handler) until DIR/done exists: prints "rank R: got SIGUSR1 from
 *                         PID" or "rank R: no signal"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfcheck.h"

static volatile sig_atomic_t got;
static volatile int from;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got = sig;
	from = si->si_pid;
}

static const char *rank(void)
{
	const char *r = getenv("ULP_RANK");

	return r ? r : "0";
}

/* /proc/self files a program reads about itself: status and stat name this process (its pid, its
 * program's name as the kernel's comm: the base name of the path it was started by, 15 bytes),
 * and /proc/self/exe opens its program's file (exe: readlink of /proc/self/exe, n bytes). */
static void proc_self_files(pid_t pid, const char *exe, ssize_t n)
{
	char line[256], name[64] = "", comm[64] = "", path[4096];
	unsigned char a[64], b[64];
	const char *base = program_invocation_name, *c;
	long spid = -1, status_pid = -1;
	FILE *f = fopen("/proc/self/status", "r");
	int fa, fb;

	for (c = base; *c; c++)
		if (*c == '/')
			base = c + 1;
	snprintf(comm, sizeof(comm), "%.15s", base);
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Name: %63s", name);
		sscanf(line, "Pid: %ld", &status_pid);
	}
	if (f)
		fclose(f);
	CHECK("/proc/self/status names this process (Pid, Name)",
	      status_pid == pid && !strcmp(name, comm), "Pid %ld Name '%s', want %d '%s'",
	      status_pid, name, (int)pid, comm);
	f = fopen("/proc/self/stat", "r");
	name[0] = 0;
	if (!f || fscanf(f, "%ld (%63[^)])", &spid, name) != 2)
		spid = -1;
	if (f)
		fclose(f);
	CHECK("/proc/self/stat names this process (pid, comm)", spid == pid && !strcmp(name, comm),
	      "%ld (%s), want %d (%s)", spid, name, (int)pid, comm);
	snprintf(path, sizeof(path), "%.*s", (int)(n > 0 ? n : 0), exe);
	fa = open("/proc/self/exe", O_RDONLY);
	fb = open(path, O_RDONLY);
	CHECK("/proc/self/exe opens this program's file",
	      fa >= 0 && fb >= 0 && read(fa, a, sizeof(a)) == sizeof(a) &&
		  read(fb, b, sizeof(b)) == sizeof(b) && !memcmp(a, b, sizeof(a)),
	      "open or read of /proc/self/exe or %s failed, or they differ", path);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
}

static int ids(const char *dir)
{
	pid_t pid = getpid(), ppid = getppid(), kid;
	char path[4096], link[2][4096];
	struct stat st;
	ssize_t n[2];
	int fd, status = -1;

	snprintf(path, sizeof(path), "%s/t.%d", dir, (int)pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK("t.$$ is this process's alone", fd >= 0, "%s exists already", path);
	if (fd >= 0) {
		dprintf(fd, "%s\n", rank());
		close(fd);
	}
	CHECK("gettid() == getpid() in the main thread", syscall(SYS_gettid) == pid,
	      "gettid %ld, getpid %d", syscall(SYS_gettid), (int)pid);
	CHECK("getppid() is another process", ppid != pid && ppid > 0 && kill(ppid, 0) == 0,
	      "getppid %d, getpid %d", (int)ppid, (int)pid);
	kid = fork();
	if (kid == 0)
		_exit(getppid() == pid && getpid() != pid ? 0 : 1);
	if (kid > 0)
		waitpid(kid, &status, 0);
	CHECK("a fork child's getppid() is this pid",
	      kid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "fork %d, child status 0x%x", (int)kid, status);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	CHECK("kill(getpid(), 0) and /proc/PID exist", kill(pid, 0) == 0 && stat(path, &st) == 0,
	      "kill or stat of %s failed", path);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n[0] = readlink(path, link[0], sizeof(link[0]) - 1);
	n[1] = readlink("/proc/self/exe", link[1], sizeof(link[1]) - 1);
	CHECK("/proc/PID/exe is /proc/self/exe",
	      n[0] > 0 && n[0] == n[1] && !memcmp(link[0], link[1], (size_t)n[0]), "%.*s vs %.*s",
	      (int)n[0], link[0], (int)n[1], link[1]);
	proc_self_files(pid, link[1], n[1]);
	got = 0;
	raise(SIGUSR1);
	CHECK("raise() runs its own handler", got == SIGUSR1 && from == pid, "got %d from %d",
	      (int)got, from);
	got = 0;
	kill(pid, SIGUSR1);
	CHECK("kill(getpid()) runs its own handler", got == SIGUSR1 && from == pid,
	      "got %d from %d", (int)got, from);
	printf("rank %s: pid %d ppid %d\n", rank(), (int)pid, (int)ppid);
	return 0;
}

static int wait_usr1(const char *dir)
{
	char path[4096], tmp[4096], done[4096];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s/.pid.%s", dir, rank());
	snprintf(path, sizeof(path), "%s/pid.%s", dir, rank());
	snprintf(done, sizeof(done), "%s/done", dir);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, path)) {
		printf("rank %s: FAIL cannot write %s\n", rank(), path);
		return 1;
	}
	printf("waiting\n");
	fflush(stdout);
	for (i = 0; i < 1200 && !got && access(done, F_OK) != 0; i++)
		usleep(100000);
	if (got)
		printf("rank %s: got SIGUSR1 from %d\n", rank(), from);
	else
		printf("rank %s: no signal\n", rank());
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	if (argc == 3 && !strcmp(argv[1], "ids"))
		return ids(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return wait_usr1(argv[2]);
	fprintf(stderr, "usage: ident ids DIR | ident wait DIR\n");
	return 2;
}
