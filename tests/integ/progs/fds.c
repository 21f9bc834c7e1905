/* SPDX-License-Identifier: MIT */
/*
 * Descriptors and seccomp as a ULP sees them (tests/integ/signals.sh):
 *   fds closerange DIR   rank 0 closes every descriptor (close_range, glibc's closefrom): its
 *                        own stdout is closed for it (EBADF); it says so in DIR/r0. The other
 *                        ranks wait for that file, then print on their stdout.
 *   fds seccomp          a seccomp filter or strict mode is refused (EINVAL) and the ULP goes
 *                        on; PR_SET_NO_NEW_PRIVS is accepted
 *   fds cpu FIFO         rank 0 computes until getrusage says it used 300 ms of CPU, then opens
 *                        the FIFO for writing; the other ranks wait in an open of the FIFO for
 *                        reading meanwhile, and report their own CPU time (near 0): getrusage,
 *                        times(), clock() and CLOCK_PROCESS_CPUTIME_ID (read in the vDSO)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* CPU time so far by clock() and by clock_gettime(CLOCK_PROCESS_CPUTIME_ID), in ms. */
static long clock_ms(void)
{
	return (long)(clock() / (CLOCKS_PER_SEC / 1000));
}

static long cputime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	const char *r = getenv("ULP_RANK");
	int rank = r ? atoi(r) : 0;
	char path[4096];

	if (argc > 2 && !strcmp(argv[1], "closerange")) {
		snprintf(path, sizeof(path), "%s/r0", argv[2]);
		if (rank == 0) {
			long rc = syscall(SYS_close_range, 0, ~0u, 0);
			long w = write(1, "still open\n", 11);
			int e = errno, fd;

			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dprintf(fd, "%s\n",
				rc == 0 && w == -1 && e == EBADF ? "closed for rank 0" : "FAIL");
			close(fd);
			return 0;
		}
		for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++) {
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
		}
		printf("rank %d stdout works\n", rank);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "seccomp")) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = {1, &allow};
		long a, b, c;
		int ea, eb;

		c = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		a = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
		ea = errno;
		b = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
		eb = errno;
		printf("rank %d seccomp: %s\n", rank,
		       a == -1 && ea == EINVAL && b == -1 && eb == EINVAL && c == 0 ? "refused"
										    : "FAIL");
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "cpu")) {
		struct rusage ru;
		struct tms tm;
		volatile unsigned long x = 0;
		time_t t0 = time(NULL);
		long used;
		int fd;

		if (rank == 0) {
			do {
				for (int i = 0; i < 1000000; i++)
					x += (unsigned long)i * i;
				getrusage(RUSAGE_SELF, &ru);
				used = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
			} while (used < 300 && time(NULL) < t0 + 60);
			times(&tm);
			printf("rank 0 busy: %s (clock %ld ms, cputime %ld ms)\n",
			       used >= 300 && tm.tms_utime >= 25 && clock_ms() >= 250 &&
				       cputime_ms() >= 250
				   ? "ok"
				   : "FAIL (no CPU time)",
			       clock_ms(), cputime_ms());
			fflush(stdout);
			fd = open(argv[2], O_WRONLY);
			close(fd);
			return 0;
		}
		fd = open(argv[2], O_RDONLY); /* parks until rank 0 is done */
		close(fd);
		getrusage(RUSAGE_SELF, &ru);
		used = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
		printf("rank %d idle: %s (%ld ms, clock %ld ms, cputime %ld ms)\n", rank,
		       used < 30 && clock_ms() < 30 && cputime_ms() < 30 ? "ok" : "FAIL", used,
		       clock_ms(), cputime_ms());
		return 0;
	}
	fprintf(stderr, "fds: unknown mode\n");
	return 2;
}
