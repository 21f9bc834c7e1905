/*
 * Threads of one program fork and wait for their own children at once (tests/integ/process.sh):
 * each of 4 threads makes 400 children, alternately waited for with waitpid and waitid(P_PID),
 * and checks that its own child is reported with its exit status; then wait() says ECHILD.
 * Prints one line per thread and the final wait's, the same as a process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 4
#define NFORKS 400

/* One child of thread id, waited for: 0 when it was reported with its status. */
static int fork_wait(long id, int i)
{
	int want = (int)(id * 50 + i % 50), st = 0;
	siginfo_t si;
	pid_t p = fork();

	if (p < 0) {
		fprintf(stderr, "thread %ld fork %d: %s\n", id, i, strerror(errno));
		return 1;
	}
	if (p == 0)
		_exit(want);
	if (i % 2) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)p, &si, WEXITED) != 0 || si.si_pid != p ||
		    si.si_code != CLD_EXITED || si.si_status != want) {
			fprintf(stderr, "thread %ld waitid %d: %s\n", id, i, strerror(errno));
			return 1;
		}
		return 0;
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		fprintf(stderr, "thread %ld waitpid %d: %s\n", id, i, strerror(errno));
		return 1;
	}
	return 0;
}

static void *run(void *arg)
{
	long id = (long)arg, bad = 0;
	int i;

	for (i = 0; i < NFORKS; i++)
		bad += fork_wait(id, i);
	return (void *)bad;
}

int main(void)
{
	pthread_t t[NTHREADS];
	long i, bad = 0;
	void *v;
	int st, r;

	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, run, (void *)i) != 0)
			return 2;
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &v);
		printf("thread %ld: %ld of %d children not reported\n", i, (long)v, NFORKS);
		bad += (long)v;
	}
	errno = 0;
	r = (int)wait(&st);
	printf("wait after: %d %s\n", r, strerror(errno));
	return bad != 0;
}
