/* SPDX-License-Identifier: MIT */
/*
 * The runtime's self pointer on architectures with no register to spare for it (aarch64,
 * sparc64): an initial-exec __thread variable, included by user_tp.h after it defines
 * ulp_arch_tp_fresh(), a read of the thread pointer that the compiler may not cache.
 *
 * ULP_ARCH_SELF_SURVIVES_TLS is 0 there: the variable reads correctly only while the worker's own
 * TLS is loaded; with a ULP's TLS loaded it would read the ULP's memory, so runtime code on that
 * path reaches the worker through task->worker.
 *
 * It is reached as thread pointer + ulp_arch_self_off, with the thread pointer read afresh each
 * time, never through `ulp_arch_self_tls` directly: GCC takes the thread pointer for constant
 * within a function, but a task that switches may resume on another kernel thread, and would then
 * use the old thread's variable (seen on aarch64; tests/unit/test_switch.c pins it down). The
 * offset is the same in every thread (static TLS); ulp_arch_init sets it, or the first use does.
 */
#ifndef ULP_ARCH_SELF_TLS_H
#define ULP_ARCH_SELF_TLS_H

#include <stdint.h>

#define ULP_ARCH_SELF_SURVIVES_TLS 0

extern __thread void *ulp_arch_self_tls __attribute__((tls_model("initial-exec")));
extern long ulp_arch_self_off;
long ulp_arch_self_off_init(void); /* self_tls.c */

static inline void **ulp_arch_self_slot(void)
{
	long off = __atomic_load_n(&ulp_arch_self_off, __ATOMIC_RELAXED);

	if (__builtin_expect(off == 0, 0)) /* 0 is never a valid offset: the TCB sits there */
		off = ulp_arch_self_off_init();
	return (void **)(ulp_arch_tp_fresh() + off);
}

static inline void *ulp_arch_self_get(void)
{
	return *ulp_arch_self_slot();
}

static inline void ulp_arch_self_set(void *self)
{
	*ulp_arch_self_slot() = self;
}

#endif
