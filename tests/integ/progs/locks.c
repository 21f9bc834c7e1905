/* SPDX-License-Identifier: MIT */
/*
 * Record locks (fcntl F_SETLK, F_SETLKW, F_GETLK; lockf) of two ranks, run as two ULPs of one
 * task and as two processes: tests/integ/locks.sh compares their output. Rank: ULP_RANK (0 or
 * 1). The ranks meet through marker files in DIR (the current directory), each waited for.
 *
 *   locks shared      both lock through descriptor 9, one open file they inherited
 *   locks twoopen     rank 0 locks through two opens of the file: they do not conflict
 *   locks closeone    rank 0 closes another descriptor of the file: its lock goes
 *   locks closers     a dup2 onto another descriptor of the file, a close_range of one: its
 *                     lock goes
 *   locks seekcur     lockf (l_whence SEEK_CUR) from a position past the start of the file
 *   locks deadlock    each rank holds a byte and waits in F_SETLKW for the other's: one gets
 *                     EDEADLK, lets its byte go, and the other gets it
 *   locks fork        rank 0's fork child holds none of its locks, and keeps none after it
 *   locks wait        F_SETLKW and lockf(F_LOCK) woken by an unlock, by a close, by the
 *                     holder's end; EINTR by a signal, a SA_RESTART handler that goes on
 *   locks count N     N increments of the counter in lk, each under a write lock taken with
 *                     F_SETLKW or lockf and let go by an unlock or a close, while a thread
 *                     locks files of its own: the count must be every rank's N; count N 9:
 *                     through descriptor 9 each time, always unlocked
 *   locks bench N [FD] N lock and unlock pairs (through FD, else its own open of lk):
 *                     nanoseconds per pair (not compared)
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rank;

static void die(const char *what)
{
	printf("rank %d: %s: %s\n", rank, what, strerror(errno));
	exit(1);
}

static void touch(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die(name);
	close(fd);
}

static int exists(const char *name)
{
	return access(name, F_OK) == 0;
}

/* Until name exists; 60 s at most (a hang is a failure, not a wait forever). */
static void await(const char *name)
{
	int i;

	for (i = 0; i < 6000 && !exists(name); i++)
		usleep(10000);
	if (!exists(name)) {
		printf("rank %d: no %s after 60 s\n", rank, name);
		exit(1);
	}
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int lk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};

	return fcntl(fd, cmd, &fl);
}

static const char *got(int r)
{
	return r == 0 ? "got" : errno == EAGAIN || errno == EACCES ? "busy" : strerror(errno);
}

/* F_GETLK of a write lock over [start, len): "none", or the conflicting lock's type and range
 * and whether its l_pid is pid. */
static void getlk(const char *what, int fd, off_t start, off_t len, pid_t pid)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len};

	if (fcntl(fd, F_GETLK, &fl) < 0)
		die("F_GETLK");
	if (fl.l_type == F_UNLCK)
		printf("%s: none\n", what);
	else
		printf("%s: %c %lld %lld %s\n", what, fl.l_type == F_WRLCK ? 'W' : 'R',
		       (long long)fl.l_start, (long long)fl.l_len,
		       pid < 0		 ? "-"
		       : fl.l_pid == pid ? "pid of the holder"
					 : "another pid");
}

static int open_lk(void)
{
	int fd = open("lk", O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		die("open lk");
	return fd;
}

static pid_t read_pid(const char *name)
{
	FILE *f = fopen(name, "r");
	long p = -1;

	if (!f || fscanf(f, "%ld", &p) != 1)
		die(name);
	fclose(f);
	return (pid_t)p;
}

static void write_pid(const char *name)
{
	char tmp[64];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0 || rename(tmp, name))
		die(name);
}

/* Item: ranks locking through one inherited open file (descriptor 9) hold their own locks. */
static void shared(void)
{
	if (rank == 0) {
		if (lk(9, F_SETLK, F_WRLCK, 0, 10) < 0)
			die("rank 0 F_SETLK");
		write_pid("locked");
		await("tried");
		_exit(0); /* without unlocking: its end releases the lock */
	}
	await("locked");
	printf("setlk on the shared file: %s\n", got(lk(9, F_SETLK, F_WRLCK, 5, 1)));
	getlk("getlk on the shared file", 9, 0, 0, read_pid("locked"));
	printf("setlk elsewhere: %s\n", got(lk(9, F_SETLK, F_WRLCK, 20, 5)));
	touch("tried");
	alarm(30);
	printf("setlkw after the holder's end: %s\n", got(lk(9, F_SETLKW, F_WRLCK, 0, 10)));
}

/* Item: two opens of one file in one process do not conflict; an unlock through either is the
 * process's. */
static void twoopen(void)
{
	int a, b;

	if (rank == 0) {
		a = open_lk();
		b = open_lk();
		printf("setlk through a: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 10)));
		printf("setlk through b: %s\n", got(lk(b, F_SETLK, F_WRLCK, 0, 10)));
		getlk("getlk through b", b, 0, 0, -1);
		write_pid("locked");
		await("tried");
		printf("unlock through b: %s\n", got(lk(b, F_SETLK, F_UNLCK, 0, 0)));
		touch("unlocked");
		await("tried2");
		return;
	}
	a = open_lk();
	await("locked");
	printf("other rank's setlk: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	getlk("other rank's getlk", a, 0, 0, read_pid("locked"));
	touch("tried");
	await("unlocked");
	printf("other rank's setlk after the unlock: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("tried2");
}

/* Item: closing any descriptor of the file drops the process's locks on it. */
static void closeone(void)
{
	int a, b;

	if (rank == 0) {
		a = open_lk();
		b = open_lk();
		if (lk(a, F_SETLK, F_WRLCK, 0, 0) < 0)
			die("rank 0 F_SETLK");
		touch("locked");
		await("tried");
		close(b);
		touch("closed");
		await("tried2");
		getlk("rank 0 getlk through a", a, 0, 0, -1); /* rank 1 holds it now */
		touch("done");
		return;
	}
	a = open_lk();
	await("locked");
	printf("setlk while held: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("tried");
	await("closed");
	printf("setlk after the holder closed another descriptor: %s\n",
	       got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("tried2");
	await("done");
}

/* dup2 onto a descriptor of the file and close_range of one close it: the locks go. */
static void closers(void)
{
	int a = open_lk(), b, null;

	if (rank == 0) {
		if (lk(a, F_SETLK, F_WRLCK, 0, 0) < 0)
			die("rank 0 F_SETLK");
		b = open_lk();
		null = open("/dev/null", O_RDONLY);
		touch("L1");
		await("T1");
		if (dup2(null, b) < 0)
			die("dup2");
		touch("C1");
		await("T2");
		if (lk(a, F_SETLKW, F_WRLCK, 0, 0) < 0)
			die("rank 0 F_SETLKW");
		close(b);
		b = open_lk();
		touch("L2");
		await("T3");
		if (close_range(b, b, 0) < 0)
			die("close_range");
		touch("C2");
		await("T4");
		return;
	}
	await("L1");
	printf("setlk while held: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("T1");
	await("C1");
	printf("setlk after a dup2 onto another descriptor: %s\n",
	       got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	lk(a, F_SETLK, F_UNLCK, 0, 0);
	touch("T2");
	await("L2");
	printf("setlk while held again: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("T3");
	await("C2");
	printf("setlk after a close_range of another descriptor: %s\n",
	       got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	touch("T4");
}

/* lockf locks from the descriptor's position: [100, 110) here, not [0, 10). */
static void seekcur(void)
{
	int a = open_lk();

	if (rank == 0) {
		if (lseek(a, 100, SEEK_SET) != 100 || lockf(a, F_LOCK, 10) < 0)
			die("rank 0 lockf");
		touch("locked");
		await("tried");
		return;
	}
	await("locked");
	printf("setlk at 0: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
	printf("setlk at 105: %s\n", got(lk(a, F_SETLK, F_WRLCK, 105, 1)));
	getlk("getlk from 0", a, 0, 0, -1);
	if (lseek(a, 50, SEEK_SET) != 50)
		die("lseek");
	printf("lockf F_TEST of [50, 100): %s\n", lockf(a, F_TEST, 50) == 0 ? "free" : got(-1));
	printf("lockf F_TEST of [50, 101): %s\n", lockf(a, F_TEST, 51) == 0 ? "free" : got(-1));
	touch("tried");
}

/* Two waits in a circle: the kernel ends one with EDEADLK (the second, between processes). */
static void deadlock(void)
{
	int a = open_lk(), r;
	char mine[8], theirs[8];

	snprintf(mine, sizeof(mine), "L%d", rank);
	snprintf(theirs, sizeof(theirs), "L%d", !rank);
	if (lk(a, F_SETLK, F_WRLCK, rank, 1) < 0)
		die("F_SETLK");
	touch(mine);
	await(theirs);
	if (rank == 1)
		nap(200); /* rank 0 waits first, mostly: either may get EDEADLK */
	alarm(30);
	r = lk(a, F_SETLKW, F_WRLCK, !rank, 1);
	printf("setlkw: %s\n", r < 0 && errno == EDEADLK ? "EDEADLK" : got(r));
	lk(a, F_SETLK, F_UNLCK, 0, 0); /* the other one's wait ends */
	if (r < 0)
		touch("gave-up");
	else
		await("gave-up");
}

/* Item: a fork child holds none of its parent's locks, also after the parent's end. */
static void forked(void)
{
	pid_t pid;
	int a = open_lk();

	if (rank == 0) {
		if (lk(a, F_SETLK, F_WRLCK, 0, 10) < 0)
			die("rank 0 F_SETLK");
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			printf("child's setlk: %s\n", got(lk(a, F_SETLK, F_WRLCK, 0, 1)));
			getlk("child's getlk", a, 0, 0, -1);
			printf("child's setlk past the parent's: %s\n",
			       got(lk(a, F_SETLK, F_WRLCK, 20, 1)));
			fflush(stdout);
			touch("child-tried");
			await("released"); /* keeps a, its copy of the descriptor, until then */
			touch("child-ends");
			_exit(0);
		}
		await("child-tried");
		touch("parent-ends");
		_exit(0); /* the child lives on, with the descriptor */
	}
	await("parent-ends");
	alarm(30);
	printf("setlkw after the parent's end: %s\n", got(lk(a, F_SETLKW, F_WRLCK, 0, 10)));
	printf("setlk of the child's range: %s\n", got(lk(a, F_SETLK, F_WRLCK, 20, 1)));
	touch("released");
	await("child-ends"); /* the test's folder goes once this rank ended */
}

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	handled = 1;
	close(open("handled", O_WRONLY | O_CREAT, 0644));
}

static void on_alarm_set(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = flags;
	sigaction(SIGALRM, &sa, NULL);
}

/* F_SETLKW, lockf(F_LOCK) waits: woken by the holder's unlock, by its close of another
 * descriptor, by its end; ended by a signal (EINTR) or not (SA_RESTART). */
static void waits(void)
{
	int a = open_lk(), c, r;

	if (rank == 0) {
		/* A: lockf, woken by the unlock */
		if (lockf(a, F_LOCK, 0) < 0)
			die("lockf F_LOCK");
		touch("A-locked");
		await("A-waiting");
		nap(200);
		touch("A-unlocking");
		if (lockf(a, F_ULOCK, 0) < 0)
			die("lockf F_ULOCK");
		/* B: F_SETLKW woken by the close of another descriptor */
		await("A-done");
		if (lk(a, F_SETLK, F_WRLCK, 0, 0) < 0)
			die("B F_SETLK");
		touch("B-locked");
		await("B-waiting");
		nap(200);
		c = open_lk();
		touch("B-closing");
		close(c);
		/* C: rank 1 holds it; a signal ends this wait, then one with SA_RESTART does not */
		await("B-done");
		on_alarm_set(0);
		alarm(1);
		r = lk(a, F_SETLKW, F_WRLCK, 0, 0);
		printf("setlkw, SIGALRM without SA_RESTART: %s\n",
		       r < 0 && errno == EINTR ? "EINTR" : got(r));
		handled = 0;
		unlink("handled");
		on_alarm_set(SA_RESTART);
		alarm(1);
		touch("C-waiting");
		r = lk(a, F_SETLKW, F_WRLCK, 0, 0);
		printf("setlkw, SIGALRM with SA_RESTART: %s, handler %s\n", got(r),
		       handled ? "ran" : "did not run");
		/* D: its end releases the lock */
		touch("C-done");
		await("D-waiting");
		nap(200);
		touch("D-ending");
		_exit(0);
	}
	await("A-locked");
	printf("lockf F_TEST while held: %s\n", lockf(a, F_TEST, 0) == 0 ? "free" : got(-1));
	printf("lockf F_TLOCK while held: %s\n", got(lockf(a, F_TLOCK, 0)));
	touch("A-waiting");
	r = lockf(a, F_LOCK, 0);
	printf("lockf F_LOCK: %s%s\n", got(r),
	       exists("A-unlocking") ? " after the unlock" : " early");
	lockf(a, F_ULOCK, 0);
	touch("A-done");
	await("B-locked");
	touch("B-waiting");
	r = lk(a, F_SETLKW, F_WRLCK, 0, 0);
	printf("setlkw: %s%s\n", got(r), exists("B-closing") ? " after the close" : " early");
	touch("B-done");
	await("C-waiting");
	await("handled");
	nap(100);
	lk(a, F_SETLK, F_UNLCK, 0, 0);
	await("C-done");
	touch("D-waiting");
	alarm(30);
	r = lk(a, F_SETLKW, F_WRLCK, 0, 0);
	printf("setlkw: %s%s\n", got(r), exists("D-ending") ? " after the holder's end" : " early");
}

static volatile int counting = 1;

/* Beside the counting: lock and unlock files of this rank's own, opened and closed each time
 * (the same ULP's private opens made and closed under the counter's). */
static void *churn(void *arg)
{
	char name[32];
	int fd, i = 0;

	(void)arg;
	while (counting) {
		snprintf(name, sizeof(name), "own.%d.%d", rank, i++ % 3);
		fd = open(name, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || lk(fd, F_SETLK, F_WRLCK, 0, 0) < 0 ||
		    lk(fd, F_SETLK, F_UNLCK, 0, 0) < 0)
			die("churn");
		close(fd);
	}
	return NULL;
}

/* One increment of the counter at the start of lk (through fd, else a new open of lk), locked
 * one of four ways. */
static void count_one(long i, int shared_fd)
{
	int fd = shared_fd >= 0 ? shared_fd : open_lk(), r;
	long v = 0;
	char buf[32];

	r = i % 2 ? lockf(fd, F_LOCK, 0) : lk(fd, F_SETLKW, F_WRLCK, 0, 0);
	if (r < 0)
		die("count: lock");
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, sizeof(buf) - 1, 0) < 0)
		die("count: pread");
	v = atol(buf) + 1;
	snprintf(buf, sizeof(buf), "%020ld\n", v);
	if (pwrite(fd, buf, strlen(buf), 0) != (ssize_t)strlen(buf))
		die("count: pwrite");
	if ((shared_fd >= 0 || i % 4 < 2) && lk(fd, F_SETLK, F_UNLCK, 0, 0) < 0)
		die("count: unlock"); /* else the close lets it go */
	if (shared_fd < 0)
		close(fd);
}

static void count(long n, int shared_fd)
{
	pthread_t t;
	long i;

	if (pthread_create(&t, NULL, churn, NULL))
		die("pthread_create");
	for (i = 0; i < n; i++)
		count_one(i, shared_fd);
	counting = 0;
	pthread_join(t, NULL);
}

static void bench(long n, int fd)
{
	struct timespec t0, t1;
	int a = fd >= 0 ? fd : open_lk();
	long i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (lk(a, F_SETLK, F_WRLCK, 0, 1) < 0 || lk(a, F_SETLK, F_UNLCK, 0, 1) < 0)
			die("bench");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.0f ns per lock and unlock\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
}

int main(int argc, char **argv)
{
	const char *r = getenv("ULP_RANK");

	rank = r ? atoi(r) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "shared"))
		shared();
	else if (!strcmp(argv[1], "twoopen"))
		twoopen();
	else if (!strcmp(argv[1], "closeone"))
		closeone();
	else if (!strcmp(argv[1], "closers"))
		closers();
	else if (!strcmp(argv[1], "seekcur"))
		seekcur();
	else if (!strcmp(argv[1], "deadlock"))
		deadlock();
	else if (!strcmp(argv[1], "fork"))
		forked();
	else if (!strcmp(argv[1], "wait"))
		waits();
	else if (!strcmp(argv[1], "count") && argc > 2)
		count(atol(argv[2]), argc > 3 ? atoi(argv[3]) : -1);
	else if (!strcmp(argv[1], "bench") && argc > 2)
		bench(atol(argv[2]), argc > 3 ? atoi(argv[3]) : -1);
	else
		return 2;
	return 0;
}
