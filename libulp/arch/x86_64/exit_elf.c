/* SPDX-License-Identifier: MIT */
/*
 * The smallest program that exits at once (exit(0)), as an ELF image: a ULP's placeholder process
 * execs it to end (libulp/kernel/ident.c). The exec drops the address space it shared with the
 * ULPs, so that its exit walks two mappings, not every ULP's.
 *
 *   0    ELF header (64 bytes): ET_EXEC, EM_X86_64, entry 0x400078
 *   64   one PT_LOAD program header (56 bytes): the file's first 129 bytes at 0x400000, r-x
 *   120  mov $60,%eax; xor %edi,%edi; syscall
 */
#include "arch.h"

#include <elf.h>
#include <string.h>

#define BASE 0x400000
#define CODE 120

static const unsigned char code[] = {0xb8, 60, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05};

size_t ulp_arch_exit_elf(unsigned char *buf, size_t len)
{
	Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
	Elf64_Phdr *p = (Elf64_Phdr *)(buf + sizeof(*e));
	size_t n = CODE + sizeof(code);

	_Static_assert(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) == CODE, "code after the headers");
	if (len < n)
		return 0;
	memset(buf, 0, n);
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_EXEC;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_entry = BASE + CODE;
	e->e_phoff = sizeof(*e);
	e->e_ehsize = sizeof(*e);
	e->e_phentsize = sizeof(*p);
	e->e_phnum = 1;
	p->p_type = PT_LOAD;
	p->p_flags = PF_R | PF_X;
	p->p_vaddr = p->p_paddr = BASE;
	p->p_filesz = p->p_memsz = n;
	p->p_align = 4096;
	memcpy(buf + CODE, code, sizeof(code));
	return n;
}
