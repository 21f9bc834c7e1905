/* SPDX-License-Identifier: MIT */
/*
 * Emulations of the x86_64-only system calls (entries ULP_ARCH_SYS_TABLE in sys_arch.h). Part of
 * the kernel layer, built with libulp/kernel/ (libulp/module.mk), not with the core arch code; it
 * sees the kernel only through the handler ABI (libulp/kernel/syscall.h), never a ULP's fields.
 */
#include "sys.h"
#include "syscall.h"

#include <errno.h>

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

/* The fs base is the ULP's TLS: the scheduler loads it at each switch, so setting it means
 * recording it for the ULP. gs holds the runtime's worker pointer. */
long ulp_sys_arch_prctl(struct ulp_cb *cb, struct ulp_sys *s)
{
	long code = s->a[0], addr = s->a[1];

	switch (code) {
	case ARCH_SET_FS:
		ulp_sys_tls_set(cb, (uintptr_t)addr);
		return 0;
	case ARCH_GET_FS:
		if (!ulp_sys_range_ok(cb, (uintptr_t)addr, sizeof(long)))
			return -EFAULT;
		*(unsigned long *)addr = ulp_sys_tls_get(cb);
		return 0;
	case ARCH_SET_GS:
	case ARCH_GET_GS:
		return -EPERM;
	default:
		return ulp_arch_syscall(SYS_arch_prctl, code, addr, 0, 0, 0, 0);
	}
}
