/* SPDX-License-Identifier: MIT */
/*
 * Fast system calls: the calls of a ULP that reach the runtime without a signal (docs/syscalls.md,
 * "Fast path"). The first time a syscall site traps for one of the calls below, the trap handler
 * asks the architecture to rewrite that site into a jump to a trampoline (libulp/arch/x86_64/
 * fastcall.c: what is verified, and how); from then on the site calls fast_hook, which runs the
 * same handler the trap would have run, with a context built like the trap's. Sites that cannot
 * be rewritten keep trapping; ULP_FASTCALL=0 turns the rewriting off.
 *
 * The trampolines live in the last pages of the ULP's control block area, which only the runtime
 * maps and the program cannot unmap (sys_mem.c keeps it out of the ULP's range): one header page,
 * read-write, and FAST_NSLOTS slots in read-only executable pages.
 *
 * A site is rewritten while its ULP has one thread (the thread rewriting it is in the trap
 * handler, so no thread can be executing the bytes being changed), or while none of its other
 * threads runs on another worker, where the architecture can change it with one atomic store that
 * a stopped thread cannot be inside of (ulp_arch_fast_patch's alone). Calls are emulated on the
 * fast path while the calling thread blocks no signal (the context it builds carries an empty
 * mask). With other threads, a signal due when the call ends is not run on that context (no
 * unwind information leads through the trampoline: glibc's asynchronous cancellation unwinds
 * from the handler): the call's result is kept and the trampoline makes a real trapped call,
 * ULP_ARCH_SYS_FAST_RETURN, whose handler returns the result at the call's own pc, from a signal
 * frame of the kernel, where the trap's return runs the signal as for any trapped call.
 */
#include "proc.h"
#include "sys.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define FAST_AREA ULP_FAST_AREA /* at the top of the control block area (arch.h) */
#define FAST_PAGE ULP_FAST_AREA_HDR
#define FAST_NSLOTS ((FAST_AREA - FAST_PAGE) / ULP_FAST_SLOT)
#define FAST_NREFUSED ((FAST_PAGE - 16) / sizeof(struct fast_refused))

_Static_assert(sizeof(struct ulp_cb) <= ULP_CB_SIZE - FAST_AREA,
	       "the control block leaves room for the trampolines");

/* Code that could not be rewritten: a syscall site, a loop, a function without a wait loop. */
struct fast_refused {
	uintptr_t lo, hi;
};

struct fast_area {
	uint32_t used;	   /* slots taken */
	uint32_t nrefused; /* refusals so far; the last FAST_NREFUSED are kept */
	uint32_t busy;	   /* a thread of the ULP is rewriting (ulp_fast_rewrite) */
	uint32_t pad;
	struct fast_refused refused[FAST_NREFUSED]; /* not tried again */
};

_Static_assert(sizeof(struct fast_area) <= FAST_PAGE, "one header page");

/* 1: sites are rewritten. Set once, before any ULP runs. */
static int fast_on;

int ulp_fast_on(void)
{
	return fast_on;
}

/* The calls whose sites are rewritten: their handlers use nothing of the context but the
 * arguments, the mask (none blocked: fast_masked) and the registers a ULP's signal handler may
 * look at. fork, clone, exec, exit and the signal calls keep the trap's real signal frame. The
 * calls that make descriptors (socket ... fcntl: fds.c) are the call and a record. openat, the
 * memory calls, gettid and readlinkat: what a program and its libraries make most while they
 * load and start (64 MPICH ranks: ~650 traps each before MPI_Init's first thread). */
static const short fast_nrs[] = {
    SYS_sched_yield,
    SYS_futex,
    SYS_read,
    SYS_write,
    SYS_readv,
    SYS_writev,
    SYS_pread64,
    SYS_pwrite64,
    SYS_recvfrom,
    SYS_sendto,
    SYS_recvmsg,
    SYS_sendmsg,
    SYS_ppoll,
    SYS_pselect6,
    SYS_epoll_pwait,
    SYS_epoll_pwait2,
    SYS_flock,
    SYS_msgsnd,
    SYS_msgrcv,
    SYS_semop,
    SYS_semtimedop,
    SYS_mq_timedsend,
    SYS_mq_timedreceive,
    SYS_nanosleep,
    SYS_clock_nanosleep,
    SYS_close,
    SYS_getpid,
    SYS_getppid,
    SYS_socket,
    SYS_dup,
    SYS_dup3,
    SYS_pipe2,
    SYS_eventfd2,
    SYS_epoll_create1,
    SYS_fcntl,
    SYS_openat,
    SYS_mmap,
    SYS_munmap,
    SYS_mprotect,
    SYS_madvise,
    SYS_mremap,
    SYS_brk,
    SYS_gettid,
    SYS_readlinkat,
    ULP_ARCH_SYS_FAST,
};
static uint64_t fast_set[(ULP_SYS_NR_MAX + 63) / 64];

static int fast_nr(long nr)
{
	return (unsigned long)nr < ULP_SYS_NR_MAX && (fast_set[nr / 64] >> (nr % 64) & 1);
}

static struct fast_area *area_of(struct ulp_cb *cb)
{
	return (struct fast_area *)(cb->part_lo + ULP_CB_SIZE - FAST_AREA);
}

/* The calling thread blocks signals: its calls take the trap, whose frame carries its mask. */
static int fast_masked(struct ulp_cb *cb)
{
	return *ulp_sig_mask(cb) != 0;
}

/* Called by a trampoline (through the arch entry) with the context of the call. */
static int fast_hook(void *uc, long nr)
{
	struct ulp_cb *cb = ulp_current_cb();
	struct ulp_uthread *u;
	long r;

	if (!cb || cb->magic != ULP_CB_MAGIC || !fast_nr(nr) || ulp_sys_in_child() ||
	    fast_masked(cb))
		return 1;
	if (!cb->tg || cb->tg->nlive <= 1) {
		ulp_trap_call(cb, nr, uc);
		return 0;
	}
	u = ulp_tg_current(cb);
	if (!u)
		return 1;
	if (!ulp_trap_call_fast(cb, nr, uc, &r))
		return 0;
	/* a signal is due: returned through the trap (ulp_sys_fast_return) */
	u->fast_ret = r;
	u->fast_pc = ulp_arch_trap_pc(uc);
	ulp_arch_trap_set_nr(uc, ULP_ARCH_SYS_FAST_RETURN);
	return 1;
}

int ulp_fast_in_slots(struct ulp_cb *cb, uintptr_t pc)
{
	return pc >= (uintptr_t)area_of(cb) + FAST_PAGE && pc < cb->part_lo + ULP_CB_SIZE;
}

long ulp_sys_fast_return(struct ulp_cb *cb, struct ulp_sys *s)
{
	struct ulp_uthread *u = cb->tg && !ulp_sys_in_child() ? ulp_tg_current(cb) : NULL;

	/* the program's own call of this number: the kernel has none */
	if (!u || !u->fast_pc || !ulp_fast_in_slots(cb, ulp_arch_trap_pc(s->uc)))
		return -ENOSYS;
	ulp_arch_trap_set_pc(s->uc, u->fast_pc);
	u->fast_pc = 0;
	return u->fast_ret;
}

void ulp_fast_init(void)
{
	const char *e = getenv("ULP_FASTCALL");
	unsigned i;

	if (e && !strcmp(e, "0"))
		return;
	for (i = 0; i < sizeof(fast_nrs) / sizeof(fast_nrs[0]); i++)
		if (ulp_sys_table[fast_nrs[i]]) /* only calls the trap emulates */
			fast_set[fast_nrs[i] / 64] |= 1ull << (fast_nrs[i] % 64);
	fast_on = ulp_arch_fast_init(fast_hook) == 0;
}

void ulp_fast_exec(struct ulp_cb *cb)
{
	struct fast_area *a = area_of(cb);

	if (!fast_on)
		return;
	a->used = 0;
	a->nrefused = 0;
}

static int rewrite(struct ulp_cb *cb, struct fast_area *a, uintptr_t pc, ulp_fast_patch_fn patch)
{
	uintptr_t slot, spare, page, len, refuse[2] = {pc, pc + 1};
	unsigned i;
	int rc;

	if (a->used >= FAST_NSLOTS)
		return -ENOSPC;
	for (i = 0; i < a->nrefused && i < FAST_NREFUSED; i++)
		if (pc >= a->refused[i].lo && pc < a->refused[i].hi)
			return -EALREADY;
	slot = (uintptr_t)a + FAST_PAGE + (uintptr_t)a->used * ULP_FAST_SLOT;
	spare = a->used + 1 < FAST_NSLOTS ? slot + ULP_FAST_SLOT : 0;
	page = slot & ~(uintptr_t)(FAST_PAGE - 1);
	len = ((spare ? spare : slot) | (FAST_PAGE - 1)) + 1 - page; /* one page, or two */
	/* executable throughout: the page's other trampolines may be running (a thread of the ULP
	 * that the scheduler just switched out stopped in one) */
	ulp_arch_syscall(SYS_mprotect, (long)page, (long)len, PROT_READ | PROT_WRITE | PROT_EXEC, 0,
			 0, 0);
	rc = patch(pc, cb->part_lo + ULP_CB_SIZE, cb->part_hi, slot, spare, refuse);
	ulp_arch_syscall(SYS_mprotect, (long)page, (long)len, PROT_READ | PROT_EXEC, 0, 0, 0);
	if (rc < 0 && rc != -EAGAIN) { /* the oldest refusal makes room: it is only tried again */
		i = a->nrefused++ % FAST_NREFUSED;
		a->refused[i].lo = refuse[0];
		a->refused[i].hi = refuse[1];
	} else if (rc >= 0) {
		a->used += 1 + (unsigned)rc;
	}
	return rc;
}

int ulp_fast_rewrite(struct ulp_cb *cb, uintptr_t pc, ulp_fast_patch_fn patch)
{
	struct fast_area *a = area_of(cb);
	int rc;

	/* two threads of the ULP trapping at once on two workers: one rewrites */
	if (__atomic_exchange_n(&a->busy, 1, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	rc = rewrite(cb, a, pc, patch);
	__atomic_store_n(&a->busy, 0, __ATOMIC_RELEASE);
	return rc;
}

/* The ULP has one thread: the one in the trap handler. */
static int patch_alone(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
		       uintptr_t *refuse)
{
	return ulp_arch_fast_patch(pc, lo, hi, slot, 1);
}

static int patch_shared(uintptr_t pc, uintptr_t lo, uintptr_t hi, uintptr_t slot, uintptr_t spare,
			uintptr_t *refuse)
{
	return ulp_arch_fast_patch(pc, lo, hi, slot, 0);
}

void ulp_fast_trapped(struct ulp_cb *cb, long nr, void *uc)
{
	uintptr_t pc;
	int alone;

	if (!fast_on || !fast_nr(nr) || ulp_sys_in_child() || fast_masked(cb))
		return;
	pc = ulp_arch_trap_pc(uc);
	/* a trampoline's own syscall (a call it does not emulate), or not the ULP's code */
	if (pc < cb->part_lo + ULP_CB_SIZE || pc >= cb->part_hi)
		return;
	/* MPI ranks make most of their calls once their libraries' threads exist (UCX's progress
	 * thread); glibc's calls then use other sites (its cancellable ones) */
	alone = !cb->tg || cb->tg->nlive <= 1;
	if (!alone && ulp_sched_owner_runs_elsewhere(ulp_worker_self(), cb))
		return; /* a later trap of this site tries again */
	ulp_fast_rewrite(cb, pc, alone ? patch_alone : patch_shared);
}
