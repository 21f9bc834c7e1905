/* SPDX-License-Identifier: MIT */
#include "../arch.h"

#include <string.h>

_Static_assert(ULP_SPARC_BIAS == 2047 && ULP_SPARC_MINFRAME == 176 && ULP_FRAME_WINDOW == 0 &&
		   ULP_FRAME_ARGS == 128 && ULP_FRAME_FP == 176 && ULP_FRAME_I7 == 184 &&
		   ULP_FRAME_FSR == 192 && ULP_ARCH_FRAME_SIZE == 208,
	       "frame offsets must match the table in switch.S");
_Static_assert(ULP_FRAME_FP >= ULP_SPARC_MINFRAME && ULP_ARCH_FRAME_SIZE % 16 == 0,
	       "the switch's words must stay out of the ABI part of the frame");
_Static_assert(offsetof(ulp_ctx_t, sp) == 0, "switch.S reads ctx->sp at offset 0");

/* The window save area of a frame: where a flush stores %l0-%l7 and %i0-%i7. */
struct sparc_window {
	uint64_t l[8];
	uint64_t i[8];
};

extern void ulp_arch_trampoline(void);

/*
 * Two frames at the top of [lo, lo + size), highest first:
 *   t: a minimum frame whose window save area is the window the trampoline runs in
 *      (%l0 = entry, %l1 = arg, %i6 = %i7 = 0);
 *   f: the switch frame the context is resumed from: %fp slot = t, %i7 slot = trampoline - 8,
 *      %fsr slot = the caller's %fsr.
 */
void ulp_arch_ctx_init(ulp_ctx_t *ctx, void *lo, size_t size, ulp_arch_fn entry, void *arg)
{
	uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
	unsigned char *t = (unsigned char *)(top - ULP_SPARC_MINFRAME);
	unsigned char *f = t - ULP_ARCH_FRAME_SIZE;
	struct sparc_window *w = (struct sparc_window *)t;
	uint64_t fsr;

	__asm__ volatile("stx %%fsr, %0" : "=m"(fsr));
	memset(f, 0, ULP_ARCH_FRAME_SIZE + ULP_SPARC_MINFRAME);
	w->l[0] = (uintptr_t)entry;
	w->l[1] = (uintptr_t)arg;
	*(uint64_t *)(f + ULP_FRAME_FP) = (uintptr_t)t - ULP_SPARC_BIAS;
	*(uint64_t *)(f + ULP_FRAME_I7) = (uintptr_t)ulp_arch_trampoline - 8;
	*(uint64_t *)(f + ULP_FRAME_FSR) = fsr;
	ctx->sp = (void *)((uintptr_t)f - ULP_SPARC_BIAS);
}
