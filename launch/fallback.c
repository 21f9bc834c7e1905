/* SPDX-License-Identifier: MIT */
/* Ranks run as ordinary processes when their program cannot be a ULP (fallback.h). */
#include "fallback.h"
#include "execfile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int fallback_needed(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_EXEC)
		rc = FALLBACK_ET_EXEC;
	close(fd);
	if (!rc && ulp_exec_sets_ids(path, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1))
		rc = FALLBACK_SETID;
	if (!rc && ulp_exec_sanitizer(path))
		rc = FALLBACK_SANITIZER;
	return rc;
}

struct child_arg {
	const struct fallback_spec *s;
	cpu_set_t cpus;
	pid_t parent;
	int err; /* set by the child when it could not exec; read by the parent after the vfork */
};

/*
 * The child, on its own stack in our memory (CLONE_VM | CLONE_VFORK: no copy of the launcher's
 * page tables, which hold every ULP's partition, and we stay suspended until it has exec'd). It
 * has its own descriptor table and signal dispositions, so what it changes there is its own.
 */
static int child(void *p)
{
	struct child_arg *a = p;
	const struct fallback_spec *s = a->s;
	struct sigaction dfl;
	sigset_t none;
	int i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != a->parent)
		_exit(137); /* the launcher is already gone */
	for (i = 0; i < 3; i++) {
		if (s->stdio[i] < 0)
			continue;
		if (s->stdio[i] == i ? fcntl(i, F_SETFD, 0) != 0 : dup2(s->stdio[i], i) < 0)
			goto fail;
	}
	if (s->keep_fd >= 0 && fcntl(s->keep_fd, F_SETFD, 0) != 0)
		goto fail;
	/* The launcher reads SIGINT/SIGTERM/SIGHUP from a signalfd (blocked) and may ignore
	 * SIGPIPE; a fresh process has neither. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (i = 1; i < NSIG; i++)
		sigaction(i, &dfl, NULL); /* SIGKILL/SIGSTOP and the reserved ones just fail */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (s->cpus && sched_setaffinity(0, sizeof(a->cpus), &a->cpus) != 0)
		goto fail;
	execve(s->path, s->argv, s->envp);
fail:
	a->err = errno ? errno : EINVAL;
	_exit(127);
}

pid_t fallback_start(const struct fallback_spec *s, int *pidfd)
{
	const size_t stack_size = 64 * 1024;
	struct child_arg a = {.s = s, .parent = getpid()};
	char *stack = malloc(stack_size);
	unsigned i;
	pid_t pid;

	*pidfd = -1;
	if (!stack)
		return -ENOMEM;
	CPU_ZERO(&a.cpus);
	for (i = 0; s->cpus && i < s->ncpus; i++)
		if (s->cpus[i] >= 0 && s->cpus[i] < CPU_SETSIZE)
			CPU_SET(s->cpus[i], &a.cpus);
	pid = clone(child, stack + stack_size, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a,
		    pidfd);
	free(stack);
	if (pid < 0)
		return -errno;
	if (a.err) {
		waitpid(pid, NULL, 0);
		close(*pidfd);
		*pidfd = -1;
		return -a.err;
	}
	return pid;
}
