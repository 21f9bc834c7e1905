/* SPDX-License-Identifier: MIT */
/*
 * x86_64: a process that shares the address space (clone with CLONE_VM, e.g. posix_spawn's
 * CLONE_VM|CLONE_VFORK child) and resumes a trapped ULP call through a signal frame (ELF, GNU as).
 *
 * long ulp_arch_clone_sigreturn(unsigned long flags, void *frame, int *ptid, int *ctid,
 *                               unsigned long tls, void (*child)(void))
 *
 *   rdi flags, rsi frame = the child's stack pointer: the address of a ucontext_t copied there
 *   (sys_fork.c, ulp_arch_fork_frame), rdx ptid, rcx ctid (the kernel wants it in r10), r8 tls,
 *   r9 child (NULL: none), which clone leaves alone.
 *
 * The parent gets the child's pid (or -errno) back. The child starts with rsp = frame, calls
 * child() if there is one (its frame lies below the ucontext; rsp is 16-byte aligned there, so the
 * call leaves it as the ABI wants at a function's entry), then rt_sigreturn: the kernel takes the
 * rt_sigframe to begin one word below rsp (the return address slot of the restorer), so rsp must
 * point at the ucontext itself. Every register, the signal mask and the FPU state of the trapped
 * call come back from that frame, and the ULP code continues in the child on the stack the frame
 * names.
 */
	.text
	.globl	ulp_arch_clone_sigreturn
	.type	ulp_arch_clone_sigreturn, @function
	.p2align 4
ulp_arch_clone_sigreturn:
	.cfi_startproc
	movq	%rcx, %r10
	movl	$56, %eax	/* __NR_clone: flags, newsp, parent_tid, child_tid, tls */
	syscall
	testq	%rax, %rax
	jnz	1f
	.cfi_undefined rip
	testq	%r9, %r9
	jz	2f
	call	*%r9
2:	movl	$15, %eax	/* __NR_rt_sigreturn, on the frame at rsp */
	syscall
	ud2
1:	ret
	.cfi_endproc
	.size	ulp_arch_clone_sigreturn, .-ulp_arch_clone_sigreturn


/*
 * A fork made by the ULP's placeholder process (sys_fork.c, ph_fork): the child starts in the
 * placeholder's code, as a copy of it, and goes on where the ULP's trap asked for the fork.
 *
 * long ulp_arch_jmp_save(struct ulp_arch_jmp *j)
 *   saves rbx, rbp, r12-r15, the stack pointer of the caller and its return address; returns 0,
 *   and returns again with ulp_arch_jmp_resume's value.
 * void ulp_arch_jmp_resume(const struct ulp_arch_jmp *j, long v)
 *   makes that ulp_arch_jmp_save return v, on the stack it was called on (which must still hold
 *   the caller's frame: in the child of a fork it is the copy made while the caller waited).
 * No signal mask, no pointer mangling (no TLS: the fs of a ULP may be loaded).
 */
	.text
	.globl	ulp_arch_jmp_save
	.type	ulp_arch_jmp_save, @function
	.p2align 4
ulp_arch_jmp_save:
	.cfi_startproc
	movq	%rbx, 0(%rdi)
	movq	%rbp, 8(%rdi)
	movq	%r12, 16(%rdi)
	movq	%r13, 24(%rdi)
	movq	%r14, 32(%rdi)
	movq	%r15, 40(%rdi)
	leaq	8(%rsp), %rdx	/* the caller's rsp once this returns */
	movq	%rdx, 48(%rdi)
	movq	(%rsp), %rdx	/* the return address */
	movq	%rdx, 56(%rdi)
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	ulp_arch_jmp_save, .-ulp_arch_jmp_save

	.globl	ulp_arch_jmp_resume
	.type	ulp_arch_jmp_resume, @function
	.p2align 4
ulp_arch_jmp_resume:
	.cfi_startproc
	movq	%rsi, %rax
	movq	0(%rdi), %rbx
	movq	8(%rdi), %rbp
	movq	16(%rdi), %r12
	movq	24(%rdi), %r13
	movq	32(%rdi), %r14
	movq	40(%rdi), %r15
	movq	48(%rdi), %rsp
	jmp	*56(%rdi)
	.cfi_endproc
	.size	ulp_arch_jmp_resume, .-ulp_arch_jmp_resume

	.section .note.GNU-stack,"",@progbits
