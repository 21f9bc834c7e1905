/* SPDX-License-Identifier: MIT */
/*
 * Register-level helpers for tests/unit/test_switch.c. Plain C cannot name callee-saved registers
 * or the floating-point control word, so each architecture implements these in
 * tests/arch/<arch>/regs.S; the tests themselves stay free of any CPU test.
 */
#ifndef ULP_TEST_ARCH_REGS_H
#define ULP_TEST_ARCH_REGS_H

#include <stdint.h>

#include "arch.h"

/*
 * Load row `which` (0 or 1) of the arch's table of distinct values into every callee-saved
 * register and the floating-point control state, ulp_arch_switch(from, to) (fn == NULL) or
 * ulp_arch_switch_call(from, to, fn, NULL), and once switched back compare them with the table.
 * Returns a bitmap of the registers that changed, bit i named by the i-th word of
 * ulp_test_regs_names (0: all intact). The caller's own registers and FP control state are
 * restored before returning, as for any function.
 */
unsigned long ulp_test_regs_switch(ulp_ctx_t *from, ulp_ctx_t *to, int which, ulp_arch_fn fn);
extern const char ulp_test_regs_names[]; /* "rbx rbp ...": bit names, space-separated */
/* The same around ulp_arch_switch_start(from, lo, size, entry, NULL, NULL): row `which` is loaded,
 * the new context starts, and the bitmap tells what changed once someone switches back to from. */
unsigned long ulp_test_regs_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry,
				  int which);

/* The floating-point control state (rounding mode and the like, not the sticky flags), in an
 * arch-defined encoding; pattern(which) is the value row `which` of the table loads. */
unsigned long ulp_test_fpctl_get(void);
void ulp_test_fpctl_set(unsigned long v);
unsigned long ulp_test_fpctl_pattern(int which);

/*
 * ulp_test_entry_probe is an entry for ulp_arch_ctx_init whose argument is a struct
 * ulp_test_probe: it calls p->body(p, sp) without changing the stack, where sp is the stack pointer
 * it found at its own entry, adjusted so that a value the ABI allows at function entry is a
 * multiple of 16 (x86_64: rsp + 8, aarch64: sp, sparc64: %sp + 2047).
 */
struct ulp_test_probe {
	void (*body)(struct ulp_test_probe *p, uintptr_t sp);
};
void ulp_test_entry_probe(void *probe);

/*
 * A program entry point for ulp_arch_enter_program. Reads a function pointer from the initial
 * stack where argc would be (the sp given to ulp_arch_enter_program) and calls it with
 * (OR of every general register that must start cleared, the address argc is found at).
 */
typedef void (*ulp_test_program_body)(unsigned long regs_or, uintptr_t argc_at);
void ulp_test_program_probe(void);

#endif
