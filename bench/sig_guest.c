/* SPDX-License-Identifier: MIT */
/*
 * Signals a program sends itself (bench/sig.sh): `sig_guest N` sigqueue()s N signals to its own
 * pid, each run by its handler before sigqueue returns, first SIGUSR1 (a standard signal), then
 * SIGRTMIN+1 (real-time: queued, each with its value), and prints "STD_NS RT_NS", the wall
 * nanoseconds per signal of each. Fails (exit 1) when a handler did not run once per signal or
 * saw another value than the one sent.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile long got, bad;

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_value.sival_int != (int)got)
		bad++;
	got++;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns per signal of n sigqueue(self, sig) */
static double run(int sig, int n)
{
	struct sigaction a = {0};
	union sigval v;
	double t0;
	int i;

	a.sa_sigaction = handler;
	a.sa_flags = SA_SIGINFO;
	sigaction(sig, &a, NULL);
	got = 0;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		v.sival_int = i;
		sigqueue(getpid(), sig, v);
	}
	return (now_ns() - t0) / n;
}

/* 0 when each of the n signals of sig ran its handler once, with its own value */
static int check(const char *name, int n)
{
	if (got == n && !bad)
		return 0;
	fprintf(stderr, "sig_guest: %s: %ld handlers, %ld bad values\n", name, got, bad);
	return 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double s, r;

	if (n < 1)
		return 2;
	s = run(SIGUSR1, n);
	if (check("SIGUSR1", n))
		return 1;
	r = run(SIGRTMIN + 1, n);
	if (check("SIGRTMIN+1", n))
		return 1;
	printf("%.0f %.0f\n", s, r);
	return 0;
}
