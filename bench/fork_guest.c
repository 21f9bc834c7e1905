/* SPDX-License-Identifier: MIT */
/*
 * bench/fork.sh's program: ROUNDS rounds of fork, execve("/bin/true") in the child (or _exit(0)
 * with a second argument "exit"), and waitpid; prints the mean microseconds of a round. With
 * the first argument "sleep" it only sleeps for the given seconds (a bystander rank of the job).
 * Usage: fork_guest ROUNDS [exit] | fork_guest sleep SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, i, st;
	int ex = argc > 2 && !strcmp(argv[2], "exit");
	double t0;

	if (argc > 2 && !strcmp(argv[1], "sleep")) {
		struct timespec ts = {atoi(argv[2]), 0};

		nanosleep(&ts, NULL);
		return 0;
	}
	if (n < 1)
		n = 1;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p == 0) {
			if (!ex)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("nan\n");
			return 1;
		}
	}
	printf("%.1f\n", (now_us() - t0) / n);
	return 0;
}
