/* SPDX-License-Identifier: MIT */
/*
 * aarch64 (AAPCS64, Linux): the TLS register is tpidr_el0, which user space reads and writes
 * directly (mrs/msr), so loading a ULP's TLS costs no system call.
 */
#ifndef ULP_ARCH_IMPL_H
#define ULP_ARCH_IMPL_H

/*
 * Saved frame, lowest address first (ctx->sp points at offset 0). switch.S uses these names and
 * shows the same table; arch.c checks the numbers. The size keeps sp 16-byte aligned, as AAPCS64
 * demands of sp at all times.
 */
#define ULP_FRAME_X19 0 /* x19..x28 at 0, 8, ..., 72 */
#define ULP_FRAME_X20 8
#define ULP_FRAME_X21 16
#define ULP_FRAME_X22 24
#define ULP_FRAME_X23 32
#define ULP_FRAME_X24 40
#define ULP_FRAME_X25 48
#define ULP_FRAME_X26 56
#define ULP_FRAME_X27 64
#define ULP_FRAME_X28 72
#define ULP_FRAME_X29 80 /* frame pointer */
#define ULP_FRAME_LR 88	 /* x30: where the context resumes */
#define ULP_FRAME_D8 96	 /* d8..d15: the low halves of v8..v15 */
#define ULP_FRAME_D9 104
#define ULP_FRAME_D10 112
#define ULP_FRAME_D11 120
#define ULP_FRAME_D12 128
#define ULP_FRAME_D13 136
#define ULP_FRAME_D14 144
#define ULP_FRAME_D15 152
#define ULP_FRAME_FPCR 160 /* 8 bytes; 168..175 unused */
#define ULP_ARCH_FRAME_SIZE 176

#ifndef __ASSEMBLER__
#include <stdint.h>

/*
 * Why 0: AAPCS64 on Linux leaves no general register free for the runtime (x18 is an ordinary
 * temporary there, and GCC allocates it), and tpidr_el0 is the C library's TLS pointer. The self
 * pointer is therefore an initial-exec __thread variable, found at a fixed offset from tpidr_el0:
 * it reads correctly only while the worker's own TLS is loaded. With a ULP's TLS loaded it would
 * read the ULP's memory, so runtime code on that path reaches the worker through task->worker.
 */
#define ULP_ARCH_SELF_SURVIVES_TLS 0

/*
 * The variable itself is defined in arch.c. It is reached as thread pointer + ulp_arch_self_off,
 * with the thread pointer read by a volatile asm each time, never through `ulp_arch_self_tls`
 * directly: GCC takes the thread pointer for constant within a function, but a task that switches
 * may resume on another kernel thread, and would then use the old thread's variable (seen on
 * aarch64; tests/unit/test_switch.c pins it down). The offset is the same in every thread (static
 * TLS); ulp_arch_init sets it, or the first use does.
 */
extern __thread void *ulp_arch_self_tls __attribute__((tls_model("initial-exec")));
extern long ulp_arch_self_off;
long ulp_arch_self_off_init(void);

static inline uintptr_t ulp_arch_tls_get(void)
{
	uintptr_t v;
	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(v));
	return v;
}

static inline void ulp_arch_tls_set(uintptr_t v)
{
	/* "memory": no load or store of TLS data may move across the change of TLS base */
	__asm__ volatile("msr tpidr_el0, %0" ::"r"(v) : "memory");
}

static inline void **ulp_arch_self_slot(void)
{
	long off = __atomic_load_n(&ulp_arch_self_off, __ATOMIC_RELAXED);
	uintptr_t tp;

	if (__builtin_expect(off == 0, 0)) /* 0 is never a valid offset: the TCB sits there */
		off = ulp_arch_self_off_init();
	/* "memory": not to be moved across a call, e.g. the switch it may follow */
	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp)::"memory");
	return (void **)(tp + off);
}

static inline void *ulp_arch_self_get(void)
{
	return *ulp_arch_self_slot();
}

static inline void ulp_arch_self_set(void *self)
{
	*ulp_arch_self_slot() = self;
}

static inline void ulp_arch_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* Raw system call: returns -errno on failure and never touches errno (TLS). The kernel keeps
 * every register but x0. */
static inline long ulp_arch_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#endif /* !__ASSEMBLER__ */

#endif
