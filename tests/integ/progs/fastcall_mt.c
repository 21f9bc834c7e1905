/* SPDX-License-Identifier: MIT */
/*
 * fastcall_mt: the fast path in a ULP with several threads (docs/syscalls.md, "Fast path"), whose
 * libc calls through its cancellable sites, first used once a second thread exists. Run as a
 * process, as a ULP with ULP_FASTCALL=0 and =1: every line but the "sites" one must be the same.
 *   - calls: socket, close (twice: the second gives EBADF), getpid, openat, write, 2000 times;
 *   - a signal whose handler has no SA_RESTART, sent to a thread parked in a write to a full
 *     pipe: the write gives EINTR, the handler ran before it returned and saw the thread
 *     interrupted in a loaded object's code (not the runtime's, not a trampoline);
 *   - pthread_cancel of a thread parked in such a write: its cleanup handler runs (glibc unwinds
 *     from the cancellation signal's handler) and the join gives PTHREAD_CANCELED;
 *   - sites: whether libc's write and read sites are rewritten (the second is the cancellable
 *     one; read's is `xor %eax,%eax; syscall` after an instruction that sets up the call, which
 *     becomes a 2-byte jmp to padding). read is called once before the second thread exists,
 *     so that its first site is rewritten first (with the ULP alone).
 */
#define _GNU_SOURCE
#include "codesegs.h"
#include "sitestate.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define ROUNDS 2000
#define SIGNALS 20

static struct code_segs segs;
static int full[2]; /* a pipe kept full: a write to it parks */
static _Atomic int handled, outside;
static pthread_mutex_t idle_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_c = PTHREAD_COND_INITIALIZER;
static int idle_done;

static void on_usr1(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	if (!code_segs_hold(&segs, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]))
		outside++;
	handled++;
}

/* The second thread, from start to end: the ULP has two. */
static void *idle_fn(void *a)
{
	(void)a;
	pthread_mutex_lock(&idle_m);
	while (!idle_done)
		pthread_cond_wait(&idle_c, &idle_m);
	pthread_mutex_unlock(&idle_m);
	return NULL;
}

static void calls(void)
{
	int bad = 0, nul = open("/dev/null", O_WRONLY);
	pid_t pid = getpid();

	for (int i = 0; i < ROUNDS; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0), f;

		if (s < 0 || close(s) != 0 || close(s) != -1 || errno != EBADF)
			bad++;
		if (getpid() != pid)
			bad++;
		f = openat(AT_FDCWD, "/dev/null", O_RDONLY);
		if (f < 0 || close(f) != 0)
			bad++;
		if (write(nul, "x", 1) != 1)
			bad++;
	}
	close(nul);
	printf("calls: %d rounds, %d wrong\n", ROUNDS, bad);
}

struct parked {
	long ret;
	int err, seen;
	_Atomic int done;
};

static void *write_fn(void *a)
{
	struct parked *p = a;
	int before = handled;

	p->ret = write(full[1], "x", 1);
	p->err = errno;
	p->seen = handled - before;
	p->done = 1;
	return NULL;
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};

	nanosleep(&ts, NULL);
}

static void signal_parked(void)
{
	int ok = 0;

	for (int i = 0; i < SIGNALS; i++) {
		struct parked p = {0, 0, 0, 0};
		pthread_t t;

		pthread_create(&t, NULL, write_fn, &p);
		/* one that lands before the write only runs the handler: again until it returns */
		do {
			nap_ms(20);
			pthread_kill(t, SIGUSR1);
		} while (!p.done);
		pthread_join(t, NULL);
		if (p.ret == -1 && p.err == EINTR && p.seen >= 1)
			ok++;
		else if (getenv("FASTCALL_MT_DEBUG"))
			fprintf(stderr, "write gave %ld errno %d, handler ran %d times\n", p.ret,
				p.err, p.seen);
	}
	printf("signal in a parked write: %d of %d gave EINTR after the handler ran, %d handled "
	       "outside the program's code\n",
	       ok, SIGNALS, (int)outside);
}

static _Atomic int cleaned;

static void cleanup(void *a)
{
	(void)a;
	cleaned++;
}

static void *cancel_fn(void *a)
{
	(void)a;
	pthread_cleanup_push(cleanup, NULL);
	for (;;)
		write(full[1], "x", 1);
	pthread_cleanup_pop(0);
	return NULL;
}

static void cancel_parked(void)
{
	void *r;
	int ok = 0;

	for (int i = 0; i < 5; i++) {
		pthread_t t;
		int before = cleaned;

		pthread_create(&t, NULL, cancel_fn, NULL);
		nap_ms(20);
		pthread_cancel(t);
		pthread_join(t, &r);
		if (r == PTHREAD_CANCELED && cleaned == before + 1)
			ok++;
	}
	printf("cancel in a parked write: %d of 5 cancelled with their cleanup run\n", ok);
}

/* The first two syscall sites of f: rewritten or original (sitestate.h). */
static void sites_of(const char *name, const void *f)
{
	int n, at = 2, rewritten;

	printf("sites of %s:", name);
	for (n = 0; n < 2 && (at = site_next(f, at, 160, &rewritten)) >= 0; n++)
		printf(" %s", rewritten ? "rewritten" : "original");
	printf("\n");
}

static void sites(void)
{
	sites_of("write", (const void *)(uintptr_t)write);
	sites_of("read", (const void *)(uintptr_t)read);
}

/* read through a pipe, n times: the number that gave the byte written */
static int reads(int n)
{
	int p[2], good = 0;
	char c;

	if (pipe(p))
		return 0;
	for (int i = 0; i < n; i++)
		good += write(p[1], &(char){(char)('a' + i % 26)}, 1) == 1 && read(p[0], &c, 1) == 1 &&
			c == 'a' + i % 26;
	close(p[0]);
	close(p[1]);
	return good;
}

int main(void)
{
	struct sigaction sa;
	pthread_t idle;
	char buf[4096];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the write ends with EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	code_segs_load(&segs);
	if (pipe(full) != 0)
		return 1;
	fcntl(full[1], F_SETFL, O_NONBLOCK);
	memset(buf, 'f', sizeof(buf));
	while (write(full[1], buf, sizeof(buf)) > 0)
		;
	while (write(full[1], buf, 1) > 0)
		;
	fcntl(full[1], F_SETFL, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("reads alone: %d of 4\n", reads(4));
	pthread_create(&idle, NULL, idle_fn, NULL);
	printf("reads with a thread: %d of %d\n", reads(ROUNDS), ROUNDS);
	calls();
	signal_parked();
	cancel_parked();
	sites();
	pthread_mutex_lock(&idle_m);
	idle_done = 1;
	pthread_cond_signal(&idle_c);
	pthread_mutex_unlock(&idle_m);
	pthread_join(idle, NULL);
	return 0;
}
