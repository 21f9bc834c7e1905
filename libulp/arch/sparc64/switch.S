/* SPDX-License-Identifier: MIT */
/*
 * sparc64 (SPARC V9, 64-bit ABI) context switch (ELF, GNU as).
 *
 * With register windows the callee-saved state of a function is its window (%l0-%l7, %i0-%i7),
 * and the ABI gives every window a home: the 128 bytes at %sp + BIAS of the frame it owns. So a
 * switch is: `save` a frame of our own, `flushw` (every older window, the caller's included, goes
 * to its home), note where the caller's window lives (%fp) and where to return (%i7), change
 * stacks, and `restore` into the target's caller: with no window left in the register file,
 * `restore` traps and the kernel fills it from the target's stack. %g7 (TLS) is never touched.
 *
 * Frame allocated by the switch, ctx->sp is its (biased) %sp; offsets from %sp + 2047:
 *
 *   offset  contents
 *        0  window save area (ABI): a trap may spill the current window here at any time
 *      128  argument dump area (ABI): fn of ulp_arch_switch_call may store its argument here
 *      176  %fp (%i6): the caller's %sp, whose frame holds the caller's flushed window
 *      184  %i7: address of the caller's call instruction (the context resumes at %i7 + 8)
 *      192  %fsr: floating-point rounding mode, trap enables, condition codes
 *      200  unused (frames stay 16-byte aligned)
 *
 * libulp/arch/sparc64/arch_impl.h states the same offsets (ULP_FRAME_*), which the code below uses,
 * and arch.c checks them against this table. The words at 176.. are read back only after %sp
 * points at them; they are never in 0..127, where a spill of the current window could land while
 * %sp already points at the target's frame but %fp still holds our own caller.
 */
#include "arch_impl.h"

#define BIAS ULP_SPARC_BIAS

	.register %g2, #scratch
	.register %g3, #scratch

	.text

/* Allocate the switch frame, flush every older window to its home and note in the frame where
 * the caller's window lives (%fp), where to return (%i7) and the FP control state (%fsr). */
.macro SAVE_FRAME
	save	%sp, -ULP_ARCH_FRAME_SIZE, %sp
	.cfi_window_save
	.cfi_register %o7, %i7
	.cfi_def_cfa_register %fp
	flushw
	stx	%fp, [%sp + BIAS + ULP_FRAME_FP]
	stx	%i7, [%sp + BIAS + ULP_FRAME_I7]
	stx	%fsr, [%sp + BIAS + ULP_FRAME_FSR]
.endm

/* void ulp_arch_switch(ulp_ctx_t *from, ulp_ctx_t *to) */
	.globl	ulp_arch_switch
	.type	ulp_arch_switch, #function
	.align	32
ulp_arch_switch:
	.cfi_startproc
	SAVE_FRAME
	stx	%sp, [%i0]
	ldx	[%i1], %sp
.Lrestore_frame:
	ldx	[%sp + BIAS + ULP_FRAME_FSR], %fsr
	ldx	[%sp + BIAS + ULP_FRAME_FP], %fp
	ldx	[%sp + BIAS + ULP_FRAME_I7], %i7
	ret			/* to the target's %i7 + 8 ... */
	 restore		/* ... in the target caller's window, filled from its frame at %fp */
	.cfi_endproc
	.size	ulp_arch_switch, .-ulp_arch_switch

/* void ulp_arch_switch_call(ulp_ctx_t *from, ulp_ctx_t *to, void (*fn)(void *), void *arg)
 * from may be NULL: the frame is still written (harmless) but not recorded. The flushw comes
 * before fn, so fn may release from's stack: no window of from is left to spill there later. */
	.globl	ulp_arch_switch_call
	.type	ulp_arch_switch_call, #function
	.align	32
ulp_arch_switch_call:
	.cfi_startproc
	SAVE_FRAME
	brnz,a,pt %i0, 1f	/* annulled: the store runs only when from != NULL */
	 stx	%sp, [%i0]
1:	ldx	[%i1], %sp
	call	%i2		/* fn's frame goes below to's saved frame */
	 mov	%i3, %o0
	ba,pt	%xcc, .Lrestore_frame
	 nop
	.cfi_endproc
	.size	ulp_arch_switch_call, .-ulp_arch_switch_call

/*
 * First code of a new context. ulp_arch_ctx_init built two frames at the top of the stack: the
 * switch frame, whose %fp slot points at the frame above it and whose %i7 slot is this routine
 * minus 8, and that frame, whose window save area holds %l0 = entry, %l1 = arg, %i6 = %i7 = 0
 * (the end of the frame chain). The switch's `restore` fills that window, so we run with
 * %sp + BIAS 16-byte aligned and a complete minimum frame above it, as the ABI wants at a call.
 */
	.globl	ulp_arch_trampoline
	.type	ulp_arch_trampoline, #function
	.align	32
ulp_arch_trampoline:
	.cfi_startproc
	.cfi_undefined %o7
	call	%l0
	 mov	%l1, %o0
	illtrap	0		/* entry must not return */
	.cfi_endproc
	.size	ulp_arch_trampoline, .-ulp_arch_trampoline

/*
 * void ulp_arch_enter_program(uintptr_t entry, uintptr_t sp)
 * The ELF start-up state of Linux sparc64: argc at sp, i.e. %sp + BIAS + 128 (one window save
 * area below it, as glibc's _start expects), %g1 = 0 (no atexit function), the other registers of
 * the window and %g1-%g5 cleared so nothing of the runtime leaks into the program; %g6/%g7 are the
 * system's and stay. flushw first: the runtime's windows go to its stack now, while that stack
 * is still in use, instead of spilling there later, when the program goes deep.
 */
	.globl	ulp_arch_enter_program
	.type	ulp_arch_enter_program, #function
	.align	32
ulp_arch_enter_program:
	.cfi_startproc
	flushw
	mov	%o0, %g5
	sub	%o1, BIAS + 128, %sp
	clr	%g1
	clr	%g2
	clr	%g3
	clr	%g4
	clr	%o0
	clr	%o1
	clr	%o2
	clr	%o3
	clr	%o4
	clr	%o5
	clr	%o7
	clr	%l0
	clr	%l1
	clr	%l2
	clr	%l3
	clr	%l4
	clr	%l5
	clr	%l6
	clr	%l7
	clr	%i0
	clr	%i1
	clr	%i2
	clr	%i3
	clr	%i4
	clr	%i5
	clr	%i6
	clr	%i7
	jmp	%g5
	 clr	%g5		/* the jump target was read before this delay slot */
	.cfi_endproc
	.size	ulp_arch_enter_program, .-ulp_arch_enter_program

	.section .note.GNU-stack,"",@progbits
