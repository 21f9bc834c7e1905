/* SPDX-License-Identifier: MIT */
/*
 * A ULP redirects its own stdin and stdout (dup2 onto 0 and 1, as `sort -o`, a shell's `exec >F`
 * or a builtin's redirection do) while other ULPs of its task use theirs (tests/integ/stdfds.sh).
 * Rank R writes out.R through every way a process has: stdio, ftruncate/lseek/fstat/isatty on 1,
 * poll and select on 0 and 1, dup and F_DUPFD of 1, system(), popen(), fork+exec; reads in.R as
 * its stdin; then puts the saved stdout back and says "stdfds R: ok" there. Any check that fails
 * says "stdfds R: FAIL ..." instead; the driver compares out.R with what a process writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int rank, bad, saved;

static void fail(const char *what)
{
	char msg[256];
	int n =
	    snprintf(msg, sizeof(msg), "stdfds %d: FAIL %s (%s)\n", rank, what, strerror(errno));

	if (write(saved, msg, (size_t)n) < 0)
		_exit(3);
	bad = 1;
}

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			fail(#c);                                                                  \
	} while (0)

/* select and poll see 0 readable and 1 writable: the files, not the task's descriptors. */
static void check_ready(void)
{
	struct pollfd p[2] = {{0, POLLIN, 0}, {1, POLLOUT, 0}};
	fd_set r, w;

	CHECK(poll(p, 2, 5000) == 2 && (p[0].revents & POLLIN) && (p[1].revents & POLLOUT) &&
	      p[0].fd == 0 && p[1].fd == 1);
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(0, &r);
	FD_SET(1, &w);
	CHECK(select(2, &r, &w, NULL, NULL) == 2 && FD_ISSET(0, &r) && FD_ISSET(1, &w));
}

int main(void)
{
	const char *r = getenv("ULP_RANK");
	char name[32], in[32], buf[64] = "";
	struct stat st, fst;
	FILE *f;
	int fd, d, st_child;
	pid_t p;

	rank = r ? atoi(r) : 0;
	saved = dup(1);
	snprintf(name, sizeof(name), "out.%d", rank);
	snprintf(in, sizeof(in), "in.%d", rank);
	fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && dprintf(fd, "input of %d\n", rank) > 0 && close(fd) == 0);
	/* stdin from in.R, stdout to out.R */
	fd = open(in, O_RDONLY);
	CHECK(fd >= 0 && dup2(fd, 0) == 0 && close(fd) == 0);
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && dup2(fd, 1) == 1 && close(fd) == 0);
	/* written, then cut away again: ftruncate and lseek reach out.R */
	CHECK(write(1, "junk\n", 5) == 5 && ftruncate(1, 0) == 0 && lseek(1, 0, SEEK_SET) == 0);
	CHECK(fstat(1, &fst) == 0 && stat(name, &st) == 0 && fst.st_ino == st.st_ino);
	CHECK(!isatty(1) && errno == ENOTTY);
	CHECK((fcntl(1, F_GETFL) & O_ACCMODE) == O_WRONLY);
	check_ready();
	CHECK(read(0, buf, sizeof(buf) - 1) > 0);
	printf("rank %d read: %s", rank, buf);
	printf("rank %d: stdio\n", rank);
	fflush(stdout);
	CHECK(lseek(1, 0, SEEK_CUR) == ftell(stdout));
	d = dup(1);
	CHECK(d > 2 && dprintf(d, "rank %d: dup\n", rank) > 0 && close(d) == 0);
	d = fcntl(1, F_DUPFD, 10);
	CHECK(d >= 10 && dprintf(d, "rank %d: F_DUPFD\n", rank) > 0 && close(d) == 0);
	CHECK(system("echo system") == 0);
	f = popen("cat", "w");
	CHECK(f && fputs("popen\n", f) >= 0 && pclose(f) == 0);
	CHECK(lseek(0, 0, SEEK_SET) == 0); /* the child reads in.R again */
	p = fork();
	if (p == 0) {
		execl("/bin/sh", "sh", "-c", "echo forked; read l; echo \"child read: $l\"",
		      (char *)NULL);
		_exit(127);
	}
	CHECK(p > 0 && waitpid(p, &st_child, 0) == p && st_child == 0);
	/* stdout back as it was; out.R is not written any more */
	CHECK(dup2(saved, 1) == 1);
	CHECK(fstat(1, &fst) == 0 && stat(name, &st) == 0 && fst.st_ino != st.st_ino);
	if (!bad)
		printf("stdfds %d: ok\n", rank);
	return bad;
}
