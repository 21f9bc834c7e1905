/* SPDX-License-Identifier: MIT */
/* Register-level test helpers, aarch64 AAPCS64. Interface: tests/arch/regs.h. */

/* One row per side of a switch: x19-x28, x29, d8-d15, FPCR (byte offsets 0, 80, 88, 152). */
#define ROW 160
	.section .rodata
	.p2align 3
.Lrows:
	.quad	0x1919191919191919, 0x2020202020202020, 0x2121212121212121, 0x2222222222222222
	.quad	0x2323232323232323, 0x2424242424242424, 0x2525252525252525, 0x2626262626262626
	.quad	0x2727272727272727, 0x2828282828282828, 0x2929292929292929
	.quad	0x0808080808080808, 0x0909090909090909, 0x1010101010101010, 0x1111111111111111
	.quad	0x1212121212121212, 0x1313131313131313, 0x1414141414141414, 0x1515151515151515
	.quad	0x00400000	/* round towards +inf */
	.quad	0x91919191919191f9, 0x02020202020202f0, 0x12121212121212f1, 0x22222222222222f2
	.quad	0x32323232323232f3, 0x42424242424242f4, 0x52525252525252f5, 0x62626262626262f6
	.quad	0x72727272727272f7, 0x82828282828282f8, 0x92929292929292f9
	.quad	0x80808080808080f0, 0x90909090909090f1, 0x01010101010101f2, 0x11111111111111f3
	.quad	0x21212121212121f4, 0x31313131313131f5, 0x41414141414141f6, 0x51515151515151f7
	.quad	0x03800000	/* round towards -inf, flush to zero, default NaN */

	.globl	ulp_test_regs_names
ulp_test_regs_names:
	.asciz	"x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 d8 d9 d10 d11 d12 d13 d14 d15 fpcr"

	.text

.macro CHECKX reg, off, bit
	ldr	x10, [x9, #\off]
	cmp	\reg, x10
	cset	x11, ne
	orr	x0, x0, x11, lsl #\bit
.endm

.macro CHECKD reg, off, bit
	fmov	x12, \reg
	CHECKX	x12, \off, \bit
.endm

/* Own frame: 0 x29/x30, 16.. x19-x28, 96.. d8-d15, 160 caller's FPCR, 168 row. */
.macro REGS_ENTER
	stp	x29, x30, [sp, #-176]!
	.cfi_def_cfa_offset 176
	.cfi_offset x29, -176
	.cfi_offset x30, -168
	mov	x29, sp
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]
.endm

/* Row \which (a 64-bit register, clobbered) into every callee-saved register and FPCR. */
.macro REGS_LOAD which
	adrp	x9, .Lrows
	add	x9, x9, :lo12:.Lrows
	mov	x10, #ROW
	madd	x9, \which, x10, x9
	str	x9, [sp, #168]
	ldp	x19, x20, [x9, #0]
	ldp	x21, x22, [x9, #16]
	ldp	x23, x24, [x9, #32]
	ldp	x25, x26, [x9, #48]
	ldp	x27, x28, [x9, #64]
	ldr	x29, [x9, #80]
	ldp	d8, d9, [x9, #88]
	ldp	d10, d11, [x9, #104]
	ldp	d12, d13, [x9, #120]
	ldp	d14, d15, [x9, #136]
	ldr	x10, [x9, #152]
	msr	fpcr, x10
.endm

/* Back from the switch: the bitmap of what differs from the row, then the caller's state. */
.macro REGS_CHECK_LEAVE
	ldr	x9, [sp, #168]
	mov	x0, #0
	CHECKX	x19, 0, 0
	CHECKX	x20, 8, 1
	CHECKX	x21, 16, 2
	CHECKX	x22, 24, 3
	CHECKX	x23, 32, 4
	CHECKX	x24, 40, 5
	CHECKX	x25, 48, 6
	CHECKX	x26, 56, 7
	CHECKX	x27, 64, 8
	CHECKX	x28, 72, 9
	CHECKX	x29, 80, 10
	CHECKD	d8, 88, 11
	CHECKD	d9, 96, 12
	CHECKD	d10, 104, 13
	CHECKD	d11, 112, 14
	CHECKD	d12, 120, 15
	CHECKD	d13, 128, 16
	CHECKD	d14, 136, 17
	CHECKD	d15, 144, 18
	mrs	x12, fpcr
	CHECKX	x12, 152, 19
	ldr	x10, [sp, #160]
	msr	fpcr, x10
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #176
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	ret
.endm

/* unsigned long ulp_test_regs_switch(ulp_ctx_t *from, ulp_ctx_t *to, int which, ulp_arch_fn fn) */
	.globl	ulp_test_regs_switch
	.type	ulp_test_regs_switch, %function
ulp_test_regs_switch:
	.cfi_startproc
	REGS_ENTER
	sxtw	x2, w2
	REGS_LOAD x2
	cbnz	x3, 1f
	bl	ulp_arch_switch
	b	2f
1:	mov	x2, x3
	mov	x3, xzr
	bl	ulp_arch_switch_call
2:
	REGS_CHECK_LEAVE
	.cfi_endproc
	.size	ulp_test_regs_switch, .-ulp_test_regs_switch

/* unsigned long ulp_test_regs_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry,
 *                                   int which) */
	.globl	ulp_test_regs_start
	.type	ulp_test_regs_start, %function
ulp_test_regs_start:
	.cfi_startproc
	REGS_ENTER
	sxtw	x4, w4
	REGS_LOAD x4
	mov	x4, xzr		/* entry's argument: NULL */
	mov	x5, xzr		/* no after */
	bl	ulp_arch_switch_start
	REGS_CHECK_LEAVE
	.cfi_endproc
	.size	ulp_test_regs_start, .-ulp_test_regs_start

/* FP control encoding: FPCR as is */
	.globl	ulp_test_fpctl_get
	.type	ulp_test_fpctl_get, %function
ulp_test_fpctl_get:
	mrs	x0, fpcr
	ret
	.size	ulp_test_fpctl_get, .-ulp_test_fpctl_get

	.globl	ulp_test_fpctl_set
	.type	ulp_test_fpctl_set, %function
ulp_test_fpctl_set:
	msr	fpcr, x0
	ret
	.size	ulp_test_fpctl_set, .-ulp_test_fpctl_set

	.globl	ulp_test_fpctl_pattern
	.type	ulp_test_fpctl_pattern, %function
ulp_test_fpctl_pattern:
	adrp	x9, .Lrows
	add	x9, x9, :lo12:.Lrows
	mov	x10, #ROW
	sxtw	x0, w0
	madd	x9, x0, x10, x9
	ldr	x0, [x9, #152]
	ret
	.size	ulp_test_fpctl_pattern, .-ulp_test_fpctl_pattern

/* void ulp_test_entry_probe(struct ulp_test_probe *p): AAPCS64 keeps sp 16-byte aligned always.
 * The tail jump goes through x16, which a `bti c` landing pad accepts. */
	.globl	ulp_test_entry_probe
	.type	ulp_test_entry_probe, %function
ulp_test_entry_probe:
	mov	x1, sp
	ldr	x16, [x0]
	br	x16
	.size	ulp_test_entry_probe, .-ulp_test_entry_probe

/* Program entry: ulp_arch_enter_program jumped here through x16 with sp at argc. */
	.globl	ulp_test_program_probe
	.type	ulp_test_program_probe, %function
ulp_test_program_probe:
	orr	x0, x0, x1
	orr	x0, x0, x2
	orr	x0, x0, x3
	orr	x0, x0, x4
	orr	x0, x0, x5
	orr	x0, x0, x6
	orr	x0, x0, x7
	orr	x0, x0, x8
	orr	x0, x0, x9
	orr	x0, x0, x10
	orr	x0, x0, x11
	orr	x0, x0, x12
	orr	x0, x0, x13
	orr	x0, x0, x14
	orr	x0, x0, x15
	orr	x0, x0, x17
	orr	x0, x0, x18
	orr	x0, x0, x19
	orr	x0, x0, x20
	orr	x0, x0, x21
	orr	x0, x0, x22
	orr	x0, x0, x23
	orr	x0, x0, x24
	orr	x0, x0, x25
	orr	x0, x0, x26
	orr	x0, x0, x27
	orr	x0, x0, x28
	orr	x0, x0, x29
	orr	x0, x0, x30
	mov	x1, sp
	ldr	x16, [sp]
	blr	x16
	brk	#0x1
	.size	ulp_test_program_probe, .-ulp_test_program_probe

	.section .note.GNU-stack,"",%progbits
