/* SPDX-License-Identifier: MIT */
/*
 * Waits of System V message queues and semaphores and of POSIX message queues between two ranks,
 * run as two ULPs of one task and as two processes: tests/integ/io.sh compares their output. Rank:
 * ULP_RANK (0 or 1); the SysV keys are ftok of the current directory, the POSIX queues' names
 * /NAME.a and /NAME.b.
 *
 *   ipcwait msg N        N round trips through one SysV queue (rank 0 sends type 1, rank 1
 *                        answers type 2), every msgrcv a blocking one
 *   ipcwait sem N        N round trips through two SysV semaphores (semop, then semtimedop with
 *                        a timeout nobody meets: EAGAIN after it)
 *   ipcwait mq NAME N    N round trips through two POSIX queues (mq_receive, mq_timedreceive),
 *                        then an mq_timedreceive of 100 ms that nothing answers: ETIMEDOUT
 *   ipcwait rmid         rank 0 waits in msgrcv, then in semop; rank 1 removes the queue, then
 *                        the set: each wait ends with EIDRM
 *   ipcwait intr NAME    rank 0: a SIGALRM handler with SA_RESTART ends a msgrcv and a semop
 *                        with EINTR (the kernel never restarts them), and an mq_timedreceive
 *                        goes on after it until its own deadline (ETIMEDOUT); without
 *                        SA_RESTART the mq wait ends with EINTR. Rank 1 does nothing.
 *
 * Every line printed is the same for processes; an EINTR or a wrong value is printed as such.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct m {
	long type;
	long val;
};

static int rank;

static key_t key(int c)
{
	key_t k = ftok(".", c);

	if (k == -1) {
		perror("ftok");
		exit(2);
	}
	return k;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int msg(long n)
{
	int q = msgget(key('m'), IPC_CREAT | 0600);
	struct m x;
	long i, bad = 0;

	if (q < 0) {
		perror("msgget");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (rank == 0) {
			x = (struct m){1, i};
			if (msgsnd(q, &x, sizeof(x.val), 0) != 0)
				printf("msgsnd: %s\n", strerror(errno)), bad++;
			if (msgrcv(q, &x, sizeof(x.val), 2, 0) < 0)
				printf("msgrcv: %s\n", strerror(errno)), bad++;
			else if (x.val != i + 1000)
				bad++;
		} else {
			if (msgrcv(q, &x, sizeof(x.val), 1, 0) < 0) {
				printf("msgrcv: %s\n", strerror(errno)), bad++;
				continue;
			}
			x = (struct m){2, x.val + 1000};
			if (msgsnd(q, &x, sizeof(x.val), 0) != 0)
				printf("msgsnd: %s\n", strerror(errno)), bad++;
		}
		if (bad > 5)
			break;
	}
	if (rank == 0)
		msgctl(q, IPC_RMID, NULL);
	printf("rank %d: msg %ld round trips, %ld wrong\n", rank, i, bad);
	return bad != 0;
}

static int semop1(int s, int num, int op, const struct timespec *ts)
{
	struct sembuf b = {(unsigned short)num, (short)op, 0};

	return ts ? semtimedop(s, &b, 1, ts) : semop(s, &b, 1);
}

static int sem(long n)
{
	int s = semget(key('s'), 2, IPC_CREAT | 0600);
	struct timespec ts = {0, 100000000}, lts = {30, 0};
	long i, bad = 0;
	double t;

	if (s < 0) {
		perror("semget");
		return 2;
	}
	for (i = 0; i < n && bad < 5; i++) {
		if (semop1(s, rank, 1, NULL) != 0) /* post mine */
			printf("semop post: %s\n", strerror(errno)), bad++;
		if (semop1(s, !rank, -1, i & 1 ? &lts : NULL) != 0) /* take the other's */
			printf("semop take: %s\n", strerror(errno)), bad++;
	}
	printf("rank %d: sem %ld round trips, %ld wrong\n", rank, i, bad);
	if (rank == 0) {
		usleep(200000); /* rank 1's last post taken above; nothing posts now */
		t = now();
		errno = 0;
		if (semop1(s, 1, -1, &ts) == 0)
			printf("rank 0: semtimedop got what nobody posted\n");
		else
			printf("rank 0: semtimedop nobody posts: %s%s\n", strerror(errno),
			       now() - t >= 0.09 ? ", after its timeout" : ", early");
		semctl(s, 0, IPC_RMID);
	}
	return bad != 0;
}

static void deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (ms % 1000) * 1000000;
	ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

static int mq(const char *name, long n)
{
	struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = sizeof(long)};
	char na[64], nb[64];
	mqd_t qa, qb, in, out;
	struct timespec ts;
	long i, v, bad = 0;
	double t;

	snprintf(na, sizeof(na), "/%s.a", name);
	snprintf(nb, sizeof(nb), "/%s.b", name);
	qa = mq_open(na, O_RDWR | O_CREAT, 0600, &a);
	qb = mq_open(nb, O_RDWR | O_CREAT, 0600, &a);
	if (qa == (mqd_t)-1 || qb == (mqd_t)-1) {
		perror("mq_open");
		return 2;
	}
	in = rank ? qa : qb;
	out = rank ? qb : qa;
	for (i = 0; i < n && bad < 5; i++) {
		v = i;
		if (rank == 0 && mq_send(out, (char *)&v, sizeof(v), 0) != 0)
			printf("mq_send: %s\n", strerror(errno)), bad++;
		deadline(&ts, 30000);
		if ((i & 1 ? mq_timedreceive(in, (char *)&v, sizeof(v), NULL, &ts)
			   : mq_receive(in, (char *)&v, sizeof(v), NULL)) != sizeof(v))
			printf("mq_receive: %s\n", strerror(errno)), bad++;
		else if (v != i)
			bad++;
		if (rank == 1 && mq_send(out, (char *)&v, sizeof(v), 0) != 0)
			printf("mq_send: %s\n", strerror(errno)), bad++;
	}
	printf("rank %d: mq %ld round trips, %ld wrong\n", rank, i, bad);
	if (rank == 0) {
		t = now();
		deadline(&ts, 100);
		if (mq_timedreceive(in, (char *)&v, sizeof(v), NULL, &ts) >= 0)
			printf("rank 0: mq_timedreceive got what nobody sent\n");
		else
			printf("rank 0: mq_timedreceive nobody sends: %s%s\n", strerror(errno),
			       now() - t >= 0.09 ? ", after its deadline" : ", early");
		usleep(100000); /* rank 1 has opened both before it answered */
		mq_unlink(na);
		mq_unlink(nb);
	}
	return bad != 0;
}

static int rmid(void)
{
	int q = msgget(key('r'), IPC_CREAT | 0600), s = semget(key('t'), 1, IPC_CREAT | 0600), r;
	struct sembuf b = {0, -1, 0};
	struct m x;

	if (q < 0 || s < 0) {
		perror("msgget or semget");
		return 2;
	}
	if (rank == 0) {
		r = (int)msgrcv(q, &x, sizeof(x.val), 0, 0);
		printf("msgrcv, its queue removed: %d %s\n", r, strerror(errno));
		r = semop(s, &b, 1);
		printf("semop, its set removed: %d %s\n", r, strerror(errno));
	} else {
		usleep(300000);
		msgctl(q, IPC_RMID, NULL);
		usleep(300000);
		semctl(s, 0, IPC_RMID);
	}
	return 0;
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void arm(int restart, long ms)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = restart ? SA_RESTART : 0};
	struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static int intr(const char *name)
{
	struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = sizeof(long)};
	int q = msgget(IPC_PRIVATE, 0600), s = semget(IPC_PRIVATE, 1, 0600), r;
	struct sembuf b = {0, -1, 0};
	struct timespec ts;
	char n[64];
	struct m x;
	mqd_t mqd;
	double t;

	if (rank != 0)
		return 0;
	snprintf(n, sizeof(n), "/%s.i", name);
	mqd = mq_open(n, O_RDWR | O_CREAT, 0600, &a);
	if (q < 0 || s < 0 || mqd == (mqd_t)-1) {
		perror("msgget, semget or mq_open");
		return 2;
	}
	mq_unlink(n);
	arm(1, 100);
	r = (int)msgrcv(q, &x, sizeof(x.val), 0, 0);
	printf("msgrcv, SA_RESTART handler: %d %s, handler ran %d\n", r, strerror(errno), alarms);
	arm(1, 100);
	r = semop(s, &b, 1);
	printf("semop, SA_RESTART handler: %d %s, handler ran %d\n", r, strerror(errno), alarms);
	arm(1, 100);
	t = now();
	deadline(&ts, 400);
	r = (int)mq_timedreceive(mqd, (char *)&x.val, sizeof(x.val), NULL, &ts);
	printf("mq_timedreceive, SA_RESTART handler: %d %s%s, handler ran %d\n", r, strerror(errno),
	       now() - t >= 0.39 ? " at its deadline" : " early", alarms);
	arm(0, 100);
	deadline(&ts, 5000);
	r = (int)mq_timedreceive(mqd, (char *)&x.val, sizeof(x.val), NULL, &ts);
	printf("mq_timedreceive, handler: %d %s, handler ran %d\n", r, strerror(errno), alarms);
	msgctl(q, IPC_RMID, NULL);
	semctl(s, 0, IPC_RMID);
	mq_close(mqd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *r = getenv("ULP_RANK");

	rank = r ? atoi(r) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "msg"))
		return msg(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "sem"))
		return sem(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "mq"))
		return mq(argv[2], atol(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "rmid"))
		return rmid();
	if (argc == 3 && !strcmp(argv[1], "intr"))
		return intr(argv[2]);
	fprintf(stderr, "usage: ipcwait msg N | sem N | mq NAME N | rmid | intr NAME\n");
	return 2;
}
