/* SPDX-License-Identifier: MIT */
/*
 * The executable segments of the objects a guest has loaded (program, libc, ld.so, vDSO), from
 * dl_iterate_phdr: a pc that a signal handler sees interrupted must lie in one of them, as in a
 * process, never in the runtime's code or a trampoline (threads.c, fastcall_mt.c).
 */
#ifndef ULP_TESTS_CODESEGS_H
#define ULP_TESTS_CODESEGS_H

#include <link.h>
#include <stdint.h>

#define CODE_SEGS_MAX 64

struct code_segs {
	uintptr_t seg[CODE_SEGS_MAX][2];
	int n;
};

static int code_segs_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_segs *s = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && s->n < CODE_SEGS_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			s->seg[s->n][0] = info->dlpi_addr + ph->p_vaddr;
			s->seg[s->n][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			s->n++;
		}
	}
	return 0;
}

static inline void code_segs_load(struct code_segs *s)
{
	dl_iterate_phdr(code_segs_add, s);
}

/* Only loads: callable from a signal handler. */
static inline int code_segs_hold(const struct code_segs *s, uintptr_t pc)
{
	for (int i = 0; i < s->n; i++)
		if (pc >= s->seg[i][0] && pc < s->seg[i][1])
			return 1;
	return 0;
}

#endif
