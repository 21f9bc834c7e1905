/* SPDX-License-Identifier: MIT */
/*
 * x86-64 instruction lengths (insn.h). The tables follow the opcode maps of the Intel SDM, volume
 * 2, appendix A, for 64-bit mode: which opcodes take a ModRM byte and how many immediate bytes
 * follow. Opcodes invalid in 64-bit mode, and XOP, make the decoder fail rather than guess.
 */
#include "insn.h"

#define BIT(t, o) (((t)[(o) >> 5] >> ((o)&31)) & 1u)

/* One-byte map: opcodes with a ModRM byte. */
static const uint32_t map0_modrm[8] = {
    0x0f0f0f0f, /* 00-1f: ALU r/m forms */
    0x0f0f0f0f, /* 20-3f */
    0x00000000, /* 40-5f: REX, push/pop */
    0x00000a08, /* 60-7f: 63 movsxd, 69, 6b */
    0x0000ffff, /* 80-9f: 80-8f */
    0x00000000, /* a0-bf */
    0xff0f00c3, /* c0-df: c0 c1 c6 c7, d0-d3, d8-df */
    0xc0c00000, /* e0-ff: f6 f7 fe ff */
};

/* One-byte map: opcodes not valid in 64-bit mode (0f, prefixes and VEX/EVEX handled apart). */
static const uint32_t map0_bad[8] = {
    0xc0c0c0c0,		    /* 06 07 0e 0f(escape, apart) 16 17 1e 1f */
    0x80808080,		    /* 27 2f 37 3f (26 2e 36 3e are prefixes) */
    0x00000000, 0x00000007, /* 60 61 62 */
    0x04000004,		    /* 82 9a */
    0x00000000, 0x00704030, /* c4 c5 ce d4 d5 d6 */
    0x00000400,		    /* ea */
};

/* 0f map: opcodes without a ModRM byte. */
static const uint32_t map1_nomodrm[8] = {
    0x00004be0,		    /* 05 06 07 08 09 0b 0e */
    0x00ff0000,		    /* 30-37 */
    0x00000000, 0x00800000, /* 77 */
    0x0000ffff,		    /* 80-8f: jcc rel32 */
    0x00000707,		    /* a0 a1 a2 a8 a9 aa */
    0x0000ff00,		    /* c8-cf: bswap */
    0x00000000,
};

/* 0f map: opcodes not valid (or not known here). */
static const uint32_t map1_bad[8] = {
    0x00001410, /* 04 0a 0c */
    0xfa4000f0, /* 24-27, 36, 39, 3b-3f (38, 3a are escapes) */
    0,		0, 0, 0, 0, 0,
};

static unsigned imm_map0(unsigned op, unsigned rex, int opsize16, int addr32, int modrm)
{
	unsigned z = opsize16 ? 2 : 4;

	if (op < 0x40)
		return (op & 7) == 4 ? 1 : (op & 7) == 5 ? z : 0;
	if (op >= 0x70 && op <= 0x7f)
		return 1;
	if (op >= 0xb0 && op <= 0xb7)
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return (rex & 8) ? 8 : z;
	if (op >= 0xa0 && op <= 0xa3)
		return addr32 ? 4 : 8;
	if (op >= 0xe0 && op <= 0xe7)
		return 1;
	switch (op) {
	case 0x68:
	case 0x69:
	case 0x81:
	case 0xa9:
	case 0xc7:
		return z;
	case 0x6a:
	case 0x6b:
	case 0x80:
	case 0x83:
	case 0xa8:
	case 0xc0:
	case 0xc1:
	case 0xc6:
	case 0xcd:
	case 0xeb:
		return 1;
	case 0xc2:
	case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0xe8:
	case 0xe9:
		return 4; /* rel32: an operand-size prefix is ignored in 64-bit mode */
	case 0xf6:
		return ((modrm >> 3) & 7) < 2 ? 1 : 0;
	case 0xf7:
		return ((modrm >> 3) & 7) < 2 ? z : 0;
	}
	return 0;
}

static unsigned imm_map1(unsigned op)
{
	if (op >= 0x70 && op <= 0x73)
		return 1;
	if (op >= 0x80 && op <= 0x8f)
		return 4;
	switch (op) {
	case 0x0f: /* 3DNow!: the suffix byte */
	case 0xa4:
	case 0xac:
	case 0xba:
	case 0xc2:
	case 0xc4:
	case 0xc5:
	case 0xc6:
		return 1;
	}
	return 0;
}

/* Bytes of ModRM + SIB + displacement starting at p, and whether it is rip-relative. */
static unsigned modrm_len(const uint8_t *p, size_t max, int addr32, int *riprel)
{
	unsigned mod, rm, n = 1;

	(void)addr32;
	if (max < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	*riprel = 0;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (max < 2)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		*riprel = 1;
		n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* Read the ModRM byte at p[i] with its SIB and displacement into in: the index after them, or 0
 * when they do not fit in max bytes. */
static unsigned take_modrm(const uint8_t *p, size_t max, unsigned i, int addr32, int *riprel,
			   struct ulp_insn *in)
{
	unsigned n;

	if (i >= max)
		return 0;
	in->modrm = p[i];
	in->modrm_at = i;
	n = modrm_len(p + i, max - i, addr32, riprel);
	return n ? i + n : 0;
}

unsigned ulp_insn_decode(const uint8_t *p, size_t max, struct ulp_insn *in)
{
	unsigned i = 0, op, imm = 0;
	int opsize16 = 0, addr32 = 0, riprel = 0, has_modrm;

	in->flags = 0;
	in->rex = 0;
	in->modrm = -1;
	in->map = 0;
	in->target_disp = 0;
	for (;; i++) { /* legacy prefixes, any order; at most 14 bytes of them */
		if (i >= max || i > 14)
			return 0;
		switch (p[i]) {
		case 0x66:
			opsize16 = 1;
			/* fallthrough */
		case 0xf0:
		case 0xf2:
		case 0xf3:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x26:
		case 0x64:
		case 0x65:
			in->flags |= ULP_INSN_PREFIXED;
			continue;
		case 0x67:
			addr32 = 1;
			in->flags |= ULP_INSN_PREFIXED;
			continue;
		}
		break;
	}
	if ((p[i] & 0xf0) == 0x40) { /* REX: the last prefix */
		in->rex = p[i++];
		if (i >= max)
			return 0;
	}
	op = p[i++];
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		/* VEX (3 or 2 bytes) and EVEX (4 bytes): always valid in 64-bit mode. The map comes
		 * from the prefix, a ModRM always follows except for vzeroupper/vzeroall. */
		unsigned plen = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;

		if (i + plen >= max)
			return 0;
		in->map = op == 0xc5 ? 1 : op == 0xc4 ? (p[i] & 0x1f) : (p[i] & 7);
		if (in->map < 1 || in->map > 7 || in->map == 4)
			return 0;
		if (op == 0xc4 && (p[i + 1] & 0x80))
			in->rex = 8; /* VEX.W: no effect on lengths, kept for the record */
		i += plen;
		in->opcode = p[i++];
		has_modrm = !(in->map == 1 && in->opcode == 0x77);
		if (has_modrm) {
			i = take_modrm(p, max, i, addr32, &riprel, in);
			if (!i)
				return 0;
		}
		if (in->map == 3)
			imm = 1;
		else if (in->map == 1)
			imm = (in->opcode >= 0x70 && in->opcode <= 0x73) ||
			      (in->opcode >= 0xc4 && in->opcode <= 0xc6) || in->opcode == 0xc2;
		goto done;
	}
	if (op == 0x0f) {
		if (i >= max)
			return 0;
		op = p[i++];
		if (op == 0x38 || op == 0x3a) {
			in->map = op == 0x38 ? 2 : 3;
			if (i >= max)
				return 0;
			in->opcode = p[i++];
			i = take_modrm(p, max, i, addr32, &riprel, in);
			if (!i)
				return 0;
			imm = in->map == 3;
			goto done;
		}
		in->map = 1;
		in->opcode = op;
		if (BIT(map1_bad, op))
			return 0;
		if (!BIT(map1_nomodrm, op)) {
			i = take_modrm(p, max, i, addr32, &riprel, in);
			if (!i)
				return 0;
		}
		imm = imm_map1(op);
		if (op >= 0x80 && op <= 0x8f)
			in->flags |= ULP_INSN_BRANCH;
		goto done;
	}
	in->opcode = op;
	if (BIT(map0_bad, op))
		return 0;
	if (BIT(map0_modrm, op)) {
		i = take_modrm(p, max, i, addr32, &riprel, in);
		if (!i)
			return 0;
		if (op == 0x8f && ((in->modrm >> 3) & 7) != 0)
			return 0; /* XOP */
		if (op == 0xff) {
			unsigned reg = (in->modrm >> 3) & 7;

			if (reg == 4 || reg == 5)
				in->flags |= ULP_INSN_INDIRECT;
			if (reg == 7)
				return 0;
		}
		if (op == 0xfe && ((in->modrm >> 3) & 7) > 1)
			return 0;
	}
	imm = imm_map0(op, in->rex, opsize16, addr32, in->modrm);
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) || op == 0xe8 || op == 0xe9 ||
	    op == 0xeb)
		in->flags |= ULP_INSN_BRANCH | (op == 0xe8 ? ULP_INSN_CALL : 0);
done:
	if (i + imm > max || i + imm > 15)
		return 0;
	if (in->flags & ULP_INSN_BRANCH) {
		const uint8_t *d = p + i;

		if (imm == 1)
			in->target_disp = (int8_t)d[0];
		else
			in->target_disp = (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 |
						    (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24);
	}
	if (riprel)
		in->flags |= ULP_INSN_RIPREL;
	in->len = i + imm;
	return in->len;
}
