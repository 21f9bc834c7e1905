/* SPDX-License-Identifier: MIT */
/*
 * POSIX threads inside one program, checked by the program itself: run as a process and as ULPs
 * (tests/integ/threads.sh), both must print the same "ok" lines and no "FAIL".
 *
 * Usage: threads [all|signals|killparked|killstorm [ROUNDS]|yieldring [ROUNDS]|mainexit|mainreturn|
 *                 exitgroup|segv|parked segv|parked exit|many N]
 * "signals" (pthread_cancel, pthread_kill) and "killstorm" run the handlers glibc and the test
 * install: signal dispositions are per ULP, so ULPs may share a PVAS task (ulpspawn -t 1).
 */
#define _GNU_SOURCE
#include "codesegs.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int failures;

#define CHECK(name, cond, ...)                                                                     \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok %s\n", name);                                                   \
		} else {                                                                           \
			printf("FAIL %s: ", name);                                                 \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

static long tid(void)
{
	return syscall(SYS_gettid);
}

static double now_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- create, join, detach, return values, thread ids ---- */

static void *ret_arg(void *a)
{
	return (void *)((long)a * 3 + tid() * 0);
}

static long tids[8];
static void *record_tid(void *a)
{
	long t1 = tid();

	sched_yield();
	tids[(long)a] = t1 == tid() ? t1 : -1; /* stable across switches */
	return NULL;
}

static sem_t detached_done;
static void *detached(void *a)
{
	sem_post(&detached_done);
	return NULL;
}

static void test_create(void)
{
	pthread_t t[8];
	void *r;
	long sum = 0, i, j;
	int distinct = 1;

	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, ret_arg, (void *)i);
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	CHECK("create-join", sum == 3 * 28, "sum of return values %ld, want 84", sum);

	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, record_tid, (void *)i);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 8; i++) {
		if (tids[i] <= 0 || tids[i] == getpid())
			distinct = 0;
		for (j = 0; j < i; j++)
			if (tids[i] == tids[j])
				distinct = 0;
	}
	CHECK("gettid", distinct && tid() == getpid(),
	      "thread ids not distinct/stable, or main's %ld != pid %d", tid(), getpid());

	sem_init(&detached_done, 0, 0);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], &at, detached, NULL);
	for (i = 0; i < 4; i++)
		sem_wait(&detached_done);
	CHECK("detach", 1, "");
}

/* ---- mutex, rwlock, barrier, TLS ---- */

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static void *count(void *a)
{
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&mtx);
		counter++;
		if (i % 1000 == 0)
			sched_yield(); /* give the others a chance to contend */
		pthread_mutex_unlock(&mtx);
	}
	return NULL;
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b, rw_bad;
static void *rw_worker(void *a)
{
	for (int i = 0; i < 5000; i++) {
		if ((long)a % 2) {
			pthread_rwlock_wrlock(&rw);
			rw_a++;
			sched_yield();
			rw_b++;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			if (rw_a != rw_b)
				rw_bad++;
			pthread_rwlock_unlock(&rw);
		}
	}
	return NULL;
}

static pthread_barrier_t bar;
static _Atomic int phase_count[50];
static _Atomic int barrier_bad;
static void *bar_worker(void *a)
{
	for (int p = 0; p < 50; p++) {
		atomic_fetch_add(&phase_count[p], 1);
		pthread_barrier_wait(&bar);
		if (atomic_load(&phase_count[p]) != 4) /* all four arrived before anyone left */
			atomic_fetch_add(&barrier_bad, 1);
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

static __thread long tls_var = 42;
static __thread char tls_buf[64];
static _Atomic int tls_bad;
static void *tls_worker(void *a)
{
	long me = (long)a;

	if (tls_var != 42)
		atomic_fetch_add(&tls_bad, 1);
	tls_var = me;
	snprintf(tls_buf, sizeof(tls_buf), "thread %ld", me);
	for (int i = 0; i < 100; i++) {
		sched_yield();
		char want[64];
		snprintf(want, sizeof(want), "thread %ld", me);
		if (tls_var != me || strcmp(tls_buf, want))
			atomic_fetch_add(&tls_bad, 1);
	}
	return NULL;
}

static void run_n(int n, void *(*fn)(void *))
{
	pthread_t t[16];
	long i;

	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)i);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void test_sync(void)
{
	run_n(8, count);
	CHECK("mutex", counter == 8 * 20000, "counter %ld, want 160000", counter);
	run_n(6, rw_worker);
	CHECK("rwlock", rw_bad == 0 && rw_a == 3 * 5000 && rw_a == rw_b,
	      "readers saw %ld torn states, a=%ld b=%ld", rw_bad, rw_a, rw_b);
	pthread_barrier_init(&bar, NULL, 4);
	run_n(4, bar_worker);
	CHECK("barrier", barrier_bad == 0, "%d threads left a phase early", barrier_bad);
	run_n(8, tls_worker);
	CHECK("thread-local", tls_bad == 0 && tls_var == 42, "%d bad TLS reads, main's %ld",
	      tls_bad, tls_var);
}

/* ---- condition variables, with and without timeouts ---- */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready_flag;
static void *signaller(void *a)
{
	usleep(20000);
	pthread_mutex_lock(&cm);
	ready_flag = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cm);
	return NULL;
}

static int timedwait_ms(pthread_cond_t *c, clockid_t clk, int ms)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return pthread_cond_timedwait(c, &cm, &ts);
}

static void test_cond(void)
{
	pthread_condattr_t ca;
	pthread_cond_t mono;
	pthread_t t;
	double t0, el;
	int rc;

	pthread_mutex_lock(&cm);
	t0 = now_ms(CLOCK_MONOTONIC);
	rc = timedwait_ms(&cv, CLOCK_REALTIME, 60);
	el = now_ms(CLOCK_MONOTONIC) - t0;
	pthread_mutex_unlock(&cm);
	CHECK("cond-timeout-realtime", rc == ETIMEDOUT && el >= 59,
	      "rc %d after %.1f ms, want ETIMEDOUT after >= 60 ms", rc, el);

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mono, &ca);
	pthread_mutex_lock(&cm);
	t0 = now_ms(CLOCK_MONOTONIC);
	rc = timedwait_ms(&mono, CLOCK_MONOTONIC, 40);
	el = now_ms(CLOCK_MONOTONIC) - t0;
	pthread_mutex_unlock(&cm);
	CHECK("cond-timeout-monotonic", rc == ETIMEDOUT && el >= 39,
	      "rc %d after %.1f ms, want ETIMEDOUT after >= 40 ms", rc, el);

	pthread_create(&t, NULL, signaller, NULL);
	pthread_mutex_lock(&cm);
	rc = 0;
	while (!ready_flag && rc == 0)
		rc = timedwait_ms(&cv, CLOCK_REALTIME, 10000);
	pthread_mutex_unlock(&cm);
	pthread_join(t, NULL);
	CHECK("cond-signal", rc == 0 && ready_flag, "rc %d flag %d", rc, ready_flag);

	sem_t s;
	struct timespec ts;
	sem_init(&s, 0, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 30000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	rc = sem_timedwait(&s, &ts);
	CHECK("sem-timedwait", rc == -1 && errno == ETIMEDOUT, "rc %d errno %d", rc, errno);
}

/* ---- cancel, kill, robust mutexes ---- */

static int cleaned;
static void cleanup(void *a)
{
	cleaned = 1;
}

static void *cancel_in_wait(void *a)
{
	pthread_cleanup_push(cleanup, NULL);
	pthread_mutex_lock(&cm);
	for (;;)
		pthread_cond_wait(&cv, &cm); /* a cancellation point; nobody signals */
	pthread_cleanup_pop(0);
	return NULL;
}

static void *cancel_in_sleep(void *a)
{
	for (;;)
		usleep(1000);
	return NULL;
}

static atomic_int async_armed;

static void *cancel_async(void *a)
{
	volatile long spin = 0;

	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	atomic_store(&async_armed, 1);
	for (;;) {
		spin++;
		if (spin % 100000 == 0)
			sched_yield(); /* on one worker, the canceller needs to run */
	}
	return NULL;
}

static _Atomic long sig_in_thread;
static _Atomic int sig_go;
static pthread_t sig_target;
static void on_usr1(int s)
{
	sig_in_thread = pthread_equal(pthread_self(), sig_target) ? tid() : -1;
}

static void *wait_for_signal(void *a)
{
	while (!atomic_load(&sig_in_thread))
		sched_yield();
	return NULL;
}

static pthread_mutex_t robust;
static void *die_holding(void *a)
{
	pthread_mutex_lock(&robust);
	return NULL; /* ends with the robust mutex held */
}

static void test_cancel_kill(void)
{
	pthread_t t;
	void *r;
	int rc;

	pthread_create(&t, NULL, cancel_in_wait, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, &r);
	pthread_mutex_unlock(&cm); /* the cancelled wait re-took it before unwinding */
	CHECK("cancel-condwait", r == PTHREAD_CANCELED && cleaned, "ret %p cleaned %d", r, cleaned);
	pthread_create(&t, NULL, cancel_in_sleep, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, &r);
	CHECK("cancel-sleep", r == PTHREAD_CANCELED, "ret %p", r);
	/* Cancel only once the thread is asynchronous. Otherwise the test is a race between the
	 * cancel and the thread's start: on a loaded machine (3 tasks, 2 loops of the test on 2
	 * CPUs) the thread spun on uncancelled about 1 run in 30, its SIGCANCEL taken (glibc's
	 * handler acts only on an asynchronous thread) with nothing pending any more. */
	pthread_create(&t, NULL, cancel_async, NULL);
	while (!atomic_load(&async_armed))
		usleep(1000);
	usleep(2000);
	pthread_cancel(t);
	pthread_join(t, &r);
	CHECK("cancel-async", r == PTHREAD_CANCELED, "ret %p", r);

	signal(SIGUSR1, on_usr1);
	pthread_create(&sig_target, NULL, wait_for_signal, NULL);
	usleep(10000);
	rc = pthread_kill(sig_target, SIGUSR1);
	pthread_join(sig_target, NULL);
	CHECK("pthread-kill", rc == 0 && sig_in_thread > 0 && sig_in_thread != getpid(),
	      "rc %d, handler ran in %ld", rc, (long)sig_in_thread);
	rc = pthread_kill(sig_target, 0);
	CHECK("pthread-kill-ended", rc == ESRCH || rc == 0, "rc %d", rc);
}

/* ---- killparked: pthread_kill at a thread blocked in pause, read or nanosleep ----
 * The call ends as in the kernel: EINTR after the handler; a read whose handler has SA_RESTART
 * goes on and returns the data written later; an ignored or blocked signal does not end it (a
 * blocked one stays pending for the thread). Such calls park on the task's ring, not in a futex
 * queue: the signal must reach them there (pause never returned). Main sends the signal until
 * the thread reacts: one sent before the thread blocks runs its handler first, in a process too. */
enum { KP_PAUSE, KP_READ, KP_READ_RESTART, KP_SLEEP, KP_IGNORED, KP_BLOCKED };
static const char *const kp_names[] = {"pause",	    "read",	    "read-restart",
				       "nanosleep", "read-ignored", "read-blocked"};
static _Atomic int kp_handled, kp_ready, kp_done;
static int kp_pipe[2];
static long kp_ret;
static int kp_errno, kp_pending;

static void on_kp(int s)
{
	kp_handled++;
}

static void *kp_thread(void *a)
{
	int what = (int)(long)a;
	struct timespec ts = {30, 0};
	sigset_t set;
	char c;

	if (what == KP_BLOCKED) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	atomic_store(&kp_ready, 1);
	if (what == KP_PAUSE)
		kp_ret = pause();
	else if (what == KP_SLEEP)
		kp_ret = nanosleep(&ts, NULL);
	else
		kp_ret = read(kp_pipe[0], &c, 1);
	kp_errno = kp_ret < 0 ? errno : 0;
	if (what == KP_BLOCKED) {
		sigpending(&set);
		kp_pending = sigismember(&set, SIGUSR1);
		sigwaitinfo(&set, NULL); /* take it: the next case starts clean */
	}
	atomic_store(&kp_done, 1);
	return NULL;
}

static void kill_parked(int what)
{
	struct sigaction sa;
	pthread_t t;
	int sent = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = what == KP_IGNORED ? SIG_IGN : on_kp;
	sa.sa_flags = what == KP_READ_RESTART ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	kp_handled = kp_ready = kp_done = 0;
	kp_pending = -1;
	if (pipe(kp_pipe))
		return;
	pthread_create(&t, NULL, kp_thread, (void *)(long)what);
	while (!atomic_load(&kp_ready))
		usleep(1000);
	usleep(20000); /* most likely blocked by now; the loops below do not count on it */
	if (what == KP_IGNORED || what == KP_BLOCKED) {
		pthread_kill(t, SIGUSR1);
		usleep(20000);
		sent = write(kp_pipe[1], "x", 1);
	} else if (what == KP_READ_RESTART) {
		while (!atomic_load(&kp_handled)) {
			pthread_kill(t, SIGUSR1);
			usleep(5000);
		}
		sent = write(kp_pipe[1], "x", 1);
	} else {
		for (int i = 0; i < 4000 && !atomic_load(&kp_done); i++) {
			pthread_kill(t, SIGUSR1);
			usleep(5000);
		}
	}
	pthread_join(t, NULL);
	close(kp_pipe[0]);
	close(kp_pipe[1]);
	if (what == KP_PAUSE || what == KP_READ || what == KP_SLEEP)
		CHECK(kp_names[what], kp_ret == -1 && kp_errno == EINTR && kp_handled > 0,
		      "returned %ld errno %d, handler ran %d times", kp_ret, kp_errno,
		      (int)kp_handled);
	else
		CHECK(kp_names[what],
		      sent == 1 && kp_ret == 1 &&
			  (what == KP_BLOCKED ? kp_pending == 1 && !kp_handled : 1),
		      "read gave %ld errno %d, handler ran %d times, pending %d", kp_ret, kp_errno,
		      (int)kp_handled, kp_pending);
}

static void test_kill_parked(void)
{
	for (int what = KP_PAUSE; what <= KP_BLOCKED; what++)
		kill_parked(what);
	signal(SIGUSR1, SIG_DFL);
}

/* ---- killstorm: pthread_kill aimed at threads that live in trapped calls ----
 * The signal reaches a thread of a ULP running on another worker as a kick to that worker;
 * most kicks land while the worker runs the runtime (the threads trap sched_yield and gettid,
 * and threads end and start meanwhile). Such a kick must wait for the trap's end: run in the
 * runtime's context, the handler's own trapped call hit a blocked SIGSYS, and a thread-exit
 * hook it interrupted was abandoned (the ULP hung in exit). Every trapped call's result is
 * checked: while kicks were SIGSYS, one that was pending when a call trapped merged with the
 * trap's SIGSYS (standard signals do not queue), and the call was lost, returning its own
 * number (gettid gave 186; glibc's SIGCANCEL handler, whose getpid gave 39, ignored the
 * cancel: the lost asynchronous pthread_cancel). */
#define STORM_THREADS 3
static _Atomic int storm_stop[STORM_THREADS];
static _Atomic long storm_handled[STORM_THREADS], storm_outside, storm_wrong;
static __thread int storm_id = -1;
static __thread long storm_tid;
static long storm_pid;
static struct code_segs storm_segs;

static uintptr_t interrupted_pc(const void *ucv)
{
	const ucontext_t *uc = ucv;
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

/* The handler interrupted the thread's own code (program, libc, ld.so, vDSO), as in a process:
 * never the runtime's. Only loads and stores here (async-signal-safe). */
static void on_storm(int s, siginfo_t *si, void *ucv)
{
	uintptr_t pc = interrupted_pc(ucv);

	if (pc && !code_segs_hold(&storm_segs, pc))
		storm_outside++;
	if (storm_id >= 0)
		storm_handled[storm_id]++;
	/* trapped calls inside the handler */
	if (storm_tid && (tid() != storm_tid || syscall(SYS_getpid) != storm_pid))
		storm_wrong++;
}

static void *storm_fn(void *a)
{
	storm_tid = tid();
	storm_id = (int)(long)a;
	while (!atomic_load(&storm_stop[storm_id])) {
		sched_yield();
		if (tid() != storm_tid || syscall(SYS_getpid) != storm_pid)
			storm_wrong++;
	}
	return NULL;
}

static void test_killstorm(int rounds)
{
	pthread_t t[STORM_THREADS];
	long sent = 0, got = 0;
	int i, round, bad = 0;

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_storm;
	sa.sa_flags = SA_SIGINFO;
	code_segs_load(&storm_segs);
	storm_pid = getpid();
	sigaction(SIGUSR2, &sa, NULL);
	for (i = 0; i < STORM_THREADS; i++)
		pthread_create(&t[i], NULL, storm_fn, (void *)(long)i);
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < 300; i++, sent++)
			if (pthread_kill(t[i % STORM_THREADS], SIGUSR2))
				bad++;
		/* one thread ends and another starts: exit hooks run among the kicks */
		i = round % STORM_THREADS;
		atomic_store(&storm_stop[i], 1);
		pthread_join(t[i], NULL);
		atomic_store(&storm_stop[i], 0);
		pthread_create(&t[i], NULL, storm_fn, (void *)(long)i);
	}
	for (i = 0; i < STORM_THREADS; i++) {
		atomic_store(&storm_stop[i], 1);
		pthread_join(t[i], NULL);
	}
	for (i = 0; i < STORM_THREADS; i++)
		got += storm_handled[i];
	/* pending signals merge, as in the kernel: at most one per kill, at least one per thread */
	CHECK("killstorm",
	      !bad && got > 0 && got <= sent && storm_handled[0] && storm_handled[1] &&
		  storm_handled[2] && !storm_outside && !storm_wrong,
	      "bad %d sent %ld handled %ld/%ld/%ld, %ld outside the program's code, %ld wrong "
	      "gettid/getpid results",
	      bad, sent, storm_handled[0], storm_handled[1], storm_handled[2], (long)storm_outside,
	      (long)storm_wrong);
}

/* ---- yieldring: threads that wait for each other with sched_yield ----
 * Three threads pass a token round a ring, each spinning on sched_yield until its turn. Every
 * pass needs the yield to give way to the others: with three threads ready on one worker, two
 * of them wait in the yield queue behind an empty deque, and a yield that looked only at the
 * deque spun and napped alone (each nap re-armed the preemption tick, so it could go on for
 * ever). */
#define RING_THREADS 3
static _Atomic long ring_token;
static long ring_rounds, ring_turns[RING_THREADS];

static void *ring_fn(void *a)
{
	long me = (long)a, t;

	for (;;) {
		/* the last pass leaves the token past the end: everyone's turn to leave */
		while ((t = atomic_load(&ring_token)) % RING_THREADS != me &&
		       t < ring_rounds * RING_THREADS)
			sched_yield();
		if (t >= ring_rounds * RING_THREADS)
			return NULL;
		ring_turns[me]++;
		atomic_store(&ring_token, t + 1);
	}
}

static void test_yieldring(long rounds)
{
	pthread_t t[RING_THREADS];
	long i;
	int even = 1;

	ring_rounds = rounds;
	for (i = 0; i < RING_THREADS; i++)
		pthread_create(&t[i], NULL, ring_fn, (void *)i);
	for (i = 0; i < RING_THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < RING_THREADS; i++)
		even &= ring_turns[i] == rounds;
	CHECK("yieldring", even && atomic_load(&ring_token) == rounds * RING_THREADS,
	      "token %ld, turns %ld/%ld/%ld, want %ld each", (long)atomic_load(&ring_token),
	      ring_turns[0], ring_turns[1], ring_turns[2], rounds);
}

static void test_robust_affinity(void)
{
	pthread_t t;
	int rc;

	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &ma);
	pthread_create(&t, NULL, die_holding, NULL);
	pthread_join(t, NULL);
	rc = pthread_mutex_lock(&robust);
	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);
	CHECK("robust-owner-died", rc == EOWNERDEAD, "lock gave %d, want EOWNERDEAD", rc);

	cpu_set_t set;
	CPU_ZERO(&set);
	rc = sched_getaffinity(0, sizeof(set), &set);
	CHECK("affinity", rc == 0 && CPU_COUNT(&set) >= 1, "rc %d count %d", rc, CPU_COUNT(&set));
}

/* ---- separate modes: how a threaded program ends ---- */

static void *late_print(void *a)
{
	usleep(50000);
	printf("ok mainexit: thread outlived main\n");
	fflush(stdout);
	return NULL;
}

static pthread_mutex_t never = PTHREAD_MUTEX_INITIALIZER;
static void *block_forever(void *a)
{
	pthread_mutex_lock(&cm);
	for (;;)
		pthread_cond_wait(&cv, &cm);
	return NULL;
}

static void *spin_forever(void *a)
{
	for (volatile long i = 0;; i++)
		if (i % 1000000 == 0)
			sched_yield();
	return NULL;
}

static void *exit_7(void *a)
{
	usleep(20000);
	exit(7);
}

static void *segv(void *a)
{
	usleep(10000);
	*(volatile int *)a = 1;
	return NULL;
}

/* Threads that wait without a futex (parked on the runtime's ring) or spin without ever making
 * a system call: a dying ULP must end them too (an MPI rank's UCX thread in epoll_wait kept a
 * crashed rank from ending). */
static int never_fd[2];
static _Atomic int parked_started;

static void *read_forever(void *a)
{
	char c;

	atomic_fetch_add(&parked_started, 1);
	printf("FAIL parked: read returned %zd\n", read(never_fd[0], &c, 1));
	return NULL;
}

static void *epoll_forever(void *a)
{
	struct epoll_event ev = {.events = EPOLLIN}, out;
	int ep = epoll_create1(0);

	epoll_ctl(ep, EPOLL_CTL_ADD, never_fd[0], &ev);
	atomic_fetch_add(&parked_started, 1);
	printf("FAIL parked: epoll_wait returned %d\n", epoll_wait(ep, &out, 1, -1));
	return NULL;
}

static void *poll_forever(void *a)
{
	struct pollfd p = {.fd = never_fd[0], .events = POLLIN};

	atomic_fetch_add(&parked_started, 1);
	printf("FAIL parked: poll returned %d\n", poll(&p, 1, -1));
	return NULL;
}

static void *spin_nosys(void *a)
{
	atomic_fetch_add(&parked_started, 1);
	for (volatile long i = 0;; i++)
		;
	return NULL;
}

/* Main faults or exits while 3 threads are parked on fds and 2 spin with no system call. */
static int parked(const char *how)
{
	void *(*fns[])(void *) = {read_forever, epoll_forever, poll_forever, spin_nosys,
				  spin_nosys};
	pthread_t t;
	unsigned i;

	if (pipe(never_fd))
		return 2;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		pthread_create(&t, NULL, fns[i], NULL);
	while (atomic_load(&parked_started) < (int)i)
		sched_yield();
	usleep(20000); /* into their waits */
	printf("ok parked: %u threads waiting\n", i);
	fflush(stdout);
	if (!strcmp(how, "exit"))
		exit(5);
	*(volatile int *)(long)(i - i) = 1;
	return 1;
}

static _Atomic long many_sum;
static void *many_fn(void *a)
{
	pthread_mutex_lock(&mtx);
	counter++;
	pthread_mutex_unlock(&mtx);
	sched_yield();
	atomic_fetch_add(&many_sum, (long)a);
	return NULL;
}

/* ---- cpuclock: CPU clocks per thread ---- */

static long clock_ms(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return -1;
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static atomic_int burn_done, burn_may_end;
static long burn_self_ms, burn_rusage_ms;

/* Computes until its own thread clock says 300 ms (at most 60 s of wall time). */
static void *burner(void *arg)
{
	volatile unsigned long x = 0;
	time_t t0 = time(NULL);
	struct rusage ru;

	(void)arg;
	while (clock_ms(CLOCK_THREAD_CPUTIME_ID) < 300 && time(NULL) < t0 + 60)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * i;
	burn_self_ms = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &ru);
	burn_rusage_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
			 ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
	atomic_store(&burn_done, 1);
	while (!atomic_load(&burn_may_end))
		usleep(1000);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!atomic_load(&burn_may_end))
		usleep(5000);
	return NULL;
}

/* One thread computes 300 ms of CPU, one sleeps, main waits: each thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID, pthread_getcpuclockid, RUSAGE_THREAD) counts its own time only, and
 * the process clock all of it. */
static int test_cpuclock(void)
{
	pthread_t b, s;
	clockid_t cb, cs;
	long busy, idle, own, proc;

	pthread_create(&b, NULL, burner, NULL);
	pthread_create(&s, NULL, sleeper, NULL);
	while (!atomic_load(&burn_done))
		usleep(2000);
	pthread_getcpuclockid(b, &cb);
	pthread_getcpuclockid(s, &cs);
	busy = clock_ms(cb);
	idle = clock_ms(cs);
	own = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	proc = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	atomic_store(&burn_may_end, 1);
	pthread_join(b, NULL);
	pthread_join(s, NULL);
	CHECK("cpuclock thread", burn_self_ms >= 300 && burn_rusage_ms >= 250,
	      "the computing thread's own clock %ld ms, RUSAGE_THREAD %ld ms", burn_self_ms,
	      burn_rusage_ms);
	CHECK("cpuclock other threads",
	      busy >= 300 && idle >= 0 && idle < 100 && own >= 0 && own < 100,
	      "pthread_getcpuclockid: computing %ld ms, sleeping %ld ms; main's own %ld ms", busy,
	      idle, own);
	CHECK("cpuclock process", proc >= busy, "process %ld ms < computing thread %ld ms", proc,
	      busy);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	pthread_t t;

	if (!strcmp(mode, "cpuclock"))
		return test_cpuclock();
	if (!strcmp(mode, "mainexit")) {
		pthread_create(&t, NULL, late_print, NULL);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "mainreturn")) {
		/* main returns while its threads wait on a condition variable: every one must be
		 * found and ended (they leave the group's list as they end) */
		for (int i = 0; i < 6; i++)
			pthread_create(&t, NULL, block_forever, NULL);
		usleep(10000);
		return 3;
	}
	if (!strcmp(mode, "exitgroup")) {
		pthread_create(&t, NULL, block_forever, NULL);
		pthread_create(&t, NULL, spin_forever, NULL);
		pthread_create(&t, NULL, exit_7, NULL);
		pthread_mutex_lock(&never);
		pthread_mutex_lock(&never); /* deadlocks on itself: only exit_7 ends this */
		return 1;
	}
	if (!strcmp(mode, "segv")) {
		pthread_create(&t, NULL, block_forever, NULL);
		pthread_create(&t, NULL, segv, NULL);
		pthread_join(t, NULL);
		printf("FAIL segv: still running after the fault\n");
		return 1;
	}
	if (!strcmp(mode, "parked"))
		return parked(argc > 2 ? argv[2] : "segv");
	if (!strcmp(mode, "many")) {
		int n = argc > 2 ? atoi(argv[2]) : 8, i;
		pthread_t *ts = calloc((size_t)n, sizeof(*ts));
		long want = 0;

		for (i = 0; i < n; i++) {
			if (pthread_create(&ts[i], NULL, many_fn, (void *)(long)i)) {
				printf("FAIL many: pthread_create %d\n", i);
				return 1;
			}
			want += i;
		}
		for (i = 0; i < n; i++)
			pthread_join(ts[i], NULL);
		CHECK("many", counter == n && many_sum == want, "counter %ld sum %ld", counter,
		      (long)many_sum);
		return failures != 0;
	}
	if (!strcmp(mode, "killstorm")) {
		test_killstorm(argc > 2 ? atoi(argv[2]) : 30);
		printf("%s\n", failures ? "FAILED" : "all ok");
		return failures != 0;
	}
	if (!strcmp(mode, "killparked")) {
		test_kill_parked();
		printf("%s\n", failures ? "FAILED" : "all ok");
		return failures != 0;
	}
	if (!strcmp(mode, "yieldring")) {
		test_yieldring(argc > 2 ? atol(argv[2]) : 2000);
		printf("%s\n", failures ? "FAILED" : "all ok");
		return failures != 0;
	}
	if (!strcmp(mode, "signals")) {
		test_cancel_kill();
		printf("%s\n", failures ? "FAILED" : "all ok");
		return failures != 0;
	}
	test_create();
	test_sync();
	test_cond();
	test_robust_affinity();
	printf("%s\n", failures ? "FAILED" : "all ok");
	return failures != 0;
}
