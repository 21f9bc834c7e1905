/* SPDX-License-Identifier: MIT */
/*
 * The TLS register where it is an ordinary register that user space reads and writes with one
 * instruction (aarch64: tpidr_el0, sparc64: %g7), so that loading a ULP's TLS costs no system
 * call. The arch's arch_impl.h defines ULP_ARCH_TP_READ and ULP_ARCH_TP_WRITE (that instruction,
 * an asm template with the value as %0) and ULP_ARCH_TP_NAME (what ulp_arch_tls_method says),
 * then includes this header; user_tp.c holds the parts of arch.h that follow from it.
 *
 * No register is left there for the runtime's self pointer: it is a __thread variable
 * (self_tls.h, included at the end).
 */
#ifndef ULP_ARCH_USER_TP_H
#define ULP_ARCH_USER_TP_H

#include <stdint.h>

static inline uintptr_t ulp_arch_tls_get(void)
{
	uintptr_t v;
	__asm__ volatile(ULP_ARCH_TP_READ : "=r"(v));
	return v;
}

static inline void ulp_arch_tls_set(uintptr_t v)
{
	/* "memory": no load or store of TLS data may move across the change of TLS base */
	__asm__ volatile(ULP_ARCH_TP_WRITE ::"r"(v) : "memory");
}

/* The thread pointer, read afresh: "memory" keeps it from moving across a call such as a switch
 * (for self_tls.h). */
static inline uintptr_t ulp_arch_tp_fresh(void)
{
	uintptr_t tp;
	__asm__ volatile(ULP_ARCH_TP_READ : "=r"(tp)::"memory");
	return tp;
}

#include "self_tls.h"

#endif
