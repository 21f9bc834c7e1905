/*
 * Real-time signals are queued, each with its own siginfo, as for a process (tests/integ/
 * rtqueue.sh). Runs the same as a process and as a ULP; what it prints (but the pids) must be the
 * same. Usage:
 *   rtqueue recv FILE N   block SIGRTMIN+1, SIGRTMIN+2, SIGUSR1; write the pid to FILE; when the
 *                         sender's SIGUSR1 comes, unblock: N handlers, SIGRTMIN+2's first (as
 *                         the kernel nests them), each number's in the order sent, each with
 *                         its value, code, pid and uid
 *   rtqueue wait FILE N   the same, taken one by one by sigtimedwait (SIGRTMIN+1's first)
 *   rtqueue send FILE N   sigqueue N signals to the pid in FILE (i % 3 == 0: SIGRTMIN+2, else
 *                         SIGRTMIN+1; value i), then SIGUSR1
 *   rtqueue self N        the same pattern sent to itself by sigqueue, then N/4 raise() of
 *                         SIGRTMIN+3 (to the thread) and one kill(): all delivered, in order
 *   rtqueue bound L       RLIMIT_SIGPENDING L; sigqueue to itself until EAGAIN (at most L),
 *                         kill() and raise() past it; all that were queued are delivered
 *   rtqueue thread N      a second thread blocks SIGRTMIN+1 and +2; the first pthread_kill()s it
 *                         N times (+1) and pthread_sigqueue()s it N/2 values (+2); once
 *                         unblocked, that thread runs the handlers, none the first
 *   rtqueue chld MS       a child computes MS ms and exits: its SIGCHLD's si_utime + si_stime
 *                         (clock ticks) are not 0, in a handler and in sigwaitinfo
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXN 4096

static struct rec {
	int sig, code, pid, uid, value;
} got[MAXN + 8];
static volatile int ngot;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (ngot < MAXN + 8) {
		got[ngot].sig = sig;
		got[ngot].code = si->si_code;
		got[ngot].pid = si->si_pid;
		got[ngot].uid = (int)si->si_uid;
		got[ngot].value = si->si_value.sival_int;
	}
	ngot++;
}

static int fails;

static void check(int good, const char *what)
{
	printf("%s: %s\n", what, good ? "ok" : "FAIL");
	fails += !good;
}

static void sigset_of(sigset_t *s, int with_usr1)
{
	sigemptyset(s);
	sigaddset(s, SIGRTMIN + 1);
	sigaddset(s, SIGRTMIN + 2);
	sigaddset(s, SIGRTMIN + 3);
	if (with_usr1)
		sigaddset(s, SIGUSR1);
}

static void handlers(void)
{
	struct sigaction sa;
	int k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	for (k = 1; k <= 3; k++)
		sigaction(SIGRTMIN + k, &sa, NULL);
}

/* The number the sender uses for its i-th signal. */
static int sig_of(int i)
{
	return i % 3 == 0 ? SIGRTMIN + 2 : SIGRTMIN + 1;
}

/* Records r[0..n) are the pattern of n: SIGRTMIN+first's in order, then the other number's,
 * sent by pid with code. sigtimedwait takes the lowest number first; handlers of both due run
 * SIGRTMIN+2's first (the kernel sets up a frame for SIGRTMIN+1, then, with SIGRTMIN+1 blocked
 * by it, one for SIGRTMIN+2 above it). */
static void check_pattern(const struct rec *r, int n, int pid, int code, int first,
			  const char *what)
{
	int i, k = 0, bad = 0, pass;
	char line[160];

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			if (sig_of(i) != SIGRTMIN + (pass ? 3 - first : first))
				continue;
			if (k >= n || r[k].sig != sig_of(i) || r[k].value != i ||
			    r[k].code != code || r[k].pid != pid || r[k].uid != (int)getuid()) {
				if (!bad++ && k < n)
					printf("# %d: got sig %d value %d code %d pid %d uid %d, "
					       "want sig "
					       "%d value %d code %d pid %d\n",
					       k, r[k].sig, r[k].value, r[k].code, r[k].pid,
					       r[k].uid, sig_of(i), i, code, pid);
			}
			k++;
		}
	snprintf(
	    line, sizeof(line),
	    "%s: %d signals, SIGRTMIN+%d's first, each in order with its value, code, pid, uid",
	    what, n, first);
	check(!bad && k == n, line);
}

static void publish_pid(const char *file)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, file)) {
		fprintf(stderr, "rtqueue: %s: cannot write the pid: %s\n", file, strerror(errno));
		exit(2);
	}
}

/* Block, publish the pid, wait for the sender's SIGUSR1 (60 s at most): its pid, or -1. */
static int wait_sender(const char *file)
{
	struct timespec to = {60, 0};
	sigset_t s, u;
	siginfo_t si;

	sigset_of(&s, 1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	publish_pid(file);
	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);
	if (sigtimedwait(&u, &si, &to) != SIGUSR1) {
		check(0, "the sender's SIGUSR1 came");
		return -1;
	}
	return si.si_pid;
}

static void pending_both(const char *what, int want)
{
	sigset_t p;

	sigpending(&p);
	check((sigismember(&p, SIGRTMIN + 1) == want) && (sigismember(&p, SIGRTMIN + 2) == want),
	      what);
}

static int recv_mode(const char *file, int n)
{
	sigset_t s;
	int from;

	handlers();
	if ((from = wait_sender(file)) < 0)
		return 1;
	pending_both("sigpending shows both numbers while they are blocked", 1);
	sigset_of(&s, 0);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	check(ngot == n, "every signal sent ran its handler once unblocked");
	check_pattern(got, ngot < n ? ngot : n, from, SI_QUEUE, 2, "handlers");
	pending_both("none pending after", 0);
	return fails != 0;
}

static int wait_mode(const char *file, int n)
{
	struct timespec zero = {0, 0};
	static struct rec r[MAXN];
	sigset_t s;
	siginfo_t si;
	int from, k = 0, sig;

	if ((from = wait_sender(file)) < 0)
		return 1;
	pending_both("sigpending shows both numbers while they are blocked", 1);
	sigset_of(&s, 0);
	while (k < MAXN && (sig = sigtimedwait(&s, &si, &zero)) > 0) {
		r[k].sig = sig;
		r[k].code = si.si_code;
		r[k].pid = si.si_pid;
		r[k].uid = (int)si.si_uid;
		r[k].value = si.si_value.sival_int;
		k++;
		if (k == n / 2)
			pending_both("both still pending halfway", 1);
	}
	check(k == n && errno == EAGAIN, "sigtimedwait took every one, then EAGAIN");
	check_pattern(r, k < n ? k : n, from, SI_QUEUE, 1, "sigtimedwait");
	pending_both("none pending after", 0);
	return fails != 0;
}

static int send_mode(const char *file, int n)
{
	union sigval v;
	int pid = 0, i, tries;
	FILE *f;

	for (tries = 0; tries < 6000 && !pid; tries++) { /* 60 s */
		f = fopen(file, "r");
		if (!f || fscanf(f, "%d", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
		if (!pid)
			usleep(10000);
	}
	if (!pid) {
		fprintf(stderr, "rtqueue send: %s: no pid after 60 s\n", file);
		return 2;
	}
	for (i = 0; i < n; i++) {
		v.sival_int = i;
		for (tries = 0; sigqueue(pid, sig_of(i), v) != 0; tries++) {
			if (errno != EAGAIN || tries > 10000) {
				fprintf(stderr, "rtqueue send: sigqueue %d to %d: %s\n", i, pid,
					strerror(errno));
				return 2;
			}
			usleep(1000);
		}
	}
	v.sival_int = -1;
	if (sigqueue(pid, SIGUSR1, v) != 0) {
		fprintf(stderr, "rtqueue send: SIGUSR1 to %d: %s\n", pid, strerror(errno));
		return 2;
	}
	return 0;
}

static int self_mode(int n)
{
	union sigval v;
	sigset_t s;
	int i, ok = 1, nr = n / 4, k;

	handlers();
	sigset_of(&s, 0);
	sigprocmask(SIG_BLOCK, &s, NULL);
	for (i = 0; i < n; i++) {
		v.sival_int = i;
		ok &= sigqueue(getpid(), sig_of(i), v) == 0;
	}
	for (i = 0; i < nr; i++)
		ok &= raise(SIGRTMIN + 3) == 0;
	ok &= kill(getpid(), SIGRTMIN + 3) == 0;
	check(ok, "sigqueue, raise and kill to itself succeed");
	pending_both("sigpending shows both numbers while they are blocked", 1);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	check(ngot == n + nr + 1, "every signal sent ran its handler once unblocked");
	/* The kernel takes the thread's own pending signals before the process's: the frame of
	 * a raised SIGRTMIN+3 is set up first, so its handlers run after the others'. */
	check_pattern(got, ngot < n ? ngot : n, getpid(), SI_QUEUE, 2, "self");
	for (k = 0, i = n; i < n + nr && i < ngot; i++)
		k +=
		    got[i].sig == SIGRTMIN + 3 && got[i].code == SI_TKILL && got[i].pid == getpid();
	check(k == nr, "then the raised SIGRTMIN+3 (the thread's, SI_TKILL)");
	i = nr + n;
	check(ngot == i + 1 && got[i].sig == SIGRTMIN + 3 && got[i].code == SI_USER,
	      "last the killed SIGRTMIN+3 (the process's, SI_USER)");
	return fails != 0;
}

static int bound_mode(int lim)
{
	struct rlimit rl = {(rlim_t)lim, (rlim_t)lim};
	union sigval v;
	sigset_t s;
	int n = 0, e = 0, rr, kr;

	handlers();
	if (setrlimit(RLIMIT_SIGPENDING, &rl) != 0) {
		perror("rtqueue bound: setrlimit");
		return 2;
	}
	sigset_of(&s, 0);
	sigprocmask(SIG_BLOCK, &s, NULL);
	for (n = 0; n <= lim; n++) {
		v.sival_int = n;
		if (sigqueue(getpid(), SIGRTMIN + 1, v) != 0) {
			e = errno;
			break;
		}
	}
	/* The kernel counts every queued signal of the user: other processes' pending ones take
	 * their share of the same limit (so a process may queue fewer; a ULP, its own bound). */
	check(e == EAGAIN && n <= lim, "sigqueue past RLIMIT_SIGPENDING: EAGAIN");
	printf("# queued %d before EAGAIN\n", n);
	rr = raise(SIGRTMIN + 1) == 0 ? 0 : errno;
	check(rr == EAGAIN, "raise past it: EAGAIN");
	kr = kill(getpid(), SIGRTMIN + 1);
	check(kr == 0, "kill past it: accepted (pending already, without a siginfo of its own)");
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	check(ngot == n, "every one queued ran its handler, no more");
	for (e = 0, rr = 0; rr < ngot && rr < MAXN; rr++)
		e += got[rr].value != rr;
	check(!e, "in order, with their values");
	return fails != 0;
}

static volatile int go;
static __thread int my_hits, my_values, my_order;

static void on_thread(int sig)
{
	(void)sig;
	my_hits++;
}

/* pthread_sigqueue's: values 0, 1, 2... in order */
static void on_thread_value(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	my_order += si->si_value.sival_int == my_values && si->si_code == SI_QUEUE;
	my_values++;
}

/* Blocks SIGRTMIN+1, says so (go 1), waits for go 2, unblocks: its handlers' count. */
static void *target(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 1);
	sigaddset(&s, SIGRTMIN + 2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&go, __ATOMIC_SEQ_CST) != 2)
		usleep(1000);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	return (void *)(long)(my_hits + (my_order == my_values ? my_values : -1000000) * 10000);
}

static int thread_mode(int n)
{
	struct sigaction sa;
	pthread_t t;
	void *hits;
	int i, ok = 1;

	union sigval v;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_thread;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sa.sa_sigaction = on_thread_value;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 2, &sa, NULL);
	if (pthread_create(&t, NULL, target, NULL) != 0)
		return 2;
	while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST))
		usleep(1000);
	for (i = 0; i < n; i++)
		ok &= pthread_kill(t, SIGRTMIN + 1) == 0;
	for (i = 0; i < n / 2; i++) {
		v.sival_int = i;
		ok &= pthread_sigqueue(t, SIGRTMIN + 2, v) == 0;
	}
	check(ok, "pthread_kill and pthread_sigqueue of real-time signals to a thread that blocks "
		  "them");
	__atomic_store_n(&go, 2, __ATOMIC_SEQ_CST);
	pthread_join(t, &hits);
	check((long)hits == n + (long)(n / 2) * 10000 && my_hits == 0 && my_values == 0,
	      "that thread ran one handler per signal once it unblocked them, the values in order; "
	      "the other none");
	v.sival_int = 0;
	my_order = my_values = 0;
	pthread_sigqueue(pthread_self(), SIGRTMIN + 2, v);
	sched_yield(); /* by its return at the latest (glibc's call may return first) */
	check(__atomic_load_n(&my_values, __ATOMIC_SEQ_CST) == 1 && my_order == 1,
	      "pthread_sigqueue to itself: its handler ran, with its value");
	return fails != 0;
}

static volatile long chld_ticks = -1;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == CLD_EXITED)
		chld_ticks = (long)(si->si_utime + si->si_stime);
}

/* A child that computes ms of CPU time, then exits; its pid. */
static pid_t busy_child(int ms)
{
	pid_t pid = fork();
	struct timespec t;
	volatile unsigned long x = 0;

	if (pid == 0) {
		do {
			for (int i = 0; i < 100000; i++)
				x += (unsigned long)i;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		} while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < ms);
		_exit(0);
	}
	return pid;
}

static int chld_mode(int ms)
{
	/* The kernel's utime and stime are sampled at its ticks: under load (4 ULPs' children on
	 * 2 CPUs) 200 ms came as 7 to 16 clock ticks, not 20. Not 0, as before 27 Nov. */
	long want = 1;
	struct sigaction sa;
	siginfo_t si;
	sigset_t s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGCHLD, &sa, NULL);
	busy_child(ms);
	while (chld_ticks < 0)
		pause();
	check(chld_ticks >= want,
	      "SIGCHLD's si_utime + si_stime in a handler: the child's CPU time");
	wait(NULL);
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, NULL);
	busy_child(ms);
	check(sigwaitinfo(&s, &si) == SIGCHLD && si.si_code == CLD_EXITED &&
		  (long)(si.si_utime + si.si_stime) >= want,
	      "SIGCHLD's si_utime + si_stime in sigwaitinfo: the child's CPU time");
	wait(NULL);
	return fails != 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[argc - 1]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (n < 0 || n > MAXN)
		n = MAXN;
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return recv_mode(argv[2], n);
	if (argc == 4 && !strcmp(argv[1], "wait"))
		return wait_mode(argv[2], n);
	if (argc == 4 && !strcmp(argv[1], "send"))
		return send_mode(argv[2], n);
	if (argc == 3 && !strcmp(argv[1], "self"))
		return self_mode(n);
	if (argc == 3 && !strcmp(argv[1], "bound"))
		return bound_mode(n);
	if (argc == 3 && !strcmp(argv[1], "thread"))
		return thread_mode(n);
	if (argc == 3 && !strcmp(argv[1], "chld"))
		return chld_mode(n);
	fprintf(stderr,
		"usage: rtqueue recv|wait|send FILE N | self N | bound L | thread N | chld MS\n");
	return 2;
}
