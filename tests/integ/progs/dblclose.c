/* SPDX-License-Identifier: MIT */
/*
 * A double close in one ULP must not close another ULP's new descriptor (tests/integ/fdends.sh;
 * docs/syscalls.md, "Descriptor ownership"). The ULPs of a task share one descriptor table, and
 * a number a ULP closed may be made again at once by a neighbour on another worker.
 *   dblclose N        N rounds of: make a descriptor (socket, dup, pipe2, open of /dev/null,
 *                     eventfd, in turn), fstat it (its device and inode kept), fstat it again
 *                     just before closing it (it must still be the same file: no one closed
 *                     it), close it (0), close it again (EBADF: a 0 closed someone's). Prints
 *                     one line with its counts; a process prints the same.
 *   dblclose nobodys [FD]   close FD (an inherited descriptor of the launcher's, opened by the
 *                     test's shell): 0, then EBADF; then make a descriptor by an ioctl
 *                     (NS_GET_USERNS: the runtime does not trap ioctl, so no ULP owns it) and
 *                     close it: 0, then EBADF. Not with double closes in other ULPs: no record
 *                     guards an ioctl's descriptor from them (docs/syscalls.md).
 *   dblclose spawn N  N rounds of posix_spawn of /bin/true and waitpid for it (the runtime
 *                     parks the wait on a pidfd of the child, its own descriptor for the
 *                     while): each must end with status 0; prints the count of those that did.
 *   dblclose fifo N F A r|w [keep] [late]   N rounds in lock-step of two ULPs, by blocking
 *                     FIFO opens (the runtime runs them on its ring, whose descriptor is made
 *                     in the kernel's io-wq thread): r opens F for reading and reads one byte
 *                     to EOF, then opens A for writing and writes one; w the other ends; every
 *                     descriptor is closed twice as above. Each side prints the bytes it read
 *                     (N). keep: the ends are opened without O_CLOEXEC, so that a copy a child
 *                     process kept would outlive its execve. late: each read end is opened 1 ms
 *                     late, so that the partner's write open comes first (and pairs with any
 *                     reader the FIFO still has).
 *   dblclose fork N   N rounds of fork, _exit(0) in the child, and waitpid (the ULP's
 *                     placeholder makes the child and waits for it); prints the count of
 *                     those that ended with 0.
 *   dblclose spawn-check N F A   N rounds of posix_spawn of `dblclose seen F A` and waitpid: each
 *                     child must have found no end of F or A (another process's, as a process's
 *                     child never holds one); prints the count of those that found none.
 *   dblclose seen F A  exits 1 if one of its descriptors is an end of FIFO F or A, else 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct counts {
	long rounds, lost, wrong, bad;
};

/* Make descriptors by the round's call: 1 or 2 of them in fds. */
static int make(long i, int fds[2])
{
	switch (i % 5) {
	case 0:
		fds[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		return 1;
	case 1:
		fds[0] = dup(0);
		return 1;
	case 2:
		if (pipe2(fds, O_CLOEXEC))
			fds[0] = fds[1] = -1;
		return 2;
	case 3:
		fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return 1;
	default:
		fds[0] = eventfd(0, EFD_CLOEXEC);
		return 1;
	}
}

static int same_file(int fd, const struct stat *was)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == was->st_dev && st.st_ino == was->st_ino;
}

/* fd, still the file in *was, closed once (0) and again (EBADF). */
static void close_twice(int fd, const struct stat *was, struct counts *c)
{
	if (!same_file(fd, was))
		c->lost++; /* closed, or another file now: someone closed it */
	if (close(fd) != 0)
		c->lost++;
	errno = 0;
	if (close(fd) == 0)
		c->wrong++; /* closed another's descriptor */
	else if (errno != EBADF)
		c->bad++;
}

static void round_trip(long i, struct counts *c)
{
	struct stat st[2];
	int fds[2], n = make(i, fds), k;

	for (k = 0; k < n; k++)
		if (fds[k] < 0 || fstat(fds[k], &st[k])) {
			c->bad++;
			return;
		}
	for (k = 0; k < n; k++)
		close_twice(fds[k], &st[k], c);
	c->rounds++;
}

/* Close a descriptor nobody recorded (the launcher's, an ioctl's): "0 EBADF" as a process. */
static const char *close_nobodys(int fd)
{
	int r1 = close(fd), r2;

	errno = 0;
	r2 = close(fd);
	if (r1 == 0 && r2 == -1 && errno == EBADF)
		return "0 EBADF";
	return "WRONG";
}

/* One FIFO open of path, one byte written (wr) or read to EOF, closed twice; the bytes read.
 * keep: without O_CLOEXEC. */
static long fifo_end(const char *path, int wr, int keep, int late, struct counts *c)
{
	struct timespec pause = {0, 1000000};
	struct stat st;
	char b[64];
	long got = 0, r;
	int fd;

	if (late && !wr)
		nanosleep(&pause, NULL);
	fd = open(path, (wr ? O_WRONLY : O_RDONLY) | (keep ? 0 : O_CLOEXEC));

	if (fd < 0 || fstat(fd, &st)) {
		c->bad++;
		return 0;
	}
	if (wr && write(fd, "x", 1) != 1)
		c->bad++;
	while (!wr && (r = read(fd, b, sizeof(b))) > 0)
		got += r;
	close_twice(fd, &st, c);
	return got;
}

static int fifo_main(long n, const char *f, const char *a, int w, int keep, int late)
{
	struct counts c = {0};
	long got = 0, i;

	for (i = 0; i < n; i++) {
		got += fifo_end(f, w, keep, late, &c);
		got += fifo_end(a, !w, keep, late, &c);
	}
	printf("dblclose fifo %s: %ld bytes read, %ld lost, %ld wrong closes, %ld errors\n",
	       w ? "w" : "r", got, c.lost, c.wrong, c.bad);
	return 0;
}

static int spawn_main(long n)
{
	char *argv[] = {"/bin/true", NULL};
	long i, good = 0;
	pid_t pid;
	int st;

	for (i = 0; i < n; i++)
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0 &&
		    waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			good++;
	printf("dblclose spawn: %ld of %ld ended with 0\n", good, n);
	return 0;
}

static int fork_main(long n)
{
	long i, good = 0;
	pid_t pid;
	int st;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			good++;
	}
	printf("dblclose fork: %ld of %ld ended with 0\n", good, n);
	return 0;
}

/* Whether one of this process's descriptors is an end of the FIFO st names. */
static int holds_fifo(const struct stat *fifo)
{
	struct stat st;
	int fd;

	for (fd = 3; fd < 1024; fd++)
		if (fstat(fd, &st) == 0 && st.st_dev == fifo->st_dev && st.st_ino == fifo->st_ino)
			return 1;
	return 0;
}

static int seen_main(const char *f, const char *a)
{
	struct stat sf, sa;

	if (stat(f, &sf) || stat(a, &sa))
		return 2;
	return holds_fifo(&sf) || holds_fifo(&sa);
}

static int spawn_check_main(const char *self, long n, const char *f, const char *a)
{
	char *argv[] = {(char *)self, "seen", (char *)f, (char *)a, NULL};
	long i, good = 0;
	pid_t pid;
	int st;

	for (i = 0; i < n; i++)
		if (posix_spawn(&pid, self, NULL, NULL, argv, environ) == 0 &&
		    waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			good++;
	printf("dblclose spawn-check: %ld of %ld children held no end of the pair's FIFOs\n", good,
	       n);
	return 0;
}

static int nobodys_main(int argc, char **argv)
{
	int ns, fd;

	printf("dblclose nobodys:");
	if (argc > 2)
		printf(" inherited %s;", close_nobodys(atoi(argv[2])));
	ns = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	fd = ns < 0 ? -1 : ioctl(ns, NS_GET_USERNS);
	printf(" ioctl's %s\n", fd < 0 ? strerror(errno) : close_nobodys(fd));
	if (ns >= 0)
		close(ns);
	return 0;
}

/* Whether word is one of argv[from...]. */
static int has_word(int argc, char **argv, int from, const char *word)
{
	for (; from < argc; from++)
		if (!strcmp(argv[from], word))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct counts c = {0};
	long n = argc > 1 ? atol(argv[1]) : 2000, i;

	if (argc >= 6 && !strcmp(argv[1], "fifo"))
		return fifo_main(atol(argv[2]), argv[3], argv[4], argv[5][0] == 'w',
				 has_word(argc, argv, 6, "keep"), has_word(argc, argv, 6, "late"));
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return fork_main(atol(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "spawn-check"))
		return spawn_check_main(argv[0], atol(argv[2]), argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "seen"))
		return seen_main(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "spawn"))
		return spawn_main(atol(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "nobodys"))
		return nobodys_main(argc, argv);
	for (i = 0; i < n; i++)
		round_trip(i, &c);
	printf("dblclose: %ld rounds, %ld lost, %ld wrong closes, %ld errors\n", c.rounds, c.lost,
	       c.wrong, c.bad);
	return 0;
}
