/* SPDX-License-Identifier: MIT */
/*
 * A shared futex across kernel processes: a word in a MAP_SHARED file. "wait FILE" waits (no
 * FUTEX_PRIVATE_FLAG) until the word becomes 1; "wake FILE" sets it to 1 and wakes. One side runs
 * as a ULP, the other as a process (tests/integ/threads.sh), both ways round. "semfork N": N
 * round trips through two process-shared semaphores with a child process of its own (fork),
 * which waits and posts in the kernel while a ULP's waits are the runtime's: "semfork ok N".
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int semfork(long n)
{
	sem_t *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long i, got = 0;
	pid_t pid;
	int st;

	if (s == MAP_FAILED || sem_init(&s[0], 1, 0) || sem_init(&s[1], 1, 0)) {
		perror("semfork");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		for (i = 0; i < n; i++)
			if (sem_wait(&s[0]) || sem_post(&s[1]))
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < n; i++) {
		if (sem_post(&s[0]) || sem_wait(&s[1])) {
			perror("sem");
			return 1;
		}
		got++;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "semfork: the child failed\n");
		return 1;
	}
	printf("semfork ok %ld\n", got);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec ts = {30, 0};
	uint32_t *w;
	long r;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "semfork"))
		return semfork(atol(argv[2]));
	if (argc != 3) {
		fprintf(stderr, "usage: futex_shared wait|wake FILE | semfork N\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[2]);
		return 2;
	}
	w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	if (!strcmp(argv[1], "wake")) {
		__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
		r = syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
		printf("woke %ld\n", r);
		return 0;
	}
	/* "ready" tells the driver we are about to wait: the wake may come before or after. */
	printf("ready\n");
	fflush(stdout);
	while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == 0) {
		r = syscall(SYS_futex, w, FUTEX_WAIT, 0, &ts, NULL, 0);
		if (r != 0 && __atomic_load_n(w, __ATOMIC_SEQ_CST) == 0) {
			perror("futex wait");
			return 1;
		}
	}
	printf("got 1\n");
	return 0;
}
