/* SPDX-License-Identifier: MIT */
/*
 * x86_64 fast system call entry (ELF, GNU as): what a rewritten syscall site's trampoline calls
 * (fastcall.c writes the trampolines). The trampoline has stepped over the red zone, set rax to
 * the call number and called here; every other register is the program's.
 *
 * Frame pushed here, struct ulp_fast_frame in fastcall.c (which checks these offsets):
 *
 *   offset  contents
 *        0  r15, r14, r13, r12, r11, r10, r9, r8   (0..56)
 *       64  rbp, rdi, rsi, rdx, rcx, rbx, rax       (64..112)
 *      120  rflags
 *      128  return address into the trampoline
 *
 * Below it, 64-byte aligned, an XSAVE area with the whole extended state (x87, SSE, AVX, ...):
 * the runtime's C code and libc's string functions may use any vector register, and a real
 * syscall changes none. ulp_arch_fast_dispatch(frame, xsave) returns 0 when it emulated the call
 * (frame rax, rcx, r11 set as the kernel sets them) or 1 when the trampoline must execute a real
 * `syscall` instead: then this returns 2 bytes further, past the trampoline's short jump.
 *
 * ulp_arch_spin_entry is the same entry for the trampolines of rewritten wait loops (spin_patch.c):
 * it calls ulp_arch_spin_dispatch, which returns 0, and every register and flag comes back as the
 * loop left it (or as a signal handler run there changed it).
 */
	.text

/* FAST_ENTRY name, dispatch: the entry above, calling dispatch(frame, xsave). */
.macro FAST_ENTRY name, dispatch
	.globl	\name
	.hidden	\name
	.type	\name, @function
\name:
	pushfq
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	cld			/* the C code may assume the ABI's direction flag */
	movq	%rsp, %rbx
	subq	ulp_arch_fast_xsize(%rip), %rsp
	andq	$-64, %rsp
	/* XSAVE writes only XSTATE_BV of the header; XRSTOR faults on a dirty rest */
	xorl	%eax, %eax
	movq	%rax, 512(%rsp)
	movq	%rax, 520(%rsp)
	movq	%rax, 528(%rsp)
	movq	%rax, 536(%rsp)
	movq	%rax, 544(%rsp)
	movq	%rax, 552(%rsp)
	movq	%rax, 560(%rsp)
	movq	%rax, 568(%rsp)
	movl	$-1, %eax
	movl	$-1, %edx
	xsave64	(%rsp)
	movq	%rbx, %rdi
	movq	%rsp, %rsi
	call	\dispatch
	movl	%eax, %r12d
	movl	$-1, %eax
	movl	$-1, %edx
	xrstor64 (%rsp)
	movq	%rbx, %rsp
	testl	%r12d, %r12d
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	jz	1f
	addq	$2, 8(%rsp)	/* fallback: past the trampoline's short jump */
1:	popfq
	ret
	.size	\name, .-\name
.endm

	FAST_ENTRY ulp_arch_fast_entry, ulp_arch_fast_dispatch
	FAST_ENTRY ulp_arch_spin_entry, ulp_arch_spin_dispatch

	.section .note.GNU-stack,"",@progbits
