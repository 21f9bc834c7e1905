/* SPDX-License-Identifier: MIT */
/*
 * Signals as a process sees them, checked by the program itself (tests/integ/signals.sh runs it
 * as a process and as ULPs, several at once, and compares): each check prints "NAME: ok" or
 * "NAME: FAIL why". Run with a mode: all (every check), or one of the ending modes below.
 *   sigs all                 every check in turn
 *   sigs only NAME...        those checks (names as in main)
 *   sigs pipe R              the ULP of rank R (ULP_RANK; 0 as a process) writes into a pipe
 *                            without reader and is killed by SIGPIPE; the others finish
 *   sigs term                waits (pause) for a SIGTERM from outside, default action
 *   sigs usr1                waits for SIGUSR1 from outside with a handler, then exits 0
 *   sigs onterm CODE [R]     waits for SIGTERM or SIGINT with a handler (rank R: the default
 *                            action), says how often the handler ran, then exits CODE
 *   sigs ignore              ignores SIGTERM and SIGINT and waits forever
 * The rank is ULP_RANK (ulpspawn, ulpexec) or PMI_RANK (mpiexec), else 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "selfcheck.h"

static volatile sig_atomic_t hits, last_sig, alarms;
static volatile uintptr_t handler_sp;
static volatile int onstack_flag;
static volatile long got_value;
static volatile int got_code;
static sigjmp_buf jb;
static char altbuf[64 * 1024];
static int rank;

static void count(int sig)
{
	hits++;
	last_sig = sig;
}

static void on_alt(int sig)
{
	stack_t ss;
	int here;

	handler_sp = (uintptr_t)&here;
	onstack_flag = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
	hits++;
}

static void info_handler(int sig, siginfo_t *si, void *uc)
{
	got_value = (long)si->si_value.sival_ptr;
	got_code = si->si_code;
	hits++;
}

static void jump_out(int sig)
{
	siglongjmp(jb, sig);
}

static void on_alarm(int sig)
{
	alarms++;
}

static int blocked(int sig)
{
	sigset_t s;

	sigprocmask(SIG_BLOCK, NULL, &s);
	return sigismember(&s, sig);
}

static void install(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void check_handler(void)
{
	hits = 0;
	install(SIGUSR1, count, 0);
	raise(SIGUSR1);
	kill(getpid(), SIGUSR1);
	CHECK("handler", hits == 2 && last_sig == SIGUSR1, "hits %d", (int)hits);
}

static void check_ignore(void)
{
	install(SIGUSR2, SIG_IGN, 0);
	raise(SIGUSR2);
	kill(getpid(), SIGUSR2);
	CHECK("ignore", 1, "-");
	install(SIGUSR2, SIG_DFL, 0);
}

static void check_block(void)
{
	sigset_t s, p;
	int before;

	hits = 0;
	install(SIGUSR1, count, 0);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	raise(SIGUSR1);
	before = hits;
	sigpending(&p);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	/* delivered before sigprocmask returned */
	CHECK("block then unblock", before == 0 && sigismember(&p, SIGUSR1) && hits == 1,
	      "before %d pending %d after %d", before, sigismember(&p, SIGUSR1), (int)hits);
}

static void check_mask_in_handler(void)
{
	struct sigaction sa, old;

	hits = 0;
	/* SA_RESETHAND: the action is back to SIG_DFL once the handler runs */
	install(SIGUSR1, count, SA_RESETHAND);
	raise(SIGUSR1);
	sigaction(SIGUSR1, NULL, &old);
	CHECK("SA_RESETHAND", hits == 1 && old.sa_handler == SIG_DFL, "hits %d", (int)hits);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	got_code = 0;
	{
		union sigval v = {.sival_int = 77};

		sigqueue(getpid(), SIGUSR1, v);
	}
	CHECK("sigqueue SA_SIGINFO value", got_value == 77 && got_code == SI_QUEUE,
	      "value %ld code %d", got_value, got_code);
}

static void check_altstack(void)
{
	stack_t ss, old;

	ss.ss_sp = altbuf;
	ss.ss_size = sizeof(altbuf);
	ss.ss_flags = 0;
	hits = 0;
	handler_sp = 0;
	sigaltstack(&ss, NULL);
	install(SIGUSR1, on_alt, SA_ONSTACK);
	raise(SIGUSR1);
	sigaltstack(NULL, &old);
	CHECK("sigaltstack used by SA_ONSTACK handler",
	      hits == 1 && handler_sp >= (uintptr_t)altbuf &&
		  handler_sp < (uintptr_t)altbuf + sizeof(altbuf) && onstack_flag &&
		  old.ss_sp == altbuf && !(old.ss_flags & SS_ONSTACK),
	      "handler sp %#lx, stack %p..+%zu, onstack %d", (unsigned long)handler_sp,
	      (void *)altbuf, sizeof(altbuf), onstack_flag);
	/* without SA_ONSTACK: the normal stack */
	install(SIGUSR1, on_alt, 0);
	raise(SIGUSR1);
	CHECK("no SA_ONSTACK: normal stack",
	      handler_sp < (uintptr_t)altbuf || handler_sp >= (uintptr_t)altbuf + sizeof(altbuf),
	      "handler sp %#lx", (unsigned long)handler_sp);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	install(SIGUSR1, SIG_DFL, 0);
}

static void check_longjmp(void)
{
	volatile int n = 0;
	volatile unsigned long spin = 0;

	install(SIGALRM, jump_out, 0);
	if (sigsetjmp(jb, 1) != 0)
		n++;
	if (n < 3) {
		struct itimerval it = {{0, 0}, {0, 20000}};

		setitimer(ITIMER_REAL, &it, NULL);
		for (;;)
			spin++; /* computing, no system call: the handler must interrupt it */
	}
	CHECK("siglongjmp out of a SIGALRM handler (3 times, mask restored)",
	      n == 3 && !blocked(SIGALRM), "n %d blocked %d", n, blocked(SIGALRM));
	install(SIGALRM, SIG_DFL, 0);
}

static void check_segv(void)
{
	volatile int *p = (int *)16;
	volatile int r;

	install(SIGSEGV, jump_out, 0);
	if (sigsetjmp(jb, 1) == 0) {
		r = *p;
		CHECK("SIGSEGV handler of the ULP", 0, "read %d", r);
	} else {
		CHECK("SIGSEGV handler of the ULP", !blocked(SIGSEGV), "SIGSEGV left blocked");
	}
	install(SIGSEGV, SIG_DFL, 0);
}

static void check_alarm(void)
{
	time_t t0 = time(NULL);

	alarms = 0;
	install(SIGALRM, on_alarm, 0);
	CHECK("alarm returns 0 when none was set", alarm(1) == 0, "-");
	while (!alarms && time(NULL) < t0 + 20)
		pause();
	CHECK("alarm: own handler, once", alarms == 1, "alarms %d", (int)alarms);
	install(SIGALRM, SIG_DFL, 0);
}

static void check_sleep_interrupted(void)
{
	struct timespec ts = {10, 0}, rem;
	struct itimerval it = {{0, 0}, {0, 50000}};
	int r;

	alarms = 0;
	install(SIGALRM, on_alarm, 0);
	setitimer(ITIMER_REAL, &it, NULL);
	r = nanosleep(&ts, &rem);
	CHECK("nanosleep interrupted by own alarm (EINTR)",
	      r == -1 && errno == EINTR && alarms == 1, "r %d alarms %d", r, (int)alarms);
	install(SIGALRM, SIG_DFL, 0);
}

static void check_sigwait(void)
{
	sigset_t s;
	int sig = 0;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, NULL);
	raise(SIGUSR2);
	sigwait(&s, &sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	CHECK("sigwait takes a blocked pending signal", sig == SIGUSR2, "sig %d", sig);
}

static void check_sigsuspend(void)
{
	sigset_t s, none;
	struct itimerval it = {{0, 0}, {0, 30000}};

	alarms = 0;
	install(SIGALRM, on_alarm, 0);
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	sigprocmask(SIG_BLOCK, &s, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	sigemptyset(&none);
	sigsuspend(&none);
	CHECK("sigsuspend: handler ran, mask restored", alarms == 1 && blocked(SIGALRM),
	      "alarms %d blocked %d", (int)alarms, blocked(SIGALRM));
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	install(SIGALRM, SIG_DFL, 0);
}

/* pselect, ppoll and epoll_pwait with a mask that unblocks SIGALRM, blocked around them (GNU make
 * waits so for SIGCHLD): the signal ends the wait with EINTR, its handler runs, the old mask is
 * back. On a pipe that never turns readable. */
static void check_pwait(void)
{
	struct itimerval it = {{0, 0}, {0, 30000}};
	struct timespec ten = {10, 0};
	struct epoll_event ev = {EPOLLIN, {0}};
	sigset_t s, none;
	int p[2], ep, kind, r, e;
	static const char *const names[] = {"pselect", "ppoll", "epoll_pwait"};

	if (pipe(p) != 0 || (ep = epoll_create1(0)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)) {
		CHECK("pwait set-up", 0, "%s", strerror(errno));
		return;
	}
	install(SIGALRM, on_alarm, 0);
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	sigemptyset(&none);
	for (kind = 0; kind < 3; kind++) {
		struct pollfd pf = {p[0], POLLIN, 0};
		fd_set rd;

		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		alarms = 0;
		sigprocmask(SIG_BLOCK, &s, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		if (kind == 0)
			r = pselect(p[0] + 1, &rd, NULL, NULL, &ten, &none);
		else if (kind == 1)
			r = ppoll(&pf, 1, &ten, &none);
		else
			r = epoll_pwait(ep, &ev, 1, 10000, &none);
		e = errno;
		CHECK(names[kind], r == -1 && e == EINTR && alarms == 1 && blocked(SIGALRM),
		      "%s with SIGALRM unblocked: %d (%s), alarms %d, blocked after %d",
		      names[kind], r, strerror(e), (int)alarms, blocked(SIGALRM));
		sigprocmask(SIG_UNBLOCK, &s, NULL);
	}
	install(SIGALRM, SIG_DFL, 0);
	close(p[0]);
	close(p[1]);
	close(ep);
}

static void check_timer(void)
{
	struct sigevent sev;
	struct sigaction sa;
	struct itimerspec its = {{0, 0}, {0, 20000000}};
	timer_t t;
	time_t t0 = time(NULL);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 1;
	sev.sigev_value.sival_int = 4242 + rank;
	hits = 0;
	got_value = 0;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
		CHECK("timer_create", 0, "%s", strerror(errno));
		return;
	}
	timer_settime(t, 0, &its, NULL);
	while (!hits && time(NULL) < t0 + 20)
		pause();
	timer_delete(t);
	CHECK("timer_create: own handler, own value",
	      got_value == 4242 + rank && got_code == SI_TIMER, "value %ld code %d", got_value,
	      got_code);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "all";
	const char *r = getenv("ULP_RANK") ? getenv("ULP_RANK") : getenv("PMI_RANK");

	rank = r ? atoi(r) : 0;
	if (!strcmp(m, "all") || !strcmp(m, "only")) {
		static const struct {
			const char *name;
			void (*fn)(void);
		} checks[] = {{"handler", check_handler},
			      {"ignore", check_ignore},
			      {"block", check_block},
			      {"flags", check_mask_in_handler},
			      {"altstack", check_altstack},
			      {"sigwait", check_sigwait},
			      {"segv", check_segv},
			      {"alarm", check_alarm},
			      {"sleep", check_sleep_interrupted},
			      {"sigsuspend", check_sigsuspend},
			      {"pwait", check_pwait},
			      {"timer", check_timer},
			      {"longjmp", check_longjmp}};
		unsigned i;
		int a;

		for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
			int run = !strcmp(m, "all");

			for (a = 2; a < argc; a++)
				run |= !strcmp(argv[a], checks[i].name);
			if (run)
				checks[i].fn();
		}
		return 0;
	}
	if (!strcmp(m, "pipe")) {
		int p[2], victim = argc > 2 ? atoi(argv[2]) : 0;

		if (rank == victim) {
			if (pipe(p))
				return 2;
			close(p[0]);
			write(p[1], "x", 1);
			printf("survived SIGPIPE\n");
			return 3;
		}
		usleep(200000);
		printf("rank %d finished\n", rank);
		return 0;
	}
	if (!strcmp(m, "usr1")) {
		sigset_t usr1, none;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigemptyset(&none);
		install(SIGUSR1, count, 0);
		sigprocmask(SIG_BLOCK, &usr1, NULL); /* as in onterm */
		printf("waiting\n");
		fflush(stdout);
		while (!hits)
			sigsuspend(&none);
		printf("rank %d got SIGUSR1\n", rank);
		return 0;
	}
	if (!strcmp(m, "onterm")) {
		sigset_t both, none;

		/* Blocked until sigsuspend: a signal that came between the test of hits and
		 * pause() would leave the program in pause() for good (a process's race too). */
		sigemptyset(&both);
		sigaddset(&both, SIGTERM);
		sigaddset(&both, SIGINT);
		sigemptyset(&none);
		if (argc < 4 || atoi(argv[3]) != rank) {
			install(SIGTERM, count, 0);
			install(SIGINT, count, 0);
		}
		sigprocmask(SIG_BLOCK, &both, NULL);
		printf("waiting\n");
		fflush(stdout);
		while (!hits)
			sigsuspend(&none);
		usleep(300000); /* a second delivery of the one signal would show here */
		printf("rank %d: handler ran for SIG%s, %d time(s)\n", rank, sigabbrev_np(last_sig),
		       (int)hits);
		return argc > 2 ? atoi(argv[2]) : 0;
	}
	if (!strcmp(m, "ignore")) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		printf("waiting\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(m, "term")) {
		printf("waiting\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	fprintf(stderr, "sigs: unknown mode %s\n", m);
	return 2;
}
