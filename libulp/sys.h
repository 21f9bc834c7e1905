/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls for the runtime, one copy. Code that may run while a ULP's TLS is loaded (the
 * trap and its emulations, the scheduler, PVAS task workers, which have no libc) may not call libc:
 * errno and the stack-protector canary live in TLS. These helpers go straight to the kernel
 * through ulp_arch_syscall and return -errno on failure.
 */
#ifndef ULP_SYS_H
#define ULP_SYS_H

#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "arch.h"

/* A raw result is an error when it lies in the kernel's -errno range. */
static inline int ulp_raw_is_err(long r)
{
	return (unsigned long)r > -4096UL;
}

/* Anonymous read-write memory anywhere (flags: added to MAP_PRIVATE | MAP_ANONYMOUS, e.g.
 * MAP_NORESERVE); NULL on failure. */
static inline void *ulp_raw_mmap(size_t len, int flags)
{
	long p = ulp_arch_syscall(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	return ulp_raw_is_err(p) ? NULL : (void *)p;
}

static inline void ulp_raw_munmap(void *p, size_t len)
{
	ulp_arch_syscall(SYS_munmap, (long)p, (long)len, 0, 0, 0, 0);
}

/* Put [lo, lo+len) back to reserved, inaccessible address space (mapped PROT_NONE, no memory
 * committed), so that nothing else the process maps can land there. */
static inline long ulp_raw_reserve(uintptr_t lo, size_t len)
{
	return ulp_arch_syscall(SYS_mmap, (long)lo, (long)len, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

/* Clock clk now, in nanoseconds. */
static inline long long ulp_raw_clock_ns(int clk)
{
	struct timespec ts;

	ulp_arch_syscall(SYS_clock_gettime, clk, (long)&ts, 0, 0, 0, 0);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void ulp_raw_futex_wait(uint32_t *addr, uint32_t val)
{
	ulp_arch_syscall(SYS_futex, (long)addr, FUTEX_WAIT_PRIVATE, val, 0, 0, 0);
}

static inline void ulp_raw_futex_wake(uint32_t *addr, int n)
{
	ulp_arch_syscall(SYS_futex, (long)addr, FUTEX_WAKE_PRIVATE, n, 0, 0, 0);
}

/* The kernel's struct sigaction, as rt_sigaction takes it (not libc's, which differs). */
struct ulp_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

/* The kernel's sigset size for rt_sigaction and rt_sigprocmask. */
#define ULP_KSIGSET_SIZE 8
#define ULP_NSIG 64

/* The preemption tick (a per-worker timer) and the wake-up of a worker asleep in its task's
 * io_uring (tgkill): libulp/kernel/preempt.c and io_ring.c. IDENT: what a ULP's placeholder
 * process tells its task (a signal it forwards, its own death): libulp/kernel/ident.c. */
#define ULP_SIG_TICK 63
#define ULP_SIG_WAKE 62
#define ULP_SIG_IDENT 61
/* A kick (libulp/kernel/sys_thread.c): tgkill to the worker running a ULP thread that another
 * thread marked, so that it looks now. It rides on the tick's signal, told apart by its si_code
 * (SI_TKILL). Not SIGSYS, as it was: a standard signal does not queue, so a kick still pending
 * when that worker's ULP made a trapped call merged with the trap's own SIGSYS, and the call was
 * lost (the handler saw a kick; the call returned its own number). A real-time signal queues. */
#define ULP_SIG_KICK ULP_SIG_TICK

/*
 * Signals the runtime owns in every process that runs ULPs: SIGSYS carries the syscall trap, the
 * faults end the faulting ULP, the two above. A ULP may neither install handlers for them nor
 * block them.
 */
#define ULP_RT_SIGMASK                                                                             \
	((1ul << (SIGSYS - 1)) | (1ul << (SIGSEGV - 1)) | (1ul << (SIGBUS - 1)) |                  \
	 (1ul << (SIGILL - 1)) | (1ul << (SIGFPE - 1)) | (1ul << (ULP_SIG_TICK - 1)) |             \
	 (1ul << (ULP_SIG_WAKE - 1)) | (1ul << (ULP_SIG_IDENT - 1)))

static inline int ulp_rt_signal(int sig)
{
	return sig >= 1 && sig <= ULP_NSIG && (ULP_RT_SIGMASK & (1ul << (sig - 1)));
}

#endif
