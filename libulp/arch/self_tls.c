/* SPDX-License-Identifier: MIT */
/* The variable behind self_tls.h (aarch64, sparc64). */
#include "arch.h"

__thread void *ulp_arch_self_tls __attribute__((tls_model("initial-exec")));
long ulp_arch_self_off;

/* Call with the kernel thread's own TLS loaded. Racing callers store the same value. */
long ulp_arch_self_off_init(void)
{
	long off = (long)((uintptr_t)&ulp_arch_self_tls - ulp_arch_tls_get());

	__atomic_store_n(&ulp_arch_self_off, off, __ATOMIC_RELAXED);
	return off;
}
