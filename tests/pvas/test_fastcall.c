/* SPDX-License-Identifier: MIT */
/*
 * The verification under the fast path (libulp/arch/x86_64/fastcall.c, insn.c): the length
 * decoder on known encodings, and on all of Debian's libc and ld.so as loaded in this process:
 * every function their .eh_frame_hdr lists decodes from its first byte to exactly its end, and the
 * function bounds the patcher finds for a byte are those of the FDE holding it.
 */
#include "check.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "x86_64/insn.h"

struct known {
	const char *what;
	uint8_t bytes[15];
	unsigned len, flags;
};

static const struct known cases[] = {
    {"syscall", {0x0f, 0x05}, 2, 0},
    {"mov $24,%eax", {0xb8, 0x18, 0, 0, 0}, 5, 0},
    {"movabs $imm64,%rax", {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 0},
    {"mov $imm16,%ax", {0x66, 0xb8, 1, 2}, 4, ULP_INSN_PREFIXED},
    {"cmp $-4096,%rax", {0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 6, 0},
    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, ULP_INSN_PREFIXED},
    {"cmpb $0,rel(%rip)", {0x80, 0x3d, 1, 2, 3, 4, 0}, 7, ULP_INSN_RIPREL},
    {"je rel8", {0x74, 0x17}, 2, ULP_INSN_BRANCH},
    {"ja rel32", {0x0f, 0x87, 0xed, 0, 0, 0}, 6, ULP_INSN_BRANCH},
    {"call rel32", {0xe8, 1, 2, 3, 4}, 5, ULP_INSN_BRANCH | ULP_INSN_CALL},
    {"jmp *%rax", {0xff, 0xe0}, 2, ULP_INSN_INDIRECT},
    {"notrack jmp *(%rax,%rdx,8)",
     {0x3e, 0xff, 0x24, 0xd0},
     4,
     ULP_INSN_INDIRECT | ULP_INSN_PREFIXED},
    {"mov 0x8(%rsp),%edi", {0x8b, 0x7c, 0x24, 0x08}, 4, 0},
    {"mov %fs:0x18,%eax", {0x64, 0x8b, 0x04, 0x25, 0x18, 0, 0, 0}, 8, ULP_INSN_PREFIXED},
    {"testb $1,(%rdi)", {0xf6, 0x07, 0x01}, 3, 0},
    {"notl (%rdi)", {0xf7, 0x17}, 2, 0},
    {"vzeroupper", {0xc5, 0xf8, 0x77}, 3, 0},
    {"vpcmpeqb (%rdi),%ymm0,%ymm1", {0xc5, 0xfd, 0x74, 0x0f}, 4, 0},
    {"vpshufd $0,%xmm0,%xmm0 (VEX3)", {0xc4, 0xe1, 0x79, 0x70, 0xc0, 0x00}, 6, 0},
    {"vpternlogd $0xde,%zmm1,%zmm2,%zmm3 (EVEX)", {0x62, 0xf3, 0x6d, 0x48, 0x25, 0xd9, 0xde}, 7, 0},
    {"vmovdqu64 0x40(%rsi),%zmm16 (EVEX disp8)", {0x62, 0xe1, 0xfe, 0x48, 0x6f, 0x46, 0x01}, 7, 0},
    {"pshufb 0x0(%rip),%xmm1",
     {0x66, 0x0f, 0x38, 0x00, 0x0d, 0, 0, 0, 0},
     9,
     ULP_INSN_RIPREL | ULP_INSN_PREFIXED},
    {"palignr $8,%xmm1,%xmm2", {0x66, 0x0f, 0x3a, 0x0f, 0xd1, 0x08}, 6, ULP_INSN_PREFIXED},
    {"enter $16,$0", {0xc8, 0x10, 0x00, 0x00}, 4, 0},
    {"lea -0x80(%rsp),%rsp", {0x48, 0x8d, 0x64, 0x24, 0x80}, 5, 0},
};

static void known_encodings_decode_to_their_lengths(void **state)
{
	struct ulp_insn in;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned n = ulp_insn_decode(cases[i].bytes, sizeof(cases[i].bytes), &in);

		if (n != cases[i].len || in.flags != cases[i].flags)
			fail_msg("%s: length %u flags %#x, wanted %u %#x", cases[i].what, n,
				 in.flags, cases[i].len, cases[i].flags);
	}
	/* cut short, and invalid in 64-bit mode */
	assert_int_equal(ulp_insn_decode((const uint8_t *)"\x48\xb8\x01", 3, &in), 0);
	assert_int_equal(ulp_insn_decode((const uint8_t *)"\x06", 1, &in), 0);
	assert_int_equal(ulp_insn_decode((const uint8_t *)"\x0f\x04", 2, &in), 0);
}

struct objstat {
	const char *name;
	unsigned fdes, walked, bounds;
};

/* Walk every FDE of the object: the decoder must end exactly at each function's end. */
static int walk_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objstat *st = arg;
	const Elf64_Phdr *eh = NULL;
	const uint8_t *h;
	uintptr_t tab, lo = (uintptr_t)info->dlpi_addr;
	uint32_t count, i;
	int k;

	(void)size;
	if (!strstr(info->dlpi_name, st->name))
		return 0;
	for (k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[k];
	if (!eh)
		return 0;
	h = (const uint8_t *)(lo + eh->p_vaddr);
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	count = *(const uint32_t *)(h + 8);
	tab = (uintptr_t)h + 12;
	for (i = 0; i < count; i++) {
		uintptr_t start =
		    (uintptr_t)h + (uintptr_t)(intptr_t) * (const int32_t *)(tab + 8 * i);
		uintptr_t flo, fhi;

		st->fdes++;
		if (ulp_arch_fast_func(lo, 0, start, &flo, &fhi) || flo != start) {
			printf("# %s: FDE %u at +%#lx: no function bounds\n", st->name, i,
			       (unsigned long)(start - lo));
			continue;
		}
		st->bounds++;
		if (ulp_arch_fast_walk(flo, fhi, NULL, 0) == 0)
			st->walked++;
		else
			printf("# %s: function at +%#lx (%lu bytes) does not decode to its end\n",
			       st->name, (unsigned long)(flo - lo), (unsigned long)(fhi - flo));
	}
	return 1;
}

static void check_object(const char *name)
{
	struct objstat st = {name, 0, 0, 0};

	dl_iterate_phdr(walk_object, &st);
	printf("# %s: %u FDEs, bounds found for %u, %u decode exactly to their end\n", name,
	       st.fdes, st.bounds, st.walked);
	assert_true(st.fdes > 100);
	assert_int_equal(st.bounds, st.fdes);
	assert_int_equal(st.walked, st.fdes);
}

static void every_function_of_libc_decodes_to_its_end(void **state)
{
	(void)state;
	check_object("libc.so.6");
}

static void every_function_of_ld_so_decodes_to_its_end(void **state)
{
	(void)state;
	check_object("ld-linux-x86-64.so.2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(known_encodings_decode_to_their_lengths),
	    cmocka_unit_test(every_function_of_libc_decodes_to_its_end),
	    cmocka_unit_test(every_function_of_ld_so_decodes_to_its_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
