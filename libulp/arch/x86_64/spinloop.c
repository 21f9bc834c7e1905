/* SPDX-License-Identifier: MIT */
/*
 * Finding and proving wait loops (spinloop.h). Nothing is guessed: the function is decoded from
 * its first byte (insn.c), the loop is the innermost backward branch around pc, and every
 * instruction of the loop must be one of a short whitelist whose register reads and writes are
 * known exactly. Any other instruction refuses the loop.
 *
 * A wait loop is what `while (*flag == old) ;` compiles to: each iteration loads memory, compares
 * and branches, and depends on nothing the previous iteration computed. Then running the scheduler
 * between two iterations changes nothing the loop can see but the memory it waits on, which is
 * what another ULP or thread changes anyway: yielding there is invisible to the program. A loop
 * that stores, or carries a register from one iteration to the next (a counter, a sum), is refused:
 * yielding there would be harmless too, but it is no wait, and the point is not to slow down
 * loops that compute.
 */
#include "spinloop.h"
#include "insn.h"

#include <errno.h>
#include <string.h>

#define LOOP_MAX_BYTES 64
#define LOOP_MAX_INSNS 16
#define FLAGS ULP_X86_LOOP_FLAGS /* bits 0-15: rax..r15 */

/* What one instruction does, for the loop's proof. */
struct effect {
	unsigned rd, wr; /* registers (and FLAGS) read and written */
	int mem;	 /* reads memory */
	int cond;	 /* a conditional branch */
	int jmp;	 /* an unconditional direct jump */
	int seg;	 /* an fs or gs prefix */
};

/* The parts of an instruction the effects depend on. */
struct parsed {
	const uint8_t *p;
	unsigned rex, op, map, modrm_at;
	int osize; /* 8, 16, 32, 64: operand size of non-byte forms */
	int rep;   /* f3 */
	int hint;  /* 2e or 3e */
	int seg;   /* 64 or 65 */
};

static unsigned bit(unsigned r)
{
	return 1u << r;
}

/* Prefixes and opcode. -1: a prefix no whitelisted form takes (lock, f2, 67, es/ss). */
static int parse(const uint8_t *p, const struct ulp_insn *in, struct parsed *x)
{
	unsigned i = 0;

	memset(x, 0, sizeof(*x));
	x->p = p;
	x->osize = 32;
	for (;; i++) {
		if (p[i] == 0x66)
			x->osize = 16;
		else if (p[i] == 0xf3)
			x->rep = 1;
		else if (p[i] == 0x2e || p[i] == 0x3e)
			x->hint = 1;
		else if (p[i] == 0x64 || p[i] == 0x65)
			x->seg = 1;
		else if (p[i] == 0xf0 || p[i] == 0xf2 || p[i] == 0x67 || p[i] == 0x26 ||
			 p[i] == 0x36)
			return -1;
		else
			break;
	}
	if ((p[i] & 0xf0) == 0x40)
		x->rex = p[i++];
	if (x->rex & 8)
		x->osize = 64;
	if (in->map > 1 || (in->map == 1 && p[i] != 0x0f))
		return -1; /* VEX, EVEX, 0f38, 0f3a: nothing of theirs is whitelisted */
	if (in->map == 1)
		i++;
	x->map = in->map;
	x->op = in->opcode;
	x->modrm_at = i + 1;
	return 0;
}

static unsigned modrm(const struct parsed *x)
{
	return x->p[x->modrm_at];
}

static int mod3(const struct parsed *x)
{
	return (modrm(x) >> 6) == 3;
}

static unsigned reg_of(const struct parsed *x)
{
	return ((modrm(x) >> 3) & 7) | ((x->rex & 4) << 1);
}

/* A byte register number as a full register: without REX, 4-7 are ah, ch, dh, bh. */
static unsigned byte_reg(const struct parsed *x, unsigned r)
{
	return (!x->rex && r >= 4 && r < 8) ? r - 4 : r;
}

/* The registers a memory operand reads (none for rip-relative). */
static unsigned addr_regs(const struct parsed *x)
{
	unsigned m = modrm(x), mod = m >> 6, rm = m & 7, r = 0;

	if (rm == 4) {
		unsigned sib = x->p[x->modrm_at + 1];
		unsigned idx = ((sib >> 3) & 7) | ((x->rex & 2) << 2);

		if (idx != 4)
			r |= bit(idx);
		if (!(mod == 0 && (sib & 7) == 5))
			r |= bit((sib & 7) | ((x->rex & 1) << 3));
		return r;
	}
	if (mod == 0 && rm == 5)
		return 0;
	return bit(rm | ((x->rex & 1) << 3));
}

/* The r/m operand as a source: its register, or a memory read. */
static void read_rm(const struct parsed *x, int byte, struct effect *e)
{
	if (mod3(x)) {
		unsigned r = (modrm(x) & 7) | ((x->rex & 1) << 3);

		e->rd |= bit(byte ? byte_reg(x, r) : r);
	} else {
		e->rd |= addr_regs(x);
		e->mem = 1;
	}
}

/* A register destination of size: 8 and 16 bits keep the rest, so they read it too; 32 bits
 * zero the upper half, a full write like 64. */
static void write_reg(unsigned r, int size, struct effect *e)
{
	if (size < 32)
		e->rd |= bit(r);
	e->wr |= bit(r);
}

static unsigned rm_reg(const struct parsed *x, int byte)
{
	unsigned r = (modrm(x) & 7) | ((x->rex & 1) << 3);

	return byte ? byte_reg(x, r) : r;
}

/* add, or, and, sub, xor, cmp in their six one-byte forms (00-05, 08-0d, 20-25, 28-2d, 30-35,
 * 38-3d). adc and sbb read the carry and are refused. */
static int alu(const struct parsed *x, struct effect *e)
{
	unsigned kind = x->op & 7, fn = x->op >> 3;
	int byte = !(kind & 1), size = byte ? 8 : x->osize, cmp = fn == 7;

	if (fn == 2 || fn == 3 || kind > 5)
		return -1;
	e->wr |= FLAGS;
	if (kind >= 4) { /* al/ax/eax/rax, imm */
		if (cmp)
			e->rd |= bit(0);
		else
			write_reg(0, size, e), e->rd |= bit(0);
		return 0;
	}
	if (kind < 2) { /* op r/m, reg */
		unsigned src = byte ? byte_reg(x, reg_of(x)) : reg_of(x);

		if (!mod3(x) && !cmp)
			return -1; /* a store */
		e->rd |= bit(src);
		read_rm(x, byte, e);
		if (!cmp && rm_reg(x, byte) == src && (fn == 6 || fn == 5) && size >= 32) {
			e->rd &= ~bit(src); /* xor/sub of a register with itself: a zeroing write */
			e->wr |= bit(src);
		} else if (!cmp) {
			write_reg(rm_reg(x, byte), size, e);
		}
		return 0;
	}
	/* op reg, r/m */
	{
		unsigned dst = byte ? byte_reg(x, reg_of(x)) : reg_of(x);

		read_rm(x, byte, e);
		if (!cmp && mod3(x) && rm_reg(x, byte) == dst && (fn == 6 || fn == 5) &&
		    size >= 32) {
			e->rd &= ~bit(dst);
			e->wr |= bit(dst);
			return 0;
		}
		e->rd |= bit(dst);
		if (!cmp)
			write_reg(dst, size, e);
	}
	return 0;
}

/* Group 1 with an immediate (80, 81, 83): /0 add, /1 or, /4 and, /5 sub, /6 xor, /7 cmp. */
static int alu_imm(const struct parsed *x, struct effect *e)
{
	unsigned fn = (modrm(x) >> 3) & 7;
	int byte = x->op == 0x80;

	if (fn == 2 || fn == 3)
		return -1;
	if (!mod3(x) && fn != 7)
		return -1; /* a store */
	e->wr |= FLAGS;
	read_rm(x, byte, e);
	if (fn != 7)
		write_reg(rm_reg(x, byte), byte ? 8 : x->osize, e);
	return 0;
}

/* The one-byte map's whitelisted forms. */
static int effect_map0(const struct parsed *x, struct effect *e)
{
	unsigned op = x->op;

	if (op < 0x40)
		return alu(x, e);
	if (op >= 0x70 && op <= 0x7f) {
		e->rd |= FLAGS;
		e->cond = 1;
		return 0;
	}
	if (op >= 0xb0 && op <= 0xb7) { /* mov $imm8, r8 */
		write_reg(byte_reg(x, (op & 7) | ((x->rex & 1) << 3)), 8, e);
		return 0;
	}
	if (op >= 0xb8 && op <= 0xbf) {
		write_reg((op & 7) | ((x->rex & 1) << 3), x->osize, e);
		return 0;
	}
	switch (op) {
	case 0x63: /* movsxd */
		read_rm(x, 0, e);
		write_reg(reg_of(x), 32, e);
		return 0;
	case 0x80:
	case 0x81:
	case 0x83:
		return alu_imm(x, e);
	case 0x84: /* test r/m, r */
	case 0x85:
		read_rm(x, op == 0x84, e);
		e->rd |= bit(op == 0x84 ? byte_reg(x, reg_of(x)) : reg_of(x));
		e->wr |= FLAGS;
		return 0;
	case 0x88: /* mov r/m, r: only between registers */
	case 0x89:
		if (!mod3(x))
			return -1;
		e->rd |= bit(op == 0x88 ? byte_reg(x, reg_of(x)) : reg_of(x));
		write_reg(rm_reg(x, op == 0x88), op == 0x88 ? 8 : x->osize, e);
		return 0;
	case 0x8a: /* mov r, r/m: a load or a move */
	case 0x8b:
		read_rm(x, op == 0x8a, e);
		write_reg(op == 0x8a ? byte_reg(x, reg_of(x)) : reg_of(x),
			  op == 0x8a ? 8 : x->osize, e);
		return 0;
	case 0x8d: /* lea: an address computed, no memory read */
		if (mod3(x))
			return -1;
		e->rd |= addr_regs(x);
		write_reg(reg_of(x), x->osize, e);
		return 0;
	case 0x90: /* nop, pause (f3 90); with REX.B it is xchg %r8,%rax */
		return (x->rex & 1) ? -1 : 0;
	case 0xa8: /* test $imm, al/eax */
	case 0xa9:
		e->rd |= bit(0);
		e->wr |= FLAGS;
		return 0;
	case 0xc6: /* mov $imm, r: only into a register */
	case 0xc7:
		if (!mod3(x) || ((modrm(x) >> 3) & 7))
			return -1;
		write_reg(rm_reg(x, op == 0xc6), op == 0xc6 ? 8 : x->osize, e);
		return 0;
	case 0xe9:
	case 0xeb:
		e->jmp = 1;
		return 0;
	case 0xf6: /* test $imm, r/m */
	case 0xf7:
		if ((modrm(x) >> 3) & 7)
			return -1;
		read_rm(x, op == 0xf6, e);
		e->wr |= FLAGS;
		return 0;
	}
	return -1;
}

/* The 0f map's whitelisted forms. */
static int effect_map1(const struct parsed *x, struct effect *e)
{
	unsigned op = x->op;

	if (op >= 0x80 && op <= 0x8f) {
		e->rd |= FLAGS;
		e->cond = 1;
		return 0;
	}
	switch (op) {
	case 0x1f: /* nop r/m: touches nothing */
		return ((modrm(x) >> 3) & 7) ? -1 : 0;
	case 0xb6: /* movzx, movsx */
	case 0xb7:
	case 0xbe:
	case 0xbf:
		read_rm(x, op == 0xb6 || op == 0xbe, e);
		write_reg(reg_of(x), x->osize, e);
		return 0;
	}
	return -1;
}

/* The effect of the instruction at p (decoded as in), or -1 when it is not whitelisted. */
static int effect_of(const uint8_t *p, const struct ulp_insn *in, struct effect *e)
{
	struct parsed x;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((in->flags & (ULP_INSN_INDIRECT | ULP_INSN_CALL)) || parse(p, in, &x))
		return -1;
	rc = x.map == 0 ? effect_map0(&x, e) : effect_map1(&x, e);
	if (rc)
		return -1;
	/* f3 only as pause; branch hints only on jcc and nops; a segment only on a memory read */
	if (x.rep && !(x.map == 0 && x.op == 0x90))
		return -1;
	if (x.hint && !e->cond && !(x.map == 1 && x.op == 0x1f))
		return -1;
	if (x.seg && !e->mem)
		return -1;
	e->seg = x.seg;
	if (e->wr & bit(4))
		return -1; /* rsp moves: not a loop that only waits (reading a local is fine) */
	return 0;
}

/*
 * Check the body [h, e) whose last instruction branches back to h: straight line, forward exits
 * only, whitelisted, a memory read, a conditional branch, no loop-carried register or flag.
 */
static int prove(uintptr_t h, uintptr_t e, struct ulp_x86_loop *l)
{
	unsigned written = 0, all = 0, n = 0;
	int mem = 0, cond = 0;
	uintptr_t p;
	struct ulp_insn in;
	struct effect ef;

	l->site = 0;
	l->any = 0;
	l->inputs = 0;
	l->seg = 0;
	for (p = h; p < e; p += in.len) {
		if (!ulp_insn_decode((const uint8_t *)p, e - p, &in) ||
		    effect_of((const uint8_t *)p, &in, &ef))
			return -EILSEQ;
		if (in.flags & ULP_INSN_BRANCH) {
			uintptr_t t = p + in.len + (uintptr_t)in.target_disp;
			int last = p + in.len == e;

			if (last ? t != h : (ef.jmp || (t < e && t != h)))
				return -EILSEQ; /* a jump inside the loop, or a way out backwards */
		}
		all |= ef.wr;
		mem |= ef.mem;
		l->seg |= ef.seg;
		cond |= ef.cond;
		n++;
		if (!l->site && in.len >= 5 && (p & 15) + 5 <= 16)
			l->site = p;
		if (!l->any && in.len >= 5)
			l->any = p;
	}
	/* A register or flag read before this iteration wrote it, yet written by the body: its
	 * value comes from the previous iteration. */
	for (p = h; p < e; p += in.len) {
		ulp_insn_decode((const uint8_t *)p, e - p, &in);
		effect_of((const uint8_t *)p, &in, &ef);
		if (ef.rd & ~written & all)
			return -EILSEQ;
		l->inputs |= ef.rd & ~written;
		written |= ef.wr;
	}
	if (!mem || !cond || n > LOOP_MAX_INSNS)
		return -EILSEQ;
	return 0;
}

int ulp_x86_wait_loop(uintptr_t flo, uintptr_t fhi, uintptr_t pc, struct ulp_x86_loop *l)
{
	uintptr_t starts[LOOP_MAX_INSNS + 1], p = flo, best_h = 0, best_e = 0;
	unsigned ns = 0, i;
	int at_pc = 0;
	struct ulp_insn in;

	while (p < fhi) {
		if (p == pc)
			at_pc = 1;
		if (!ulp_insn_decode((const uint8_t *)p, fhi - p, &in))
			return -ENOENT; /* an opcode the decoder does not know: nothing is proved */
		starts[ns++ % (LOOP_MAX_INSNS + 1)] = p;
		if ((in.flags & ULP_INSN_BRANCH) && !(in.flags & ULP_INSN_CALL)) {
			uintptr_t t = p + in.len + (uintptr_t)in.target_disp, e = p + in.len;
			int boundary = 0;

			for (i = 0; i < ns && i <= LOOP_MAX_INSNS; i++)
				boundary |= starts[i] == t;
			/* the innermost: the shortest loop holding pc */
			if (boundary && t <= pc && pc <= p && e - t <= LOOP_MAX_BYTES &&
			    (!best_h || e - t < best_e - best_h)) {
				best_h = t;
				best_e = e;
			}
		}
		p += in.len;
	}
	if (p != fhi || !at_pc || !best_h)
		return -ENOENT;
	l->head = best_h;
	l->end = best_e;
	return prove(best_h, best_e, l);
}
