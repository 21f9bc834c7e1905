/* SPDX-License-Identifier: MIT */
/*
 * Rewriting a proven wait loop (spinloop.c) so that each iteration yields: one instruction of the
 * loop, of 5 bytes or more, becomes `jmp rel32` to a trampoline, which calls the runtime (through
 * ulp_arch_spin_entry, fast_entry.S: every register, the flags and the XSAVE state kept), then
 * does what the displaced instruction did and jumps back after it. A loop of shorter instructions
 * only gets a window of several under the jmp, while its ULP has one thread (window() below).
 *
 * Why no thread can be hurt by the 5 bytes changing: they start an instruction and lie inside it
 * (it is 5 bytes or longer), so no branch can target them but at their start and no thread can be
 * stopped in them but at their start, where the jmp does what the instruction did, after a yield
 * the program cannot see (the loop carries nothing from one iteration to the next: spinloop.c).
 * The caller makes sure no other thread of the ULP runs on another CPU while they change. When the
 * ULP has other threads (stopped, in the runtime, where a worker may resume one meanwhile), the
 * 5 bytes must lie in one aligned 16-byte block and are written with one atomic store (8 bytes,
 * or 16 with cmpxchg16b); when it has one thread, the one in the tick handler now, any site does.
 * The mprotect that ends the write makes the kernel flush the TLBs of every CPU running this
 * address space, an interrupt that serializes each of them before it runs the new bytes.
 *
 * The trampoline (a ULP_FAST_SLOT slot, like a syscall site's: fastcall.c):
 *    0: address of the displaced instruction (the loop's pc as the hook sees it)
 *    8: address of ulp_arch_spin_entry
 *   16: lea -128(%rsp),%rsp              the red zone stays the program's
 *       call *8(slot)
 *       lea 128(%rsp),%rsp               (lea: the flags stay as the loop had them)
 *       the displaced instruction(s)     a rip-relative operand re-aimed, a jcc or jmp with a
 *                                        32-bit displacement to the same target
 *       jmp (end of the last one)
 */
#include "fast_find.h"
#include "gregs.h"
#include "insn.h"
#include "spinloop.h"
#include "../arch.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

void ulp_arch_spin_entry(void) __attribute__((visibility("hidden")));

struct tramp {
	uint8_t *t;
	uintptr_t at; /* the slot's address */
	unsigned n;
};

static void put(struct tramp *tr, const void *b, unsigned len)
{
	memcpy(tr->t + tr->n, b, len);
	tr->n += len;
}

/* A 32-bit displacement to target from the end of the 4 bytes about to be written; -1 when it
 * does not reach. */
static int put_rel(struct tramp *tr, uintptr_t target)
{
	int64_t rel = (int64_t)target - (int64_t)(tr->at + tr->n + 4);
	int32_t r = (int32_t)rel;

	if (rel != r)
		return -1;
	put(tr, &r, 4);
	return 0;
}

/* The instruction at site (no branch) copied, a rip-relative operand re-aimed from the copy. */
static int copy(struct tramp *tr, uintptr_t site, const struct ulp_insn *in)
{
	const uint8_t *s = (const uint8_t *)site;
	uintptr_t after = site + in->len;

	put(tr, s, in->len);
	if (in->flags & ULP_INSN_RIPREL) {
		/* disp32 follows ModRM (no SIB with rip); re-aimed from where the copy lies */
		unsigned d = in->modrm_at + 1;
		int32_t old;
		int64_t rel;

		memcpy(&old, s + d, 4);
		rel = (int64_t)old + (int64_t)after - (int64_t)(tr->at + tr->n);
		if (rel != (int32_t)rel)
			return -1;
		old = (int32_t)rel;
		memcpy(tr->t + tr->n - in->len + d, &old, 4);
	}
	return 0;
}

/* The branch in is an unconditional jmp (else a jcc). */
static int is_jmp(const struct ulp_insn *in)
{
	return in->map == 0 && (in->opcode == 0xeb || in->opcode == 0xe9);
}

/* Bytes of the branch in re-encoded by put_branch: jmp rel32, or jcc rel32. */
static unsigned branch_len(const struct ulp_insn *in)
{
	return is_jmp(in) ? 5 : 6;
}

/* The branch in, with a 32-bit displacement, to target. */
static int put_branch(struct tramp *tr, const struct ulp_insn *in, uintptr_t target)
{
	/* jcc: the condition is the opcode's low nibble in both maps */
	uint8_t op[2] = {0x0f, (uint8_t)(0x80 | (in->opcode & 0x0f))};

	if (is_jmp(in))
		put(tr, (const uint8_t[]){0xe9}, 1);
	else
		put(tr, op, 2);
	return put_rel(tr, target);
}

/* The instruction at site, done from the trampoline. */
static int replay(struct tramp *tr, uintptr_t site, const struct ulp_insn *in)
{
	if (in->flags & ULP_INSN_BRANCH)
		return put_branch(tr, in, site + in->len + (uintptr_t)in->target_disp);
	return copy(tr, site, in);
}

/*
 * For a ULP alone, a loop with no instruction of 5 bytes: whole instructions of the loop from w,
 * 5 bytes or more together, overwritten by the jmp. As for the fast path's windows (fastcall.c),
 * nothing may branch inside [w, w+5): no branch of the function (nor of its .cold part) targets
 * there and it has no indirect jump; the one thread is not stopped there either (pc). Returns w
 * and its end, or 0; *later: a window would do once the thread is elsewhere.
 */
static uintptr_t window(const struct ulp_x86_obj *o, uintptr_t flo, uintptr_t fhi,
			const struct ulp_x86_loop *l, uintptr_t pc, uintptr_t *wend, int *later)
{
	uintptr_t w, p;
	struct ulp_insn in;

	*later = 0;
	for (w = l->head; w < l->end; w += in.len) {
		for (p = w; p < w + 5 && p < l->end; p += in.len)
			ulp_insn_decode((const uint8_t *)p, l->end - p, &in);
		if (p < w + 5)
			return 0; /* runs past the loop's end */
		if (!ulp_x86_no_branch_into(o, flo, fhi, w, w + 5)) {
			if (!(pc > w && pc < w + 5)) {
				*wend = p;
				return w;
			}
			*later = 1;
		}
		ulp_insn_decode((const uint8_t *)w, l->end - w, &in);
	}
	return 0;
}

/* The trampoline for the instructions [w, wend) at slot (layout at the top of this file); probe:
 * the next slot holds the loop's probe (below), said by the top bit of the first word. */
static int build(uintptr_t slot, uintptr_t w, uintptr_t wend, int probe)
{
	static const uint8_t lea_down[] = {0x48, 0x8d, 0x64, 0x24, 0x80};
	static const uint8_t lea_up[] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0};
	static const uint8_t call[] = {0xff, 0x15}, jmp = 0xe9;
	struct tramp tr = {(uint8_t *)slot, slot, 16};
	struct ulp_insn in;
	uintptr_t p;

	*(uint64_t *)tr.t = w | (probe ? ULP_SPIN_HAS_PROBE : 0);
	*(uint64_t *)(tr.t + 8) = (uint64_t)(uintptr_t)ulp_arch_spin_entry;
	put(&tr, lea_down, sizeof(lea_down));
	put(&tr, call, sizeof(call));
	if (put_rel(&tr, slot + 8))
		return -ERANGE;
	put(&tr, lea_up, sizeof(lea_up));
	for (p = w; p < wend; p += in.len) {
		ulp_insn_decode((const uint8_t *)p, wend - p, &in);
		if (tr.n + in.len + 6 + 5 > ULP_FAST_SLOT) /* a jcc grows to 6 bytes */
			return -E2BIG;
		if (replay(&tr, p, &in))
			return -ERANGE;
	}
	put(&tr, &jmp, 1);
	return put_rel(&tr, wend) ? -ERANGE : 0;
}

/*
 * The loop's probe, in the slot after the trampoline's: one iteration of the loop from its head,
 * run by the scheduler on another task's stack, with the waiting thread's registers as its entry
 * pushed them (struct ulp_fast_frame, fastcall.c), to learn whether the loop would end: 1 when it
 * leaves the loop, 0 when it goes round (docs/syscalls.md, "Spin loops that yield"). The loop
 * carries nothing from one iteration to the next (spinloop.c), so the iteration depends only on
 * memory and on the registers it reads and never writes (l->inputs), which are those of the frame;
 * a loop reading rsp, flags from before it, or TLS (an fs or gs load) gets no probe. The thread
 * itself resumes at the displaced instruction and finds the change on its own.
 *
 *    0: ULP_SPIN_PROBE_MAGIC
 *    8: address of `ready` (a fault in the body goes there: ulp_arch_spin_probe_fault)
 *   16: push rbx, rbp, r12-r15; the inputs loaded from the frame (rdi, which holds it, last)
 *       the loop's instructions: a branch to the head goes to `wait`, any other to `ready`
 * ready: mov $1,%eax; jmp out
 *  wait: xor %eax,%eax
 *   out: pop r15-r12, rbp, rbx; ret
 */
#define OFF(reg) (int8_t) offsetof(struct ulp_fast_frame, reg)
/* Each register's place in the frame, by number (rax..r15); rsp is no input of a probe. */
static const int8_t frame_off[16] = {OFF(rax), OFF(rcx), OFF(rdx), OFF(rbx), -1,       OFF(rbp),
				     OFF(rsi), OFF(rdi), OFF(r8),  OFF(r9),  OFF(r10), OFF(r11),
				     OFF(r12), OFF(r13), OFF(r14), OFF(r15)};
#undef OFF

static void put_load(struct tramp *tr, unsigned r)
{
	uint8_t mov[4] = {(uint8_t)(0x48 | (r >= 8 ? 4 : 0)), 0x8b, (uint8_t)(0x47 | (r & 7) << 3),
			  (uint8_t)frame_off[r]};

	put(tr, mov, sizeof(mov));
}

int ulp_x86_spin_probe_build(uintptr_t slot, const struct ulp_x86_loop *l)
{
	static const uint8_t push[] = {0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57};
	static const uint8_t tail[] = {0xb8, 1,	   0,	 0,    0,    0xeb, 0x02, /* ready */
				       0x31, 0xc0,				 /* wait */
				       0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41,
				       0x5c, 0x5d, 0x5b, 0xc3};
	struct tramp tr = {(uint8_t *)slot, slot, 16};
	uintptr_t p, ready, wait;
	struct ulp_insn in;
	unsigned r, body = 0;

	if (l->seg || (l->inputs & (ULP_X86_LOOP_FLAGS | 1u << 4)))
		return -EINVAL;
	put(&tr, push, sizeof(push));
	for (r = 0; r < 16; r++)
		if (r != 7 && (l->inputs >> r & 1))
			put_load(&tr, r);
	if (l->inputs >> 7 & 1)
		put_load(&tr, 7);
	for (p = l->head; p < l->end; p += in.len) {
		ulp_insn_decode((const uint8_t *)p, l->end - p, &in);
		body += (in.flags & ULP_INSN_BRANCH) ? branch_len(&in) : in.len;
	}
	if (tr.n + body + sizeof(tail) > ULP_FAST_SLOT)
		return -E2BIG;
	ready = slot + tr.n + body;
	wait = ready + 7;
	for (p = l->head; p < l->end; p += in.len) {
		ulp_insn_decode((const uint8_t *)p, l->end - p, &in);
		if (in.flags & ULP_INSN_BRANCH) {
			uintptr_t t = p + in.len + (uintptr_t)in.target_disp;

			if (put_branch(&tr, &in, t == l->head ? wait : ready))
				return -ERANGE;
		} else if (copy(&tr, p, &in)) {
			return -ERANGE;
		}
	}
	put(&tr, tail, sizeof(tail));
	*(uint64_t *)tr.t = ULP_SPIN_PROBE_MAGIC;
	*(uint64_t *)(tr.t + 8) = ready;
	return 0;
}

int ulp_arch_spin_patch(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
			int alone, uintptr_t refuse[2])
{
	struct ulp_x86_loop l;
	struct ulp_x86_obj o;
	struct ulp_insn in;
	uintptr_t flo, fhi, w = 0, wend = 0;
	int64_t rel;
	int rc, later = 0, probe;

	(void)hi;
	if (ulp_x86_find_obj(pc, lo, &o) || pc < o.x_lo || pc >= o.x_hi ||
	    ulp_x86_find_func(&o, pc, &flo, &fhi) || flo < o.x_lo || fhi > o.x_hi)
		return -ENOENT;
	rc = ulp_x86_wait_loop(flo, fhi, pc, &l);
	if (!rc) {
		w = l.site ? l.site : alone ? l.any : 0;
		if (w)
			wend = w + ulp_insn_decode((const uint8_t *)w, l.end - w, &in);
		else if (alone)
			w = window(&o, flo, fhi, &l, pc, &wend, &later);
		/* not remembered as refused: a later tick finds the thread elsewhere */
		if (!w && later)
			return -EAGAIN;
	}
	if (rc == -ENOENT) {
		refuse[0] = flo;
		refuse[1] = fhi;
	} else if (rc || !w) {
		refuse[0] = l.head;
		refuse[1] = l.end;
	}
	if (rc)
		return rc;
	if (!w)
		return -ENOSPC;
	rel = (int64_t)(slot + 16) - (int64_t)(w + 5);
	if (rel != (int32_t)rel)
		return -ERANGE;
	/* before the jmp: the probe copies the loop's bytes as they are */
	probe = spare && ulp_x86_spin_probe_build(spare, &l) == 0;
	rc = build(slot, w, wend, probe);
	if (rc)
		return rc;
	rc = ulp_x86_put_jmp(w, (int32_t)rel, o.x_prot, ulp_x86_store_code);
	return rc ? rc : probe;
}
