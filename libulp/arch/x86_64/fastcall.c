/* SPDX-License-Identifier: MIT */
/*
 * x86_64 fast system calls: rewriting a verified `mov $NR,%eax; syscall` site of a ULP's text into
 * a jump to a per-site trampoline, and the C side of the trampolines' entry (fast_entry.S).
 *
 * A site is rewritten only when all of this holds (anything else leaves it trapping):
 *   - the ELF object holding it is found in memory (its header, looked for page by page below the
 *     site with process_vm_readv, which cannot fault, or one found before: fast_find.c), and its
 *     PT_LOAD that is executable holds it;
 *   - its .eh_frame_hdr search table gives the FDE, hence the bounds, of the enclosing function;
 *   - decoding that function from its first byte (insn.c) lands exactly on its end, on the
 *     syscall, and on a 5-byte `b8 imm32` (mov $NR,%eax) ending right at the syscall.
 * Only the mov is overwritten (by `jmp rel32` to the trampoline); the syscall stays at its own
 * address. A branch to the mov's address reaches the trampoline, which does what the mov and the
 * syscall did; a branch to the syscall traps as before. No other byte changes, so no other branch
 * target can be affected (a target inside the mov would be inside an instruction).
 *
 * When the ULP has other threads (none running on another CPU: the caller checked; one resumed
 * meanwhile starts in the runtime), only such a one-instruction window is rewritten, its 5 bytes
 * in one aligned 16-byte block and written with one atomic store, as wait loops are
 * (spin_patch.c): a thread stopped there is at the mov's start or past it, and the mprotect that
 * ends the write serializes every CPU of the address space (a TLB flush) before it runs them.
 * Where that cannot be (and where no 5-byte window exists at all), a short window (patch_short):
 * one instruction before the syscall becomes a 2-byte jmp to alignment padding nearby, which
 * becomes the jmp to the trampoline.
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
#include "fast_find.h"
#include "gregs.h"
#include "insn.h"
#include "spinloop.h"
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
static ulp_arch_spin_hook spin_hook;

void ulp_arch_fast_entry(void) __attribute__((visibility("hidden")));
int ulp_arch_fast_dispatch(struct ulp_fast_frame *f, void *xsave)
    __attribute__((visibility("hidden")));
int ulp_arch_spin_dispatch(struct ulp_fast_frame *f, void *xsave)
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

/* The context a SIGSYS at pc would have carried: handlers read the arguments from it, pass it to
 * the ULP's own signal handlers and may change registers in it. */
static void frame_to_uc(const struct ulp_fast_frame *f, uint64_t pc, void *xsave, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	memset(uc, 0, offsetof(ucontext_t, uc_mcontext.fpregs));
	memset(&uc->uc_sigmask, 0, sizeof(uc->uc_sigmask));
	ULP_X86_GREGS_TO_UC(f, g);
	g[REG_R11] = (greg_t)f->r11;
	g[REG_RCX] = (greg_t)f->rcx;
	g[REG_RSP] = (greg_t)((uintptr_t)f + FRAME_TO_SP);
	g[REG_RIP] = (greg_t)pc;
	g[REG_EFL] = (greg_t)f->rflags;
	uc->uc_mcontext.fpregs = xsave; /* its first 512 bytes are the FXSAVE image */
}

/* The registers of the context back into the frame, but rcx and r11 (the caller's business). */
static void uc_to_frame(const ucontext_t *uc, struct ulp_fast_frame *f)
{
	const greg_t *g = uc->uc_mcontext.gregs;

	ULP_X86_GREGS_FROM_UC(f, g);
}

int ulp_arch_fast_dispatch(struct ulp_fast_frame *f, void *xsave)
{
	uintptr_t slot = f->ret & ~(uintptr_t)(ULP_FAST_SLOT - 1);
	uint64_t pc = *(const uint64_t *)slot;
	ucontext_t uc;
	int rc;

	frame_to_uc(f, pc, xsave, &uc);
	if (!fast_hook)
		return 1;
	rc = fast_hook(&uc, (long)f->rax);
	uc_to_frame(&uc, f);
	if (rc)
		return 1; /* made for real by the trampoline, with the registers as the hook left
			     them */
	/* What the syscall instruction leaves there: the return address and the flags. */
	f->rcx = pc;
	f->r11 = f->rflags;
	return 0;
}

int ulp_arch_spin_init(ulp_arch_spin_hook hook)
{
	if (!ulp_arch_fast_xsize)
		return -ENOTSUP; /* ulp_arch_fast_init first, and it found XSAVE */
	spin_hook = hook;
	return 0;
}

/* From a wait loop's trampoline (spin_patch.c): the slot's first word is the address of the
 * displaced instruction, where the loop is as far as the program can tell, its top bit set when
 * the next slot holds the loop's probe. */
int ulp_arch_spin_dispatch(struct ulp_fast_frame *f, void *xsave)
{
	uintptr_t slot = f->ret & ~(uintptr_t)(ULP_FAST_SLOT - 1);
	uint64_t w0 = *(const uint64_t *)slot;
	uintptr_t probe = (w0 & ULP_SPIN_HAS_PROBE) ? slot + ULP_FAST_SLOT + 16 : 0;
	ucontext_t uc;

	frame_to_uc(f, w0 & ~ULP_SPIN_HAS_PROBE, xsave, &uc);
	spin_hook(&uc, probe, f);
	uc_to_frame(&uc, f);
	f->rcx = (uint64_t)uc.uc_mcontext.gregs[REG_RCX];
	f->r11 = (uint64_t)uc.uc_mcontext.gregs[REG_R11];
	return 0;
}

int ulp_arch_spin_probe(uintptr_t probe, void *regs)
{
	return ((int (*)(void *))probe)(regs);
}

int ulp_arch_spin_probe_fault(uintptr_t probe, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t pc, slot = probe - 16;

	if (!probe)
		return 0;
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (pc < probe || pc >= slot + ULP_FAST_SLOT)
		return 0;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t) * (const uint64_t *)(slot + 8);
	return 1;
}

int ulp_arch_fast_func(uintptr_t lo, uintptr_t hi, uintptr_t site, uintptr_t *flo, uintptr_t *fhi)
{
	struct ulp_x86_obj o;

	(void)hi;
	if (ulp_x86_find_obj(site, lo, &o) || ulp_x86_find_func(&o, site, flo, fhi))
		return -1;
	return 0;
}

/* ---- verifying a site ---- */

#define MAX_FRAGS 8  /* other FDEs a function branches into (its .cold part, tail calls) */
#define MAX_BEFORE 4 /* instructions looked at before the syscall */

struct scan {
	uintptr_t wlo, whi;	   /* a branch target strictly inside refuses the site */
	int indirect;		   /* an indirect jump was seen */
	int inside;		   /* a branch target inside the window was seen */
	uintptr_t frag[MAX_FRAGS]; /* targets of jumps leaving the function */
	unsigned nfrag;
	int too_many;
	uintptr_t before[MAX_BEFORE]; /* the starts of the instructions before stop, nearest last */
	unsigned nbefore;
	uintptr_t stop;
};

/* Decode [lo, hi) from lo, recording branches and the boundaries before sc->stop; 0 when it ends
 * exactly at hi with a boundary at each of want[0..n) (sorted), else -1. sc may be NULL. */
static int walk(uintptr_t lo, uintptr_t hi, const uintptr_t *want, unsigned n, struct scan *sc)
{
	uintptr_t p = lo;
	unsigned k = 0;
	struct ulp_insn in;

	while (p < hi) {
		if (k < n && want[k] < p)
			return -1; /* stepped over a wanted boundary */
		if (k < n && want[k] == p)
			k++;
		if (sc && p < sc->stop) {
			if (sc->nbefore == MAX_BEFORE)
				memmove(sc->before, sc->before + 1,
					sizeof(sc->before[0]) * --sc->nbefore);
			sc->before[sc->nbefore++] = p;
		}
		if (!ulp_insn_decode((const uint8_t *)p, hi - p, &in))
			return -1;
		p += in.len;
		if (!sc)
			continue;
		if (in.flags & ULP_INSN_INDIRECT)
			sc->indirect = 1;
		if ((in.flags & ULP_INSN_BRANCH) && !(in.flags & ULP_INSN_CALL)) {
			uintptr_t t = p + (uintptr_t)in.target_disp;

			if (t > sc->wlo && t < sc->whi)
				sc->inside = 1;
			if (t < lo || t >= hi) {
				if (sc->nfrag < MAX_FRAGS)
					sc->frag[sc->nfrag++] = t;
				else
					sc->too_many = 1;
			}
		}
	}
	return p == hi && k == n ? 0 : -1;
}

int ulp_arch_fast_walk(uintptr_t lo, uintptr_t hi, const uintptr_t *want, unsigned n)
{
	uintptr_t none = 0;

	return walk(lo, hi, want ? want : &none, want ? n : 0, NULL);
}

static int is_jcc(const struct ulp_insn *in)
{
	return (in->flags & ULP_INSN_BRANCH) && !(in->flags & ULP_INSN_PREFIXED) &&
	       ((in->map == 0 && in->opcode >= 0x70 && in->opcode <= 0x7f) ||
		(in->map == 1 && in->opcode >= 0x80 && in->opcode <= 0x8f));
}

/* An instruction the trampoline can replay: a conditional jump (re-encoded there with a 32-bit
 * displacement), or no rip-relative operand, no branch, and one of the plain ALU/move forms that
 * set up a syscall in libc (mov $NR,%eax; xor %eax,%eax; mov 0x8(%rsp),%edi; mov %r8d,%eax ...). */
static int movable(const struct ulp_insn *in)
{
	if (is_jcc(in))
		return 1;
	if (in->map != 0 || (in->flags & (ULP_INSN_RIPREL | ULP_INSN_BRANCH | ULP_INSN_INDIRECT |
					  ULP_INSN_PREFIXED)))
		return 0;
	if (in->opcode >= 0xb8 && in->opcode <= 0xbf) /* mov $imm, reg */
		return 1;
	switch (in->opcode) {
	case 0x01: /* add */
	case 0x29: /* sub */
	case 0x31: /* xor */
	case 0x39: /* cmp r/m, r */
	case 0x3b: /* cmp r, r/m */
	case 0x80: /* group 1, r/m8, imm8 */
	case 0x81: /* group 1, imm32 */
	case 0x83: /* group 1, imm8 */
	case 0x85: /* test */
	case 0x89: /* mov r/m, r */
	case 0x8b: /* mov r, r/m */
		return 1;
	}
	return 0;
}

/*
 * The window to rewrite for the syscall at site, in the function [flo, fhi): [w, site+2), made of
 * the nearest whole instructions before the syscall that the trampoline can replay, 5 bytes or
 * more with the syscall. Only [w, w+5) is overwritten (the jmp); the syscall, and everything after
 * it, stay where they were, so any return address or signal frame pointing after the syscall
 * stays valid. A branch to w reaches the trampoline, which does what the window did; a branch to
 * an instruction at or after w+5 finds it intact. A branch to the inside of [w, w+5) would not:
 * when the jmp covers more than one instruction, the function must have no indirect jump and no
 * branch of it, nor of code it jumps to outside its bounds (its .cold part), may target there.
 * Returns w, or 0.
 */
static uintptr_t window(const struct ulp_x86_obj *o, uintptr_t site, uintptr_t flo, uintptr_t fhi)
{
	uintptr_t want[1] = {site}, w = 0;
	struct ulp_insn in;
	struct scan sc;
	unsigned i;

	memset(&sc, 0, sizeof(sc));
	sc.stop = site;
	sc.wlo = sc.whi = 0;
	if (walk(flo, fhi, want, 1, &sc))
		return 0;
	for (i = sc.nbefore; i-- > 0;) {
		if (!ulp_insn_decode((const uint8_t *)sc.before[i], site - sc.before[i], &in) ||
		    !movable(&in))
			return 0;
		if (site + 2 - sc.before[i] >= 5) {
			w = sc.before[i];
			break;
		}
	}
	if (!w)
		return 0;
	if (ulp_insn_decode((const uint8_t *)w, site - w, &in) >= 5)
		return w; /* one instruction under the jmp: nothing can branch inside it */
	return ulp_x86_no_branch_into(o, flo, fhi, w, w + 5) ? 0 : w;
}

/* lea -0x80(%rsp),%rsp: a trampoline's step over the red zone, right after the replayed
 * instructions (tramp_tail writes it, tramp_clear finds their end by it). */
static const uint8_t lea_down[5] = {0x48, 0x8d, 0x64, 0x24, 0x80};

/* 0 when target is the code of one of the ULP's syscall trampolines (o->t_lo..t_hi: a jump there
 * is a rewritten window of the function) whose branches, its replayed conditional jumps and its
 * way back, all stay out of (wlo, whi); else -1. */
static int tramp_clear(const struct ulp_x86_obj *o, uintptr_t target, uintptr_t wlo, uintptr_t whi)
{
	uintptr_t slot = target - 16, p, back;
	struct ulp_insn in;

	if (target < o->t_lo || target >= o->t_hi || (target & (ULP_FAST_SLOT - 1)) != 16 ||
	    *(const uint64_t *)(slot + 8) != (uint64_t)(uintptr_t)ulp_arch_fast_entry)
		return -1; /* not a syscall's (a wait loop's, spin_patch.c) */
	back = *(const uint64_t *)slot;
	if (back > wlo && back < whi)
		return -1;
	for (p = target; p < slot + ULP_FAST_SLOT; p += in.len) {
		const uint8_t *b = (const uint8_t *)p;

		if (!memcmp(b, lea_down, sizeof(lea_down)))
			return 0; /* the replayed instructions end */
		if (!ulp_insn_decode(b, slot + ULP_FAST_SLOT - p, &in))
			return -1;
		if (in.flags & ULP_INSN_BRANCH) {
			uintptr_t t = p + in.len + (uintptr_t)in.target_disp;

			if (t > wlo && t < whi)
				return -1;
		}
	}
	return -1;
}

/* ulp_x86_no_branch_into; indirect_ok: a function with indirect jumps is taken too (for the
 * padding of short windows, which no jump table targets). */
static int no_branch_into(const struct ulp_x86_obj *o, uintptr_t flo, uintptr_t fhi, uintptr_t wlo,
			  uintptr_t whi, int indirect_ok)
{
	uintptr_t none = 0;
	struct scan sc;
	unsigned i, n;

	memset(&sc, 0, sizeof(sc));
	sc.wlo = wlo;
	sc.whi = whi;
	if (walk(flo, fhi, &none, 0, &sc) || (sc.indirect && !indirect_ok) || sc.inside ||
	    sc.too_many)
		return -1;
	for (i = 0, n = sc.nfrag; i < n; i++) {
		uintptr_t glo, ghi;

		if ((sc.frag[i] < o->x_lo || sc.frag[i] >= o->x_hi) &&
		    !tramp_clear(o, sc.frag[i], wlo, whi))
			continue; /* a site of the function rewritten before */
		if (sc.frag[i] < o->x_lo || sc.frag[i] >= o->x_hi ||
		    ulp_x86_find_func(o, sc.frag[i], &glo, &ghi))
			return -1; /* a jump to code that cannot be bounded */
		if (walk(glo, ghi, &none, 0, &sc) || sc.inside || sc.too_many ||
		    (sc.indirect && !indirect_ok))
			return -1;
	}
	return 0;
}

int ulp_x86_no_branch_into(const struct ulp_x86_obj *o, uintptr_t flo, uintptr_t fhi, uintptr_t wlo,
			   uintptr_t whi)
{
	return no_branch_into(o, flo, fhi, wlo, whi, 0);
}

/* ---- rewriting it ---- */

static int cas16(uint64_t *p, uint64_t olo, uint64_t ohi, uint64_t nlo, uint64_t nhi);

#define B(x) (t[n++] = (uint8_t)(x))
#define D32(v)                                                                                     \
	do {                                                                                       \
		int32_t v_ = (int32_t)(v);                                                         \
		memcpy(t + n, &v_, 4);                                                             \
		n += 4;                                                                            \
	} while (0)
#define LEA_UP() (B(0x48), B(0x8d), B(0xa4), B(0x24), B(0x80), B(0), B(0), B(0))

/* The trampoline's header, and its replayed instructions [w, site) (a conditional jump goes where
 * it went, with a 32-bit displacement), from offset 16 of slot; the offset after them, or
 * -errno. */
static int tramp_head(uintptr_t slot, uintptr_t pc, uintptr_t w, uintptr_t site)
{
	uint8_t *t = (uint8_t *)slot;
	unsigned n = 16;
	struct ulp_insn in;
	int64_t rel;
	uintptr_t p;

	*(uint64_t *)t = pc;
	*(uint64_t *)(t + 8) = (uint64_t)(uintptr_t)ulp_arch_fast_entry;
	/* before the red zone is stepped over (they may address the stack) */
	for (p = w; p < site; p += in.len) {
		ulp_insn_decode((const uint8_t *)p, site - p, &in);
		if (is_jcc(&in)) {
			uintptr_t target = p + in.len + (uintptr_t)in.target_disp;
			unsigned cc = in.map == 0 ? in.opcode - 0x70 : in.opcode - 0x80;

			if (n + 6 > ULP_FAST_SLOT)
				return -E2BIG;
			B(0x0f), B(0x80 + cc);
			rel = (int64_t)target - (int64_t)(slot + n + 4);
			if (rel != (int32_t)rel)
				return -ERANGE;
			D32(rel);
		} else {
			if (n + in.len > ULP_FAST_SLOT)
				return -E2BIG;
			memcpy(t + n, (const void *)p, in.len);
			n += in.len;
		}
	}
	return (int)n;
}

/* The rest of the trampoline, from offset n: the call of the entry, and the way back to pc. */
static int tramp_tail(uintptr_t slot, unsigned n, uintptr_t pc)
{
	uint8_t *t = (uint8_t *)slot;

	if (n + 5 + 8 + 8 + 2 + 5 + 8 + 5 > ULP_FAST_SLOT)
		return -E2BIG;
	memcpy(t + n, lea_down, sizeof(lea_down));
	n += sizeof(lea_down);
	B(0xff), B(0x15); /* call *8(slot) */
	D32(8 - (int)(n + 4));
	B(0xeb); /* jmp fast: over lea, syscall, jmp */
	B(8 + 2 + 5);
	LEA_UP(); /* not emulated */
	B(0x0f), B(0x05);
	B(0xe9);
	D32((int64_t)pc - (int64_t)(slot + n + 4));
	LEA_UP(); /* fast: */
	B(0xe9);
	D32((int64_t)pc - (int64_t)(slot + n + 4));
	return 0;
}
#undef B
#undef D32
#undef LEA_UP

/* The trampoline of the site whose syscall ends at pc, replaying [w, site), reached by a jmp rel32
 * ending at from: *rel, that jmp's displacement. Both jumps must reach (from -> slot, slot ->
 * back). 0 or -errno. */
static int tramp_write(uintptr_t slot, uintptr_t pc, uintptr_t from, uintptr_t w, uintptr_t site,
		       int64_t *rel)
{
	int64_t back = (int64_t)pc - (int64_t)(slot + ULP_FAST_SLOT);
	int n;

	*rel = (int64_t)(slot + 16) - (int64_t)from;
	if (*rel != (int32_t)*rel || back != (int32_t)back)
		return -ERANGE;
	n = tramp_head(slot, pc, w, site);
	return n < 0 ? n : tramp_tail(slot, (unsigned)n, pc);
}

/* Padding: nop (90 without REX, 66 90, 0f 1f) and int3. */
static int is_pad(const struct ulp_insn *in)
{
	if (in->map == 0)
		return (in->opcode == 0x90 && !in->rex) || in->opcode == 0xcc;
	return in->map == 1 && in->opcode == 0x1f;
}

/* ret, jmp, ud2: control never goes on to the next instruction. */
static int is_uncond(const struct ulp_insn *in)
{
	if (in->map == 0)
		return in->opcode == 0xc3 || in->opcode == 0xc2 || in->opcode == 0xe9 ||
		       in->opcode == 0xeb;
	return in->map == 1 && in->opcode == 0x0b;
}

/*
 * Padding in [lo, hi), decoded from lo, that a `jmp rel8` ending at from reaches (the nearest):
 * the start of 5 bytes or more of is_pad instructions right after an is_uncond one, up to an
 * instruction at a 16-byte boundary. That is the assembler's alignment padding: nothing falls
 * into it, and a jump target is the aligned instruction after it, not inside it (direct jumps
 * are checked too: patch_short). 0 when there is none, or [lo, hi) does not decode.
 */
static uintptr_t pad_in(uintptr_t lo, uintptr_t hi, uintptr_t from)
{
	uintptr_t p = lo, run = 0, best = 0;
	struct ulp_insn in;
	int dead = 0, end;

	for (;;) {
		end = p >= hi;
		if (!end && !ulp_insn_decode((const uint8_t *)p, hi - p, &in))
			return 0;
		if (!end && is_pad(&in) && (run || dead)) {
			if (!run)
				run = p;
		} else {
			if (run && p - run >= 5 && !(p & 15)) {
				intptr_t d = (intptr_t)run - (intptr_t)from;
				intptr_t bd = (intptr_t)best - (intptr_t)from;

				if (d >= -128 && d <= 127 &&
				    (!best || (d < 0 ? -d : d) < (bd < 0 ? -bd : bd)))
					best = run;
			}
			run = 0;
		}
		if (end)
			break;
		dead = is_uncond(&in);
		p += in.len;
	}
	return p == hi ? best : 0;
}

/* Bytes written with one atomic store (inside one aligned 8-byte word, or with CMPXCHG16B one
 * aligned 16-byte block): 0, or -EBUSY where they cannot be. */
static int store_atomic(uintptr_t at, const uint8_t *b, unsigned n)
{
	unsigned a, bb, c, d;

	if ((at & 7) + n <= 8) {
		uint64_t *w = (uint64_t *)(at & ~(uintptr_t)7), v = *w;

		memcpy((uint8_t *)&v + (at & 7), b, n);
		__atomic_store_n(w, v, __ATOMIC_SEQ_CST);
		return 0;
	}
	if ((at & 15) + n > 16 || !__get_cpuid(1, &a, &bb, &c, &d) || !(c & (1u << 13)))
		return -EBUSY;
	{
		uint64_t *w = (uint64_t *)(at & ~(uintptr_t)15), v[2];

		do {
			v[0] = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
			v[1] = __atomic_load_n(&w[1], __ATOMIC_RELAXED);
			uint64_t nv[2] = {v[0], v[1]};

			memcpy((uint8_t *)nv + (at & 15), b, n);
			if (cas16(w, v[0], v[1], nv[0], nv[1]))
				break;
		} while (1);
	}
	return 0;
}

/* jmp rel32 into b[0..5) (rel counted from the jmp's end). */
static void jmp_bytes(uint8_t *b, int32_t rel)
{
	b[0] = 0xe9;
	memcpy(b + 1, &rel, 4);
}

/* n bytes at at, in a private copy of their page(s) (the mapping is MAP_PRIVATE: the file and
 * other processes keep theirs) made writable for the store only, executable throughout (other
 * code of the page may run meanwhile); prot: the segment's protection. store writes them (NULL: a
 * plain copy, for code no other thread can run). 0 or -errno. */
static int put_bytes(uintptr_t at, const uint8_t *b, unsigned n, int prot,
		     int (*store)(uintptr_t, const uint8_t *, unsigned))
{
	uintptr_t page = at & ~(uintptr_t)4095, end = (at + n + 4095) & ~(uintptr_t)4095;
	long r;
	int rc = 0;

	r = ulp_arch_syscall(SYS_mprotect, (long)page, (long)(end - page), prot | PROT_WRITE, 0, 0,
			     0);
	if (r < 0)
		return (int)r;
	if (store)
		rc = store(at, b, n);
	else
		memcpy((void *)at, b, n);
	ulp_arch_syscall(SYS_mprotect, (long)page, (long)(end - page), prot, 0, 0, 0);
	return rc;
}

/*
 * A site whose window is too short for a jmp (ld.so's `xor %eax,%eax; syscall` at a function's
 * start), or, with other threads, spans instructions (glibc's cancellable read: `mov 0x8(%rsp),
 * %edi; xor %eax,%eax; syscall`, where a thread preempted between the two would resume inside
 * the jmp): the one instruction right before the syscall, I, becomes `jmp rel8` (the rest of
 * its bytes nops, so the function still decodes) to alignment padding within reach (pad_in), in
 * the function or between it and the one before, which becomes `jmp rel32` to the trampoline,
 * which replays I. Only I changes in code that runs, with one atomic store: a thread stopped at
 * I, before it or after the syscall finds whole instructions. The padding is written first;
 * nothing runs there.
 */
static int patch_short(const struct ulp_x86_obj *o, uintptr_t pc, uintptr_t flo, uintptr_t fhi,
		       uintptr_t slot, int alone)
{
	uintptr_t site = pc - 2, want[1] = {site}, i = 0, t, glo, ghi;
	struct ulp_insn in;
	struct scan sc;
	uint8_t b[16];
	int64_t rel;
	int rc, k;

	memset(&sc, 0, sizeof(sc));
	sc.stop = site;
	if (walk(flo, fhi, want, 1, &sc) || !sc.nbefore)
		return -EILSEQ;
	/* I: the nearest instruction before the syscall that one store can replace, all of them
	 * from it on replayable (those after I stay as they are: a thread stopped at one of them
	 * goes on to the syscall, which traps) */
	for (k = sc.nbefore; k-- > 0;) {
		i = sc.before[k];
		if (!ulp_insn_decode((const uint8_t *)i, site - i, &in) || !movable(&in))
			return -EILSEQ;
		if (in.len >= 2 && in.len <= 8 && !is_jcc(&in) &&
		    (alone || (i & 7) + in.len <= 8 || (i & 15) + in.len <= 16))
			break;
	}
	if (k < 0)
		return -EBUSY; /* no one store writes any of them */
	t = pad_in(flo, fhi, i + 2);
	if (!t) { /* between the function before and this one */
		if (flo <= o->x_lo || ulp_x86_func_before(o, flo - 1, &glo, &ghi) || ghi > flo ||
		    glo < o->x_lo)
			return -EILSEQ;
		t = pad_in(glo, flo, i + 2);
		if (!t || no_branch_into(o, glo, ghi, t - 1, t + 5, 1))
			return -EILSEQ;
	}
	if (no_branch_into(o, flo, fhi, t - 1, t + 5, 1))
		return -EILSEQ;
	rc = tramp_write(slot, pc, t + 5, i, site, &rel);
	if (rc)
		return rc;
	rc = ulp_x86_put_jmp(t, (int32_t)rel, o->x_prot, NULL);
	if (rc)
		return rc;
	b[0] = 0xeb;
	b[1] = (uint8_t)(int8_t)((intptr_t)t - (intptr_t)(i + 2));
	memset(b + 2, 0x90, in.len - 2);
	return put_bytes(i, b, in.len, o->x_prot, alone ? NULL : store_atomic);
}

int ulp_arch_fast_patch(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, int alone)
{
	uintptr_t site = pc - 2, w, flo, fhi;
	const uint8_t *s = (const uint8_t *)site;
	struct ulp_x86_obj o;
	struct ulp_insn in;
	int64_t rel;
	int rc;

	(void)hi;
	if (s[0] != 0x0f || s[1] != 0x05)
		return -EINVAL;
	if (ulp_x86_find_obj(site, lo, &o))
		return -ENOENT;
	if (site < o.x_lo || pc > o.x_hi || ulp_x86_find_func(&o, site, &flo, &fhi) || pc > fhi)
		return -ENOENT;
	/* the trampolines end where the partition's code starts (arch.h) */
	o.t_lo = lo - (ULP_FAST_AREA - ULP_FAST_AREA_HDR);
	o.t_hi = lo;
	w = window(&o, site, flo, fhi);
	/* Other threads (stopped: the caller checked): one instruction under the jmp, so none can
	 * be stopped inside it, written with one atomic store (see the top of this file); else
	 * the short way. */
	if (!w || (!alone && (ulp_insn_decode((const uint8_t *)w, site - w, &in) < 5 ||
			      !ulp_x86_jmp_atomic(w))))
		return patch_short(&o, pc, flo, fhi, slot, alone);
	rc = tramp_write(slot, pc, w + 5, w, site, &rel);
	if (rc)
		return rc;
	/* The window: only its first 5 bytes change; the ULP alone, also the rest of an instruction
	 * the jmp covers in part, into nops, which nothing runs (a branch into the window was
	 * refused, a return is after the syscall): later walks of the function stay in step with
	 * its instructions, so its other sites can be rewritten (glibc's read: the single-thread
	 * site first, the cancellable one once a thread exists). */
	if (alone) {
		uint8_t b[32];
		uintptr_t p;

		for (p = w; p < w + 5; p += in.len)
			ulp_insn_decode((const uint8_t *)p, site + 2 - p, &in);
		if (p - w <= sizeof(b)) {
			jmp_bytes(b, (int32_t)rel);
			memset(b + 5, 0x90, p - w - 5);
			return put_bytes(w, b, (unsigned)(p - w), o.x_prot, NULL);
		}
	}
	return ulp_x86_put_jmp(w, (int32_t)rel, o.x_prot, alone ? NULL : ulp_x86_store_code);
}

static int cas16(uint64_t *p, uint64_t olo, uint64_t ohi, uint64_t nlo, uint64_t nhi)
{
	uint8_t ok;

	__asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
			 : "=q"(ok), "+m"(*(volatile uint64_t(*)[2])p), "+a"(olo), "+d"(ohi)
			 : "b"(nlo), "c"(nhi)
			 : "memory", "cc");
	return ok;
}

/* n bytes at at (within 16), with one atomic store when they lie in one aligned 16-byte block;
 * else byte by byte (the caller knows no other thread exists). */
int ulp_x86_store_code(uintptr_t at, const uint8_t *b, unsigned n)
{
	if ((at & 15) + n > 16) {
		memcpy((void *)at, b, n);
		return 0;
	}
	return store_atomic(at, b, n) ? -ENOSYS : 0; /* no CMPXCHG16B */
}

int ulp_x86_put_jmp(uintptr_t w, int32_t rel, int prot,
		    int (*store)(uintptr_t, const uint8_t *, unsigned))
{
	uint8_t jmp[5];

	jmp_bytes(jmp, rel);
	return put_bytes(w, jmp, 5, prot, store);
}
