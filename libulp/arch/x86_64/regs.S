/* SPDX-License-Identifier: MIT */
/*
 * x86_64: start a ULP thread with a complete register set (ELF, GNU as).
 *
 * void ulp_arch_regs_resume(const struct ulp_arch_regs *r)   (rdi = r)
 *
 * struct ulp_arch_regs, offsets (arch_impl.h states them, trap.c asserts them):
 *
 *   offset  contents          offset  contents
 *        0  rax                    64  r8
 *        8  rbx                    72  r9
 *       16  rcx                    80  r10
 *       24  rdx                    88  r11
 *       32  rsi                    96  r12
 *       40  rdi                   104  r13
 *       48  rbp                   112  r14
 *       56  rsp                   120  r15
 *      128  rip                   136  rflags
 *      144  MXCSR (4 bytes)       148  x87 control word (2 bytes)
 *
 * The target pc and flags are pushed on the target stack just below its sp and popped from there
 * (popfq, ret): those two words are below the thread's stack pointer, so no live data is there.
 * rdi is loaded last, since it holds r until then.
 */
	.text
	.globl	ulp_arch_regs_resume
	.type	ulp_arch_regs_resume, @function
	.p2align 4
ulp_arch_regs_resume:
	.cfi_startproc
	.cfi_undefined rip
	ldmxcsr	144(%rdi)
	fldcw	148(%rdi)
	movq	56(%rdi), %rsp
	pushq	128(%rdi)
	pushq	136(%rdi)
	popfq
	movq	0(%rdi), %rax
	movq	8(%rdi), %rbx
	movq	16(%rdi), %rcx
	movq	24(%rdi), %rdx
	movq	32(%rdi), %rsi
	movq	48(%rdi), %rbp
	movq	64(%rdi), %r8
	movq	72(%rdi), %r9
	movq	80(%rdi), %r10
	movq	88(%rdi), %r11
	movq	96(%rdi), %r12
	movq	104(%rdi), %r13
	movq	112(%rdi), %r14
	movq	120(%rdi), %r15
	movq	40(%rdi), %rdi
	ret
	.cfi_endproc
	.size	ulp_arch_regs_resume, .-ulp_arch_regs_resume

	.section .note.GNU-stack,"",@progbits
