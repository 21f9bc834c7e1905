/* SPDX-License-Identifier: MIT */
/*
 * ulp_arch_switch_start and ulp_arch_jump composed from the three primitives every switch
 * provides (ulp_arch_ctx_init, ulp_arch_switch, ulp_arch_switch_call), for the switches that do
 * not have them in assembly: sparc64 (a jump there must flushw the abandoned windows first, as
 * ulp_arch_switch_call does) and the ucontext variant. Same behaviour, one frame write and load
 * more per start. Built by libulp/module.mk and libulp/arch/ucontext/module.mk.
 */
#include "arch.h"

static void nothing(void *arg)
{
}

void ulp_arch_switch_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry, void *arg,
			   ulp_arch_fn after)
{
	ulp_ctx_t fresh; /* read by the switch before it leaves this stack */

	ulp_arch_ctx_init(&fresh, lo, size, entry, arg);
	if (after)
		ulp_arch_switch_call(from, &fresh, after, from);
	else
		ulp_arch_switch(from, &fresh);
}

void ulp_arch_jump(ulp_ctx_t *to)
{
	ulp_arch_switch_call(NULL, to, nothing, NULL);
	__builtin_unreachable();
}
