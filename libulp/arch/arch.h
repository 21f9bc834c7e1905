/* SPDX-License-Identifier: MIT */
/*
 * The interface every libulp/arch/<arch>/ folder implements. Nothing outside libulp/arch/ tests
 * the CPU: it includes this header and calls these functions.
 *
 * A context is one stack pointer. The registers a switch must keep (callee-saved registers and the
 * floating-point control state) are pushed on the task's own stack; the layout of that frame is
 * given in each arch's arch_impl.h and in a table above each routine in switch.S.
 */
#ifndef ULP_ARCH_H
#define ULP_ARCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ulp_ctx {
	void *sp; /* points at the saved frame while the context is not running */
} ulp_ctx_t;

typedef void (*ulp_arch_fn)(void *arg);

/* Save the running context into *from and resume *to. Returns when someone switches back to from.
 */
void ulp_arch_switch(ulp_ctx_t *from, ulp_ctx_t *to);

/*
 * Like ulp_arch_switch, but once on to's stack (and after from is fully saved) call fn(arg), then
 * resume to. from may be NULL: nothing is saved (the running context is abandoned). This is what
 * makes yield, block and exit one switch each: fn publishes the old context (queues it, frees its
 * stack) only when nobody can still be running on it.
 */
void ulp_arch_switch_call(ulp_ctx_t *from, ulp_ctx_t *to, ulp_arch_fn fn, void *arg);

/* Prepare ctx so that switching to it calls entry(arg) on the stack [lo, lo+size). entry must not
 * return. The new context inherits the caller's floating-point control state. */
void ulp_arch_ctx_init(ulp_ctx_t *ctx, void *lo, size_t size, ulp_arch_fn entry, void *arg);

/*
 * Save the running context into *from and start a new one on the stack [lo, lo+size): there, call
 * after(from) when after is not NULL (from is fully saved by then: after may publish it), then
 * entry(arg), which must not return. Same effect as ulp_arch_ctx_init on a scratch context and
 * ulp_arch_switch_call, minus the frame written only to be loaded again: work-first creation
 * starts every child this way. The new context inherits the floating-point control state.
 */
void ulp_arch_switch_start(ulp_ctx_t *from, void *lo, size_t size, ulp_arch_fn entry, void *arg,
			   ulp_arch_fn after);

/* Resume to, abandoning the running context (nothing is saved): a task's last switch, once what
 * it owned is released. The caller must not need its stack afterwards. */
void ulp_arch_jump(ulp_ctx_t *to) __attribute__((noreturn));

/* Jump to a program's entry point with the given initial stack pointer (ELF process start-up
 * state: registers cleared, the atexit argument zero). Never returns. */
void ulp_arch_enter_program(uintptr_t entry, uintptr_t sp) __attribute__((noreturn));

/* clone(2) onto stack_top; the child runs fn(arg) and exits its thread with fn's value. Returns the
 * child's id or -errno. For PVAS tasks and their workers, which share the address space. */
long ulp_arch_clone(unsigned long flags, void *stack_top, int (*fn)(void *), void *arg);
/* Write into buf (len bytes) an ELF executable for this CPU that exits at once with status 0;
 * its size, or 0 when buf is too small or the architecture has none. */
size_t ulp_arch_exit_elf(unsigned char *buf, size_t len);

/* Probe CPU features (e.g. FSGSBASE). Call once before any other function here. */
void ulp_arch_init(void);

/* Name of the way the TLS register is written, for reports: "wrfsbase", "arch_prctl", ... */
const char *ulp_arch_tls_method(void);

/* Force the slow, system-call way of writing the TLS register (for benchmarks: the PiP way). */
void ulp_arch_tls_force_syscall(int on);

/* Syscall trap support: the audit arch of seccomp_data, and the syscall arguments, result and pc
 * in a signal handler's ucontext. */
uint32_t ulp_arch_audit(void);
void ulp_arch_trap_args(void *uc, long args[6]);
void ulp_arch_trap_set_ret(void *uc, long v);
uintptr_t ulp_arch_trap_pc(void *uc);
uintptr_t ulp_arch_trap_sp(void *uc);
/* The call number a fast path's context makes for real (ulp_arch_fast_hook), and where a trap's
 * context resumes (with what the syscall instruction leaves of it, as after a syscall there). */
void ulp_arch_trap_set_nr(void *uc, long nr);
void ulp_arch_trap_set_pc(void *uc, uintptr_t pc);

/*
 * A thread's complete user register state, to start a ULP thread where clone(2) returns in the
 * child: taken from the trap's signal context, then given its own stack pointer and return value.
 * struct ulp_arch_regs is defined in arch_impl.h (x86_64 only so far).
 */
struct ulp_arch_regs;
void ulp_arch_regs_from_trap(struct ulp_arch_regs *r, const void *uc);
void ulp_arch_regs_set_child(struct ulp_arch_regs *r, uintptr_t sp, long ret);
/* Load every register of r and continue at its pc on its stack. Writes two words below r's sp. */
void ulp_arch_regs_resume(const struct ulp_arch_regs *r) __attribute__((noreturn));
/* The signal mask saved in a trap's signal context (the interrupted thread's mask). */
unsigned long *ulp_arch_trap_sigmask(void *uc);

/*
 * Fast system calls (x86_64 only so far: fastcall.c says how a site is verified and rewritten).
 * The hook is the kernel layer's: given the context a trap would have carried and the call
 * number, it emulates the call (result in the context's return register) and returns 0, or returns
 * 1 and a call is made for real, where the seccomp trap sees it: the context's, with its registers
 * as the hook left them (the same call, or another number: ulp_arch_trap_set_nr).
 */
#define ULP_FAST_SLOT 128 /* bytes of one site's trampoline, a power of two */
/* The trampolines' area, at the top of a ULP's control block area (which ends where the partition's
 * code may start): a header page, then the slots. */
#define ULP_FAST_AREA (16 * 1024)
#define ULP_FAST_AREA_HDR 4096
typedef int (*ulp_arch_fast_hook)(void *uc, long nr);
/* 0, or -ENOTSUP where the CPU cannot (no XSAVE enabled). */
int ulp_arch_fast_init(ulp_arch_fast_hook hook);
/* Rewrite the site whose syscall instruction ends at pc (lo, hi: the partition holding it) to go
 * through the trampoline written at slot (writable, ULP_FAST_SLOT bytes, within 2 GiB of pc).
 * alone: the ULP has no other thread; else none of them runs on another CPU meanwhile, and the
 * site is rewritten only where that is safe for a thread that resumes later (fastcall.c).
 * 0, or -errno: the site was left as it was. */
int ulp_arch_fast_patch(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, int alone);
/* For tests: bounds of the function holding site (its object's .eh_frame_hdr), and whether
 * decoding [lo, hi) ends at hi with boundaries at want[0..n) (sorted). 0 or -1. */
int ulp_arch_fast_func(uintptr_t lo, uintptr_t hi, uintptr_t site, uintptr_t *flo, uintptr_t *fhi);
int ulp_arch_fast_walk(uintptr_t lo, uintptr_t hi, const uintptr_t *want, unsigned n);

/*
 * Wait loops that yield (x86_64 only so far: spinloop.c says which loops, spin_patch.c how one
 * is rewritten). The hook is the kernel layer's: given the context of the loop (its pc, the
 * instruction the trampoline is about to replay), it lets others run and delivers what is due to
 * the thread, as a tick would; registers it changes in the context are the loop's afterwards.
 * probe, regs: the loop's probe and the thread's registers for it (ulp_arch_spin_probe), valid
 * while the thread is in the hook; probe 0: the loop has none.
 */
typedef void (*ulp_arch_spin_hook)(void *uc, uintptr_t probe, void *regs);
/* 0, or -ENOTSUP (after ulp_arch_fast_init, which must have succeeded). */
int ulp_arch_spin_init(ulp_arch_spin_hook hook);
/* Rewrite the wait loop around pc (lo, hi: the partition holding it) so that each iteration calls
 * the hook, through the trampoline written at slot (as for ulp_arch_fast_patch). No other thread
 * of the ULP may run on another CPU meanwhile; alone: the ULP has no other thread at all (any
 * instruction of the loop may be rewritten, not only one that one atomic store can change).
 * spare: the next slot (writable too), or 0: where the loop's probe goes, if it gets one.
 * 0 (the slot used), 1 (both: a probe), or -errno: -ENOENT no loop around pc, -EILSEQ not a wait
 * loop, -ENOSPC no instruction to rewrite, -EAGAIN not while the thread is stopped where pc is;
 * the loop was left as it was, and [refuse[0], refuse[1]) is the code found to hold no loop to
 * rewrite (the loop, the function when no short loop is around pc; else unchanged). */
int ulp_arch_spin_patch(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
			int alone, uintptr_t refuse[2]);
/* Run the probe of a waiting thread's loop with its registers (the hook's probe and regs, while
 * that thread is switched out in the hook): 1 when one iteration from the loop's head leaves the
 * loop, or faults (ulp_arch_spin_probe_fault), 0 when it goes round. Reads memory only. */
int ulp_arch_spin_probe(uintptr_t probe, void *regs);
/* From a fault handler: the fault is in the probe now running on this thread (probe), and uc
 * returns from it with 1 (the thread runs and meets the fault itself). 1 if so, else 0. */
int ulp_arch_spin_probe_fault(uintptr_t probe, void *uc);

/* clang-format off */
/*
 * Provided inline by arch_impl.h:
 *   uintptr_t ulp_arch_tls_get(void);     the TLS register (fs base, tpidr_el0, %g7)
 *   void ulp_arch_tls_set(uintptr_t v);
 *   void *ulp_arch_self_get(void);        a per-kernel-thread pointer for the runtime that
 *   void ulp_arch_self_set(void *self);   stays valid while a foreign TLS is loaded where the
 *                                         arch allows (x86_64: gs; self must point at a word
 *                                         holding self)
 *   void ulp_arch_relax(void);            spin-wait hint (pause, yield, ...)
 *   long ulp_arch_syscall(nr, a1..a6);    raw system call, -errno on failure, errno untouched
 *   ULP_ARCH_SELF_SURVIVES_TLS            1 when self_get works with any TLS loaded
 *   ULP_ARCH_FRAME_SIZE                   bytes of the saved frame
 *   ULP_ARCH_SECCOMP_IP_HI                offset of the high 32 bits of instruction_pointer in
 *                                         struct seccomp_data (byte order)
 */
/* clang-format on */
#include "arch_impl.h"

#endif
