/* SPDX-License-Identifier: MIT */
/*
 * aarch64 AAPCS64 context switch (ELF, GNU as).
 *
 * Saved frame, stored on the stack of the context being left; ctx->sp points at offset 0:
 *
 *   offset  contents
 *        0  x19        8  x20       16  x21       24  x22       32  x23
 *       40  x24       48  x25       56  x26       64  x27       72  x28
 *       80  x29 (fp)
 *       88  x30 (lr: the resume address)
 *       96  d8       104  d9       112  d10      120  d11
 *      128  d12      136  d13      144  d14      152  d15
 *      160  FPCR (rounding mode, flush-to-zero, default NaN, ...)
 *      168  unused (keeps the frame a multiple of 16)
 *
 * libulp/arch/aarch64/arch_impl.h states the same offsets (ULP_FRAME_*), which the code below uses,
 * and arch.c checks them against this table. Only the low 64 bits of v8..v15 are callee-saved
 * (AAPCS64 6.1.2); FPSR holds sticky exception flags, which are not preserved across calls either.
 */
#include "arch_impl.h"

	.text

.macro SAVE_FRAME
	sub	sp, sp, #ULP_ARCH_FRAME_SIZE
	stp	x19, x20, [sp, #ULP_FRAME_X19]
	stp	x21, x22, [sp, #ULP_FRAME_X21]
	stp	x23, x24, [sp, #ULP_FRAME_X23]
	stp	x25, x26, [sp, #ULP_FRAME_X25]
	stp	x27, x28, [sp, #ULP_FRAME_X27]
	stp	x29, x30, [sp, #ULP_FRAME_X29]
	stp	d8, d9, [sp, #ULP_FRAME_D8]
	stp	d10, d11, [sp, #ULP_FRAME_D10]
	stp	d12, d13, [sp, #ULP_FRAME_D12]
	stp	d14, d15, [sp, #ULP_FRAME_D14]
	mrs	x9, fpcr
	str	x9, [sp, #ULP_FRAME_FPCR]
.endm

/* void ulp_arch_switch(ulp_ctx_t *from, ulp_ctx_t *to) */
	.globl	ulp_arch_switch
	.type	ulp_arch_switch, %function
	.p2align 4
ulp_arch_switch:
	.cfi_startproc
	SAVE_FRAME
	mov	x9, sp
	str	x9, [x0]
	ldr	x9, [x1]
	mov	sp, x9
.Lrestore_frame:
	/* Writing FPCR can synchronise the pipeline on some cores: skip it when nothing changes. */
	ldr	x9, [sp, #ULP_FRAME_FPCR]
	mrs	x10, fpcr
	cmp	x9, x10
	b.eq	1f
	msr	fpcr, x9
1:	ldp	x19, x20, [sp, #ULP_FRAME_X19]
	ldp	x21, x22, [sp, #ULP_FRAME_X21]
	ldp	x23, x24, [sp, #ULP_FRAME_X23]
	ldp	x25, x26, [sp, #ULP_FRAME_X25]
	ldp	x27, x28, [sp, #ULP_FRAME_X27]
	ldp	x29, x30, [sp, #ULP_FRAME_X29]
	ldp	d8, d9, [sp, #ULP_FRAME_D8]
	ldp	d10, d11, [sp, #ULP_FRAME_D10]
	ldp	d12, d13, [sp, #ULP_FRAME_D12]
	ldp	d14, d15, [sp, #ULP_FRAME_D14]
	add	sp, sp, #ULP_ARCH_FRAME_SIZE
	ret
	.cfi_endproc
	.size	ulp_arch_switch, .-ulp_arch_switch

/* void ulp_arch_switch_call(ulp_ctx_t *from, ulp_ctx_t *to, void (*fn)(void *), void *arg)
 * from may be NULL: the frame is still stored (harmless) but not recorded. fn runs with sp at
 * to's saved frame, so its own frames go below it on to's stack. */
	.globl	ulp_arch_switch_call
	.type	ulp_arch_switch_call, %function
	.p2align 4
ulp_arch_switch_call:
	.cfi_startproc
	SAVE_FRAME
	cbz	x0, 1f
	mov	x9, sp
	str	x9, [x0]
1:	ldr	x9, [x1]
	mov	sp, x9		/* 16-byte aligned: every saved frame is */
	mov	x0, x3
	blr	x2
	b	.Lrestore_frame
	.cfi_endproc
	.size	ulp_arch_switch_call, .-ulp_arch_switch_call

/* void ulp_arch_switch_start(ulp_ctx_t *from, void *lo, size_t size, void (*entry)(void *),
 *                            void *arg, void (*after)(void *))
 * Save the running context into *from, move to the top of the fresh stack [lo, lo + size)
 * (16-byte aligned down) and call after(from) there when after is not NULL, then entry(arg).
 * x19/x20 (saved in from's frame already) keep entry and arg across after; the new context
 * inherits FPCR, as with ulp_arch_ctx_init. */
	.globl	ulp_arch_switch_start
	.type	ulp_arch_switch_start, %function
	.p2align 4
ulp_arch_switch_start:
	.cfi_startproc
	SAVE_FRAME
	mov	x9, sp
	str	x9, [x0]
	add	x9, x1, x2
	and	x9, x9, #~15
	mov	sp, x9
	.cfi_undefined x30	/* the new context's first frame: unwinders stop here */
	mov	x29, xzr
	mov	x19, x3
	mov	x20, x4
	cbz	x5, 1f
	blr	x5		/* x0 = from still */
1:	mov	x0, x20
	blr	x19
	brk	#0x1		/* entry must not return */
	.cfi_endproc
	.size	ulp_arch_switch_start, .-ulp_arch_switch_start

/* void ulp_arch_jump(ulp_ctx_t *to): resume to, abandoning the running context (nothing saved). */
	.globl	ulp_arch_jump
	.type	ulp_arch_jump, %function
	.p2align 4
ulp_arch_jump:
	.cfi_startproc
	ldr	x9, [x0]
	mov	sp, x9
	b	.Lrestore_frame
	.cfi_endproc
	.size	ulp_arch_jump, .-ulp_arch_jump

/* First code of a new context: ulp_arch_ctx_init put entry in x19, its argument in x20, and
 * zero in x29 so that frame-pointer walks end here. */
	.globl	ulp_arch_trampoline
	.type	ulp_arch_trampoline, %function
	.p2align 4
ulp_arch_trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x20
	blr	x19
	brk	#0x1		/* entry must not return */
	.cfi_endproc
	.size	ulp_arch_trampoline, .-ulp_arch_trampoline

/* void ulp_arch_enter_program(uintptr_t entry, uintptr_t sp)
 * The ELF start-up state of the aarch64 Linux ABI: sp at argc, x0 = 0 (no atexit function for
 * the program to register), every other general register cleared so nothing of the runtime leaks
 * into the program. The jump goes through x16: with BTI, `br x16` may land on the `bti c` that
 * starts a guarded _start, where another register would fault. */
	.globl	ulp_arch_enter_program
	.type	ulp_arch_enter_program, %function
	.p2align 4
ulp_arch_enter_program:
	.cfi_startproc
	mov	sp, x1
	mov	x16, x0
	mov	x0, xzr
	mov	x1, xzr
	mov	x2, xzr
	mov	x3, xzr
	mov	x4, xzr
	mov	x5, xzr
	mov	x6, xzr
	mov	x7, xzr
	mov	x8, xzr
	mov	x9, xzr
	mov	x10, xzr
	mov	x11, xzr
	mov	x12, xzr
	mov	x13, xzr
	mov	x14, xzr
	mov	x15, xzr
	mov	x17, xzr
	mov	x18, xzr
	mov	x19, xzr
	mov	x20, xzr
	mov	x21, xzr
	mov	x22, xzr
	mov	x23, xzr
	mov	x24, xzr
	mov	x25, xzr
	mov	x26, xzr
	mov	x27, xzr
	mov	x28, xzr
	mov	x29, xzr
	mov	x30, xzr
	br	x16
	.cfi_endproc
	.size	ulp_arch_enter_program, .-ulp_arch_enter_program

	.section .note.GNU-stack,"",%progbits
