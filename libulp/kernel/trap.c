/* SPDX-License-Identifier: MIT */
/*
 * The syscall trap. A seccomp-BPF filter (hand-written: libseccomp cannot test
 * instruction_pointer) returns SECCOMP_RET_TRAP for the syscall numbers that have a handler in
 * ulp_sys_table (sys_table.c) when the calling instruction lies in the PVAS region, i.e. in a ULP's
 * code; every other syscall runs natively. The SIGSYS handler dispatches the call to its handler
 * (syscall.h: the handler ABI and how to add one; docs/syscalls.md lists each one).
 *
 * The handler runs on the ULP's own stack (no SA_ONSTACK) with SA_NODEFER: the kernel's signal
 * frame, with the whole register and FPU state, stays on that stack, so the handler may switch to
 * another task (sched_yield) or end the ULP (exit) right there; the ULP resumes later, maybe on
 * another worker, by returning from the handler. Handler code touches no TLS: the ULP's fs is
 * loaded while it runs; the worker is found through the arch self pointer.
 *
 * Faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE) run on a per-worker alternate stack (a stack overflow
 * leaves no room on the ULP's) and end only the faulting ULP.
 */
#include "io.h"
#include "ulp_signal.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"
#include "uthread.h"

#include <elf.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap */
#endif

/* The runtime's handlers for the signals it owns (ULP_RT_SIGMASK), as the kernel has them. */
static struct ulp_ksigaction saved[ULP_NSIG + 1];

/* The region the filter was built for: a seccomp filter cannot be removed. */
static uintptr_t trap_base;
static size_t trap_size;

/* The kernel restores the alternate-stack setting saved in the frame at sigreturn; the frame may
 * have been made on another worker, so give it this worker's. */
static void fix_altstack(ucontext_t *uc)
{
	struct ulp_worker *w = ulp_worker_self();

	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = ULP_ALTSTACK_SIZE;
	uc->uc_stack.ss_flags = 0;
}

/* ---- CPU clocks read in the vDSO ---- */

/*
 * A ULP's libc reads clocks in the vDSO, the host's code outside the region, which makes the
 * system call itself for the CPU clocks: the filter traps clock_gettime of
 * CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID and the negative ids (a given process's or
 * thread's clock) from the vDSO too (vdso_lo, vdso_hi), for every thread of the process: a ULP's
 * call is answered for the ULP, any other thread's by the kernel. Which threads
 * are workers is kept by kernel tid, so that no other thread reads gs (where it is not the
 * runtime's, and rdgsbase is not allowed, that read would fault).
 */
#define TID_LIMIT (1ul << 22) /* PID_MAX_LIMIT on 64-bit */
static uintptr_t vdso_lo, vdso_hi;
static _Atomic uint64_t *worker_tids;

static int is_worker_tid(long tid)
{
	return worker_tids && tid > 0 && (unsigned long)tid < TID_LIMIT &&
	       (atomic_load(&worker_tids[tid / 64]) >> (tid % 64) & 1);
}

/* The vDSO's code: its ELF image's loadable extent. */
static void vdso_find(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	uintptr_t end = 0;
	int i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return;
	ph = (const Elf64_Phdr *)((uintptr_t)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > end)
			end = ph[i].p_vaddr + ph[i].p_memsz;
	/* one 4 GiB window, as the filter compares the pc's low word only there */
	if (end && ((uintptr_t)eh >> 32) == (((uintptr_t)eh + end - 1) >> 32)) {
		vdso_lo = (uintptr_t)eh;
		vdso_hi = (uintptr_t)eh + end;
	}
}

int ulp_trap_in_vdso(uintptr_t pc)
{
	return pc >= vdso_lo && pc < vdso_hi;
}

/* A clock_gettime trapped in the vDSO: 1 when answered here. */
static int vdso_clock(siginfo_t *si, void *ucv)
{
	uintptr_t pc = ulp_arch_trap_pc(ucv);
	struct ulp_cb *cb = NULL;
	long a[6], r;

	if (si->si_syscall != SYS_clock_gettime || pc < vdso_lo || pc >= vdso_hi)
		return 0;
	ulp_arch_trap_args(ucv, a);
	if (is_worker_tid(ulp_arch_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0)))
		cb = ulp_current_cb();
	if (cb && cb->magic == ULP_CB_MAGIC && !ulp_sys_in_child())
		r = ulp_sys_cpu_clock(cb, a[0], (struct timespec *)a[1]);
	else
		r = ulp_arch_syscall(SYS_clock_gettime, a[0], a[1], 0, 0, 0, 0);
	ulp_arch_trap_set_ret(ucv, r);
	return 1;
}

static void sigsys_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_cb *cb;

	if (si->si_code == SYS_SECCOMP && vdso_clock(si, ucv))
		return;
	cb = ulp_current_cb();

	/* Not a trap: a SIGSYS from outside (kill -SYS). The runtime owns the signal; nothing to
	 * do. Kicks are ULP_SIG_KICK (sys.h says why they are not SIGSYS). */
	if (si->si_code != SYS_SECCOMP)
		return;
	if (!cb || cb->magic != ULP_CB_MAGIC) {
		/* A trapped call from the region outside any running ULP: cannot happen unless
		 * memory is corrupt. Say so and stop. */
		static const char msg[] = "libulp: SIGSYS outside a ULP; aborting\n";
		ulp_arch_syscall(SYS_write, 2, (long)msg, sizeof(msg) - 1, 0, 0, 0);
		ulp_arch_syscall(SYS_exit_group, 134, 0, 0, 0, 0, 0);
		return; /* not reached */
	}
	ulp_fast_trapped(cb, si->si_syscall, ucv);
	ulp_trap_call(cb, si->si_syscall, ucv);
}

/* Call fn for a ULP that has its own 0-2 (stdfds.c): with them in its arguments and in the
 * descriptors poll and select read in memory, which get the program's numbers back after. */
static long std_call(struct ulp_cb *cb, struct ulp_sys *call, ulp_sys_fn fn)
{
	struct ulp_std_undo undo;
	long r;

	ulp_std_args(cb, call);
	ulp_std_mem_in(cb, call, &undo);
	r = fn ? fn(cb, call) : -ENOSYS;
	ulp_std_mem_out(call, &undo, r);
	return r;
}

/* The call itself: its result, also in the context. */
static long trap_run(struct ulp_cb *cb, long nr, void *ucv)
{
	struct ulp_task *self;
	struct ulp_sys call;
	ulp_sys_fn fn;
	uint64_t switches;
	unsigned spins;
	long r;

	call.nr = nr;
	call.uc = ucv;
	ulp_arch_trap_args(ucv, call.a);
	/* The filter traps only numbers with a handler; anything else would be a filter bug. */
	fn = (unsigned long)call.nr < ULP_SYS_NR_MAX ? ulp_sys_table[call.nr] : NULL;
	self = ulp_worker_self()->cur; /* the same task after the call, maybe on another worker */
	self->in_syscall = (uint32_t)call.nr + 1; /* a plain store: what a parked call waits in */
	/* It entered the runtime: not a pure spinner. But a futex call that gave up no CPU (a wake,
	 * a wait whose word had changed) leaves the count: threads of an MPI_THREAD_MULTIPLE rank
	 * polling MPICH's progress wake each other at every unlock, and kept whole quanta (8 ranks
	 * of 5 threads: 18-35 s as ULPs, 2.4-5.2 s under mpiexec). */
	spins = self->spins;
	switches = self->switches;
	self->spins = 0;
	if (ulp_sys_in_child()) /* a fork child of the ULP: a process of its own (sys_fork.c) */
		r = ulp_sys_child(cb, &call);
	else if ((r = ulp_rlimit_fd_pre(cb, &call, fn)) != 0)
		; /* past its RLIMIT_NOFILE (sys_rlimit.c) */
	else if (cb->std_own[0] | cb->std_own[1] | cb->std_own[2])
		r = ulp_rlimit_fd_post(cb, &call, fn, std_call(cb, &call, fn)); /* its own 0-2 */
	else
		r = ulp_rlimit_fd_post(cb, &call, fn, fn ? fn(cb, &call) : -ENOSYS);
	ulp_arch_trap_set_ret(ucv, r);
	self->in_syscall = 0;
	if (call.nr == SYS_futex && self->switches == switches)
		self->spins = spins;
	/* a call that made or woke a thread: a worker that ticked seldom ticks at the quantum */
	if (atomic_load_explicit(&ulp_preempt_alone_n, memory_order_relaxed) && !ulp_sys_in_child())
		ulp_preempt_after_call(ulp_worker_self());
	return r;
}

void ulp_trap_call(struct ulp_cb *cb, long nr, void *ucv)
{
	trap_run(cb, nr, ucv);
	/* A fork child's threads stay where they are: the frame holds their own setting (a thread
	 * made there has none, or the program's; the worker's would be shared by them all). */
	if (!ulp_sys_in_child())
		fix_altstack(ucv);
	/* The thread may have to end (its ULP is dying) or take a signal sent to it. */
	ulp_tg_trap_return(cb, ucv);
	/* Signals posted to this ULP while it was parked or elsewhere, or unblocked by this very
	 * call, take effect now, before the call returns, as the kernel does it (signal.c). */
	ulp_sig_deliver(cb, ucv);
	/* The kernel's mask of a worker never blocks a ULP's signal (masks are per ULP thread,
	 * signal.c): a frame left by an abandoned handler frame must not bring one back. Nor the
	 * tick, which only its own handler blocks (preempt.c): the ULP's code stays preemptible. */
	if (!ulp_sys_in_child())
		*ulp_arch_trap_sigmask(ucv) &= ULP_RT_SIGMASK & ~(1ul << (ULP_SIG_TICK - 1));
}

int ulp_trap_call_fast(struct ulp_cb *cb, long nr, void *ucv, long *ret)
{
	*ret = trap_run(cb, nr, ucv);
	if (ulp_sig_due(cb))
		return 1;
	/* its ULP is dying: the thread ends here, as at a trap's return (nothing due to run) */
	if (cb->tg->dying)
		ulp_tg_trap_return(cb, ucv);
	return 0;
}

static void fault_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_cb *cb = ulp_current_cb();
	struct sigaction dfl;

	/* In a waiting thread's probe: not the running ULP's fault; the probe says "run it", and
	 * that thread meets the fault itself if it is still there */
	if (ulp_spin_probe_fault(ucv))
		return;
	/* A FIFO pass's copy (fifo_pass.c) met a program's bad buffer: it says EFAULT */
	if (ulp_fifo_copy_fault(ucv))
		return;
	if (cb && cb->magic == ULP_CB_MAGIC) {
		/* The ULP's own handler, if it has one (a handler that returns retries the
		 * faulting instruction, as in a process). */
		if (ulp_sig_fault(cb, sig, si, ucv)) {
			fix_altstack(ucv);
			return;
		}
		ulp_proc_set_fault(cb, (uintptr_t)si->si_addr, ulp_arch_trap_pc(ucv));
		ulp_sys_end(cb, 0, sig);
	}
	/* A fault of the runtime or of a host thread: crash as the process would. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
}

/* ---- installation ---- */

/* The argument rule of call nr, if the filter traps it only for some arguments. */
static const struct ulp_sys_arg_trap *arg_trap(unsigned nr)
{
	unsigned i;

	for (i = 0; i < ulp_sys_n_arg_traps; i++)
		if ((unsigned)ulp_sys_arg_traps[i].nr == nr)
			return &ulp_sys_arg_traps[i];
	return NULL;
}

#define FILTER_MAX (48 + 4 * ULP_SYS_NR_MAX + 16 * 32)
#define LEAF_NRS 4 /* numbers tested one by one at the end of a search */

struct filter {
	struct sock_filter f[FILTER_MAX];
	unsigned n;
};

static void put(struct filter *fl, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	fl->f[fl->n++] = (struct sock_filter){code, jt, jf, k};
}

/* A call trapped for some arguments only (the number in the accumulator): for one of the values
 * of its second argument, or (std) when one of its descriptor arguments is 0-2 (stdfds.c). */
static void put_arg_trap(struct filter *fl, const struct ulp_sys_arg_trap *at)
{
	unsigned fds = at->std ? ulp_sys_fd_args[at->nr] : 0, nfd = 0, k, a;

	for (a = 0; a < 6; a++)
		nfd += fds >> a & 1;
	/* after the jumps below: RET ALLOW, RET TRAP */
	put(fl, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)at->nr, 0,
	    (uint8_t)(2 * nfd + (at->n ? 1 + at->n : 0) + 2));
	for (a = 0, k = 0; a < 6; a++) {
		if (!(fds >> a & 1))
			continue;
		k++;
		put(fl, BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_ARG_LO(a), 0, 0);
		/* below 3, as an unsigned word: 0-2 (AT_FDCWD and other negatives are not) */
		put(fl, BPF_JMP | BPF_JGE | BPF_K, 3, 0,
		    (uint8_t)(2 * (nfd - k) + (at->n ? 1 + at->n : 0) + 1));
	}
	if (at->n) {
		put(fl, BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_ARG1_LO, 0, 0);
		for (k = 0; k < at->n; k++)
			put(fl, BPF_JMP | BPF_JEQ | BPF_K, at->val[k], (uint8_t)(at->n - k), 0);
	}
	put(fl, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	put(fl, BPF_RET | BPF_K, SECCOMP_RET_TRAP, 0, 0);
}

/* A leaf of the search: nrs[0..n), the syscall number in the accumulator. */
static void put_leaf(struct filter *fl, const unsigned *nrs, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct ulp_sys_arg_trap *at = arg_trap(nrs[i]);

		if (!at) {
			put(fl, BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0, 1);
			put(fl, BPF_RET | BPF_K, SECCOMP_RET_TRAP, 0, 0);
			continue;
		}
		put_arg_trap(fl, at);
	}
	put(fl, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
}

/*
 * A binary search over the trapped numbers nrs[0..n) (ascending): every system call of the
 * region's code runs the filter, the untrapped ones too, and a linear test of the ~150 numbers
 * cost them 3% of the CPU time of 64 MPI ranks starting (docs/benchmarks.md). The jump to the
 * upper half is a BPF_JA, whose offset is 32 bits: any table size fits.
 */
static void put_search(struct filter *fl, const unsigned *nrs, unsigned n)
{
	unsigned half = n / 2, ja;

	if (n <= LEAF_NRS) {
		put_leaf(fl, nrs, n);
		return;
	}
	put(fl, BPF_JMP | BPF_JGE | BPF_K, nrs[half], 0, 1);
	ja = fl->n;
	put(fl, BPF_JMP | BPF_JA, 0, 0, 0);
	put_search(fl, nrs, half);
	fl->f[ja].k = fl->n - ja - 1;
	put_search(fl, nrs + half, n - half);
}

static int install_filter(struct pvas_region *r)
{
	static struct filter fl; /* once, before any task exists */
	unsigned nrs[ULP_SYS_NR_MAX], nnr = 0, i;
	uint32_t lo_hi = (uint32_t)(r->base >> 32), hi_hi = (uint32_t)((r->base + r->size) >> 32);
	struct sock_fprog prog;

	/* The trapped set is the dispatch table's: one source of truth. */
	for (i = 0; i < ULP_SYS_NR_MAX; i++)
		if (ulp_sys_table[i])
			nrs[nnr++] = i;
	fl.n = 0;
#define STMT(c, k) put(&fl, c, k, 0, 0)
#define JUMP(c, k, t, e) put(&fl, c, k, t, e)
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, ulp_arch_audit(), 1, 0);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* The vDSO's clock_gettime of a CPU clock (see vdso_clock): jumps to the region's test
	 * unless it is one. */
	if (vdso_hi) {
		STMT(BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_IP_HI);
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(vdso_lo >> 32), 0, 10);
		STMT(BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_IP_LO);
		JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)vdso_lo, 0, 8);
		JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)vdso_hi, 7, 0);
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 5);
		STMT(BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_ARG0_LO);
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLOCK_PROCESS_CPUTIME_ID, 2, 0);
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLOCK_THREAD_CPUTIME_ID, 1, 0);
		/* a negative id: the CPU clock of a given process or thread (pthread_getcpuclockid)
		 */
		JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	}
	/* Region bounds are 4 GiB aligned: the high word of the pc decides. */
	STMT(BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_IP_HI);
	JUMP(BPF_JMP | BPF_JGE | BPF_K, lo_hi, 1, 0);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	JUMP(BPF_JMP | BPF_JGE | BPF_K, hi_hi, 0, 1);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	/* Numbers that are another ABI's names for the same calls: no way around the trap. */
	if (ULP_ARCH_SYS_NR_FOREIGN) {
		JUMP(BPF_JMP | BPF_JSET | BPF_K, ULP_ARCH_SYS_NR_FOREIGN, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	}
#undef STMT
#undef JUMP
	put_search(&fl, nrs, nnr);
	prog.len = (unsigned short)fl.n;
	prog.filter = fl.f;
	/* Without no_new_privs where the process may (CAP_SYS_ADMIN): it would be every ULP's and
	 * their children's for good, whose setuid programs (su, sudo) would gain nothing. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0)
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return -errno;
	return 0;
}

/* In a new PVAS task: the handlers it inherited are whatever the launching process had at clone
 * time (a test framework may have replaced ours); put the runtime's back, raw. */
void ulp_trap_own_actions(void)
{
	int sig;

	for (sig = 1; sig <= ULP_NSIG; sig++)
		if (ulp_rt_signal(sig))
			ulp_arch_syscall(SYS_rt_sigaction, sig, (long)&saved[sig], 0,
					 ULP_KSIGSET_SIZE, 0, 0);
}

void ulp_trap_task_init(void)
{
	ulp_trap_own_actions();
	ulp_sig_task_init(); /* the relay for the ULPs' signals (signal.c) */
	ulp_io_task_init();  /* the descriptor table, grown while the task has one thread */
}

/* Raw system calls: this also runs on the workers of PVAS tasks, which have no libc. */
void ulp_trap_worker_init(struct ulp_worker *w)
{
	stack_t ss;

	long tid = ulp_arch_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);

	if (worker_tids && tid > 0 && (unsigned long)tid < TID_LIMIT)
		atomic_fetch_or(&worker_tids[tid / 64], 1ull << (tid % 64)); /* vdso_clock */
	ss.ss_sp = ulp_worker_altstack(w);
	if (!ss.ss_sp)
		return;
	ss.ss_size = ULP_ALTSTACK_SIZE;
	ss.ss_flags = 0;
	ulp_arch_syscall(SYS_sigaltstack, (long)&ss, 0, 0, 0, 0, 0);
	ulp_io_worker_init(w); /* the task's ring (worker 0), the preemption timer */
	ulp_fs_worker_init(w); /* a cwd and umask of its own (fs.c) */
}

int ulp_trap_handler_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) != 0 ? -errno : 0;
}

int ulp_trap_install(struct pvas_region *r)
{
	int sig, rc;

	/* A seccomp filter cannot be removed: a later region must lie where the first one did. */
	if (trap_base) {
		if (trap_base != r->base || trap_size != r->size)
			return -EBUSY;
		return 0;
	}
	/* SA_RESTART: a kick (see sigsys_handler) must not fail the system call it interrupts */
	rc = ulp_trap_handler_install(SIGSYS, sigsys_handler, SA_NODEFER | SA_RESTART);
	if (rc)
		return rc;
	for (sig = 1; sig <= ULP_NSIG; sig++) {
		if (sig == SIGSYS || sig == ULP_SIG_TICK || sig == ULP_SIG_WAKE ||
		    sig == ULP_SIG_IDENT || !ulp_rt_signal(sig))
			continue;
		rc = ulp_trap_handler_install(sig, fault_handler, SA_NODEFER | SA_ONSTACK);
		if (rc)
			return rc;
	}
	/* The preemption tick and the ring's wake-up (preempt.c). */
	rc = ulp_io_install(r);
	if (rc)
		return rc;
	rc = ulp_ident_setup(r); /* ULP_SIG_IDENT (ident.c) */
	if (rc)
		return rc;
	/* Keep them as the kernel has them (libc's restorer included) for ulp_trap_task_init. */
	for (sig = 1; sig <= ULP_NSIG; sig++)
		if (ulp_rt_signal(sig))
			ulp_arch_syscall(SYS_rt_sigaction, sig, 0, (long)&saved[sig],
					 ULP_KSIGSET_SIZE, 0, 0);
	rc = ulp_sig_setup(r);
	if (rc)
		return rc;
	worker_tids = ulp_raw_mmap(TID_LIMIT / 8, MAP_NORESERVE);
	vdso_find();
	rc = install_filter(r);
	if (rc)
		return rc;
	ulp_fast_init();
	ulp_spin_init();
	trap_base = r->base;
	trap_size = r->size;
	return 0;
}
