/* SPDX-License-Identifier: MIT */
/*
 * The ELF loader: puts an unmodified position-independent program (and its ELF interpreter) into
 * ranges of a partition and builds its initial stack, the way execve would. It maps and writes
 * memory only; running the program is the caller's job (ulp_arch_enter_program(entry, sp)).
 * Link with libulp-loader.a and -lelf.
 */
#ifndef ULP_LOADER_H
#define ULP_LOADER_H

#include <stddef.h>
#include <stdint.h>

struct ulp_load_req {
	const char *path;     /* program file */
	const char *execfn;   /* AT_EXECFN, the name it was asked for by (NULL: path) */
	char *const *argv;    /* argv[0] as the user gave it; NULL or empty: argv = { "" } */
	char *const *envp;    /* may be NULL */
	uintptr_t image_base; /* page-aligned: the program's load bias (ET_DYN vaddr 0 maps here) */
	uintptr_t image_limit; /* program image must end below this (brk heap grows from its end) */
	uintptr_t interp_base; /* where PT_INTERP (ld.so) goes, page-aligned */
	uintptr_t interp_limit;
	uintptr_t stack_lo, stack_hi; /* stack mapping [stack_lo, stack_hi); the loader maps it RW
				       * and puts a PROT_NONE guard page at stack_lo */
	const uint64_t (
	    *extra_auxv)[2]; /* extra (type, value) auxv pairs appended before AT_NULL */
	size_t n_extra_auxv;
};

struct ulp_image {
	uintptr_t entry; /* where execution starts: interpreter entry for a dynamic PIE, else
			  * program entry */
	uintptr_t sp;	 /* initial stack pointer, pointing at argc */
	uintptr_t prog_entry, load_bias, phdr, phnum, interp_bias; /* interp_bias 0 when none */
	uintptr_t brk_start;  /* page-aligned end of the program image: the brk heap starts here */
	int is_static;	      /* 1: no PT_INTERP */
	uintptr_t interp_end; /* page-aligned end of the interpreter image (0 when none) */
	uintptr_t random;     /* address of the 16 AT_RANDOM bytes on the stack */
};

/*
 * Load path into the given ranges (which the caller has reserved PROT_NONE|MAP_NORESERVE as part
 * of a larger region). Returns 0 or -errno and writes "PATH: reason" into err (always
 * NUL-terminated when errlen > 0; err may be NULL when errlen is 0). On failure every range the
 * loader touched is put back to PROT_NONE (mmap MAP_FIXED|MAP_NORESERVE PROT_NONE): nothing
 * outside the ranges is touched and nothing leaks (fds closed, libelf handles ended).
 *   -ENOENT, -EACCES, ... the program or interpreter file cannot be opened (strerror reason)
 *   -EACCES   directory, not a regular file, no execute permission
 *   -ENOEXEC  not an ELF program this loader runs (empty, wrong class/byte order/machine,
 *             ET_EXEC/ET_REL/ET_CORE, truncated or corrupt headers or segments, no PT_LOAD)
 *   -ENOMEM   the image or the interpreter does not fit its range, or a mapping failed
 *   -E2BIG    arguments and environment take more than a quarter of the stack
 *   -EINVAL   the request itself is malformed (unaligned or overlapping ranges, ...)
 */
int ulp_load(const struct ulp_load_req *req, struct ulp_image *out, char *err, size_t errlen);

/*
 * ulp_load in two steps, for execve in place: prepare does every check ulp_load does that does not
 * need the ranges mapped (the files are opened and kept open, the strings' room on the stack is
 * counted), touching no memory of the ranges; commit maps and builds (it fails only where a mapping
 * or a read fails). The strings and arrays req points to must stay valid until commit or abort;
 * either frees the preparation.
 */
struct ulp_load_prep;
int ulp_load_prepare(const struct ulp_load_req *req, struct ulp_load_prep **out, char *err,
		     size_t errlen);
int ulp_load_commit(struct ulp_load_prep *p, struct ulp_image *out, char *err, size_t errlen);
void ulp_load_abort(struct ulp_load_prep *p);

/* Release everything ulp_load mapped in these ranges (back to PROT_NONE). */
void ulp_unload(const struct ulp_load_req *req);

#endif
