/* SPDX-License-Identifier: MIT */
/*
 * Whether an execve of a program would change the caller's credentials, which only the kernel's
 * execve grants: a set-user-ID bit naming another user, a set-group-ID bit (with group execute)
 * naming another group, or file capabilities for a caller that is not root; none of them on a
 * nosuid mount or with no_new_privs. Such a program cannot be a ULP (it would run with the
 * task's credentials: before 28 Nov a set-user-ID nobody program as a ULP of root stayed root),
 * so it runs as a process: the launcher's rank (launch/fallback.c), a ULP's execve of it
 * (libulp/kernel/exec.c). One rule for both. Host code: it uses libc.
 */
#ifndef ULP_SETID_H
#define ULP_SETID_H

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

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
