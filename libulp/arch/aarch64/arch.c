/* SPDX-License-Identifier: MIT */
#include "../arch.h"

#include <string.h>

_Static_assert(ULP_FRAME_X19 == 0 && ULP_FRAME_X20 == 8 && ULP_FRAME_X21 == 16 &&
		   ULP_FRAME_X22 == 24 && ULP_FRAME_X23 == 32 && ULP_FRAME_X24 == 40 &&
		   ULP_FRAME_X25 == 48 && ULP_FRAME_X26 == 56 && ULP_FRAME_X27 == 64 &&
		   ULP_FRAME_X28 == 72 && ULP_FRAME_X29 == 80 && ULP_FRAME_LR == 88 &&
		   ULP_FRAME_D8 == 96 && ULP_FRAME_D9 == 104 && ULP_FRAME_D10 == 112 &&
		   ULP_FRAME_D11 == 120 && ULP_FRAME_D12 == 128 && ULP_FRAME_D13 == 136 &&
		   ULP_FRAME_D14 == 144 && ULP_FRAME_D15 == 152 && ULP_FRAME_FPCR == 160 &&
		   ULP_ARCH_FRAME_SIZE == 176,
	       "frame offsets must match the table in switch.S");
_Static_assert(ULP_ARCH_FRAME_SIZE % 16 == 0, "sp must stay 16-byte aligned");
_Static_assert(offsetof(ulp_ctx_t, sp) == 0, "switch.S reads ctx->sp at offset 0");

extern void ulp_arch_trampoline(void);

void ulp_arch_ctx_init(ulp_ctx_t *ctx, void *lo, size_t size, ulp_arch_fn entry, void *arg)
{
	uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
	unsigned char *f = (unsigned char *)(top - ULP_ARCH_FRAME_SIZE);
	uint64_t fpcr;

	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
	memset(f, 0, ULP_ARCH_FRAME_SIZE);
	*(uint64_t *)(f + ULP_FRAME_FPCR) = fpcr;
	*(uintptr_t *)(f + ULP_FRAME_X19) = (uintptr_t)entry;
	*(uintptr_t *)(f + ULP_FRAME_X20) = (uintptr_t)arg;
	*(uintptr_t *)(f + ULP_FRAME_LR) = (uintptr_t)ulp_arch_trampoline;
	ctx->sp = f; /* after the frame is popped sp = top, 16-byte aligned for entry */
}
