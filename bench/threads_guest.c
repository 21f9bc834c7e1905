/* SPDX-License-Identifier: MIT */
/*
 * Thread costs as a program sees them; bench/threads.sh runs it as a process and as a ULP.
 *   threads_guest create N    pthread_create + pthread_join of an empty thread
 *   threads_guest pingpong N  two threads passing a token through a mutex and a condition
 *                             variable (one round trip = two hand-overs)
 *   threads_guest killstorm N pthread_kill(SIGUSR2) at three threads that loop sched_yield and
 *                             gettid, one of them joined and made anew after every 300 kills
 *                             (tests/integ/progs/threads.c "killstorm"): ns per pthread_kill
 *   threads_guest semfork N   a round trip through two process-shared semaphores (MAP_SHARED)
 *                             with a child process of its own (fork), for every N/11 of them
 * Prints "<median ns> <min ns>" per operation over 11 samples of N/11 operations.
 */
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES 11

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *empty(void *a)
{
	return a;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;
static long rounds;

static void *player(void *a)
{
	int me = (int)(long)a;

	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&m);
		while (turn != me)
			pthread_cond_wait(&cv, &m);
		turn = !me;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

#define STORM_THREADS 3
static _Atomic int storm_stop[STORM_THREADS];

static void on_storm(int sig)
{
	(void)syscall(SYS_gettid); /* a handler that makes a call, as killstorm's does */
}

static void *storm_fn(void *a)
{
	while (!atomic_load(&storm_stop[(long)a])) {
		sched_yield();
		(void)syscall(SYS_gettid);
	}
	return a;
}

/* Thread i ends and another takes its place: exit and start among the kicks. */
static void storm_turnover(pthread_t *st, long i)
{
	atomic_store(&storm_stop[i], 1);
	pthread_join(st[i], NULL);
	atomic_store(&storm_stop[i], 0);
	pthread_create(&st[i], NULL, storm_fn, (void *)i);
}

/* semfork: per round trips between this program and a child process of its own (fork), through
 * two process-shared semaphores in MAP_SHARED memory. 0, or -1 when a call failed. */
static int semfork(long per)
{
	sem_t *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int st;

	if (s == MAP_FAILED || sem_init(&s[0], 1, 0) || sem_init(&s[1], 1, 0))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (long i = 0; i < per; i++)
			if (sem_wait(&s[0]) || sem_post(&s[1]))
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < per; i++)
		if (sem_post(&s[0]) || sem_wait(&s[1]))
			return -1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	munmap(s, 4096);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 2000, per = n / SAMPLES > 0 ? n / SAMPLES : 1;
	double v[SAMPLES], t0;
	pthread_t t, u;
	int s;

	pthread_t st[STORM_THREADS];
	int storm = argc >= 2 && !strcmp(argv[1], "killstorm");

	if (argc < 2 || (strcmp(argv[1], "create") && strcmp(argv[1], "pingpong") &&
			 strcmp(argv[1], "semfork") && !storm)) {
		fprintf(stderr, "usage: threads_guest create|pingpong|killstorm|semfork [N]\n");
		return 2;
	}
	for (long i = 0; i < 50; i++) { /* warm up: glibc's stack cache, the runtime's free lists */
		pthread_create(&t, NULL, empty, NULL);
		pthread_join(t, NULL);
	}
	if (storm) {
		signal(SIGUSR2, on_storm);
		for (s = 0; s < STORM_THREADS; s++)
			pthread_create(&st[s], NULL, storm_fn, (void *)(long)s);
	}
	for (s = 0; s < SAMPLES; s++) {
		t0 = now_ns();
		if (storm) {
			for (long i = 0; i < per; i++) {
				if (pthread_kill(st[i % STORM_THREADS], SIGUSR2)) {
					fprintf(stderr, "threads_guest: pthread_kill failed\n");
					return 1;
				}
				if (i % 300 == 299)
					storm_turnover(st, i / 300 % STORM_THREADS);
			}
		} else if (!strcmp(argv[1], "semfork")) {
			if (semfork(per)) {
				fprintf(stderr, "threads_guest: semfork failed\n");
				return 1;
			}
		} else if (!strcmp(argv[1], "create")) {
			for (long i = 0; i < per; i++) {
				if (pthread_create(&t, NULL, empty, NULL)) {
					fprintf(stderr, "threads_guest: pthread_create failed\n");
					return 1;
				}
				pthread_join(t, NULL);
			}
		} else {
			rounds = per;
			turn = 0;
			pthread_create(&t, NULL, player, (void *)0);
			pthread_create(&u, NULL, player, (void *)1);
			pthread_join(t, NULL);
			pthread_join(u, NULL);
		}
		v[s] = (now_ns() - t0) / per;
	}
	for (s = 0; storm && s < STORM_THREADS; s++) {
		atomic_store(&storm_stop[s], 1);
		pthread_join(st[s], NULL);
	}
	qsort(v, SAMPLES, sizeof(v[0]), cmp);
	printf("%.1f %.1f\n", v[SAMPLES / 2], v[0]);
	return 0;
}
