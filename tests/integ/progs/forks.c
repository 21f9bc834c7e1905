/* SPDX-License-Identifier: MIT */
/*
 * Process calls from a ULP, each checked by the program itself: fork and wait for one's own
 * children only (several ULPs fork at once), fork+exec, system, popen, posix_spawn (also of a
 * missing program), vfork, a crashing child, ECHILD, waitid on a pidfd and on a pid, a failed
 * execve, threads in a fork child (own TLS, the FP control state inherited, joined with their
 * values: Python's multiprocessing starts one in each child). Prints "forks R: ok" per rank and
 * exits 0; any mismatch prints what differed and exits 1. With argument "exec": the ULP execs
 * /bin/sh -c 'echo replaced; exit 5' at the end (its status must become 5).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

extern char **environ;
static int rank, bad;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			printf("forks %d: FAIL %s: ", rank, #c);                                   \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			bad = 1;                                                                   \
		}                                                                                  \
	} while (0)

static __thread long tls_word = 1;

/* A thread of a fork child: its own TLS, the MXCSR rounding bits its creator had, and no
 * alternate signal stack, also after a system call. */
static void *child_thread(void *arg)
{
	long i = (long)arg;
	stack_t ss;

	if (tls_word != 1 || (_mm_getcsr() & 0x6000) != 0x4000) /* round up */
		return (void *)-1;
	tls_word = 100 + i;
	sched_yield();
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_DISABLE))
		return (void *)-2;
	return (void *)(tls_word * 2);
}

/* In a fork child: 4 threads, joined; exit 0 when each gave 2 * (100 + i) and the creator's TLS
 * word is untouched. */
static void threads_in_child(void)
{
	pthread_t t[4];
	void *v;
	long i, good = 0;

	_mm_setcsr((_mm_getcsr() & ~0x6000u) | 0x4000u);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, child_thread, (void *)i) != 0)
			_exit(2);
	for (i = 0; i < 4; i++)
		if (pthread_join(t[i], &v) == 0 && (long)v == 2 * (100 + i))
			good++;
	_exit(good == 4 && tls_word == 1 ? 0 : 1);
}

int main(int argc, char **argv)
{
	const char *r = getenv("ULP_RANK");
	int st = -1, i;
	pid_t p, w;
	char line[64] = "";
	FILE *f;
	char *sp_argv[] = {"/nonexistent-prog", NULL};

	rank = r ? atoi(r) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Each rank's children exit with codes of its own; wait(-1) must give back only those. */
	for (i = 0; i < 3; i++) {
		p = fork();
		if (p == 0) {
			usleep((unsigned)(1000 * ((rank * 7 + i * 3) % 5)));
			_exit(10 + rank * 3 + i);
		}
		CHECK(p > 0, "fork: %s", strerror(errno));
	}
	for (i = 0; i < 3; i++) {
		w = waitpid(-1, &st, 0);
		CHECK(w > 0 && WIFEXITED(st) && WEXITSTATUS(st) >= 10 + rank * 3 &&
			  WEXITSTATUS(st) < 13 + rank * 3,
		      "waitpid(-1) gave pid %d status %#x (%s)", (int)w, st, strerror(errno));
	}
	w = waitpid(-1, &st, WNOHANG);
	CHECK(w == -1 && errno == ECHILD, "wait with no child left: %d (%s)", (int)w,
	      strerror(errno));
	/* fork + exec */
	p = fork();
	if (p == 0) {
		execl("/bin/sh", "sh", "-c", "exit 42", (char *)NULL);
		_exit(99);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 42, "exec status %#x",
	      st);
	/* system and popen (posix_spawn inside glibc) */
	st = system("exit 7");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7, "system: %#x", st);
	f = popen("echo popen-hi", "r");
	CHECK(f && fgets(line, sizeof(line), f) && !strcmp(line, "popen-hi\n"), "popen read '%s'",
	      line);
	CHECK(f && pclose(f) == 0, "pclose");
	/* posix_spawn of a missing program: the error comes back, as with a real vfork */
	i = posix_spawn(&p, sp_argv[0], NULL, NULL, sp_argv, environ);
	CHECK(i == ENOENT, "posix_spawn of a missing program returned %d", i);
	/* vfork + _exit */
	p = vfork();
	if (p == 0)
		_exit(3);
	CHECK(waitpid(p, &st, 0) == p && WEXITSTATUS(st) == 3, "vfork status %#x", st);
	/* a child that crashes is a crashed process: the ULP goes on */
	p = fork();
	if (p == 0) {
		*(volatile int *)8 = 1;
		_exit(0);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	      "crashing child status %#x", st);
	/* waitid on a pidfd of one's child, and waitid(P_PID) */
	p = fork();
	if (p == 0) {
		usleep(20000);
		_exit(21);
	}
	{
		int fd = (int)syscall(SYS_pidfd_open, p, 0);
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		CHECK(fd >= 0 && waitid(P_PIDFD, (id_t)fd, &si, WEXITED) == 0 && si.si_pid == p &&
			  si.si_code == CLD_EXITED && si.si_status == 21,
		      "waitid(P_PIDFD): pid %d code %d status %d (%s)", (int)si.si_pid, si.si_code,
		      si.si_status, strerror(errno));
		close(fd);
	}
	p = fork();
	if (p == 0)
		_exit(22);
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		CHECK(waitid(P_PID, (id_t)p, &si, WEXITED) == 0 && si.si_pid == p &&
			  si.si_status == 22,
		      "waitid(P_PID): pid %d status %d", (int)si.si_pid, si.si_status);
	}
	/* a clone child whose exit signal is not SIGCHLD: a plain wait says ECHILD, and the child
	 * stays for __WCLONE and __WALL, as the kernel's (before 27 Nov the plain wait said 0
	 * and dropped it: ECHILD for __WALL) */
	p = (pid_t)syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
	if (p == 0)
		_exit(23);
	CHECK(p > 0 && waitpid(p, &st, WNOHANG) == -1 && errno == ECHILD,
	      "plain wait of a clone child: %s", strerror(errno));
	CHECK(p > 0 && waitpid(p, &st, __WALL) == p && WIFEXITED(st) && WEXITSTATUS(st) == 23,
	      "__WALL wait of a clone child: status %#x, %s", st, strerror(errno));
	p = (pid_t)syscall(SYS_clone, (long)SIGURG, 0L, 0L, 0L, 0L);
	if (p == 0)
		_exit(24);
	CHECK(p > 0 && waitpid(p, &st, __WCLONE) == p && WIFEXITED(st) && WEXITSTATUS(st) == 24,
	      "__WCLONE wait of a clone child: status %#x, %s", st, strerror(errno));
	/* threads in a fork child (before 26 Nov pthread_create gave EAGAIN there) */
	p = fork();
	if (p == 0)
		threads_in_child();
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "threads in a fork child: status %#x (2: pthread_create failed, 1: wrong values)",
	      st);
	/* a failed execve returns its error and the ULP continues */
	CHECK(execl("/nonexistent-prog", "x", (char *)NULL) == -1 && errno == ENOENT,
	      "failed execve: %s", strerror(errno));
	printf("forks %d: %s\n", rank, bad ? "FAILED" : "ok");
	if (argc > 1 && !strcmp(argv[1], "exec") && !bad)
		execl("/bin/sh", "sh", "-c", "echo replaced; exit 5", (char *)NULL);
	return bad;
}
