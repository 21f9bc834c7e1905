/* SPDX-License-Identifier: MIT */
/* x86_64 pieces of fork from a ULP (sys_fork.c, clone_sigreturn.S). */
#ifndef ULP_ARCH_SYS_FORK_ARCH_H
#define ULP_ARCH_SYS_FORK_ARCH_H

#include <stdint.h>
#include <sys/syscall.h>

/* The fork calls only some architectures have (ulp_sys_child). */
#define ULP_ARCH_SYS_FORK SYS_fork
#define ULP_ARCH_SYS_VFORK SYS_vfork

uintptr_t ulp_arch_fork_frame(const void *uc, uintptr_t sp);
uintptr_t ulp_arch_thread_frame(const void *uc, uintptr_t sp);
void ulp_arch_trap_set_sp(void *uc, uintptr_t sp);
long ulp_arch_clone_sigreturn(unsigned long flags, void *frame, int *ptid, int *ctid,
			      unsigned long tls, void (*child)(void));

/* Callee-saved registers, stack pointer and resume address of a ulp_arch_jmp_save call
 * (clone_sigreturn.S): the child of a fork the placeholder makes goes on from there. */
struct ulp_arch_jmp {
	unsigned long r[8];
};
__attribute__((returns_twice)) long ulp_arch_jmp_save(struct ulp_arch_jmp *j);
__attribute__((noreturn)) void ulp_arch_jmp_resume(const struct ulp_arch_jmp *j, long v);

#endif
