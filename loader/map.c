/* SPDX-License-Identifier: MIT */
/*
 * Mapping into a reserved range. Segments are mapped from the file (MAP_FIXED|MAP_PRIVATE at
 * bias + p_vaddr, so /proc/PID/maps names the file) as execve does, with one difference: where bss
 * begins inside the last file page, that page is an anonymous one filled with pread, not the
 * file's page zeroed by hand. Writing to a file mapping past the end of a file that someone
 * truncated after the checks raises SIGBUS in the loader (the launcher died with an empty stderr
 * 1 run in 30); pread reports the short file instead. The rest of bss is anonymous zero pages.
 * Undoing is always "back to a PROT_NONE reservation", never munmap: the range belongs to a
 * larger region someone else reserved.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

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

/*
 * The page holding the end of the file part and the start of bss: its file bytes read with pread
 * into an anonymous page, the rest of it zero. page: the page's address; off: its file offset.
 */
static int read_tail(const struct ulp_elf *f, uintptr_t page, uint64_t off, uintptr_t file_end,
		     int prot, const struct ulp_ld_err *e, size_t i)
{
	size_t want = file_end - page, got = 0;
	int rc = map_fixed(page, ulp_ld_pagesize(), PROT_READ | PROT_WRITE, MAP_ANONYMOUS, -1, 0);

	if (rc)
		return ulp_ld_fail(e, rc, "mmap the last file page of segment %zu: %s", i,
				   strerror(-rc));
	while (got < want) {
		ssize_t n = pread(f->fd, (char *)page + got, want - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ulp_ld_fail(e, -errno, "reading segment %zu: %s", i,
					   strerror(errno));
		if (n == 0)
			return ulp_ld_fail(e, -EIO,
					   "file truncated while being loaded: segment %zu "
					   "ends at offset %llu, the file now ends at %llu",
					   i, (unsigned long long)(off + want),
					   (unsigned long long)(off + got));
		got += (size_t)n;
	}
	if (!(prot & PROT_WRITE) && mprotect((void *)page, ulp_ld_pagesize(), prot) < 0)
		return ulp_ld_fail(e, -errno, "mprotect segment %zu: %s", i, strerror(errno));
	return 0;
}

static int map_load(const struct ulp_elf *f, size_t i, uintptr_t bias, const struct ulp_ld_err *e)
{
	const GElf_Phdr *p = &f->ph[i];
	uintptr_t start = bias + ulp_ld_page_down(p->p_vaddr);
	uintptr_t file_end = bias + p->p_vaddr + p->p_filesz;
	uintptr_t mem_end = bias + ulp_ld_page_up(p->p_vaddr + p->p_memsz);
	uintptr_t anon = p->p_filesz ? ulp_ld_page_up(file_end) : start;
	/* A partial last file page followed by bss is read, not mapped (see the top). */
	int split = p->p_memsz > p->p_filesz && file_end != ulp_ld_page_down(file_end);
	uintptr_t mapped_end = split ? ulp_ld_page_down(file_end) : anon;
	int prot = prot_of(p->p_flags), rc = 0;

	if (p->p_filesz && mapped_end > start) {
		rc = map_fixed(start, mapped_end - start, prot, 0, f->fd,
			       ulp_ld_page_down(p->p_offset));
		if (rc)
			return ulp_ld_fail(e, rc, "mmap segment %zu at %#lx: %s", i,
					   (unsigned long)start, strerror(-rc));
	}
	if (p->p_filesz && split) {
		rc = read_tail(f, mapped_end, ulp_ld_page_down(p->p_offset) + (mapped_end - start),
			       file_end, prot, e, i);
		if (rc)
			return rc;
	}
	if (mem_end > anon) {
		rc = map_fixed(anon, mem_end - anon, prot, MAP_ANONYMOUS, -1, 0);
		if (rc)
			return ulp_ld_fail(e, rc, "mmap bss of segment %zu at %#lx: %s", i,
					   (unsigned long)anon, strerror(-rc));
	}
	return 0;
}

/*
 * The checks saw every segment inside the file; a file cut short since then maps without error
 * but would raise SIGBUS in the ULP at its first touch of a missing page. Refuse it here, naming
 * the file, rather than start a program with holes (a cut after this check still ends only that
 * ULP).
 */
static int check_size(const struct ulp_elf *f, const struct ulp_ld_err *e)
{
	uint64_t need = 0;
	struct stat st;
	size_t i;

	for (i = 0; i < f->phnum; i++)
		if (f->ph[i].p_type == PT_LOAD && f->ph[i].p_filesz &&
		    f->ph[i].p_offset + f->ph[i].p_filesz > need)
			need = f->ph[i].p_offset + f->ph[i].p_filesz;
	if (fstat(f->fd, &st) < 0)
		return ulp_ld_fail(e, -errno, "fstat: %s", strerror(errno));
	if ((uint64_t)st.st_size < need)
		return ulp_ld_fail(e, -EIO,
				   "file truncated while being loaded: its segments need %llu "
				   "bytes, the file now has %lld",
				   (unsigned long long)need, (long long)st.st_size);
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
	return check_size(f, e);
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
