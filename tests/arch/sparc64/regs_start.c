/* SPDX-License-Identifier: MIT */
/*
 * ulp_test_regs_start for sparc64, where ulp_arch_switch_start is composed in C
 * (libulp/arch/switch_compose.c: ulp_arch_ctx_init, then ulp_arch_switch): the same composition
 * here, so the register check of ulp_test_regs_switch covers what that start saves.
 */
#include "../regs.h"

unsigned long ulp_test_regs_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry,
				  int which)
{
	ulp_ctx_t fresh;

	ulp_arch_ctx_init(&fresh, lo, size, entry, NULL);
	return ulp_test_regs_switch(from, &fresh, which, NULL);
}
