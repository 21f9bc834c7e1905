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

/* Why a program built with one of those sanitizers cannot be a ULP, after "built with NAME, " in
 * the launcher's warning and a ULP execve's note (launch/job.c, libulp/kernel/exec.c). */
#define ULP_EXEC_SHADOW_WHY                                                                        \
	"whose shadow memory is a fixed range of the address space that the partitions overlap"

/* The sanitizer whose initializer a string table of size bytes at offset off of fd names, else
 * NULL (ulp_exec_sanitizer). */
static inline const char *ulp_exec_san_in(int fd, uint64_t off, uint64_t size)
{
	static const char *const init[][2] = {{"__asan_init", "AddressSanitizer"},
					      {"__tsan_init", "ThreadSanitizer"},
					      {"__msan_init", "MemorySanitizer"},
					      {"__hwasan_init", "HWAddressSanitizer"}};
	const char *found = NULL;
	char *str;
	int i;

	if (!off || !size || size > (64u << 20) || !(str = malloc(size)))
		return NULL;
	if (pread(fd, str, size, (off_t)off) == (ssize_t)size)
		for (i = 0; i < 4 && !found; i++)
			if (memmem(str, size, init[i][0], strlen(init[i][0])))
				found = init[i][1];
	free(str);
	return found;
}

/*
 * Which sanitizer with a shadow memory path was built with (AddressSanitizer, ThreadSanitizer,
 * MemorySanitizer, HWAddressSanitizer: its instrumented code calls __asan_init and the like, named
 * in the dynamic string table when the runtime is a shared library or exports its symbols, as
 * clang's static one does, and in the symbol table of an unstripped program linked with gcc's
 * -static-libasan), else NULL. Their shadow is a fixed range of the address space (ASan's
 * [0x7fff8000, 0x10007fff8000) on x86_64) that the partitions overlap and a ULP may not map
 * outside its own: as a ULP such a program stopped in its first instructions ("Shadow memory
 * range interleaves with an existing memory mapping. ASan cannot proceed correctly"), so it runs
 * as a process instead (found 28 Nov).
 */
static inline const char *ulp_exec_sanitizer(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	Elf64_Dyn dyn[256];
	Elf64_Shdr sh[256];
	uint64_t strtab = 0, strsz = 0, off = 0;
	const char *found = NULL;
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
	n = dynph < 0 ? 0
		      : pread(fd, dyn,
			      ph[dynph].p_filesz < sizeof(dyn) ? ph[dynph].p_filesz : sizeof(dyn),
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
	found = ulp_exec_san_in(fd, off, strsz);
	/* else the symbol table's names, if the program has one (not stripped) */
	if (!found && eh.e_shentsize == sizeof(sh[0]) && eh.e_shnum <= 256 &&
	    pread(fd, sh, eh.e_shnum * sizeof(sh[0]), (off_t)eh.e_shoff) ==
		(ssize_t)(eh.e_shnum * sizeof(sh[0])))
		for (i = 0; i < eh.e_shnum && !found; i++)
			if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < eh.e_shnum)
				found = ulp_exec_san_in(fd, sh[sh[i].sh_link].sh_offset,
							sh[sh[i].sh_link].sh_size);
out:
	close(fd);
	return found;
}

#endif
