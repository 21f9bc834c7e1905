/* SPDX-License-Identifier: MIT */
/*
 * x86_64 fast system calls: rewriting a verified `mov $NR,%eax; syscall` site of a ULP's text into
 * a jump to a per-site trampoline, and the C side of the trampolines' entry (fast_entry.S).
 *
 * A site is rewritten only when all of this holds (anything else leaves it trapping):
 *   - the ELF object holding it is found in memory (its header, looked for page by page below the
 *     site with process_vm_readv, which cannot fault), and its PT_LOAD that is executable holds it;
 *   - its .eh_frame_hdr search table gives the FDE, hence the bounds, of the enclosing function;
 *   - decoding that function from its first byte (insn.c) lands exactly on its end, on the
 *     syscall, and on a 5-byte `b8 imm32` (mov $NR,%eax) ending right at the syscall.
 * Only the mov is overwritten (by `jmp rel32` to the trampoline); the syscall stays at its own
 * address. A branch to the mov's address reaches the trampoline, which does what the mov and the
 * syscall did; a branch to the syscall traps as before. No other byte changes, so no other branch
 * target can be affected (a target inside the mov would be inside an instruction).
 *
 * The trampoline (a 128-byte slot, ULP_FAST_SLOT, in the runtime-owned part of the partition):
 *    0: address after the syscall (what the call's rip is), 8: address of ulp_arch_fast_entry
 *   16: mov $NR,%eax                      the displaced instruction
 *       lea -128(%rsp),%rsp              the red zone stays the program's
 *       call *8(slot)                    ulp_arch_fast_entry
 *       jmp 1f                           emulated: skip the real syscall
 *       lea 128(%rsp),%rsp; syscall; jmp site+2     not emulated: the real call, from the
 *                                        partition, so the seccomp trap sees it as before
 *    1: lea 128(%rsp),%rsp; jmp site+2
 */
#include "insn.h"
#include "../arch.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>

/* Pointer encodings of .eh_frame (the LSB's DWARF extensions). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* Registers as fast_entry.S pushes them. */
struct ulp_fast_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t rflags, ret;
};

_Static_assert(offsetof(struct ulp_fast_frame, r8) == 56 &&
		   offsetof(struct ulp_fast_frame, rbp) == 64 &&
		   offsetof(struct ulp_fast_frame, rax) == 112 &&
		   offsetof(struct ulp_fast_frame, rflags) == 120 &&
		   offsetof(struct ulp_fast_frame, ret) == 128,
	       "fast_entry.S pushes these offsets");

/* The program's rsp is this far above the frame: the return address, then the red zone. */
#define FRAME_TO_SP (sizeof(struct ulp_fast_frame) + 128)

/* Bytes of the XSAVE area (fast_entry.S reads it). */
uint64_t ulp_arch_fast_xsize __attribute__((visibility("hidden")));
static ulp_arch_fast_hook fast_hook;

void ulp_arch_fast_entry(void) __attribute__((visibility("hidden")));
int ulp_arch_fast_dispatch(struct ulp_fast_frame *f, void *xsave)
    __attribute__((visibility("hidden")));

int ulp_arch_fast_init(ulp_arch_fast_hook hook)
{
	unsigned a, b, c, d;

	/* OSXSAVE: the kernel enabled XSAVE, so XSAVE/XRSTOR work and leaf 0xd says how much
	 * state there is. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return -ENOTSUP;
	__cpuid_count(0xd, 0, a, b, c, d);
	if (b < 576)
		return -ENOTSUP;
	ulp_arch_fast_xsize = b;
	fast_hook = hook;
	return 0;
}

int ulp_arch_fast_dispatch(struct ulp_fast_frame *f, void *xsave)
{
	uintptr_t slot = f->ret & ~(uintptr_t)(ULP_FAST_SLOT - 1);
	uint64_t pc = *(const uint64_t *)slot;
	ucontext_t uc;
	greg_t *g = uc.uc_mcontext.gregs;

	/* The context a SIGSYS would have carried: handlers read the arguments from it, pass it to
	 * the ULP's own signal handlers and may change registers in it. */
	memset(&uc, 0, offsetof(ucontext_t, uc_mcontext.fpregs));
	memset(&uc.uc_sigmask, 0, sizeof(uc.uc_sigmask));
	g[REG_R8] = (greg_t)f->r8;
	g[REG_R9] = (greg_t)f->r9;
	g[REG_R10] = (greg_t)f->r10;
	g[REG_R11] = (greg_t)f->r11;
	g[REG_R12] = (greg_t)f->r12;
	g[REG_R13] = (greg_t)f->r13;
	g[REG_R14] = (greg_t)f->r14;
	g[REG_R15] = (greg_t)f->r15;
	g[REG_RDI] = (greg_t)f->rdi;
	g[REG_RSI] = (greg_t)f->rsi;
	g[REG_RBP] = (greg_t)f->rbp;
	g[REG_RBX] = (greg_t)f->rbx;
	g[REG_RDX] = (greg_t)f->rdx;
	g[REG_RAX] = (greg_t)f->rax;
	g[REG_RCX] = (greg_t)f->rcx;
	g[REG_RSP] = (greg_t)((uintptr_t)f + FRAME_TO_SP);
	g[REG_RIP] = (greg_t)pc;
	g[REG_EFL] = (greg_t)f->rflags;
	uc.uc_mcontext.fpregs = xsave; /* its first 512 bytes are the FXSAVE image */
	if (!fast_hook || fast_hook(&uc, (long)f->rax))
		return 1;
	f->r8 = (uint64_t)g[REG_R8];
	f->r9 = (uint64_t)g[REG_R9];
	f->r10 = (uint64_t)g[REG_R10];
	f->r12 = (uint64_t)g[REG_R12];
	f->r13 = (uint64_t)g[REG_R13];
	f->r14 = (uint64_t)g[REG_R14];
	f->r15 = (uint64_t)g[REG_R15];
	f->rdi = (uint64_t)g[REG_RDI];
	f->rsi = (uint64_t)g[REG_RSI];
	f->rbp = (uint64_t)g[REG_RBP];
	f->rbx = (uint64_t)g[REG_RBX];
	f->rdx = (uint64_t)g[REG_RDX];
	f->rax = (uint64_t)g[REG_RAX];
	/* What the syscall instruction leaves there: the return address and the flags. */
	f->rcx = pc;
	f->r11 = f->rflags;
	return 0;
}

/* ---- finding the enclosing function ---- */

struct fast_obj {
	uintptr_t bias;
	const Elf64_Phdr *ph;
	unsigned phnum;
	uintptr_t x_lo, x_hi; /* the executable PT_LOAD holding the site */
	int x_prot;
};

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

/* Whether [p, p+n) lies in the file-backed part of a readable PT_LOAD of o. */
static int obj_readable(const struct fast_obj *o, uintptr_t p, size_t n)
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

/* The ELF header of the object whose executable segment holds site: the nearest page below the
 * site, in [lo, site], that starts with the ELF magic, read without faulting. */
static int find_obj(uintptr_t site, uintptr_t lo, struct fast_obj *o)
{
	struct iovec loc, rem[SCAN_BATCH];
	uint32_t magic[SCAN_BATCH];
	uintptr_t page = site & ~(uintptr_t)4095;
	long pid = sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
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
		for (i = 0; i < (unsigned)got / 4; i++) {
			const Elf64_Ehdr *eh;
			unsigned k;

			if (magic[i] != 0x464c457f) /* "\x7fELF" */
				continue;
			eh = (const Elf64_Ehdr *)(page - (uintptr_t)i * 4096);
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
					o->x_prot =
					    PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0);
					return 0;
				}
			}
			return -ENOENT; /* the nearest header is another object's */
		}
		if ((unsigned)got < 4 * n)
			return -EFAULT;
		pages += n;
		page -= (uintptr_t)n * 4096;
	}
	return -ENOENT;
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
static int read_enc(const struct fast_obj *o, uintptr_t p, unsigned enc, int apply_rel,
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

static uintptr_t uleb(const struct fast_obj *o, uintptr_t *p, int *bad)
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
static int cie_fde_enc(const struct fast_obj *o, uintptr_t cie, unsigned *enc)
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

/* [*lo, *hi): the function holding site, from the object's .eh_frame_hdr search table. */
static int find_func(const struct fast_obj *o, uintptr_t site, uintptr_t *lo, uintptr_t *hi)
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
	if (site < begin || site - begin >= range || range > (1u << 20))
		return -1;
	*lo = begin;
	*hi = begin + range;
	return 0;
}

int ulp_arch_fast_func(uintptr_t lo, uintptr_t hi, uintptr_t site, uintptr_t *flo, uintptr_t *fhi)
{
	struct fast_obj o;

	if (find_obj(site, lo, &o) || find_func(&o, site, flo, fhi))
		return -1;
	(void)hi;
	return 0;
}

/* ---- verifying and rewriting a site ---- */

/* Decode [lo, hi) from lo: 0 when it ends exactly at hi with an instruction boundary at each of
 * want[0..n), else -1. */
int ulp_arch_fast_walk(uintptr_t lo, uintptr_t hi, const uintptr_t *want, unsigned n)
{
	uintptr_t p = lo;
	unsigned k = 0;
	struct ulp_insn in;

	while (p < hi) {
		while (k < n && want[k] < p)
			return -1; /* stepped over a wanted boundary */
		if (k < n && want[k] == p)
			k++;
		if (!ulp_insn_decode((const uint8_t *)p, hi - p, &in))
			return -1;
		p += in.len;
	}
	return p == hi && k == n ? 0 : -1;
}

int ulp_arch_fast_patch(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot)
{
	uintptr_t site = pc - 2, mov = site - 5, flo, fhi, want[2], page, end;
	const uint8_t *s = (const uint8_t *)site;
	uint8_t *t = (uint8_t *)slot, jmp[5];
	struct fast_obj o;
	int64_t rel, back;
	unsigned n = 16;
	uint32_t nr;
	long r;

	if (s[0] != 0x0f || s[1] != 0x05)
		return -EINVAL;
	if (find_obj(site, lo, &o))
		return -ENOENT;
	if (mov < o.x_lo || pc > o.x_hi || find_func(&o, site, &flo, &fhi) || mov < flo || pc > fhi)
		return -ENOENT;
	if (*(const uint8_t *)mov != 0xb8)
		return -ENOTSUP; /* not `mov $imm32,%eax` right before (checked by decoding next) */
	want[0] = mov;
	want[1] = site;
	if (ulp_arch_fast_walk(flo, fhi, want, 2))
		return -EILSEQ;
	(void)hi;
	memcpy(&nr, (const void *)(mov + 1), 4);
	/* Both jumps must reach: slot -> pc and mov -> slot. */
	rel = (int64_t)(slot + 16) - (int64_t)(mov + 5);
	back = (int64_t)pc - (int64_t)(slot + ULP_FAST_SLOT);
	if (rel != (int32_t)rel || back != (int32_t)back)
		return -ERANGE;

	/* The trampoline (layout at the top of this file). */
	*(uint64_t *)t = pc;
	*(uint64_t *)(t + 8) = (uint64_t)(uintptr_t)ulp_arch_fast_entry;
#define B(x) (t[n++] = (uint8_t)(x))
#define D32(v)                                                                                     \
	do {                                                                                       \
		int32_t v_ = (int32_t)(v);                                                         \
		memcpy(t + n, &v_, 4);                                                             \
		n += 4;                                                                            \
	} while (0)
	B(0xb8); /* mov $nr,%eax */
	D32(nr);
	B(0x48), B(0x8d), B(0x64), B(0x24), B(0x80); /* lea -0x80(%rsp),%rsp */
	B(0xff), B(0x15);			     /* call *8(slot) */
	D32(8 - (int)(n + 4));
	B(0xeb); /* jmp fast */
	B(8 + 2 + 5);
	B(0x48), B(0x8d), B(0xa4), B(0x24), B(0x80), B(0), B(0), B(0); /* lea 0x80(%rsp),%rsp */
	B(0x0f), B(0x05);					       /* syscall */
	B(0xe9);						       /* jmp pc */
	D32((int64_t)pc - (int64_t)(slot + n + 4));
	B(0x48), B(0x8d), B(0xa4), B(0x24), B(0x80), B(0), B(0), B(0); /* fast: lea 0x80(%rsp) */
	B(0xe9);
	D32((int64_t)pc - (int64_t)(slot + n + 4));
#undef B
#undef D32
	if (n > ULP_FAST_SLOT)
		return -E2BIG;

	/* The site: a private copy of its page(s) (the mapping is MAP_PRIVATE: the file and other
	 * processes keep theirs), writable only while the 5 bytes are written. */
	jmp[0] = 0xe9;
	memcpy(jmp + 1, &(int32_t){(int32_t)rel}, 4);
	page = mov & ~(uintptr_t)4095;
	end = (site + 4095) & ~(uintptr_t)4095;
	r = sys(SYS_mprotect, (long)page, (long)(end - page), o.x_prot | PROT_WRITE, 0, 0, 0);
	if (r < 0)
		return (int)r;
	memcpy((void *)mov, jmp, 5);
	sys(SYS_mprotect, (long)page, (long)(end - page), o.x_prot, 0, 0, 0);
	return 0;
}
