/* SPDX-License-Identifier: MIT */
/*
 * x86_64 System V context switch (ELF, GNU as).
 *
 * Saved frame, pushed on the stack of the context being left; ctx->sp points at offset 0:
 *
 *   offset  contents
 *        0  MXCSR (4 bytes) | x87 control word (2 bytes) | 2 bytes unused
 *        8  r15
 *       16  r14
 *       24  r13
 *       32  r12
 *       40  rbx
 *       48  rbp
 *       56  return address (rip)
 *
 * libulp/arch/x86_64/arch_impl.h states the same offsets (ULP_FRAME_*) and arch.c checks them.
 * Restoring ends with `jmp` through the saved rip, loaded first, rather than `ret`: a `ret` to
 * another context's return address is mispredicted on every switch (measured: bare round trip
 * 23.6 -> 10.4 ns, bench/switch.c). r8 is free: it is caller-saved. But the `call` into the
 * switch pushed our return address on the CPU's return stack, and a `jmp` leaves it there: every
 * `ret` of the resumed context up its call chain is then predicted one entry off. So
 * ulp_arch_switch ends with `ret` when the target resumes where we were called from (the same
 * call site: two tasks that yield to each other), where that prediction is right and the return
 * stack stays in step (yield round trip 51 -> 42 ns), and with `jmp` otherwise.
 * The saved sp is 16-byte aligned: the caller's rsp is aligned before `call`, +8 for the return
 * address, +48 for six registers, +8 for the control words.
 */
	.text

.macro SAVE_FRAME
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
.endm

/* Load the frame at rsp, the resume address into r8 and the rsp past the frame's registers
 * (pointing at the saved rip). */
.macro RESTORE_REGS
	movq	56(%rsp), %r8
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
.endm

/* void ulp_arch_switch(ulp_ctx_t *from, ulp_ctx_t *to) */
	.globl	ulp_arch_switch
	.type	ulp_arch_switch, @function
	.p2align 4
ulp_arch_switch:
	.cfi_startproc
	movq	(%rsp), %r9	/* our return address: what the return stack predicts */
	SAVE_FRAME
	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp
	RESTORE_REGS
	cmpq	%r8, %r9
	jne	1f
	ret			/* predicted, and the return stack stays in step */
1:	addq	$8, %rsp
	jmp	*%r8
	.cfi_endproc
	.size	ulp_arch_switch, .-ulp_arch_switch

/* The end of the switches after which what the return stack holds is no guide (after a call
 * on the target's stack, or after ulp_arch_jump, which nobody resumes from). */
	.p2align 4
restore_frame:
	.cfi_startproc
	RESTORE_REGS
	addq	$8, %rsp
	jmp	*%r8
	.cfi_endproc
	.size	restore_frame, .-restore_frame

/* void ulp_arch_switch_call(ulp_ctx_t *from, ulp_ctx_t *to, void (*fn)(void *), void *arg)
 * from may be NULL: the frame is still pushed (harmless) but not recorded. */
	.globl	ulp_arch_switch_call
	.type	ulp_arch_switch_call, @function
	.p2align 4
ulp_arch_switch_call:
	.cfi_startproc
	SAVE_FRAME
	testq	%rdi, %rdi
	jz	1f
	movq	%rsp, (%rdi)
1:	movq	(%rsi), %rsp
	movq	%rcx, %rdi
	call	*%rdx		/* rsp is 16-aligned here, as the ABI wants before a call */
	jmp	restore_frame
	.cfi_endproc
	.size	ulp_arch_switch_call, .-ulp_arch_switch_call

/* void ulp_arch_switch_start(ulp_ctx_t *from, void *lo, size_t size, void (*entry)(void *),
 *                            void *arg, void (*after)(void *))
 * Save the running context into *from, move to the top of the fresh stack [lo, lo + size)
 * (16-byte aligned down) and call after(from) there when after is not NULL, then entry(arg).
 * What ulp_arch_ctx_init + ulp_arch_switch_call do, without writing a frame only to load it
 * again: r12/r13 (saved in from's frame already) keep entry and arg across after. */
	.globl	ulp_arch_switch_start
	.type	ulp_arch_switch_start, @function
	.p2align 4
ulp_arch_switch_start:
	.cfi_startproc
	SAVE_FRAME
	movq	%rsp, (%rdi)
	leaq	(%rsi,%rdx), %rsp
	andq	$-16, %rsp
	.cfi_undefined rip	/* the new context's first frame: unwinders stop here */
	xorl	%ebp, %ebp
	movq	%rcx, %r12
	movq	%r8, %r13
	testq	%r9, %r9
	jz	1f
	call	*%r9		/* rdi = from still; rsp is 16-aligned */
1:	movq	%r13, %rdi
	call	*%r12
	ud2			/* entry must not return */
	.cfi_endproc
	.size	ulp_arch_switch_start, .-ulp_arch_switch_start

/* void ulp_arch_jump(ulp_ctx_t *to): resume to, abandoning the running context (nothing saved). */
	.globl	ulp_arch_jump
	.type	ulp_arch_jump, @function
	.p2align 4
ulp_arch_jump:
	.cfi_startproc
	movq	(%rdi), %rsp
	jmp	restore_frame
	.cfi_endproc
	.size	ulp_arch_jump, .-ulp_arch_jump

/* First code of a new context: ulp_arch_ctx_init put entry in r12 and its argument in r13. */
	.globl	ulp_arch_trampoline
	.type	ulp_arch_trampoline, @function
	.p2align 4
ulp_arch_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r13, %rdi
	call	*%r12
	ud2			/* entry must not return */
	.cfi_endproc
	.size	ulp_arch_trampoline, .-ulp_arch_trampoline

/* void ulp_arch_enter_program(uintptr_t entry, uintptr_t sp)
 * The ELF start-up state of the x86_64 psABI: rsp at argc, rdx = 0 (no atexit function), the
 * other general registers cleared so nothing of the runtime leaks into the program. */
	.globl	ulp_arch_enter_program
	.type	ulp_arch_enter_program, @function
	.p2align 4
ulp_arch_enter_program:
	.cfi_startproc
	movq	%rsi, %rsp
	movq	%rdi, %r11
	xorl	%eax, %eax
	xorl	%ebx, %ebx
	xorl	%ecx, %ecx
	xorl	%edx, %edx
	xorl	%esi, %esi
	xorl	%edi, %edi
	xorl	%ebp, %ebp
	xorl	%r8d, %r8d
	xorl	%r9d, %r9d
	xorl	%r10d, %r10d
	xorl	%r12d, %r12d
	xorl	%r13d, %r13d
	xorl	%r14d, %r14d
	xorl	%r15d, %r15d
	jmp	*%r11
	.cfi_endproc
	.size	ulp_arch_enter_program, .-ulp_arch_enter_program

/* long ulp_arch_clone(unsigned long flags, void *stack_top, int (*fn)(void *), void *arg)
 * clone(2) onto a new stack; the child calls fn(arg) and ends with exit(fn's value) (its thread
 * only: a process child ends its group from fn). Returns the child's id, or -errno. Raw: the
 * child shares the address space and must not touch the parent's libc state. */
	.globl	ulp_arch_clone
	.type	ulp_arch_clone, @function
	.p2align 4
ulp_arch_clone:
	.cfi_startproc
	andq	$-16, %rsi
	subq	$16, %rsi
	movq	%rdx, (%rsi)		/* fn and arg wait on the child's stack */
	movq	%rcx, 8(%rsi)
	movl	$56, %eax		/* SYS_clone(flags, newsp, ptid, ctid, tls) */
	xorl	%edx, %edx
	xorl	%r10d, %r10d
	xorl	%r8d, %r8d
	syscall
	testq	%rax, %rax
	jnz	1f
	xorl	%ebp, %ebp		/* child: on the new stack */
	popq	%rax
	popq	%rdi
	call	*%rax			/* rsp is 16-aligned here */
	movl	%eax, %edi
	movl	$60, %eax		/* SYS_exit */
	syscall
	ud2
1:	ret
	.cfi_endproc
	.size	ulp_arch_clone, .-ulp_arch_clone

	.section .note.GNU-stack,"",@progbits
