/* SPDX-License-Identifier: MIT */
/*
 * What an execve asks of the file it runs, for the launcher's programs (launch/cmdline.c,
 * launch/fallback.c) and a ULP's execve (libulp/kernel/exec.c): one rule for both. Host code: it
 * uses libc, with the credentials of the task (a ULP that changes its own becomes a process).
 */
#ifndef ULP_EXECFILE_H
#define ULP_EXECFILE_H

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * Which sanitizer with a shadow memory path was built with (AddressSanitizer, ThreadSanitizer,
 * MemorySanitizer, HWAddressSanitizer: its instrumented code calls __asan_init and the like, named
 * in the dynamic string table, whether the runtime is libasan.so or linked in), else NULL. Their
 * shadow is a fixed range of the address space (ASan's [0x7fff8000, 0x10007fff8000) on x86_64)
 * that the partitions overlap and a ULP may not map outside its own: as a ULP such a program
 * stopped in its first instructions ("Shadow memory range interleaves with an existing memory
 * mapping. ASan cannot proceed correctly"), so it runs as a process instead (found 28 Nov).
 */
static inline const char *ulp_exec_sanitizer(const char *path)
{
	static const char *const init[][2] = {{"__asan_init", "AddressSanitizer"},
					      {"__tsan_init", "ThreadSanitizer"},
					      {"__msan_init", "MemorySanitizer"},
					      {"__hwasan_init", "HWAddressSanitizer"}};
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	Elf64_Dyn dyn[256];
	uint64_t strtab = 0, strsz = 0, off = 0;
	const char *found = NULL;
	char *str;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), i, d, dynph = -1;

	if (fd < 0)
		return NULL;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph[0]) ||
	    eh.e_phnum > 64 ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) !=
		(ssize_t)(eh.e_phnum * sizeof(ph[0])))
		goto out;
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dynph = i;
	if (dynph < 0)
		goto out;
	n = pread(fd, dyn, ph[dynph].p_filesz < sizeof(dyn) ? ph[dynph].p_filesz : sizeof(dyn),
		  (off_t)ph[dynph].p_offset);
	for (d = 0; n > 0 && d < (int)(n / (ssize_t)sizeof(dyn[0])) && dyn[d].d_tag != DT_NULL;
	     d++) {
		if (dyn[d].d_tag == DT_STRTAB)
			strtab = dyn[d].d_un.d_ptr;
		else if (dyn[d].d_tag == DT_STRSZ)
			strsz = dyn[d].d_un.d_val;
	}
	for (i = 0; i < eh.e_phnum && strtab; i++) /* its address to its place in the file */
		if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr &&
		    strtab < ph[i].p_vaddr + ph[i].p_filesz)
			off = strtab - ph[i].p_vaddr + ph[i].p_offset;
	if (!off || !strsz || strsz > (64u << 20) || !(str = malloc(strsz)))
		goto out;
	if (pread(fd, str, strsz, (off_t)off) == (ssize_t)strsz)
		for (i = 0; i < 4 && !found; i++)
			if (memmem(str, strsz, init[i][0], strlen(init[i][0])))
				found = init[i][1];
	free(str);
out:
	close(fd);
	return found;
}

#endif
