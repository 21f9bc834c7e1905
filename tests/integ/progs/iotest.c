/* SPDX-License-Identifier: MIT */
/*
 * Blocking calls as ULPs make them (tests/integ/io.sh). An ordinary program: it runs the same as
 * a process, which is what the driver compares against. Each mode prints "MODE ok ..." on success
 * and "MODE FAIL: why" (exit 1) otherwise.
 *
 *   fifo ping|pong F1 F2 N      message ping-pong over two FIFOs (ping opens F1 for writing)
 *   tcp server|client PORT|PORTFILE N   the same over a loopback TCP connection; PORTFILE: the
 *                               server listens on a port of the kernel's choice and writes it there
 *   bulk w|r FIFO BYTES         w: BYTES in one write() to FIFO, which must take them all (a
 *                               blocking write is whole); r: read them, checking every byte
 *   tcpbulk server|client PORT|PORTFILE BYTES   the same over TCP (the client writes)
 *   sleep|nanosleep|select|poll|epoll|epoll2 MS [DIR]   block MS in that call (epoll2:
 *                               epoll_pwait2), check the time and
 *                               result; with DIR: create DIR/spinning first (the computation's go),
 *                               and block MS at a time until DIR/computed exists (120 s at most)
 *   compute N [DIR]             N million multiply-adds, then "compute done" (written at once);
 *                               with DIR: first wait (sleeping) for DIR/spinning, and create
 *                               DIR/computed when done
 *   spin S [DIR]                spin S seconds without a system call, then "spin done"; with DIR:
 *                               create DIR/spinning first, and stop early once DIR/computed exists
 *                               (looked at every 10 ms: a spinner that is preempted lets the
 *                               computation run and end, so it never spins the whole S seconds)
 *   ring DIR N ROUNDS           rank ULP_RANK of N passes a token through FIFOs DIR/0..N-1
 *   eintr                       EINTR of read, pause, nanosleep (rem), poll, select, wait4;
 *                               SA_RESTART of read and wait4
 *   timeouts                    poll/select/epoll/SO_RCVTIMEO/SO_SNDTIMEO time out (read,
 *                               write, accept, connect; also
 *                               SO_RCVTIMEO of a socket dup2'ed over a FIFO); O_NONBLOCK pipes
 *                               and FIFOs give EAGAIN
 *   nonblock                    copy stdin to stdout; O_NONBLOCK of fds 0 and 1 must not change
 *   fifofault r|w F1 F2         a reader (r: opens F1 to read, F2 to write) and a writer of F1:
 *                               a read into a PROT_NONE page says EFAULT and loses nothing (the
 *                               next read gets the bytes), a write from one says EFAULT and
 *                               writes nothing (the next read gets the next write's bytes),
 *                               then 1000 round trips; F2 carries the reader's answers
 *   fifomix r FIFO N W | w FIFO ID N   W writers (ULPs and processes) of N records each of one
 *                               FIFO, ID 1..W, and one reader: each writer's records arrive
 *                               whole and in order ("fifomix read W*N"); no end of file is
 *                               waited for (the reader holds a write end)
 *   fifowrap ra A | rb B | w A B   a writer of FIFO A (4 one-byte writes, a yield after each)
 *                               closes it, opens and closes /dev/null at its number 63 times
 *                               and opens FIFO B there (128 changes of the number's record: its
 *                               generation comes back), then writes B a byte; each reader must
 *                               read its own FIFO's bytes alone ("aaaa", "b") to its end
 *   pipethreads N               the same ping-pong between two threads over two pipes
 *   pipemix N                   fifomix's check on a pipe: two threads and a fork child write
 *                               N records each, the main thread reads ("pipemix read 3*N")
 *   fifomany r FIFO | w FIFO N R readers of one FIFO and a writer of N records: each record
 *                               reaches one reader ("fifomany read COUNT SUM", "... wrote N");
 *                               each reader makes FIFO.rPID once it has opened, and the writer
 *                               writes once R readers have (a reader that opened after the
 *                               writer had closed would wait for ever, as a process does)
 *   coldread FILE               read FILE, evicted from the page cache before each pass,
 *                               through an O_NONBLOCK descriptor (which means nothing to a
 *                               regular file), blocking, and by pread: bytes and hash of each
 *   reads N                     N one-byte reads of /dev/zero: microseconds per call
 *   spinbarrier                 the ULP_SIZE ranks meet at a barrier by spinning on a shared
 * counter without any system call (the TiNy Threads case: more spinners than workers finish only
 * when spinners are preempted)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pvas.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mode;

static void fail(const char *fmt, const char *what)
{
	printf("%s FAIL: ", mode);
	printf(fmt, what);
	printf(" (errno %d: %s)\n", errno, strerror(errno));
	fflush(stdout);
	exit(1);
}

/* fail with a message of numbers */
static void failn(const char *fmt, long a, long b, long c)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, a, b, c);
	fail("%s", msg);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The preemption tests' handshake between a spinner and a computation (see compute/spin). */
static void touch_file(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail("create %s", path);
	close(fd);
}

/* Sleeps (a parking call, so a worker shared with the spinner can run it) until DIR/NAME exists;
 * 120 s at most: a hang guard only. */
static void wait_file(const char *dir, const char *name)
{
	char path[4096];
	struct timespec ts = {0, 5000000};
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 24000 && access(path, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	if (access(path, F_OK) != 0)
		fail("%s never appeared", path);
}

static void full_write(int fd, const void *p, size_t n)
{
	ssize_t r = write(fd, p, n);

	if (r != (ssize_t)n)
		fail("%s", "short or failed write");
}

static void full_read(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r <= 0)
			fail("%s", r ? "read" : "unexpected end of file");
		got += (size_t)r;
	}
}

/* The side that starts sends i, the other answers i + 1. */
static void exchange(int in, int out, int n, int starts)
{
	long v;
	int i;

	for (i = 0; i < n; i++) {
		if (starts) {
			v = i;
			full_write(out, &v, sizeof(v));
			full_read(in, &v, sizeof(v));
			if (v != i + 1)
				fail("%s", "wrong answer");
		} else {
			full_read(in, &v, sizeof(v));
			if (v != i)
				fail("%s", "wrong message");
			v++;
			full_write(out, &v, sizeof(v));
		}
	}
	printf("%s ok %d messages\n", mode, n);
}

static int do_fifo(char **av)
{
	int ping = !strcmp(av[0], "ping"), in, out;

	if (ping) {
		out = open(av[1], O_WRONLY);
		in = open(av[2], O_RDONLY);
	} else {
		in = open(av[1], O_RDONLY);
		out = open(av[2], O_WRONLY);
	}
	if (in < 0 || out < 0)
		fail("%s", "open");
	/* blocking descriptors, as opened (a ULP's writer open may be made with O_NONBLOCK first,
	 * which must not stay) */
	if ((fcntl(in, F_GETFL) | fcntl(out, F_GETFL)) & O_NONBLOCK)
		fail("%s", "O_NONBLOCK set on an end opened without it");
	exchange(in, out, atoi(av[3]), ping);
	return 0;
}

/* A loopback TCP connection on port av[1]: av[0] "server" accepts it, a client connects. */
/* PORTFILE: the server listens on a port the kernel picks (a fixed one may be any other
 * connection's local port: EADDRINUSE) and writes its number there once it listens; the client
 * reads it from there (waiting, sleeping, 120 s at most). A number is the port itself. */
static void tcp_port_publish(const char *file, int l)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char tmp[4096];
	FILE *f;

	if (getsockname(l, (struct sockaddr *)&sa, &len))
		fail("%s", "getsockname");
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(f) || rename(tmp, file))
		fail("write %s", file);
}

static int tcp_port_read(const char *file)
{
	struct timespec ts = {0, 5000000};
	int port = 0, i;
	FILE *f;

	for (i = 0; i < 24000 && access(file, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	f = fopen(file, "r");
	if (!f || fscanf(f, "%d", &port) != 1)
		fail("read %s", file);
	fclose(f);
	return port;
}

static int tcp_connection(char **av)
{
	int byfile = strspn(av[1], "0123456789") != strlen(av[1]);
	int s = socket(AF_INET, SOCK_STREAM, 0), c, one = 1, i;
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!strcmp(av[0], "server")) {
		sa.sin_port = htons(byfile ? 0 : (unsigned short)atoi(av[1]));
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 4))
			fail("%s", "bind/listen");
		if (byfile)
			tcp_port_publish(av[1], s);
		c = accept(s, NULL, NULL);
		if (c < 0)
			fail("%s", "accept");
		return c;
	}
	sa.sin_port = htons((unsigned short)(byfile ? tcp_port_read(av[1]) : atoi(av[1])));
	for (i = 0; connect(s, (struct sockaddr *)&sa, sizeof(sa)); i++) {
		struct timespec ts = {0, 10000000};

		if (errno != ECONNREFUSED || i > 1000)
			fail("%s", "connect");
		close(s); /* a failed connect leaves the socket unusable: a new one */
		s = socket(AF_INET, SOCK_STREAM, 0);
		nanosleep(&ts, NULL);
	}
	return s;
}

static int do_tcp(char **av)
{
	int s = tcp_connection(av);

	exchange(s, s, atoi(av[2]), strcmp(av[0], "server") != 0);
	return 0;
}

static unsigned char bulk_byte(long i)
{
	return (unsigned char)(i * 7 + i / 4096);
}

/* One write() of n bytes must return n; the reader checks each byte it gets. */
static int bulk(int fd, int writer, long n)
{
	unsigned char *b = malloc((size_t)n);
	long i, got = 0;
	ssize_t r;

	if (!b)
		fail("%s", "malloc");
	if (writer) {
		for (i = 0; i < n; i++)
			b[i] = bulk_byte(i);
		r = write(fd, b, (size_t)n);
		if (r != n) {
			printf("%s FAIL: write of %ld bytes returned %zd\n", mode, n, r);
			exit(1);
		}
		printf("%s ok wrote %ld\n", mode, n);
		return 0;
	}
	while (got < n) {
		r = read(fd, b, (size_t)(n - got));
		if (r <= 0)
			fail("%s", r ? "read" : "unexpected end of file");
		for (i = 0; i < r; i++)
			if (b[i] != bulk_byte(got + i))
				fail("%s", "wrong byte");
		got += r;
	}
	printf("%s ok read %ld\n", mode, n);
	return 0;
}

static int do_bulk(char **av)
{
	int w = !strcmp(av[0], "w"), fd = open(av[1], w ? O_WRONLY : O_RDONLY);

	if (fd < 0)
		fail("open %s", av[1]);
	return bulk(fd, w, atol(av[2]));
}

/* Several readers of one FIFO and a writer of N 8-byte records 1..N (each write atomic, each
 * read asks 8 bytes): every record reaches exactly one reader. r prints how many records it
 * got and their sum; w prints what it wrote. */
/* How many files of path's directory have a name that starts with path's name and ".r". */
static int readers_open(const char *path)
{
	char dir[4096], prefix[4096];
	const char *slash = strrchr(path, '/');
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	snprintf(prefix, sizeof(prefix), "%s.r", slash ? slash + 1 : path);
	d = opendir(dir);
	if (!d)
		fail("opendir %s", dir);
	while ((e = readdir(d)) != NULL)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int do_fifofault(char **av)
{
	int r = !strcmp(av[0], "r"), in, out, i;
	char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long v;

	if (bad == MAP_FAILED)
		fail("%s", "mmap");
	if (r) {
		in = open(av[1], O_RDONLY);
		out = open(av[2], O_WRONLY);
	} else {
		out = open(av[1], O_WRONLY);
		in = open(av[2], O_RDONLY);
	}
	if (in < 0 || out < 0)
		fail("%s", "open");
	if (r) {
		/* the writer's second write comes once this read waits, its buffer offered to the
		 * writer (a descriptor's first write is never passed: it learns the FIFO) */
		full_read(in, &v, sizeof(v));
		full_write(out, &v, sizeof(v));
		errno = 0;
		if (read(in, bad, sizeof(v)) != -1 || errno != EFAULT)
			failn("read into a PROT_NONE page: not EFAULT (errno %ld)", errno, 0, 0);
		full_read(in, &v, sizeof(v));
		if (v != 1)
			failn("after EFAULT read %ld, not 1", v, 0, 0);
		full_write(out, &v, sizeof(v));
		full_read(in, &v, sizeof(v));
		if (v != 2) /* the bad write's bytes must not be there */
			failn("after EFAULT write read %ld, not 2", v, 0, 0);
	} else {
		v = 0;
		full_write(out, &v, sizeof(v));
		full_read(in, &v, sizeof(v));
		v = 1;
		full_write(out, &v, sizeof(v));
		full_read(in, &v, sizeof(v));
		errno = 0;
		if (write(out, bad, sizeof(v)) != -1 || errno != EFAULT)
			failn("write from a PROT_NONE page: not EFAULT (errno %ld)", errno, 0, 0);
		v = 2;
		full_write(out, &v, sizeof(v));
	}
	for (i = 0; i < 1000; i++) {
		if (r) {
			full_read(in, &v, sizeof(v));
			if (v != 100 + i)
				failn("round %ld read %ld", i, v, 0);
			v++;
			full_write(out, &v, sizeof(v));
		} else {
			v = 100 + i;
			full_write(out, &v, sizeof(v));
			full_read(in, &v, sizeof(v));
			if (v != 101 + i)
				failn("round %ld answer %ld", i, v, 0);
		}
	}
	printf("fifofault ok %s\n", av[0]);
	return 0;
}

/* A writer of n records (id, 0 .. n-1) to fd, yielding now and then. */
static void mix_write(int fd, long id, long n)
{
	long rec[2] = {id, 0};

	for (rec[1] = 0; rec[1] < n; rec[1]++) {
		full_write(fd, rec, sizeof(rec));
		if (rec[1] % 64 == 0)
			sched_yield();
	}
}

/* The reader of w writers' n records each from fd: each writer's whole and in order. */
static long mix_read(int fd, long n, int w)
{
	long rec[2], got = 0, *next = calloc((size_t)w + 1, sizeof(*next));

	if (!next)
		fail("%s", "calloc");
	while (got < n * w) {
		ssize_t k = read(fd, rec, sizeof(rec));
		if (k != (ssize_t)sizeof(rec))
			failn("read %ld: a torn record", (long)k, 0, 0);
		if (rec[0] < 1 || rec[0] > w || rec[1] != next[rec[0]])
			failn("record %ld of writer %ld, expected %ld", rec[1], rec[0],
			      rec[0] >= 1 && rec[0] <= w ? next[rec[0]] : -1L);
		next[rec[0]]++;
		got++;
	}
	free(next);
	return got;
}

static int do_fifomix(char **av)
{
	int r = !strcmp(av[0], "r"), fd = open(av[1], r ? O_RDONLY : O_WRONLY);

	if (fd < 0)
		fail("open %s", av[1]);
	if (!r) {
		mix_write(fd, atol(av[2]), atol(av[3]));
		printf("fifomix wrote %ld\n", atol(av[3]));
		return 0;
	}
	/* a writer of its own: no end of file before every writer opened, whatever their order */
	if (open(av[1], O_WRONLY | O_NONBLOCK) < 0)
		fail("%s", "open");
	printf("fifomix read %ld\n", mix_read(fd, atol(av[2]), atoi(av[3])));
	return 0;
}

/* pipemix: two threads and a fork child (a process) write one pipe that the main thread reads */
static int mix_fd;
static long mix_n;

static void *mix_thread(void *arg)
{
	mix_write(mix_fd, (long)arg, mix_n);
	return NULL;
}

static int do_pipemix(long n)
{
	pthread_t t[2];
	int p[2], st;
	pid_t c;

	if (pipe(p))
		fail("%s", "pipe");
	mix_fd = p[1];
	mix_n = n;
	c = fork();
	if (c < 0)
		fail("%s", "fork");
	if (c == 0) {
		mix_write(p[1], 3, n);
		_exit(0);
	}
	if (pthread_create(&t[0], NULL, mix_thread, (void *)1L) ||
	    pthread_create(&t[1], NULL, mix_thread, (void *)2L))
		fail("%s", "pthread_create");
	printf("pipemix read %ld\n", mix_read(p[0], n, 3));
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("%s", "the child writer");
	return 0;
}

static int do_fifowrap(char **av)
{
	char got[16], *bad;
	size_t n = 0;
	ssize_t k;
	int fa, fd, i;

	if (strcmp(av[0], "w") != 0) {
		const char *want = !strcmp(av[0], "ra") ? "aaaa" : "b";

		fd = open(av[1], O_RDONLY);
		if (fd < 0)
			fail("open %s", av[1]);
		while (n < sizeof(got) - 1 && (k = read(fd, got + n, 1)) == 1)
			n++;
		got[n] = 0;
		if (strcmp(got, want) != 0)
			fail("read \"%s\"", got);
		printf("fifowrap ok %s %s\n", av[0], got);
		return 0;
	}
	fa = open(av[1], O_WRONLY);
	if (fa < 0)
		fail("open %s", av[1]);
	for (i = 0; i < 4; i++) {
		full_write(fa, "a", 1);
		sched_yield();
	}
	close(fa);
	for (i = 0; i < 63; i++) {
		fd = open("/dev/null", O_RDONLY);
		if (fd != fa)
			failn("/dev/null opened as %ld, not %ld", fd, fa, 0);
		close(fd);
	}
	fd = open(av[2], O_RDWR); /* a FIFO opened so has a reader: no wait */
	if (fd != fa)
		failn("%ld, not %ld", fd, fa, 0);
	/* a first write that writes nothing (EFAULT: B stays empty), then one byte */
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	if (bad == MAP_FAILED || write(fd, bad, 1) != -1 || errno != EFAULT)
		fail("%s", "a write from a PROT_NONE page: not EFAULT");
	full_write(fd, "b", 1);
	printf("fifowrap ok w\n");
	return 0;
}

static int pipe_in[2], pipe_out[2], pipe_n;

static void *pipe_pong(void *arg)
{
	(void)arg;
	exchange(pipe_in[0], pipe_out[1], pipe_n, 0);
	return NULL;
}

static int do_pipethreads(int n)
{
	pthread_t t;

	pipe_n = n;
	if (pipe(pipe_in) || pipe(pipe_out) || pthread_create(&t, NULL, pipe_pong, NULL))
		fail("%s", "pipe or pthread_create");
	exchange(pipe_out[0], pipe_in[1], n, 1);
	pthread_join(t, NULL);
	return 0;
}

static int do_fifomany(char **av)
{
	int w = !strcmp(av[0], "w"), fd = open(av[1], w ? O_WRONLY : O_RDONLY);
	unsigned long long sum = 0, rec;
	struct timespec ts = {0, 2000000};
	char mark[4096];
	long n = 0, i;
	ssize_t r;

	if (fd < 0)
		fail("open %s", av[1]);
	if (!w) {
		snprintf(mark, sizeof(mark), "%s.r%d", av[1], (int)getpid());
		close(open(mark, O_WRONLY | O_CREAT, 0644));
	} else {
		for (i = 0; i < 60000 && readers_open(av[1]) < atoi(av[3]); i++)
			nanosleep(&ts, NULL);
		if (readers_open(av[1]) < atoi(av[3]))
			fail("%s", "the readers never opened");
	}
	if (w) {
		for (i = 1; i <= atol(av[2]); i++) {
			rec = (unsigned long long)i;
			if (write(fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
				fail("%s", "write");
		}
		printf("fifomany wrote %ld\n", i - 1);
		return 0;
	}
	while ((r = read(fd, &rec, sizeof(rec))) == (ssize_t)sizeof(rec)) {
		sum += rec;
		n++;
	}
	if (r != 0)
		fail("%s", r < 0 ? "read" : "read: a short record");
	printf("fifomany read %ld %llu\n", n, sum);
	return 0;
}

/* One call of HOW that blocks MS milliseconds, checked: it times out, not early. */
static void block_once(const char *how, int ms)
{
	double t0 = now(), dt;
	int p[2], r = 0;

	if (pipe(p))
		fail("%s", "pipe");
	if (!strcmp(how, "sleep")) {
		usleep((useconds_t)ms * 1000);
	} else if (!strcmp(how, "nanosleep")) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		r = nanosleep(&ts, NULL);
	} else if (!strcmp(how, "select")) {
		struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		r = select(p[0] + 1, &rd, NULL, NULL, &tv);
		if (r == 0 && (FD_ISSET(p[0], &rd) || tv.tv_sec || tv.tv_usec))
			fail("%s", "select left the set or the time not cleared");
	} else if (!strcmp(how, "poll")) {
		struct pollfd pf = {p[0], POLLIN, 0};
		r = poll(&pf, 1, ms);
	} else {
		struct epoll_event ev = {EPOLLIN, {0}};
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		int ep = epoll_create1(0);
		epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
		r = strcmp(how, "epoll2") ? epoll_wait(ep, &ev, 1, ms)
					  : epoll_pwait2(ep, &ev, 1, &ts, NULL);
		close(ep);
	}
	dt = now() - t0;
	if (r != 0)
		fail("%s returned non-zero", how);
	if (dt < ms / 1000.0 - 0.001)
		fail("%s returned early", how);
	close(p[0]);
	close(p[1]);
}

/* With DIR, until the computation beside us is done: without preemption it can run only while
 * this ULP is parked in HOW, so it ends only if HOW gives the worker up, however slow it is. */
static int do_block(const char *how, int ms, const char *dir)
{
	char done[4096];
	int waited = 0;

	if (!dir) {
		block_once(how, ms);
	} else {
		snprintf(done, sizeof(done), "%s/computed", dir);
		touch_file(dir, "spinning");
		do {
			if (waited > 120000)
				fail("%s never appeared", done);
			block_once(how, ms);
			waited += ms;
		} while (access(done, F_OK) != 0);
	}
	printf("%s done\n", how);
	return 0;
}

static int do_ring(char **av)
{
	int n = atoi(av[1]), rounds = atoi(av[2]), rank = atoi(getenv("ULP_RANK") ?: "0");
	char a[512], b[512];
	int in, out, i;
	long v;

	snprintf(a, sizeof(a), "%s/%d", av[0], rank);
	snprintf(b, sizeof(b), "%s/%d", av[0], (rank + 1) % n);
	/* Odd ranks open their writing end first: no cycle of opens waiting for each other. */
	if (rank % 2) {
		out = open(b, O_WRONLY);
		in = open(a, O_RDONLY);
	} else {
		in = open(a, O_RDONLY);
		out = open(b, O_WRONLY);
	}
	if (in < 0 || out < 0)
		fail("%s", "open");
	for (i = 0; i < rounds; i++) {
		if (rank == 0) {
			v = (long)i * n;
			full_write(out, &v, sizeof(v));
			full_read(in, &v, sizeof(v));
			if (v != (long)i * n + n - 1)
				fail("%s", "token came back wrong");
		} else {
			full_read(in, &v, sizeof(v));
			v++;
			full_write(out, &v, sizeof(v));
		}
	}
	if (rank == 0)
		printf("ring ok %d ranks %d rounds\n", n, rounds);
	return 0;
}

static volatile int hits;
static int restart_fd = -1;

static void on_alarm(int sig)
{
	hits++;
	if (restart_fd >= 0 && hits == 2)
		write(restart_fd, "x", 1);
}

static void alarm_in(int ms, int interval_ms, int restart)
{
	struct sigaction sa;
	struct itimerval it = {{interval_ms / 1000, (interval_ms % 1000) * 1000},
			       {ms / 1000, (ms % 1000) * 1000}};

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	hits = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void alarm_off(void)
{
	struct itimerval off;

	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
}

static void expect_eintr(long r, const char *what)
{
	if (r != -1 || errno != EINTR || hits < 1) {
		printf("%s returned %ld, handler ran %d times\n", what, r, hits);
		fail("%s did not end with EINTR after the handler", what);
	}
	alarm_off();
	printf("eintr ok %s\n", what);
}

static int do_eintr(void)
{
	struct timespec ts = {5, 0}, rem = {0, 0};
	struct pollfd pf;
	fd_set rd;
	char c;
	int p[2];
	struct sigaction old;
	pid_t kid;
	int st;

	if (pipe(p))
		fail("%s", "pipe");
	alarm_in(200, 0, 0);
	expect_eintr(read(p[0], &c, 1), "read");
	alarm_in(200, 0, 0);
	expect_eintr(pause(), "pause");
	alarm_in(200, 0, 0);
	expect_eintr(nanosleep(&ts, &rem), "nanosleep");
	if (rem.tv_sec < 3 || rem.tv_sec > 5)
		fail("%s", "nanosleep's remaining time is wrong");
	pf.fd = p[0];
	pf.events = POLLIN;
	alarm_in(200, 0, 0);
	expect_eintr(poll(&pf, 1, -1), "poll");
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	alarm_in(200, 0, 1); /* select is never restarted, SA_RESTART or not */
	expect_eintr(select(p[0] + 1, &rd, NULL, NULL, NULL), "select");
	/* wait4 for a child that outlives the signal: EINTR; with SA_RESTART it waits on */
	kid = fork();
	if (kid == 0) {
		struct timespec t = {1, 0};

		nanosleep(&t, NULL);
		_exit(7);
	}
	if (kid < 0)
		fail("%s", "fork");
	alarm_in(200, 0, 0);
	expect_eintr(waitpid(kid, &st, 0), "wait4");
	alarm_in(200, 0, 1);
	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 7 || hits < 1)
		fail("%s", "wait4 with SA_RESTART did not go on to the child's end");
	alarm_off();
	printf("eintr ok SA_RESTART wait4\n");
	/* SA_RESTART: the first signal must not end the read; the second writes a byte. */
	restart_fd = p[1];
	alarm_in(100, 100, 1);
	if (read(p[0], &c, 1) != 1 || c != 'x' || hits < 2)
		fail("%s", "read with SA_RESTART did not go on to the data");
	alarm_off();
	restart_fd = -1;
	printf("eintr ok SA_RESTART read\n");
	sigaction(SIGALRM, NULL, &old);
	if (old.sa_handler != on_alarm)
		fail("%s", "sigaction does not report the handler installed");
	printf("eintr ok sigaction reports the program's handler\n");
	ts.tv_nsec = 2000000000;
	if (nanosleep(&ts, NULL) != -1 || errno != EINVAL)
		fail("%s", "nanosleep with tv_nsec out of range");
	printf("eintr ok nanosleep EINVAL\n");
	return 0;
}

/* A FIFO of this process's own, opened for reading and writing (which never waits). */
static int open_fifo(int flags)
{
	char path[64];
	int f;

	snprintf(path, sizeof(path), "/tmp/iotest-fifo-%d", (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600))
		fail("mkfifo %s", path);
	f = open(path, O_RDWR | flags);
	if (f < 0)
		fail("open %s", path);
	unlink(path);
	return f;
}

/* A FIFO's driver refuses RWF_NOWAIT: O_NONBLOCK must still give EAGAIN, reading it empty and
 * writing it full. */
static void nonblock_fifo(void)
{
	char buf[4096] = {0};
	int f = open_fifo(O_NONBLOCK), i;

	if (read(f, buf, 1) != -1 || errno != EAGAIN)
		fail("%s", "read of an empty O_NONBLOCK FIFO");
	for (i = 0; i < 1000 && write(f, buf, sizeof(buf)) == (ssize_t)sizeof(buf); i++)
		;
	if (i == 1000 || errno != EAGAIN)
		fail("%s", "write to a full O_NONBLOCK FIFO");
	close(f);
}

/* SO_SNDTIMEO: a write to a full socket fails with EAGAIN once the timeout has passed. */
static void send_timeout(void)
{
	struct timeval tv = {0, 100000};
	char buf[4096] = {0};
	int sv[2], i;
	double t0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		fail("%s", "socketpair");
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 100000 && send(sv[0], buf, sizeof(buf), MSG_DONTWAIT) > 0; i++)
		;
	t0 = now();
	if (write(sv[0], buf, 1) != -1 || errno != EAGAIN || now() - t0 < 0.099)
		fail("%s", "SO_SNDTIMEO write");
	close(sv[0]);
	close(sv[1]);
}

/* A TCP listener on 127.0.0.1 (any port) with the given backlog. */
static int tcp_listener(int backlog, struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)sa, sizeof(*sa)) || listen(l, backlog) ||
	    getsockname(l, (struct sockaddr *)sa, &len))
		fail("%s", "TCP listener");
	return l;
}

/* accept bounded by the listener's SO_RCVTIMEO (EAGAIN), connect by the socket's SO_SNDTIMEO
 * (EINPROGRESS: a listener whose accept queue is full drops the SYN, and the handshake goes on
 * in the background), as the kernel bounds them. */
static void accept_connect_timeout(void)
{
	struct timeval tv = {0, 100000};
	struct sockaddr_in sa;
	int l = tcp_listener(0, &sa), c1, c2;
	double t0;

	setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now();
	c1 = accept(l, NULL, NULL);
	if (c1 >= 0) /* a client of another test that runs beside this one, on a port it guessed */
		fail("%s", "SO_RCVTIMEO accept: a connection nobody here made");
	if (errno != EAGAIN || now() - t0 < 0.099)
		fail("%s", "SO_RCVTIMEO accept (EAGAIN after 100 ms)");
	/* backlog 0: one connection fills the queue; the next one's SYN is dropped */
	c1 = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c1, (struct sockaddr *)&sa, sizeof(sa)))
		fail("%s", "connect");
	c2 = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(c2, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	t0 = now();
	if (connect(c2, (struct sockaddr *)&sa, sizeof(sa)) != -1 || errno != EINPROGRESS ||
	    now() - t0 < 0.099)
		fail("%s", "connect with SO_SNDTIMEO to a full listener");
	close(c2);
	close(c1);
	close(l);
}

static int do_timeouts(void)
{
	int p[2], sv[2], ep = epoll_create1(0), f;
	struct timeval tv = {0, 100000};
	struct pollfd pf;
	struct epoll_event ev = {EPOLLIN, {0}};
	fd_set rd;
	double t0;
	char c;

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		fail("%s", "pipe");
	pf.fd = p[0];
	pf.events = POLLIN;
	t0 = now();
	if (poll(&pf, 1, 100) != 0 || now() - t0 < 0.099)
		fail("%s", "poll timeout");
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	t0 = now();
	if (select(p[0] + 1, &rd, NULL, NULL, &tv) != 0 || now() - t0 < 0.099)
		fail("%s", "select timeout");
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	t0 = now();
	if (epoll_wait(ep, &ev, 1, 100) != 0 || now() - t0 < 0.099)
		fail("%s", "epoll_wait timeout");
	{
		struct timespec ts = {0, 100000000}, zero = {0, 0}, bad = {0, 1000000000};

		t0 = now();
		if (epoll_pwait2(ep, &ev, 1, &ts, NULL) != 0 || now() - t0 < 0.099)
			fail("%s", "epoll_pwait2 timeout");
		if (epoll_pwait2(ep, &ev, 1, &zero, NULL) != 0)
			fail("%s", "epoll_pwait2 of a zero timeout");
		if (epoll_pwait2(ep, &ev, 1, &bad, NULL) != -1 || errno != EINVAL)
			fail("%s", "epoll_pwait2 of a bad timeout: not EINVAL");
	}
	tv.tv_usec = 100000;
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now();
	if (read(sv[0], &c, 1) != -1 || errno != EAGAIN || now() - t0 < 0.099)
		fail("%s", "SO_RCVTIMEO read");
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	if (read(p[0], &c, 1) != -1 || errno != EAGAIN)
		fail("%s", "read of an O_NONBLOCK pipe");
	nonblock_fifo();
	send_timeout();
	accept_connect_timeout();
	/* fd f was a FIFO (whose driver refuses RWF_NOWAIT, and no socket) when read: a socket
	 * with SO_RCVTIMEO dup2'ed onto it must time out as well. */
	f = open_fifo(0);
	if (write(f, &c, 1) != 1 || read(f, &c, 1) != 1)
		fail("%s", "FIFO write and read");
	if (dup2(sv[0], f) != f)
		fail("%s", "dup2");
	t0 = now();
	if (read(f, &c, 1) != -1 || errno != EAGAIN || now() - t0 < 0.099)
		fail("%s", "SO_RCVTIMEO read of a socket dup2'ed over a FIFO");
	close(f);
	/* The same with the FIFO closed and its number taken by a new socket (the runtime notes
	 * what it learns of a descriptor, and that note must go with the FIFO). */
	f = open_fifo(0);
	if (write(f, &c, 1) != 1 || read(f, &c, 1) != 1)
		fail("%s", "FIFO write and read");
	close(f);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || sv[0] != f)
		fail("%s", "socketpair did not take the FIFO's number");
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	t0 = now();
	if (read(f, &c, 1) != -1 || errno != EAGAIN || now() - t0 < 0.099)
		fail("%s", "SO_RCVTIMEO read of a socket made at a closed FIFO's number");
	close(sv[0]);
	close(sv[1]);
	printf("timeouts ok\n");
	return 0;
}

static int do_nonblock(void)
{
	int f0 = fcntl(0, F_GETFL), f1 = fcntl(1, F_GETFL);
	char buf[4096];
	ssize_t r;

	while ((r = read(0, buf, sizeof(buf))) > 0)
		full_write(1, buf, (size_t)r);
	if (r < 0)
		fail("%s", "read stdin");
	if (fcntl(0, F_GETFL) != f0 || fcntl(1, F_GETFL) != f1 || (f0 & O_NONBLOCK) ||
	    (f1 & O_NONBLOCK))
		fail("%s", "the file status flags of stdin/stdout changed");
	fprintf(stderr, "nonblock ok\n");
	return 0;
}

/* FILE evicted from the page cache, then opened with flags: read whole (by pread when pos), its
 * bytes counted into *got; returns their FNV-1a hash. */
static unsigned long long cold_pass(const char *path, int flags, int pos, long *got)
{
	static char buf[1 << 20];
	unsigned long long h = 1469598103934665603ull;
	int fd = open(path, O_RDONLY);
	ssize_t r, i;

	if (fd < 0)
		fail("open %s", path);
	/* Evicted, so that RWF_NOWAIT finds no page and says EAGAIN */
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	fd = open(path, O_RDONLY | flags);
	if (fd < 0)
		fail("open %s", path);
	*got = 0;
	while ((r = pos ? pread(fd, buf, sizeof(buf), *got) : read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < r; i++)
			h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
		*got += r;
	}
	if (r < 0)
		fail("read %s", path);
	close(fd);
	return h;
}

/* A file out of the page cache read three ways: through an O_NONBLOCK descriptor (O_NONBLOCK
 * means nothing to a regular file), blocking, and by pread. */
static int do_coldread(const char *path)
{
	static const struct {
		const char *name;
		int flags, pos;
	} how[] = {{"nonblock", O_NONBLOCK, 0}, {"read", 0, 0}, {"pread", 0, 1}};
	unsigned long long h;
	unsigned i;
	long got;

	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		h = cold_pass(path, how[i].flags, how[i].pos, &got);
		printf("coldread ok %ld bytes %s %016llx\n", got, how[i].name, h);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	mode = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "fifo") && argc >= 6)
		return do_fifo(argv + 2);
	if (!strcmp(mode, "tcp") && argc >= 5)
		return do_tcp(argv + 2);
	if (!strcmp(mode, "bulk") && argc >= 5)
		return do_bulk(argv + 2);
	if (!strcmp(mode, "fifomany") && argc >= 4)
		return do_fifomany(argv + 2);
	if (!strcmp(mode, "fifofault") && argc >= 5)
		return do_fifofault(argv + 2);
	if (!strcmp(mode, "pipemix") && argc >= 3)
		return do_pipemix(atol(argv[2]));
	if (!strcmp(mode, "pipethreads") && argc >= 3)
		return do_pipethreads(atoi(argv[2]));
	if (!strcmp(mode, "fifowrap") && argc >= 4)
		return do_fifowrap(argv + 2);
	if (!strcmp(mode, "fifomix") && argc >= 6)
		return do_fifomix(argv + 2);
	if (!strcmp(mode, "tcpbulk") && argc >= 5)
		return bulk(tcp_connection(argv + 2), strcmp(argv[2], "server") != 0,
			    atol(argv[4]));
	if (argc >= 3 &&
	    (!strcmp(mode, "sleep") || !strcmp(mode, "nanosleep") || !strcmp(mode, "select") ||
	     !strcmp(mode, "poll") || !strcmp(mode, "epoll") || !strcmp(mode, "epoll2")))
		return do_block(mode, atoi(argv[2]), argc >= 4 ? argv[3] : NULL);
	if (!strcmp(mode, "compute") && argc >= 3) {
		volatile double x = 0;
		long i, n = atol(argv[2]) * 1000000L;

		if (argc >= 4)
			wait_file(argv[3], "spinning");
		for (i = 0; i < n; i++)
			x = x * 0.999 + 1;
		/* out before DIR/computed exists: who waits for that file finds this line first */
		printf("compute done\n");
		fflush(stdout);
		if (argc >= 4)
			touch_file(argv[3], "computed");
		return 0;
	}
	if (!strcmp(mode, "spin") && argc >= 3) {
		double t = now(), end = t + atof(argv[2]), look = t;
		char done[4096];

		if (argc >= 4) {
			touch_file(argv[3], "spinning");
			snprintf(done, sizeof(done), "%s/computed", argv[3]);
		}
		while ((t = now()) < end) {
			/* the look is a native system call, never a yield point */
			if (argc >= 4 && t >= look && access(done, F_OK) == 0)
				break;
			if (t >= look)
				look = t + 0.01;
		}
		printf("spin done\n");
		return 0;
	}
	if (!strcmp(mode, "reads") &&
	    argc >= 3) { /* bench/io.sh: cost of a read that never blocks */
		long i, n = atol(argv[2]);
		int fd = open("/dev/zero", O_RDONLY);
		char c;
		double t0 = now();

		for (i = 0; i < n; i++)
			if (read(fd, &c, 1) != 1)
				fail("%s", "read /dev/zero");
		printf("reads %.3f us per call\n", (now() - t0) / n * 1e6);
		return 0;
	}
	if (!strcmp(mode, "spinbarrier")) {
		static long counters[2]; /* rank 0's: arrived, left */
		int n = atoi(getenv("ULP_SIZE") ?: "1"), rank = atoi(getenv("ULP_RANK") ?: "0");
		long *c = counters;
		void *p;

		if (rank == 0) {
			if (pvas_export("iotest.barrier", counters))
				fail("%s", "pvas_export");
		} else {
			while (pvas_import("iotest.barrier", &p) != 0)
				pvas_yield(); /* rank 0 not there yet */
			c = p;
		}
		__atomic_fetch_add(&c[0], 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&c[0], __ATOMIC_SEQ_CST) < n)
			; /* no system call, no yield */
		__atomic_fetch_add(&c[1], 1, __ATOMIC_SEQ_CST);
		/* rank 0's partition holds the counters: it leaves last */
		while (rank == 0 && __atomic_load_n(&c[1], __ATOMIC_SEQ_CST) < n)
			;
		printf("spinbarrier ok rank %d\n", rank);
		return 0;
	}
	if (!strcmp(mode, "ring") && argc >= 5)
		return do_ring(argv + 2);
	if (!strcmp(mode, "eintr"))
		return do_eintr();
	if (!strcmp(mode, "timeouts"))
		return do_timeouts();
	if (!strcmp(mode, "nonblock"))
		return do_nonblock();
	if (!strcmp(mode, "coldread") && argc >= 3)
		return do_coldread(argv[2]);
	fprintf(stderr, "iotest: unknown mode or missing arguments: %s\n", mode);
	return 2;
}
