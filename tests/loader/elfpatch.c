/* SPDX-License-Identifier: MIT */
/*
 * Test-fixture tool: damage a copy of an ELF64 file in one precise way.
 *   elfpatch FILE ehdr machine|type|phoff|entry VALUE
 *   elfpatch FILE ident INDEX VALUE           e_ident[INDEX] = VALUE
 *   elfpatch FILE seg TYPE K offset|vaddr|filesz|memsz VALUE|+DELTA|-DELTA
 *                                             the K-th program header of p_type TYPE
 *   elfpatch FILE noload                      every PT_LOAD becomes PT_NULL
 *   elfpatch FILE interp PATH                 PT_INTERP now names PATH (appended to the file)
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;
static Elf64_Ehdr eh;

static void die(const char *what)
{
	fprintf(stderr, "elfpatch: %s\n", what);
	exit(1);
}

static void rw(int write, void *buf, size_t len, off_t off)
{
	ssize_t n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);

	if (n != (ssize_t)len)
		die(write ? "short write" : "short read");
}

static void phdr(int write, int i, Elf64_Phdr *p)
{
	rw(write, p, sizeof(*p), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(*p)));
}

static uint64_t apply(uint64_t old, const char *v)
{
	if (v[0] == '+')
		return old + strtoull(v + 1, NULL, 0);
	if (v[0] == '-')
		return old - strtoull(v + 1, NULL, 0);
	return strtoull(v, NULL, 0);
}

static uint64_t *phdr_field(Elf64_Phdr *p, const char *name)
{
	if (!strcmp(name, "offset"))
		return &p->p_offset;
	if (!strcmp(name, "vaddr"))
		return &p->p_vaddr;
	if (!strcmp(name, "filesz"))
		return &p->p_filesz;
	if (!strcmp(name, "memsz"))
		return &p->p_memsz;
	die("unknown segment field");
	return NULL;
}

/* Patch the k-th header of p_type type (k < 0: every one becomes PT_NULL). */
static void patch_seg(uint32_t type, int k, const char *field, const char *value)
{
	Elf64_Phdr p;
	int i, seen = 0;

	for (i = 0; i < eh.e_phnum; i++) {
		phdr(0, i, &p);
		if (p.p_type != type)
			continue;
		if (k < 0) {
			p.p_type = PT_NULL;
		} else if (seen++ == k) {
			uint64_t *f = phdr_field(&p, field);
			*f = apply(*f, value);
		} else {
			continue;
		}
		phdr(1, i, &p);
	}
}

static void patch_interp(const char *path)
{
	off_t end = lseek(fd, 0, SEEK_END);
	Elf64_Phdr p;
	int i;

	rw(1, (void *)path, strlen(path) + 1, end);
	for (i = 0; i < eh.e_phnum; i++) {
		phdr(0, i, &p);
		if (p.p_type != PT_INTERP)
			continue;
		p.p_offset = (uint64_t)end;
		p.p_filesz = strlen(path) + 1;
		phdr(1, i, &p);
		return;
	}
	die("no PT_INTERP");
}

static void patch_ehdr(const char *field, const char *value)
{
	if (!strcmp(field, "machine"))
		eh.e_machine = (Elf64_Half)apply(eh.e_machine, value);
	else if (!strcmp(field, "type"))
		eh.e_type = (Elf64_Half)apply(eh.e_type, value);
	else if (!strcmp(field, "phoff"))
		eh.e_phoff = apply(eh.e_phoff, value);
	else if (!strcmp(field, "entry"))
		eh.e_entry = apply(eh.e_entry, value);
	else
		die("unknown header field");
}

int main(int argc, char **argv)
{
	if (argc < 3)
		die("usage: elfpatch FILE ehdr|ident|seg|noload|interp ...");
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		die("cannot open file");
	rw(0, &eh, sizeof(eh), 0);
	if (!strcmp(argv[2], "ehdr") && argc == 5)
		patch_ehdr(argv[3], argv[4]);
	else if (!strcmp(argv[2], "ident") && argc == 5)
		eh.e_ident[atoi(argv[3]) % EI_NIDENT] = (unsigned char)strtoul(argv[4], NULL, 0);
	else if (!strcmp(argv[2], "seg") && argc == 7)
		patch_seg((uint32_t)strtoul(argv[3], NULL, 0), atoi(argv[4]), argv[5], argv[6]);
	else if (!strcmp(argv[2], "noload") && argc == 3)
		patch_seg(PT_LOAD, -1, NULL, NULL);
	else if (!strcmp(argv[2], "interp") && argc == 4)
		patch_interp(argv[3]);
	else
		die("bad arguments");
	rw(1, &eh, sizeof(eh), 0);
	return close(fd) ? 1 : 0;
}
