/* SPDX-License-Identifier: MIT */
/* The ELF object and the function around a code address (fast_find.h). */
#include "fast_find.h"
#include "../arch.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* Pointer encodings of .eh_frame (the LSB's DWARF extensions). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* Whether [p, p+n) lies in the file-backed part of a readable PT_LOAD of o. */
static int obj_readable(const struct ulp_x86_obj *o, uintptr_t p, size_t n)
{
	unsigned i;

	for (i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *ph = &o->ph[i];
		uintptr_t lo = o->bias + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && p >= lo && n <= ph->p_filesz &&
		    p - lo <= ph->p_filesz - n)
			return 1;
	}
	return 0;
}

#define SCAN_BATCH 256

/* The object whose ELF header is at eh (a readable page), if its executable segment holds site:
 * 0, -ENOEXEC (not a header of ours), -ENOENT (another object's). */
static int obj_at(uintptr_t eh_at, uintptr_t site, struct ulp_x86_obj *o)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)eh_at;
	unsigned k;

	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > 4096 ||
	    eh->e_phnum > (4096 - eh->e_phoff) / sizeof(Elf64_Phdr))
		return -ENOEXEC;
	o->ph = (const Elf64_Phdr *)((uintptr_t)eh + eh->e_phoff);
	o->phnum = eh->e_phnum;
	o->bias = 0;
	for (k = 0; k < o->phnum; k++)
		if (o->ph[k].p_type == PT_LOAD && o->ph[k].p_offset == 0) {
			o->bias = (uintptr_t)eh - o->ph[k].p_vaddr;
			break;
		}
	if (k == o->phnum)
		return -ENOEXEC;
	for (k = 0; k < o->phnum; k++) {
		const Elf64_Phdr *ph = &o->ph[k];
		uintptr_t x = o->bias + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && site >= x &&
		    site - x < ph->p_filesz) {
			o->x_lo = x;
			o->x_hi = x + ph->p_filesz;
			o->x_prot = PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0);
			return 0;
		}
	}
	return -ENOENT;
}

/* The ELF header of the object whose executable segment holds site: the nearest page below the
 * site, in [lo, site], that starts with the ELF magic, read without faulting. */
static int scan_obj(uintptr_t site, uintptr_t lo, long pid, struct ulp_x86_obj *o, uintptr_t *hdr)
{
	struct iovec loc, rem[SCAN_BATCH];
	uint32_t magic[SCAN_BATCH] = {0};
	uintptr_t page = site & ~(uintptr_t)4095;
	unsigned i, n, pages = 0;

	while (page >= lo && pages < 16384) { /* an object's text is at most 64 MiB away */
		for (n = 0; n < SCAN_BATCH && page - (uintptr_t)n * 4096 >= lo; n++) {
			rem[n].iov_base = (void *)(page - (uintptr_t)n * 4096);
			rem[n].iov_len = 4;
		}
		loc.iov_base = magic;
		loc.iov_len = 4 * n;
		long got = sys(SYS_process_vm_readv, pid, (long)&loc, 1, (long)rem, n, 0);

		if (got < 4)
			return -EFAULT; /* an unreadable page before any header: not ours to parse
					 */
		for (i = 0; i < (unsigned)got / 4; i++)
			if (magic[i] == 0x464c457f) { /* "\x7fELF" */
				*hdr = page - (uintptr_t)i * 4096;
				return obj_at(*hdr, site, o);
			}
		if ((unsigned)got < 4 * n)
			return -EFAULT;
		pages += n;
		page -= (uintptr_t)n * 4096;
	}
	return -ENOENT;
}

/*
 * The objects found so far, as offsets from the lo of their partition: the ranks of a job load
 * the same libraries in the same order, so they lie at the same offsets in every partition, and
 * finding one afresh reads a word of every page below the site down to its header (libmpich:
 * thousands of pages, each pinned by process_vm_readv). One table for all ULPs of all tasks (they
 * share this memory); entries are written without a lock, as nothing is trusted from them but
 * where to look: a hint is taken only when that page is mapped, is an ELF header, and its
 * executable segment holds the site. The scan would find that very header, unless the program
 * mapped something new inside the object's span, which ld.so never does (it maps an object's
 * whole span at once): the same assumption the scan makes when it trusts the segments of the
 * nearest header.
 */
#define KNOWN_OBJS 16
static struct {
	uintptr_t hdr, x_lo,
	    x_hi; /* from lo; x: the executable segment the header had; x_hi 0: empty */
} known[KNOWN_OBJS];
static unsigned known_next;

static int known_obj(uintptr_t site, uintptr_t lo, long pid, struct ulp_x86_obj *o)
{
	unsigned i;

	for (i = 0; i < KNOWN_OBJS; i++) {
		uintptr_t hdr = __atomic_load_n(&known[i].hdr, __ATOMIC_RELAXED);
		uintptr_t x_lo = __atomic_load_n(&known[i].x_lo, __ATOMIC_RELAXED);
		uintptr_t x_hi = __atomic_load_n(&known[i].x_hi, __ATOMIC_RELAXED);
		uint32_t magic = 0;
		struct iovec loc = {&magic, 4}, rem = {(void *)(lo + hdr), 4};

		if (!x_hi || site - lo < x_lo || site - lo >= x_hi || lo + hdr > site)
			continue;
		if (sys(SYS_process_vm_readv, pid, (long)&loc, 1, (long)&rem, 1, 0) == 4 &&
		    magic == 0x464c457f && obj_at(lo + hdr, site, o) == 0)
			return 0;
	}
	return -ENOENT;
}

static void known_add(uintptr_t lo, uintptr_t hdr, const struct ulp_x86_obj *o)
{
	unsigned i = __atomic_fetch_add(&known_next, 1, __ATOMIC_RELAXED) % KNOWN_OBJS;

	__atomic_store_n(&known[i].x_hi, 0, __ATOMIC_RELAXED); /* empty while it changes */
	__atomic_store_n(&known[i].hdr, hdr - lo, __ATOMIC_RELAXED);
	__atomic_store_n(&known[i].x_lo, o->x_lo - lo, __ATOMIC_RELAXED);
	__atomic_store_n(&known[i].x_hi, o->x_hi - lo, __ATOMIC_RELAXED);
}

int ulp_x86_find_obj(uintptr_t site, uintptr_t lo, struct ulp_x86_obj *o)
{
	long pid = sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	uintptr_t hdr = 0;
	int rc;

	if (site < lo)
		return -ENOENT;
	o->t_lo = o->t_hi = 0;
	if (known_obj(site, lo, pid, o) == 0)
		return 0;
	rc = scan_obj(site, lo, pid, o, &hdr);
	if (rc == 0)
		known_add(lo, hdr, o);
	return rc;
}

static int enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	}
	return -1;
}

/* An encoded pointer at p (pc-relative or absolute; 4 or 8 bytes). */
static int read_enc(const struct ulp_x86_obj *o, uintptr_t p, unsigned enc, int apply_rel,
		    uintptr_t *out)
{
	int n = enc_size(enc);
	int64_t v;

	if (n < 0 || !obj_readable(o, p, (size_t)n))
		return -1;
	if (n == 4)
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? *(const int32_t *)p
						    : (int64_t) * (const uint32_t *)p;
	else
		v = *(const int64_t *)p;
	if (!apply_rel)
		*out = (uintptr_t)v;
	else if ((enc & 0x70) == DW_EH_PE_pcrel)
		*out = p + (uintptr_t)v;
	else if ((enc & 0x70) == 0)
		*out = (uintptr_t)v;
	else
		return -1;
	return 0;
}

static uintptr_t uleb(const struct ulp_x86_obj *o, uintptr_t *p, int *bad)
{
	uintptr_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (!obj_readable(o, *p, 1) || shift > 56) {
			*bad = 1;
			return 0;
		}
		b = *(const uint8_t *)(*p)++;
		v |= (uintptr_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

/* The FDE encoding of pc_begin named by the CIE at cie ('R' in a 'z' augmentation). */
static int cie_fde_enc(const struct ulp_x86_obj *o, uintptr_t cie, unsigned *enc)
{
	uintptr_t p = cie + 8, aug;
	uint8_t version;
	int bad = 0;

	if (!obj_readable(o, cie, 9) || *(const uint32_t *)cie == 0xffffffffu ||
	    *(const uint32_t *)(cie + 4) != 0)
		return -1;
	version = *(const uint8_t *)p++;
	aug = p;
	while (obj_readable(o, p, 1) && *(const char *)p)
		p++;
	if (!obj_readable(o, p, 1))
		return -1;
	p++;
	*enc = DW_EH_PE_absptr;
	if (*(const char *)aug != 'z')
		return *(const char *)aug ? -1 : 0;
	uleb(o, &p, &bad); /* code alignment */
	uleb(o, &p, &bad); /* data alignment (sleb: only its length matters here) */
	if (version == 1)
		p++;
	else
		uleb(o, &p, &bad);
	uleb(o, &p, &bad); /* augmentation data length */
	if (bad)
		return -1;
	for (aug++; obj_readable(o, aug, 1) && *(const char *)aug; aug++) {
		unsigned e;

		if (!obj_readable(o, p, 1))
			return -1;
		switch (*(const char *)aug) {
		case 'L':
			p++;
			break;
		case 'P':
			e = *(const uint8_t *)p++;
			if (enc_size(e) < 0)
				return -1;
			p += (unsigned)enc_size(e);
			break;
		case 'R':
			*enc = *(const uint8_t *)p;
			return 0;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* [*lo, *hi): the function (FDE) with the last start <= site, from the object's .eh_frame_hdr
 * search table; contain: only when it holds site. 0 or -1. */
static int fde_at(const struct ulp_x86_obj *o, uintptr_t site, uintptr_t *lo, uintptr_t *hi,
		  int contain)
{
	uintptr_t hdr = 0, tab, fde, cie, begin, range;
	const uint8_t *h;
	uint32_t count, a, b;
	unsigned i, enc;
	int ps;

	for (i = 0; i < o->phnum; i++)
		if (o->ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = o->bias + o->ph[i].p_vaddr;
	if (!hdr || !obj_readable(o, hdr, 4))
		return -1;
	h = (const uint8_t *)hdr;
	/* version 1, a count in udata4 and a table of datarel sdata4 pairs: what binutils and
	 * lld write; anything else is not searched. */
	ps = enc_size(h[1]);
	if (h[0] != 1 || ps < 0 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -1;
	if (!obj_readable(o, hdr + 4 + (unsigned)ps, 4))
		return -1;
	count = *(const uint32_t *)(hdr + 4 + (unsigned)ps);
	tab = hdr + 8 + (unsigned)ps;
	if (!count || !obj_readable(o, tab, (size_t)count * 8))
		return -1;
	/* the last entry whose start is <= site */
	a = 0;
	b = count;
	while (b - a > 1) {
		uint32_t m = a + (b - a) / 2;

		if (hdr + (uintptr_t)(intptr_t) * (const int32_t *)(tab + (uintptr_t)m * 8) <= site)
			a = m;
		else
			b = m;
	}
	fde = hdr + (uintptr_t)(intptr_t) * (const int32_t *)(tab + (uintptr_t)a * 8 + 4);
	if (!obj_readable(o, fde, 8) || *(const uint32_t *)fde == 0xffffffffu)
		return -1;
	cie = fde + 4 - *(const uint32_t *)(fde + 4);
	if (cie_fde_enc(o, cie, &enc) || read_enc(o, fde + 8, enc, 1, &begin))
		return -1;
	if (read_enc(o, fde + 8 + (unsigned)enc_size(enc), enc & 0x0f, 0, &range))
		return -1;
	if (site < begin || (contain && site - begin >= range) || range > (1u << 20))
		return -1;
	*lo = begin;
	*hi = begin + range;
	return 0;
}

int ulp_x86_find_func(const struct ulp_x86_obj *o, uintptr_t site, uintptr_t *lo, uintptr_t *hi)
{
	return fde_at(o, site, lo, hi, 1);
}

int ulp_x86_func_before(const struct ulp_x86_obj *o, uintptr_t at, uintptr_t *lo, uintptr_t *hi)
{
	return fde_at(o, at, lo, hi, 0);
}
