/* SPDX-License-Identifier: MIT */
/*
 * A ULP's descriptors end with it, as a process's do (tests/integ/fdends.sh). The rank comes from
 * ULP_RANK (set by hand when the same program runs as processes, for the reference output).
 *   fdends fifo-wr FIFO        open FIFO for writing, write "hi", _exit without close: a reader
 *                              in another ULP of the task reads "hi", then EOF
 *   fdends hold FIFO PIDFILE   the same, then write getpid() to PIDFILE and wait to be killed
 *   fdends crash FIFO          the same, then crash (SIGSEGV)
 *   fdends nopie-exec FIFO DIR NOPIE   open FIFO for writing, close-on-exec, write "hi", exec
 *                              NOPIE (this program linked non-PIE: a child process of the ULP)
 *                              as `wait DIR`, which waits for DIR/eof; `fifo-rd FIFO DIR` reads
 *                              FIFO to EOF, then makes DIR/eof: the ULP's own descriptor must be
 *                              closed while the child runs
 *   fdends unix DIR            rank 0 listens on DIR/sock, accepts rank 1, sends it a pipe's read
 *                              end (SCM_RIGHTS; rank 1 takes it with recvmsg; unix-mmsg: recvmmsg), writes
 *                              "hi" to the pipe and the connection, _exits without close; rank 1
 *                              reads both to EOF
 *   fdends tcp DIR             the same over TCP on 127.0.0.1 (the port in DIR/port), no pipe
 *   fdends exec DIR            rank 1 makes a close-on-exec pipe and a plain one; rank 0 then
 *                              does the same and execs itself (execd): its close-on-exec pipe
 *                              is closed in the new program, its plain one open and usable; rank
 *                              1's both usable after that
 *   fdends keep DIR            rank 0 makes a pipe and a file; rank 1 makes descriptors of many
 *                              kinds (one in a thread), writes their numbers to DIR/fds1 and
 *                              _exits: they are all closed after it ends, rank 0's still usable
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int rank(void)
{
	const char *r = getenv("ULP_RANK");

	return r ? atoi(r) : 0;
}

static void fail(const char *what)
{
	printf("rank %d: FAIL %s: %s\n", rank(), what, strerror(errno));
	fflush(stdout);
	_exit(1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Wait (at most 120 s) until DIR/name exists. */
static void wait_file(const char *dir, const char *name)
{
	char p[4096];
	int i;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (i = 0; i < 12000 && access(p, F_OK) != 0; i++)
		sleep_ms(10);
	if (access(p, F_OK) != 0)
		fail(p);
}

/* Write text to path at once (a temporary file renamed). */
static void put_path(const char *p, const char *text)
{
	char t[4096];
	int fd;

	snprintf(t, sizeof(t), "%s.tmp", p);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0 ||
	    rename(t, p) != 0)
		fail(p);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	put_path(p, text);
}

static void get_file(const char *dir, const char *name, char *buf, size_t len)
{
	char p[4096];
	ssize_t n;
	int fd;

	wait_file(dir, name);
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, len - 1)) < 0)
		fail(p);
	buf[n] = 0;
	close(fd);
}

/* Read fd to EOF (at most 120 s: the test's limit ends a hang) and print what came. */
static void read_all(const char *what, int fd)
{
	char buf[256];
	size_t got = 0;
	ssize_t n;

	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		fail(what);
	buf[got] = 0;
	printf("rank %d: %s: read \"%.*s\", then EOF\n", rank(), what,
	       (int)(got && buf[got - 1] == '\n' ? got - 1 : got), buf);
}

static void write_str(int fd, const char *s, const char *what)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		fail(what);
}

static int fifo_wr(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		fail(path);
	write_str(fd, "hi\n", path);
	return fd;
}

/* ---- unix, tcp ---- */

static void send_fd(int sock, int fd)
{
	char data = 'f';
	struct iovec iov = {&data, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct msghdr mh = {0};
	struct cmsghdr *ch;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.buf;
	mh.msg_controllen = sizeof(c.buf);
	ch = CMSG_FIRSTHDR(&mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(ch), &fd, sizeof(int));
	if (sendmsg(sock, &mh, 0) != 1)
		fail("sendmsg SCM_RIGHTS");
}

static int recv_fd(int sock, int mmsg)
{
	char data;
	struct iovec iov = {&data, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct mmsghdr m;
	struct cmsghdr *ch;
	int fd;

	memset(&m, 0, sizeof(m));
	m.msg_hdr.msg_iov = &iov;
	m.msg_hdr.msg_iovlen = 1;
	m.msg_hdr.msg_control = c.buf;
	m.msg_hdr.msg_controllen = sizeof(c.buf);
	if (mmsg ? recvmmsg(sock, &m, 1, 0, NULL) != 1 : recvmsg(sock, &m.msg_hdr, 0) != 1)
		fail(mmsg ? "recvmmsg" : "recvmsg");
	ch = CMSG_FIRSTHDR(&m.msg_hdr);
	if (!ch || ch->cmsg_type != SCM_RIGHTS)
		fail("no descriptor came");
	memcpy(&fd, CMSG_DATA(ch), sizeof(int));
	return fd;
}

static int sock_unix(const char *dir, struct sockaddr_un *a)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (s < 0)
		fail("socket");
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s/sock", dir);
	return s;
}

static int unix_pair(const char *dir, int mmsg)
{
	struct sockaddr_un a;
	int s = sock_unix(dir, &a), c, p[2];

	if (rank() == 1) {
		wait_file(dir, "ready");
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
			fail("connect");
		c = recv_fd(s, mmsg);
		read_all("pipe", c);
		read_all("unix socket", s);
		return 0;
	}
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0)
		fail("bind");
	put_file(dir, "ready", "");
	c = accept(s, NULL, NULL);
	if (c < 0 || pipe(p) != 0)
		fail("accept, pipe");
	send_fd(c, p[0]);
	close(p[0]); /* the reader's copy is the one it received */
	write_str(p[1], "hi\n", "pipe");
	write_str(c, "hi\n", "unix socket");
	printf("rank 0: exits without close\n");
	fflush(stdout);
	_exit(0);
}

static int tcp_pair(const char *dir)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), c;
	char port[32];

	if (s < 0)
		fail("socket");
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rank() == 1) {
		get_file(dir, "port", port, sizeof(port));
		a.sin_port = htons((unsigned short)atoi(port));
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
			fail("connect");
		read_all("tcp socket", s);
		return 0;
	}
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) != 0)
		fail("bind");
	snprintf(port, sizeof(port), "%d", ntohs(a.sin_port));
	put_file(dir, "port", port);
	c = accept(s, NULL, NULL);
	if (c < 0)
		fail("accept");
	write_str(c, "hi\n", "tcp socket");
	printf("rank 0: exits without close\n");
	fflush(stdout);
	_exit(0);
}

/* ---- exec ---- */

/* A round trip through pipe p: the descriptors are open and are the pipe they were. */
static int pipe_ok(const int p[2])
{
	char c = 0;

	return write(p[1], "z", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'z';
}

static int is_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

static int exec_pair(const char *self, const char *dir)
{
	int c[2], k[2];
	char a[4][16];

	if (rank() == 1) {
		if (pipe2(c, O_CLOEXEC) != 0 || pipe(k) != 0)
			fail("pipe");
		put_file(dir, "ready1", "");
		wait_file(dir, "done0");
		printf("rank 1: close-on-exec pipe %s, plain pipe %s after rank 0's exec\n",
		       pipe_ok(c) ? "usable" : "BROKEN", pipe_ok(k) ? "usable" : "BROKEN");
		return 0;
	}
	wait_file(dir, "ready1");
	if (pipe2(c, O_CLOEXEC) != 0 || pipe(k) != 0)
		fail("pipe");
	snprintf(a[0], sizeof(a[0]), "%d", c[0]);
	snprintf(a[1], sizeof(a[1]), "%d", c[1]);
	snprintf(a[2], sizeof(a[2]), "%d", k[0]);
	snprintf(a[3], sizeof(a[3]), "%d", k[1]);
	fflush(stdout);
	execl(self, self, "execd", dir, a[0], a[1], a[2], a[3], (char *)NULL);
	fail("execl");
	return 1;
}

static int execd(char **v)
{
	int c[2] = {atoi(v[1]), atoi(v[2])}, k[2] = {atoi(v[3]), atoi(v[4])};

	printf("rank 0: after exec: close-on-exec pipe %s, plain pipe %s\n",
	       is_closed(c[0]) && is_closed(c[1]) ? "closed" : "STILL OPEN",
	       pipe_ok(k) ? "usable" : "BROKEN");
	fflush(stdout);
	put_file(v[0], "done0", "");
	return 0;
}

/* ---- keep ---- */

static void *thread_open(void *arg)
{
	*(int *)arg = open("/dev/null", O_RDONLY);
	return NULL;
}

static int keep_pair(const char *dir)
{
	int p[2], f, fds[9], i, n, closed = 0;
	char buf[512], name[4096];
	pthread_t t;
	char *s;

	if (rank() == 1) {
		wait_file(dir, "ready0");
		if (pipe2(fds, 0) != 0)
			fail("pipe2");
		fds[2] = eventfd(0, 0);
		fds[3] = socket(AF_UNIX, SOCK_DGRAM, 0);
		fds[4] = dup(fds[0]);
		fds[5] = fcntl(fds[1], F_DUPFD_CLOEXEC, 0);
		fds[6] = open(dir, O_RDONLY | O_DIRECTORY);
		if (pthread_create(&t, NULL, thread_open, &fds[7]) != 0 ||
		    pthread_join(t, NULL) != 0)
			fail("pthread");
		/* the thread's descriptor is its ULP's: the thread's end leaves it open */
		if (fds[7] < 0 || is_closed(fds[7]))
			fail("the descriptor of an ended thread");
		fds[8] = dup3(fds[2], 333, 0); /* a number nothing else holds */
		for (i = 0, n = 0; i < 9; i++) {
			if (fds[i] < 0)
				fail("a descriptor");
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%d ", fds[i]);
		}
		put_file(dir, "fds1", buf);
		_exit(0);
	}
	snprintf(name, sizeof(name), "%s/f0", dir);
	if (pipe(p) != 0 || (f = open(name, O_RDWR | O_CREAT, 0644)) < 0)
		fail("pipe, open");
	put_file(dir, "ready0", "");
	get_file(dir, "fds1", buf, sizeof(buf));
	/* closed when rank 1's end is done: give it 120 s */
	for (i = 0; i < 12000 && !closed; i++) {
		closed = 1;
		for (s = buf; *s; s = strchr(s, ' ') + 1)
			closed &= is_closed(atoi(s));
		if (!closed)
			sleep_ms(10);
	}
	printf("rank 0: rank 1's 9 descriptors %s after it ended\n", closed ? "closed" : "OPEN");
	printf("rank 0: own pipe %s, own file %s\n", pipe_ok(p) ? "usable" : "BROKEN",
	       write(f, "x", 1) == 1 ? "usable" : "BROKEN");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "fifo-wr")) {
		fifo_wr(argv[2]);
		_exit(0);
	}
	if (argc == 4 && !strcmp(argv[1], "hold")) {
		char pid[32];
		int fd = fifo_wr(argv[2]);

		snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		put_path(argv[3], pid);
		for (;;)
			pause();
		return fd;
	}
	if (argc == 5 && !strcmp(argv[1], "nopie-exec")) {
		int fd = open(argv[2], O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			fail(argv[2]);
		write_str(fd, "hi\n", argv[2]);
		execl(argv[4], argv[4], "wait", argv[3], (char *)NULL);
		fail("execl");
	}
	if (argc == 3 && !strcmp(argv[1], "wait")) {
		wait_file(argv[2], "eof");
		printf("the reader saw EOF while the exec'd program ran\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "fifo-rd")) {
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0)
			fail(argv[2]);
		read_all("fifo", fd);
		fflush(stdout);
		put_file(argv[3], "eof", "");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "crash")) {
		fifo_wr(argv[2]);
		*(volatile int *)(uintptr_t)8 = 1;
		return 1;
	}
	if (argc == 3 && (!strcmp(argv[1], "unix") || !strcmp(argv[1], "unix-mmsg")))
		return unix_pair(argv[2], argv[1][4] == '-');
	if (argc == 3 && !strcmp(argv[1], "tcp"))
		return tcp_pair(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return exec_pair(argv[0], argv[2]);
	if (argc == 7 && !strcmp(argv[1], "execd"))
		return execd(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "keep"))
		return keep_pair(argv[2]);
	fprintf(stderr, "usage: fdends fifo-wr FIFO | hold FIFO PIDFILE | crash FIFO | "
			"nopie-exec FIFO DIR NOPIE | wait DIR | fifo-rd FIFO DIR | unix DIR | unix-mmsg DIR | "
			"tcp DIR | exec DIR | keep DIR\n");
	return 2;
}
