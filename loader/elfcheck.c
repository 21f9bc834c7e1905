/* SPDX-License-Identifier: MIT */
/*
 * Is this file a program we can load? Everything the mapping code later trusts is checked here,
 * against the real file size, before a single page of the partition is touched: file type and
 * permissions, ELF identity (via libelf), program headers, segment bounds and the entry point.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "target.h"

#define ULP_LD_MAX_PHDR_BYTES 65536 /* a saner bound than anything real programs use */

static const char *machine_name(unsigned int m)
{
	static const struct {
		unsigned int m;
		const char *name;
	} names[] = {
	    {EM_386, "i386"},	     {EM_X86_64, "x86_64"},
	    {EM_AARCH64, "aarch64"}, {EM_ARM, "arm"},
	    {EM_SPARCV9, "sparc64"}, {EM_SPARC, "sparc"},
	    {EM_PPC64, "ppc64"},     {EM_PPC, "ppc"},
	    {EM_S390, "s390"},	     {EM_MIPS, "mips"},
	    {EM_RISCV, "riscv"},     {EM_IA_64, "ia64"},
	    {EM_ALPHA, "alpha"},     {EM_LOONGARCH, "loongarch"},
	    {EM_NONE, "none"},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].m == m)
			return names[i].name;
	return "unknown";
}

/* The file itself: exists, is a regular executable file, is not empty. */
static int check_file(struct ulp_elf *f, const struct ulp_ld_err *e)
{
	struct stat st;

	/* O_NONBLOCK: a FIFO must be refused, not waited on. */
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (f->fd < 0)
		return ulp_ld_fail(e, -errno, "%s", strerror(errno));
	if (fstat(f->fd, &st) < 0)
		return ulp_ld_fail(e, -errno, "fstat: %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return ulp_ld_fail(e, -EACCES, "is a directory, not a program file");
	if (!S_ISREG(st.st_mode))
		return ulp_ld_fail(e, -EACCES, "not a regular file");
	if (faccessat(AT_FDCWD, f->path, X_OK, AT_EACCESS) < 0)
		return ulp_ld_fail(e, -EACCES, "permission denied (not executable)");
	if (st.st_size == 0)
		return ulp_ld_fail(e, -ENOEXEC, "empty file");
	f->size = st.st_size;
	return 0;
}

/* Shorter than an ELF header: libelf would see no ELF at all, so tell a cut-off ELF apart here. */
static int short_file(const struct ulp_elf *f, const struct ulp_ld_err *e)
{
	char magic[SELFMAG];

	if (pread(f->fd, magic, SELFMAG, 0) == SELFMAG && !memcmp(magic, ELFMAG, SELFMAG))
		return ulp_ld_fail(e, -ENOEXEC, "truncated ELF header (%lld bytes)",
				   (long long)f->size);
	return ulp_ld_fail(e, -ENOEXEC, "not an ELF file");
}

/* ELF identity: magic, class, byte order, a complete ELF header. */
static int check_ident(struct ulp_elf *f, const struct ulp_ld_err *e)
{
	const char *ident;

	if ((uint64_t)f->size < sizeof(Elf64_Ehdr))
		return short_file(f, e);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ulp_ld_fail(e, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf)
		return ulp_ld_fail(e, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	if (elf_kind(f->elf) == ELF_K_AR)
		return ulp_ld_fail(e, -ENOEXEC, "an ar archive (static library), not a program");
	if (elf_kind(f->elf) != ELF_K_ELF)
		return ulp_ld_fail(e, -ENOEXEC, "not an ELF file");
	ident = elf_getident(f->elf, NULL);
	if (!ident)
		return ulp_ld_fail(e, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	if (ident[EI_CLASS] != ULP_LD_CLASS)
		return ulp_ld_fail(e, -ENOEXEC, "not a 64-bit ELF (ELFCLASS%d)",
				   ident[EI_CLASS] == ELFCLASS32 ? 32 : ident[EI_CLASS]);
	if (ident[EI_DATA] != ULP_LD_DATA)
		return ulp_ld_fail(e, -ENOEXEC, "wrong byte order (%s-endian)",
				   ident[EI_DATA] == ELFDATA2MSB ? "big" : "unknown");
	if (!gelf_getehdr(f->elf, &f->eh))
		return ulp_ld_fail(e, -ENOEXEC, "corrupt ELF header: %s", elf_errmsg(-1));
	return 0;
}

/* ELF header: machine and type. */
static int check_ehdr(struct ulp_elf *f, const struct ulp_ld_err *e)
{
	const GElf_Ehdr *h = &f->eh;

	if (h->e_machine != ULP_LD_MACHINE)
		return ulp_ld_fail(e, -ENOEXEC,
				   "wrong machine: %s (e_machine %u), this loader runs %s",
				   machine_name(h->e_machine), h->e_machine, ULP_LD_MACHINE_NAME);
	switch (h->e_type) {
	case ET_DYN:
		break;
	case ET_EXEC:
		return ulp_ld_fail(e, -ENOEXEC,
				   "not a position-independent executable (ET_EXEC); "
				   "rebuild with -fPIE -pie");
	case ET_REL:
		return ulp_ld_fail(e, -ENOEXEC,
				   "a relocatable object (ET_REL), not a program; "
				   "link it first");
	case ET_CORE:
		return ulp_ld_fail(e, -ENOEXEC, "a core dump (ET_CORE), not a program");
	default:
		return ulp_ld_fail(e, -ENOEXEC, "unknown ELF type %u", h->e_type);
	}
	if (h->e_entry == 0)
		return ulp_ld_fail(e, -ENOEXEC,
				   "no entry point (e_entry is 0): a shared library, "
				   "not a program");
	return 0;
}

/* n program headers at e_phoff lie inside the file. */
static int check_phdr_table(const struct ulp_elf *f, uint64_t n, const struct ulp_ld_err *e)
{
	uint64_t bytes = n * sizeof(Elf64_Phdr);

	if (n == 0)
		return ulp_ld_fail(e, -ENOEXEC, "no program headers, nothing to load");
	if (bytes > ULP_LD_MAX_PHDR_BYTES || f->eh.e_phoff > (uint64_t)f->size ||
	    bytes > (uint64_t)f->size - f->eh.e_phoff)
		return ulp_ld_fail(e, -ENOEXEC,
				   "truncated or corrupt ELF: %llu program headers at offset %#llx "
				   "do not fit in the file (%lld bytes)",
				   (unsigned long long)n, (unsigned long long)f->eh.e_phoff,
				   (long long)f->size);
	return 0;
}

/*
 * Program header table: inside the file, each entry readable through libelf. The bounds are
 * checked with e_phnum first: libelf quietly clamps the count of a truncated table.
 */
static int read_phdrs(struct ulp_elf *f, const struct ulp_ld_err *e)
{
	size_t i;
	int rc = 0;

	if (f->eh.e_phentsize != sizeof(Elf64_Phdr))
		return ulp_ld_fail(e, -ENOEXEC, "corrupt ELF header: e_phentsize %u, expected %zu",
				   f->eh.e_phentsize, sizeof(Elf64_Phdr));
	if (f->eh.e_phnum != PN_XNUM)
		rc = check_phdr_table(f, f->eh.e_phnum, e);
	if (rc)
		return rc;
	if (elf_getphdrnum(f->elf, &f->phnum) < 0)
		return ulp_ld_fail(e, -ENOEXEC, "corrupt program header count: %s", elf_errmsg(-1));
	rc = check_phdr_table(f, f->phnum, e);
	if (rc)
		return rc;
	f->ph = calloc(f->phnum, sizeof(*f->ph));
	if (!f->ph)
		return ulp_ld_fail(e, -ENOMEM, "out of memory reading program headers");
	for (i = 0; i < f->phnum; i++)
		if (!gelf_getphdr(f->elf, (int)i, &f->ph[i]))
			return ulp_ld_fail(e, -ENOEXEC, "corrupt program header %zu: %s", i,
					   elf_errmsg(-1));
	return 0;
}

/* One segment's file bytes lie in the file. */
static int check_file_range(const struct ulp_elf *f, size_t i, const struct ulp_ld_err *e)
{
	const GElf_Phdr *p = &f->ph[i];

	if (p->p_offset > (uint64_t)f->size || p->p_filesz > (uint64_t)f->size - p->p_offset)
		return ulp_ld_fail(e, -ENOEXEC,
				   "truncated or corrupt ELF: segment %zu (file bytes "
				   "%#llx+%#llx) goes past the end of the file (%lld bytes)",
				   i, (unsigned long long)p->p_offset,
				   (unsigned long long)p->p_filesz, (long long)f->size);
	return 0;
}

/* One PT_LOAD: mappable as the kernel would map it. Grows f->span. */
static int check_load(struct ulp_elf *f, size_t i, const struct ulp_ld_err *e)
{
	const GElf_Phdr *p = &f->ph[i];
	uint64_t page = ulp_ld_pagesize();
	int rc = check_file_range(f, i, e);

	if (rc)
		return rc;
	if (p->p_filesz > p->p_memsz)
		return ulp_ld_fail(e, -ENOEXEC,
				   "corrupt ELF: segment %zu has p_filesz %#llx > "
				   "p_memsz %#llx",
				   i, (unsigned long long)p->p_filesz,
				   (unsigned long long)p->p_memsz);
	if ((p->p_offset - p->p_vaddr) % page)
		return ulp_ld_fail(e, -ENOEXEC,
				   "corrupt ELF: segment %zu p_offset %#llx and "
				   "p_vaddr %#llx differ modulo the page size (%#llx)",
				   i, (unsigned long long)p->p_offset,
				   (unsigned long long)p->p_vaddr, (unsigned long long)page);
	if (p->p_vaddr > UINT64_MAX - page || p->p_memsz > UINT64_MAX - page - p->p_vaddr)
		return ulp_ld_fail(e, -ENOEXEC,
				   "corrupt ELF: segment %zu address range %#llx+%#llx "
				   "overflows",
				   i, (unsigned long long)p->p_vaddr,
				   (unsigned long long)p->p_memsz);
	if (p->p_memsz && ulp_ld_page_up(p->p_vaddr + p->p_memsz) > f->span)
		f->span = ulp_ld_page_up(p->p_vaddr + p->p_memsz);
	return 0;
}

/* PT_INTERP: a NUL-terminated path inside the file. The first one counts, as for the kernel. */
static int read_interp(struct ulp_elf *f, size_t i, const struct ulp_ld_err *e)
{
	const GElf_Phdr *p = &f->ph[i];
	int rc = check_file_range(f, i, e);

	if (rc || f->interp)
		return rc;
	if (p->p_filesz < 2 || p->p_filesz > PATH_MAX)
		return ulp_ld_fail(e, -ENOEXEC, "corrupt PT_INTERP (%llu bytes)",
				   (unsigned long long)p->p_filesz);
	f->interp = malloc(p->p_filesz);
	if (!f->interp)
		return ulp_ld_fail(e, -ENOMEM, "out of memory reading PT_INTERP");
	if (pread(f->fd, f->interp, p->p_filesz, (off_t)p->p_offset) != (ssize_t)p->p_filesz)
		return ulp_ld_fail(e, -ENOEXEC, "cannot read PT_INTERP");
	if (f->interp[p->p_filesz - 1] != '\0' || f->interp[0] == '\0')
		return ulp_ld_fail(e, -ENOEXEC, "corrupt PT_INTERP (not a NUL-terminated path)");
	return 0;
}

/*
 * Is [vaddr, vaddr+len) inside one PT_LOAD? exec: inside the memory of an executable one (the
 * entry point); else inside the file bytes of any (the program headers). Needs checked segments.
 */
static int inside_load(const struct ulp_elf *f, uint64_t vaddr, uint64_t len, int exec)
{
	size_t i;

	for (i = 0; i < f->phnum; i++) {
		const GElf_Phdr *p = &f->ph[i];
		uint64_t size = exec ? p->p_memsz : p->p_filesz;

		if (p->p_type != PT_LOAD || (exec && !(p->p_flags & PF_X)))
			continue;
		if (vaddr >= p->p_vaddr && vaddr - p->p_vaddr < size &&
		    len <= size - (vaddr - p->p_vaddr))
			return 1;
	}
	return 0;
}

/* Where the program headers are in memory (AT_PHDR): PT_PHDR, else from e_phoff. */
static void find_phdr(struct ulp_elf *f)
{
	uint64_t len = f->phnum * sizeof(Elf64_Phdr), off = f->eh.e_phoff, v = 0;
	size_t i;

	for (i = 0; i < f->phnum && !v; i++)
		if (f->ph[i].p_type == PT_PHDR)
			v = f->ph[i].p_vaddr;
	for (i = 0; i < f->phnum && !v; i++) {
		const GElf_Phdr *p = &f->ph[i];

		if (p->p_type == PT_LOAD && off >= p->p_offset && off - p->p_offset < p->p_filesz)
			v = p->p_vaddr + (off - p->p_offset);
	}
	if (v && inside_load(f, v, len, 0))
		f->phdr_vaddr = v;
}

static int check_segments(struct ulp_elf *f, const struct ulp_ld_err *e)
{
	size_t i, loads = 0;
	int rc = 0;

	for (i = 0; i < f->phnum && !rc; i++) {
		if (f->ph[i].p_type == PT_LOAD) {
			loads++;
			rc = check_load(f, i, e);
		} else if (f->ph[i].p_type == PT_INTERP) {
			rc = read_interp(f, i, e);
		}
	}
	if (rc)
		return rc;
	if (!loads || !f->span)
		return ulp_ld_fail(e, -ENOEXEC, "no loadable segment (PT_LOAD)");
	if (!inside_load(f, f->eh.e_entry, 1, 1))
		return ulp_ld_fail(e, -ENOEXEC,
				   "corrupt ELF: entry point %#llx is not inside an "
				   "executable segment",
				   (unsigned long long)f->eh.e_entry);
	find_phdr(f);
	return 0;
}

int ulp_elf_open(struct ulp_elf *f, const char *path, const struct ulp_ld_err *e)
{
	int rc;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = path;
	rc = check_file(f, e);
	if (!rc)
		rc = check_ident(f, e);
	if (!rc)
		rc = check_ehdr(f, e);
	if (!rc)
		rc = read_phdrs(f, e);
	if (!rc)
		rc = check_segments(f, e);
	if (rc)
		ulp_elf_close(f);
	return rc;
}

void ulp_elf_close(struct ulp_elf *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->ph);
	free(f->interp);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}
