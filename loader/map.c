/* SPDX-License-Identifier: MIT */
/*
 * Mapping into a reserved range. Segments are mapped from the file (MAP_FIXED|MAP_PRIVATE at
 * bias + p_vaddr, so /proc/PID/maps names the file) exactly as execve does: the tail of the last
 * file page zeroed, the rest of bss anonymous zero pages. Undoing is always "back to a PROT_NONE
 * reservation", never munmap: the range belongs to a larger region someone else reserved.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static int prot_of(uint32_t flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

static int map_fixed(uintptr_t addr, uint64_t len, int prot, int flags, int fd, uint64_t off)
{
	void *p = mmap((void *)addr, len, prot, MAP_FIXED | MAP_PRIVATE | flags, fd, (off_t)off);

	return p == MAP_FAILED ? -errno : 0;
}

/* The file's last page holds bytes past p_filesz (other sections): they must read as bss zeros. */
static int zero_tail(uintptr_t file_end, int prot)
{
	uintptr_t page = ulp_ld_page_down(file_end);
	size_t psz = ulp_ld_pagesize();

	if (file_end == page)
		return 0;
	if (!(prot & PROT_WRITE) && mprotect((void *)page, psz, prot | PROT_WRITE) < 0)
		return -errno;
	memset((void *)file_end, 0, page + psz - file_end);
	if (!(prot & PROT_WRITE) && mprotect((void *)page, psz, prot) < 0)
		return -errno;
	return 0;
}

static int map_load(const struct ulp_elf *f, size_t i, uintptr_t bias, const struct ulp_ld_err *e)
{
	const GElf_Phdr *p = &f->ph[i];
	uintptr_t start = bias + ulp_ld_page_down(p->p_vaddr);
	uintptr_t file_end = bias + p->p_vaddr + p->p_filesz;
	uintptr_t mem_end = bias + ulp_ld_page_up(p->p_vaddr + p->p_memsz);
	uintptr_t anon = p->p_filesz ? ulp_ld_page_up(file_end) : start;
	int prot = prot_of(p->p_flags), rc = 0;
	const char *what = "mmap";

	if (p->p_filesz)
		rc = map_fixed(start, ulp_ld_page_up(file_end) - start, prot, 0, f->fd,
			       ulp_ld_page_down(p->p_offset));
	if (!rc && p->p_filesz && p->p_memsz > p->p_filesz) {
		what = "zeroing bss of";
		rc = zero_tail(file_end, prot);
	}
	if (!rc && mem_end > anon) {
		what = "mmap bss of";
		rc = map_fixed(anon, mem_end - anon, prot, MAP_ANONYMOUS, -1, 0);
	}
	if (rc)
		return ulp_ld_fail(e, rc, "%s segment %zu at %#lx: %s", what, i,
				   (unsigned long)start, strerror(-rc));
	return 0;
}

int ulp_map_segments(const struct ulp_elf *f, uintptr_t bias, const struct ulp_ld_err *e)
{
	size_t i;
	int rc;

	for (i = 0; i < f->phnum; i++) {
		if (f->ph[i].p_type != PT_LOAD || !f->ph[i].p_memsz)
			continue;
		rc = map_load(f, i, bias, e);
		if (rc)
			return rc;
	}
	return 0;
}

int ulp_map_stack(uintptr_t lo, uintptr_t hi, const struct ulp_ld_err *e)
{
	size_t psz = ulp_ld_pagesize();
	/* NORESERVE: like a growing process stack, only touched pages are charged. */
	int rc = map_fixed(lo + psz, hi - lo - psz, PROT_READ | PROT_WRITE,
			   MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);

	/* Before the first write: where transparent huge pages are "always", writing argv at the
	 * top would fill a whole 2 MiB page per ULP (a 1 GiB VM ran out of memory at ~400 ULPs). */
	if (!rc)
		madvise((void *)(lo + psz), hi - lo - psz, MADV_NOHUGEPAGE);
	if (!rc)
		rc = map_fixed(lo, psz, PROT_NONE, MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rc)
		return ulp_ld_fail(e, rc, "mmap stack at %#lx (%#lx bytes): %s", (unsigned long)lo,
				   (unsigned long)(hi - lo), strerror(-rc));
	return 0;
}

void ulp_map_reset(uintptr_t lo, uintptr_t hi)
{
	if (hi > lo)
		mmap((void *)lo, hi - lo, PROT_NONE,
		     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}
