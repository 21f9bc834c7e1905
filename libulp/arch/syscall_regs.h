/* SPDX-License-Identifier: MIT */
/*
 * The start of ulp_arch_syscall where an arch has no asm constraint letter for its system call
 * registers (aarch64, sparc64): the number and the six arguments bound to the registers the
 * kernel reads them from, as GCC local register variables that the arch's asm statement then
 * names as operands (ulp_sc_nr, ulp_sc_a1 .. ulp_sc_a6). The trap instruction, which registers it
 * writes back and what else it clobbers differ by arch and stay in that asm statement. x86_64
 * names most of its registers by constraint letters and does not need this.
 *
 * Use it inside a function whose parameters are nr, a1, ..., a6 (arch.h's ulp_arch_syscall), with
 * the register names of the arch's system call convention, number first.
 */
#ifndef ULP_ARCH_SYSCALL_REGS_H
#define ULP_ARCH_SYSCALL_REGS_H

#define ULP_ARCH_SYSCALL_REGS(rnr, r1, r2, r3, r4, r5, r6)                                         \
	register long ulp_sc_nr __asm__(rnr) = nr;                                                 \
	register long ulp_sc_a1 __asm__(r1) = a1;                                                  \
	register long ulp_sc_a2 __asm__(r2) = a2;                                                  \
	register long ulp_sc_a3 __asm__(r3) = a3;                                                  \
	register long ulp_sc_a4 __asm__(r4) = a4;                                                  \
	register long ulp_sc_a5 __asm__(r5) = a5;                                                  \
	register long ulp_sc_a6 __asm__(r6) = a6

#endif
