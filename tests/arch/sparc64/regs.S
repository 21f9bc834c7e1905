/* SPDX-License-Identifier: MIT */
/*
 * Register-level test helpers, sparc64 (SPARC V9, 64-bit ABI). Interface: tests/arch/regs.h.
 * A function's callee-saved state is its register window: %l0-%l7 and %i0-%i7, of which %i6
 * (%fp) and %i7 (return address) cannot hold test patterns, so they are compared with their
 * values before the switch instead. %g7 (TLS) is checked unchanged too.
 */
#define BIAS 2047
#define MINFRAME 176			/* window save area + argument dump area */
#define FRAME (MINFRAME + 64)		/* + our own words at MINFRAME .. */
#define W(x) (BIAS + MINFRAME + (x))
#define FSR_RD 0xc0000000		/* %fsr rounding direction */
#define FSR_CTL 0xcfc00000		/* RD | TEM (trap enables) | NS */
#define ROW 128				/* %l0-%l7, %i0-%i5, %fsr, unused */

	.register %g2, #scratch
	.register %g3, #scratch
	.register %g7, #ignore

	.text

.macro CHECK reg, off, bit
	ldx	[%g1 + \off], %o1
	xor	%o1, \reg, %o1
	movrnz	%o1, 1, %o1
	sllx	%o1, \bit, %o1
	or	%o0, %o1, %o0
.endm

/* %g1 = address of row \which: the rows sit in .text, reached PC-relative (PIC without a GOT) */
.macro ROW_ADDR which
99:	rd	%pc, %g1
	sethi	%hi(.Lrows - 99b), %g2
	or	%g2, %lo(.Lrows - 99b), %g2
	add	%g1, %g2, %g1
	sra	\which, 0, %g2
	sllx	%g2, 7, %g2
	add	%g1, %g2, %g1
.endm

/* unsigned long ulp_test_regs_switch(ulp_ctx_t *from, ulp_ctx_t *to, int which, ulp_arch_fn fn)
 * Own words: 0 from, 8 to, 16 caller's %fsr, 24 %fp, 32 %i7, 40 %g7, 48 row, 56 fn, then scratch. */
	.globl	ulp_test_regs_switch
	.type	ulp_test_regs_switch, #function
	.align	32
ulp_test_regs_switch:
	.cfi_startproc
	save	%sp, -FRAME, %sp
	.cfi_window_save
	.cfi_register %o7, %i7
	.cfi_def_cfa_register %fp
	stx	%i0, [%sp + W(0)]
	stx	%i1, [%sp + W(8)]
	stx	%fsr, [%sp + W(16)]
	stx	%fp, [%sp + W(24)]
	stx	%i7, [%sp + W(32)]
	stx	%g7, [%sp + W(40)]
	stx	%i3, [%sp + W(56)]
	ROW_ADDR %i2
	stx	%g1, [%sp + W(48)]
	ldx	[%g1 + 0], %l0
	ldx	[%g1 + 8], %l1
	ldx	[%g1 + 16], %l2
	ldx	[%g1 + 24], %l3
	ldx	[%g1 + 32], %l4
	ldx	[%g1 + 40], %l5
	ldx	[%g1 + 48], %l6
	ldx	[%g1 + 56], %l7
	ldx	[%g1 + 64], %i0
	ldx	[%g1 + 72], %i1
	ldx	[%g1 + 80], %i2
	ldx	[%g1 + 88], %i3
	ldx	[%g1 + 96], %i4
	ldx	[%g1 + 104], %i5
	ldx	[%g1 + 112], %fsr
	ldx	[%sp + W(0)], %o0
	ldx	[%sp + W(8)], %o1
	ldx	[%sp + W(56)], %o2
	brnz,pn	%o2, 1f
	 clr	%o3
	call	ulp_arch_switch
	 nop
	ba,pt	%xcc, 2f
	 nop
1:	call	ulp_arch_switch_call
	 nop
2:
	ldx	[%sp + W(48)], %g1
	clr	%o0
	CHECK	%l0, 0, 0
	CHECK	%l1, 8, 1
	CHECK	%l2, 16, 2
	CHECK	%l3, 24, 3
	CHECK	%l4, 32, 4
	CHECK	%l5, 40, 5
	CHECK	%l6, 48, 6
	CHECK	%l7, 56, 7
	CHECK	%i0, 64, 8
	CHECK	%i1, 72, 9
	CHECK	%i2, 80, 10
	CHECK	%i3, 88, 11
	CHECK	%i4, 96, 12
	CHECK	%i5, 104, 13
	stx	%fsr, [%sp + W(56)]
	ldx	[%sp + W(56)], %o2
	ldx	[%g1 + 112], %o1
	xor	%o1, %o2, %o1
	sethi	%hi(FSR_RD), %o2
	and	%o1, %o2, %o1
	movrnz	%o1, 1, %o1
	sllx	%o1, 14, %o1
	or	%o0, %o1, %o0
	add	%sp, W(0), %g1		/* the saved copies, as a row */
	CHECK	%fp, 24, 15
	CHECK	%i7, 32, 16
	CHECK	%g7, 40, 17
	ldx	[%sp + W(16)], %fsr
	ret
	 restore %o0, %g0, %o0
	.cfi_endproc
	.size	ulp_test_regs_switch, .-ulp_test_regs_switch

/* FP control encoding: %fsr & (RD | TEM | NS) */
	.globl	ulp_test_fpctl_get
	.type	ulp_test_fpctl_get, #function
	.align	32
ulp_test_fpctl_get:
	save	%sp, -FRAME, %sp
	stx	%fsr, [%sp + W(0)]
	ldx	[%sp + W(0)], %i0
	sethi	%hi(FSR_CTL), %g1
	and	%i0, %g1, %i0
	ret
	 restore
	.size	ulp_test_fpctl_get, .-ulp_test_fpctl_get

	.globl	ulp_test_fpctl_set
	.type	ulp_test_fpctl_set, #function
	.align	32
ulp_test_fpctl_set:
	save	%sp, -FRAME, %sp
	stx	%i0, [%sp + W(0)]
	ldx	[%sp + W(0)], %fsr
	ret
	 restore
	.size	ulp_test_fpctl_set, .-ulp_test_fpctl_set

	.globl	ulp_test_fpctl_pattern
	.type	ulp_test_fpctl_pattern, #function
	.align	32
ulp_test_fpctl_pattern:
	save	%sp, -FRAME, %sp
	ROW_ADDR %i0
	ldx	[%g1 + 112], %i0
	sethi	%hi(FSR_CTL), %g1
	and	%i0, %g1, %i0
	ret
	 restore
	.size	ulp_test_fpctl_pattern, .-ulp_test_fpctl_pattern

/* void ulp_test_entry_probe(struct ulp_test_probe *p): the ABI keeps %sp + BIAS 16-byte aligned.
 * A leaf tail jump: the body starts with our %sp and %o7, as if called by our caller. */
	.globl	ulp_test_entry_probe
	.type	ulp_test_entry_probe, #function
	.align	32
ulp_test_entry_probe:
	add	%sp, BIAS, %o1
	ldx	[%o0], %g1
	jmp	%g1
	 nop
	.size	ulp_test_entry_probe, .-ulp_test_entry_probe

/* Program entry: ulp_arch_enter_program jumped here with argc at %sp + BIAS + 128. */
	.globl	ulp_test_program_probe
	.type	ulp_test_program_probe, #function
	.align	32
ulp_test_program_probe:
	or	%g1, %g2, %g1
	or	%g1, %g3, %g1
	or	%g1, %g4, %g1
	or	%g1, %g5, %g1
	or	%g1, %o0, %g1
	or	%g1, %o1, %g1
	or	%g1, %o2, %g1
	or	%g1, %o3, %g1
	or	%g1, %o4, %g1
	or	%g1, %o5, %g1
	or	%g1, %o7, %g1
	or	%g1, %l0, %g1
	or	%g1, %l1, %g1
	or	%g1, %l2, %g1
	or	%g1, %l3, %g1
	or	%g1, %l4, %g1
	or	%g1, %l5, %g1
	or	%g1, %l6, %g1
	or	%g1, %l7, %g1
	or	%g1, %i0, %g1
	or	%g1, %i1, %g1
	or	%g1, %i2, %g1
	or	%g1, %i3, %g1
	or	%g1, %i4, %g1
	or	%g1, %i5, %g1
	or	%g1, %i6, %g1
	or	%g1, %i7, %g1
	mov	%g1, %o0
	add	%sp, BIAS + 128, %o1
	ldx	[%o1], %g1
	call	%g1
	 nop
	illtrap	0
	.size	ulp_test_program_probe, .-ulp_test_program_probe

	.align	8
.Lrows:
	.xword	0x1010101010101010, 0x1111111111111111, 0x1212121212121212, 0x1313131313131313
	.xword	0x1414141414141414, 0x1515151515151515, 0x1616161616161616, 0x1717171717171717
	.xword	0x2020202020202020, 0x2121212121212121, 0x2222222222222222, 0x2323232323232323
	.xword	0x2424242424242424, 0x2525252525252525
	.xword	0x40000000	/* round towards zero */
	.xword	0
	.xword	0x01010101010101a0, 0x01010101010101a1, 0x01010101010101a2, 0x01010101010101a3
	.xword	0x01010101010101a4, 0x01010101010101a5, 0x01010101010101a6, 0x01010101010101a7
	.xword	0x02020202020202b0, 0x02020202020202b1, 0x02020202020202b2, 0x02020202020202b3
	.xword	0x02020202020202b4, 0x02020202020202b5
	.xword	0xc0000000	/* round towards -inf */
	.xword	0

	.section .rodata
	.globl	ulp_test_regs_names
ulp_test_regs_names:
	.asciz	"l0 l1 l2 l3 l4 l5 l6 l7 i0 i1 i2 i3 i4 i5 fsr.rd fp i7 g7"

	.section .note.GNU-stack,"",@progbits
