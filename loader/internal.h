/* SPDX-License-Identifier: MIT */
/* What the loader's files share. Not installed; users include loader.h only. */
#ifndef ULP_LOADER_INTERNAL_H
#define ULP_LOADER_INTERNAL_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "loader.h"

/* Where a message goes and what it is about: "PATH: [interpreter INTERP: ]reason". */
struct ulp_ld_err {
	char *buf;
	size_t len;
	const char *path;
	const char *interp; /* non-NULL while the interpreter is being checked or mapped */
};

/* Format the reason into e, return code (a negative errno) so callers can `return ulp_ld_fail()`.
 */
int ulp_ld_fail(const struct ulp_ld_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An opened and fully validated ELF file. */
struct ulp_elf {
	const char *path;
	int fd;
	Elf *elf;
	off_t size; /* file size */
	GElf_Ehdr eh;
	GElf_Phdr *ph; /* all program headers */
	size_t phnum;
	char *interp;  /* PT_INTERP path, or NULL */
	uint64_t span; /* page-aligned end of the highest PT_LOAD: bytes needed from vaddr 0 */
	uint64_t phdr_vaddr; /* where the program headers are in memory (unbiased), 0 if not */
};

/* Open path and validate it as a program this loader runs. On failure f holds nothing. */
int ulp_elf_open(struct ulp_elf *f, const char *path, const struct ulp_ld_err *e);
/* Close fd, end libelf handle, free headers. Safe to repeat after ulp_elf_open, even a failed one.
 */
void ulp_elf_close(struct ulp_elf *f);

/* Map f's PT_LOAD segments at bias (file-backed, zeroed bss). The caller resets on failure. */
int ulp_map_segments(const struct ulp_elf *f, uintptr_t bias, const struct ulp_ld_err *e);
/* Map [lo, hi) read-write with a PROT_NONE guard page at lo. */
int ulp_map_stack(uintptr_t lo, uintptr_t hi, const struct ulp_ld_err *e);
/* Put [lo, hi) back to a PROT_NONE, MAP_NORESERVE reservation. */
void ulp_map_reset(uintptr_t lo, uintptr_t hi);

/* What the initial stack says about the loaded program. */
struct ulp_stack_in {
	const struct ulp_load_req *req;
	uintptr_t phdr, phnum, entry, base;
};
/* Whether argv, envp and the path fit the stack of req (-E2BIG otherwise): before any mapping. */
int ulp_stack_check(const struct ulp_load_req *req, const struct ulp_ld_err *e);
/* Build the process start-up stack in the mapped stack of req; returns sp (at argc) in *sp. */
int ulp_stack_build(const struct ulp_stack_in *in, uintptr_t *sp, uintptr_t *random,
		    const struct ulp_ld_err *e);

static inline size_t ulp_ld_pagesize(void)
{
	return (size_t)getpagesize(); /* glibc: a load of the AT_PAGESZ it was started with */
}

static inline uint64_t ulp_ld_page_down(uint64_t v)
{
	return v & ~(uint64_t)(ulp_ld_pagesize() - 1);
}

static inline uint64_t ulp_ld_page_up(uint64_t v)
{
	return ulp_ld_page_down(v + ulp_ld_pagesize() - 1);
}

#endif
