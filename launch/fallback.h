/* SPDX-License-Identifier: MIT */
/*
 * Ranks that cannot be ULPs: a non-PIE executable (ET_EXEC) must sit at the addresses it was
 * linked for, outside any partition, so the loader refuses it; a set-user-ID program must get
 * its credentials from the kernel's execve; an ASan program's shadow memory is a fixed range the
 * partitions overlap. Rather than sink a whole MPMD job,
 * the launcher runs such a rank as an ordinary child process with the rank's environment and
 * stdio, polls its pidfd next to the host's event fd, and applies the job's exit-status and abort
 * rules to it like to any rank.
 */
#ifndef ULP_LAUNCH_FALLBACK_H
#define ULP_LAUNCH_FALLBACK_H

#include <sys/types.h>

/* Why path cannot be a ULP: FALLBACK_ET_EXEC, an ELF executable of type ET_EXEC (not
 * position-independent); FALLBACK_SETID, a program whose execve would change the credentials
 * (libulp/execfile.h); FALLBACK_SANITIZER, one built with a sanitizer whose shadow memory is a
 * fixed range of the address space (AddressSanitizer...: ulp_exec_sanitizer); else 0 (other
 * problems are the loader's to report). */
#define FALLBACK_ET_EXEC 1
#define FALLBACK_SETID 2
#define FALLBACK_SANITIZER 3
int fallback_needed(const char *path);

struct fallback_spec {
	const char *path;
	char *const *argv;
	char *const *envp;
	int stdio[3];	 /* the child's 0, 1, 2 (-1: the launcher's own) */
	int keep_fd;	 /* a descriptor the child keeps open under its number (-1: none) */
	const int *cpus; /* affinity: any of these CPUs (NULL: no pinning) */
	unsigned ncpus;
};

/*
 * Start the process. It gets SIGKILL when the launcher dies (as PVAS tasks do), the signal mask
 * and dispositions of a fresh process, and no other descriptor of the launcher's (they are
 * close-on-exec). Returns its PID and a pidfd (close-on-exec, readable once it has ended) in
 * *pidfd, or -errno when it could not be started; the reason of a failed execve is returned too
 * (-ENOENT, -EACCES...), the child then never ran.
 */
pid_t fallback_start(const struct fallback_spec *s, int *pidfd);

#endif
