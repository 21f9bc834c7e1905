/* SPDX-License-Identifier: MIT */
/* Register-level test helpers, x86_64 System V. Interface: tests/arch/regs.h. */

/* One row per side of a switch: rbx, rbp, r12-r15, MXCSR, x87 control word. */
#define ROW 64
	.section .rodata
	.p2align 3
.Lrows:
	.quad	0x1b1b1b1b1b1b1b1b, 0x2b2b2b2b2b2b2b2b, 0x3c3c3c3c3c3c3c3c, 0x4d4d4d4d4d4d4d4d
	.quad	0x5e5e5e5e5e5e5e5e, 0x6f6f6f6f6f6f6f6f
	.quad	0x3f80		/* all exceptions masked, round down */
	.quad	0x077f		/* round down, 64-bit precision */
	.quad	0xb1b1b1b1b1b1b1b1, 0xb2b2b2b2b2b2b2b2, 0xc3c3c3c3c3c3c3c3, 0xd4d4d4d4d4d4d4d4
	.quad	0xe5e5e5e5e5e5e5e5, 0xf6f6f6f6f6f6f6f6
	.quad	0xdf80		/* round up, flush to zero */
	.quad	0x0b7f		/* round up */

	.globl	ulp_test_regs_names
ulp_test_regs_names:
	.asciz	"rbx rbp r12 r13 r14 r15 mxcsr x87cw"

	.text

.macro CHECK reg, off, bit
	cmpq	\off(%rax), \reg
	je	1f
	orl	$(1 << \bit), %ecx
1:
.endm

/* Own frame below the six saved registers: 0 caller's MXCSR, 4 its x87 CW, 8 row, 16 fn,
 * then scratch. */
.macro REGS_ENTER
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
.endm

/* Row \which (a 32-bit register) into every callee-saved register and the FP control state. */
.macro REGS_LOAD which
	movslq	\which, %rax
	shlq	$6, %rax
	leaq	.Lrows(%rip), %r11
	addq	%r11, %rax
	movq	%rax, 8(%rsp)
	movq	0(%rax), %rbx
	movq	8(%rax), %rbp
	movq	16(%rax), %r12
	movq	24(%rax), %r13
	movq	32(%rax), %r14
	movq	40(%rax), %r15
	ldmxcsr	48(%rax)
	fldcw	56(%rax)
.endm

/* Back from the switch: the bitmap of what differs from the row, then the caller's state. */
.macro REGS_CHECK_LEAVE
	movq	8(%rsp), %rax
	xorl	%ecx, %ecx
	CHECK	%rbx, 0, 0
	CHECK	%rbp, 8, 1
	CHECK	%r12, 16, 2
	CHECK	%r13, 24, 3
	CHECK	%r14, 32, 4
	CHECK	%r15, 40, 5
	stmxcsr	16(%rsp)
	movl	16(%rsp), %edx
	cmpl	48(%rax), %edx
	je	1f
	orl	$(1 << 6), %ecx
1:	fnstcw	16(%rsp)
	movzwl	16(%rsp), %edx
	cmpl	56(%rax), %edx
	je	1f
	orl	$(1 << 7), %ecx
1:	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	movl	%ecx, %eax
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	popq	%r15
	.cfi_adjust_cfa_offset -8
	popq	%r14
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
.endm

/* unsigned long ulp_test_regs_switch(ulp_ctx_t *from, ulp_ctx_t *to, int which, ulp_arch_fn fn) */
	.globl	ulp_test_regs_switch
	.type	ulp_test_regs_switch, @function
ulp_test_regs_switch:
	.cfi_startproc
	REGS_ENTER
	movq	%rcx, 16(%rsp)
	REGS_LOAD %edx
	movq	16(%rsp), %rdx
	testq	%rdx, %rdx
	jnz	1f
	call	ulp_arch_switch@PLT
	jmp	2f
1:	xorl	%ecx, %ecx
	call	ulp_arch_switch_call@PLT
2:
	REGS_CHECK_LEAVE
	.cfi_endproc
	.size	ulp_test_regs_switch, .-ulp_test_regs_switch

/* unsigned long ulp_test_regs_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry,
 *                                   int which) */
	.globl	ulp_test_regs_start
	.type	ulp_test_regs_start, @function
ulp_test_regs_start:
	.cfi_startproc
	REGS_ENTER
	REGS_LOAD %r8d
	xorl	%r8d, %r8d	/* entry's argument: NULL */
	xorl	%r9d, %r9d	/* no after */
	call	ulp_arch_switch_start@PLT
	REGS_CHECK_LEAVE
	.cfi_endproc
	.size	ulp_test_regs_start, .-ulp_test_regs_start

/* FP control encoding: MXCSR without its six exception flags | x87 control word << 32 */
	.globl	ulp_test_fpctl_get
	.type	ulp_test_fpctl_get, @function
ulp_test_fpctl_get:
	.cfi_startproc
	stmxcsr	-8(%rsp)	/* red zone */
	fnstcw	-4(%rsp)
	movl	-8(%rsp), %eax
	andl	$~0x3f, %eax
	movzwl	-4(%rsp), %edx
	shlq	$32, %rdx
	orq	%rdx, %rax
	ret
	.cfi_endproc
	.size	ulp_test_fpctl_get, .-ulp_test_fpctl_get

	.globl	ulp_test_fpctl_set
	.type	ulp_test_fpctl_set, @function
ulp_test_fpctl_set:
	.cfi_startproc
	movl	%edi, -8(%rsp)
	ldmxcsr	-8(%rsp)
	shrq	$32, %rdi
	movw	%di, -8(%rsp)
	fldcw	-8(%rsp)
	ret
	.cfi_endproc
	.size	ulp_test_fpctl_set, .-ulp_test_fpctl_set

	.globl	ulp_test_fpctl_pattern
	.type	ulp_test_fpctl_pattern, @function
ulp_test_fpctl_pattern:
	.cfi_startproc
	movslq	%edi, %rdi
	shlq	$6, %rdi
	leaq	.Lrows(%rip), %rcx
	addq	%rdi, %rcx
	movl	48(%rcx), %eax
	andl	$~0x3f, %eax
	movq	56(%rcx), %rdx
	shlq	$32, %rdx
	orq	%rdx, %rax
	ret
	.cfi_endproc
	.size	ulp_test_fpctl_pattern, .-ulp_test_fpctl_pattern

/* void ulp_test_entry_probe(struct ulp_test_probe *p): the psABI wants rsp + 8 16-byte aligned
 * at function entry (the call pushed 8 bytes onto an aligned stack). */
	.globl	ulp_test_entry_probe
	.type	ulp_test_entry_probe, @function
ulp_test_entry_probe:
	.cfi_startproc
	leaq	8(%rsp), %rsi
	jmp	*(%rdi)		/* same stack: the body sees what we saw */
	.cfi_endproc
	.size	ulp_test_entry_probe, .-ulp_test_entry_probe

/* Program entry: ulp_arch_enter_program jumped here through r11 with rsp at argc. */
	.globl	ulp_test_program_probe
	.type	ulp_test_program_probe, @function
ulp_test_program_probe:
	.cfi_startproc
	.cfi_undefined rip
	orq	%rbx, %rax
	orq	%rcx, %rax
	orq	%rdx, %rax
	orq	%rsi, %rax
	orq	%rdi, %rax
	orq	%rbp, %rax
	orq	%r8, %rax
	orq	%r9, %rax
	orq	%r10, %rax
	orq	%r12, %rax
	orq	%r13, %rax
	orq	%r14, %rax
	orq	%r15, %rax
	movq	%rax, %rdi
	movq	%rsp, %rsi
	movq	(%rsp), %rax
	andq	$-16, %rsp
	call	*%rax
	ud2
	.cfi_endproc
	.size	ulp_test_program_probe, .-ulp_test_program_probe

	.section .note.GNU-stack,"",@progbits
