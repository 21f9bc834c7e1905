/* SPDX-License-Identifier: MIT */
/*
 * What an execve asks of the file it runs, for the launcher's programs (launch/cmdline.c,
 * launch/fallback.c) and a ULP's execve (libulp/kernel/exec.c): one rule for both. Host code: it
 * uses libc, with the credentials of the task (a ULP that changes its own becomes a process).
 */
#ifndef ULP_EXECFILE_H
#define ULP_EXECFILE_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* 0 when path is a regular file its caller may execute, as the kernel's open for exec asks,
 * else -errno (EACCES for a directory, a device, no execute bit, a noexec mount). The loader asks
 * the same of an ELF file; a script's own file is asked here (before 28 Nov one without an
 * execute bit ran, from a ULP's execve and as the launcher's program). */
static inline int ulp_exec_allowed(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0 ? -errno : 0;
}

/*
 * Whether an execve of path would change the caller's credentials, which only the kernel's
 * execve grants: a set-user-ID bit naming another user, a set-group-ID bit (with group execute)
 * naming another group, or file capabilities for a caller that is not root; none of them on a
 * nosuid mount or with no_new_privs (nnp). Such a program cannot be a ULP (it would run with the
 * task's credentials: before 28 Nov a set-user-ID nobody program as a ULP of root stayed root),
 * so it runs as a process: the launcher's rank (launch/fallback.c), a ULP's execve of it
 * (libulp/kernel/exec.c).
 */
static inline int ulp_exec_sets_ids(const char *path, int nnp)
{
	struct stat st;
	struct statvfs vfs;
	int ids;

	if (nnp || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	ids =
	    ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st.st_gid != getegid()) ||
	    (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0);
	if (ids && statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		ids = 0;
	return ids;
}

#endif
