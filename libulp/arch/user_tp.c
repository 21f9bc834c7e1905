/* SPDX-License-Identifier: MIT */
/* The parts of arch.h that are the same wherever the TLS register is a user register
 * (user_tp.h: aarch64, sparc64). */
#include "arch.h"

void ulp_arch_init(void)
{
	ulp_arch_self_off_init();
}

const char *ulp_arch_tls_method(void)
{
	return ULP_ARCH_TP_NAME;
}

/* The register is written from user space without a system call: there is no slower way to
 * force. */
void ulp_arch_tls_force_syscall(int on)
{
}
