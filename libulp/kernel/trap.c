/* SPDX-License-Identifier: MIT */
/*
 * The syscall trap. A seccomp-BPF filter (hand-written: libseccomp cannot test
 * instruction_pointer) returns SECCOMP_RET_TRAP for a few syscall numbers when the calling
 * instruction lies in the PVAS region, i.e. in a ULP's code; every other syscall runs natively.
 * The SIGSYS handler emulates the call (docs/syscalls.md lists each one).
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
#include "proc.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2
#endif
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

/* The kernel's struct sigaction (rt_sigaction), to re-install the handlers raw in PVAS tasks. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static const int owned[] = {SIGSYS, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#define NOWNED (sizeof(owned) / sizeof(owned[0]))
static struct ksigaction saved[NOWNED];

static struct pvas_region *trap_region;
static uintptr_t trap_base;
static size_t trap_size;

/* Syscalls trapped from the region. */
static const int trapped[] = {
    SYS_exit,		SYS_exit_group,	  SYS_brk,
    SYS_mmap,		SYS_munmap,	  SYS_mremap,
    SYS_arch_prctl,	SYS_sched_yield,  SYS_set_tid_address,
    SYS_rseq,		SYS_rt_sigaction, SYS_sigaltstack,
    SYS_rt_sigprocmask, SYS_clone,	  SYS_clone3,
    SYS_fork,		SYS_vfork,	  SYS_execve,
    SYS_execveat,	SYS_tgkill,	  SYS_tkill,
    SYS_kill,		SYS_close,
};
#define NTRAPPED (sizeof(trapped) / sizeof(trapped[0]))

/* Signals the runtime owns: a ULP may not install handlers for them nor block them. */
static int runtime_signal(int sig)
{
	return sig == SIGSYS || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return ulp_arch_syscall(nr, a, b, c, d, e, f);
}

static int is_err(long r)
{
	return (unsigned long)r > -4096UL;
}

/* Put [lo, lo+len) back to the reserved, inaccessible state. */
static void reserve(uintptr_t lo, size_t len)
{
	sys(SYS_mmap, (long)lo, (long)len, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

static uintptr_t page_up(uintptr_t v)
{
	return (v + ulp_rt.page_size - 1) & ~(uintptr_t)(ulp_rt.page_size - 1);
}

static int inside(const struct ulp_cb *cb, uintptr_t lo, size_t len)
{
	return lo >= cb->part_lo + ULP_CB_SIZE && len <= cb->part_hi - lo;
}

/* ---- emulations ---- */

static long emu_brk(struct ulp_cb *cb, uintptr_t want)
{
	uintptr_t need;
	long r;

	if (want < cb->brk_start || want > cb->brk_max)
		return (long)cb->brk_cur; /* the kernel's way of saying no */
	need = page_up(want);
	if (need > cb->brk_mapped) {
		r = sys(SYS_mmap, (long)cb->brk_mapped, (long)(need - cb->brk_mapped),
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (is_err(r))
			return (long)cb->brk_cur;
	} else if (need < cb->brk_mapped) {
		reserve(need, cb->brk_mapped - need);
	}
	cb->brk_mapped = need;
	cb->brk_cur = want;
	return (long)want;
}

static long emu_mmap(struct ulp_cb *cb, long *a)
{
	uintptr_t addr = (uintptr_t)a[0];
	size_t len = page_up((size_t)a[1]);
	int flags = (int)a[3];
	long r;

	if (!a[1] || !len)
		return -EINVAL;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (!inside(cb, addr, len))
			return -ENOMEM; /* never outside its own partition */
		r = sys(SYS_mmap, a[0], a[1], a[2], flags, a[4], a[5]);
		if (!is_err(r))
			ulp_mm_take(cb, addr, len);
		return r;
	}
	addr = ulp_mm_alloc(cb, len);
	if (!addr)
		return -ENOMEM;
	r = sys(SYS_mmap, (long)addr, a[1], a[2], flags | MAP_FIXED, a[4], a[5]);
	if (is_err(r))
		ulp_mm_free(cb, addr, len);
	return r;
}

static long emu_munmap(struct ulp_cb *cb, uintptr_t addr, size_t len)
{
	len = page_up(len);
	if ((addr & (ulp_rt.page_size - 1)) || !len)
		return -EINVAL;
	if (!inside(cb, addr, len))
		return -EINVAL;
	reserve(addr, len);
	ulp_mm_free(cb, addr, len);
	return 0;
}

static long emu_mremap(struct ulp_cb *cb, long *a)
{
	uintptr_t old = (uintptr_t)a[0], to;
	size_t old_len = page_up((size_t)a[1]), new_len = page_up((size_t)a[2]);
	int flags = (int)a[3];
	long r;

	if (!inside(cb, old, old_len) || !new_len)
		return -EINVAL;
	if (new_len <= old_len) {
		r = sys(SYS_mremap, a[0], a[1], a[2], 0, 0, 0);
		if (!is_err(r) && new_len < old_len) {
			reserve(old + new_len, old_len - new_len);
			ulp_mm_free(cb, old + new_len, old_len - new_len);
		}
		return r;
	}
	if (flags & MREMAP_FIXED) {
		to = (uintptr_t)a[4];
		if (!inside(cb, to, new_len))
			return -EINVAL;
	} else {
		if (!(flags & MREMAP_MAYMOVE))
			return -ENOMEM; /* growing in place would eat the reservation around it */
		to = ulp_mm_alloc(cb, new_len);
		if (!to)
			return -ENOMEM;
	}
	r = sys(SYS_mremap, (long)old, (long)old_len, (long)new_len, MREMAP_MAYMOVE | MREMAP_FIXED,
		(long)to, 0);
	if (is_err(r)) {
		if (!(flags & MREMAP_FIXED))
			ulp_mm_free(cb, to, new_len);
		return r;
	}
	ulp_mm_take(cb, to, new_len);
	reserve(old, old_len); /* mremap left a hole: keep the region reserved */
	ulp_mm_free(cb, old, old_len);
	return r;
}

static long emu_arch_prctl(struct ulp_cb *cb, long code, long addr)
{
	switch (code) {
	case ARCH_SET_FS:
		ulp_task_set_tls(&cb->task, (uintptr_t)addr);
		return 0;
	case ARCH_GET_FS:
		if (!inside(cb, (uintptr_t)addr, sizeof(long)))
			return -EFAULT;
		*(unsigned long *)addr = cb->task.tls;
		return 0;
	case ARCH_SET_GS:
	case ARCH_GET_GS:
		return -EPERM; /* gs holds the runtime's worker pointer */
	default:
		return sys(SYS_arch_prctl, code, addr, 0, 0, 0, 0);
	}
}

static long emu_sigaction(long sig, long act, long oact, long size)
{
	if (runtime_signal((int)sig)) {
		if (oact && size > 0 && size <= 64)
			memset((void *)oact, 0, 32); /* "default action", size of k_sigaction */
		return 0; /* accepted, not installed: the runtime keeps these */
	}
	return sys(SYS_rt_sigaction, sig, act, oact, size, 0, 0);
}

static long emu_sigprocmask(long how, long set, long oset, long size)
{
	unsigned long m;

	if (set && (how == SIG_BLOCK || how == SIG_SETMASK) && size == 8) {
		m = *(unsigned long *)set;
		m &= ~((1ul << (SIGSYS - 1)) | (1ul << (SIGSEGV - 1)) | (1ul << (SIGBUS - 1)) |
		       (1ul << (SIGILL - 1)) | (1ul << (SIGFPE - 1)));
		return sys(SYS_rt_sigprocmask, how, (long)&m, oset, size, 0, 0);
	}
	return sys(SYS_rt_sigprocmask, how, set, oset, size, 0, 0);
}

/* Default action of sig terminates the process (so, here, the ULP). */
static int fatal_by_default(int sig)
{
	return sig != SIGCHLD && sig != SIGCONT && sig != SIGURG && sig != SIGWINCH &&
	       sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU && sig != 0;
}

static void ulp_end(struct ulp_cb *cb, int status, int sig) __attribute__((noreturn));

/* kill/tgkill aimed at the process itself (abort, raise): end the ULP, not the process. */
static long emu_kill(struct ulp_cb *cb, long nr, long *a)
{
	long pid = sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	int sig = (int)(nr == SYS_tgkill ? a[2] : a[1]);
	int self;

	if (nr == SYS_tgkill)
		self = a[0] == pid && a[1] == cb->task.worker->tid;
	else if (nr == SYS_tkill)
		self = a[0] == cb->task.worker->tid;
	else
		self = a[0] == pid || a[0] == 0;
	if (self && fatal_by_default(sig))
		ulp_end(cb, 0, sig);
	return sys(nr, a[0], a[1], a[2], 0, 0, 0);
}

/* ---- ending a ULP ---- */

static void ulp_end(struct ulp_cb *cb, int status, int sig)
{
	unsigned long none = 0;

	cb->exit_status = status & 0xff;
	cb->term_sig = sig;
	/* The program may have blocked signals (abort does): the worker must not keep that. */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
	ulp_task_exit(&cb->task, NULL);
}

/* The kernel restores the alternate-stack setting saved in the frame at sigreturn; the frame may
 * have been made on another worker, so give it this worker's. */
static void fix_altstack(ucontext_t *uc)
{
	struct ulp_worker *w = ulp_worker_self();

	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = ULP_ALTSTACK_SIZE;
	uc->uc_stack.ss_flags = 0;
}

static void sigsys_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_cb *cb = ulp_current_cb();
	long a[6], nr = si->si_syscall, r;

	if (!cb || cb->magic != ULP_CB_MAGIC) {
		/* A trapped call from the region outside any running ULP: cannot happen unless
		 * memory is corrupt. Say so and stop. */
		static const char msg[] = "libulp: SIGSYS outside a ULP; aborting\n";
		sys(SYS_write, 2, (long)msg, sizeof(msg) - 1, 0, 0, 0);
		sys(SYS_exit_group, 134, 0, 0, 0, 0, 0);
	}
	ulp_arch_trap_args(ucv, a);
	switch (nr) {
	case SYS_exit:
	case SYS_exit_group:
		ulp_end(cb, (int)a[0], 0);
	case SYS_brk:
		r = emu_brk(cb, (uintptr_t)a[0]);
		break;
	case SYS_mmap:
		r = emu_mmap(cb, a);
		break;
	case SYS_munmap:
		r = emu_munmap(cb, (uintptr_t)a[0], (size_t)a[1]);
		break;
	case SYS_mremap:
		r = emu_mremap(cb, a);
		break;
	case SYS_arch_prctl:
		r = emu_arch_prctl(cb, a[0], a[1]);
		break;
	case SYS_sched_yield:
		r = ulp_task_yield(&cb->task) ? 0 : sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		break;
	case SYS_set_tid_address:
		r = cb->task.worker->tid; /* no clear-tid address: a ULP is no kernel thread */
		break;
	case SYS_rseq:
		r = -ENOSYS; /* the worker thread's rseq area belongs to the host libc */
		break;
	case SYS_rt_sigaction:
		r = emu_sigaction(a[0], a[1], a[2], a[3]);
		break;
	case SYS_sigaltstack: /* the worker's alternate stack is the runtime's */
		if (a[1]) {
			memset((void *)a[1], 0, sizeof(stack_t));
			((stack_t *)a[1])->ss_flags = SS_DISABLE;
		}
		r = 0;
		break;
	case SYS_rt_sigprocmask:
		r = emu_sigprocmask(a[0], a[1], a[2], a[3]);
		break;
	case SYS_clone:
	case SYS_clone3:
		r = nr == SYS_clone3 ? -ENOSYS : -EAGAIN; /* no kernel threads inside a ULP */
		break;
	case SYS_tgkill:
	case SYS_tkill:
	case SYS_kill:
		r = emu_kill(cb, nr, a);
		break;
	case SYS_close:
		/* Descriptors are per process, so per task: a ULP that closes stdin, stdout or
		 * stderr at exit (coreutils' close_stdout) must not close them for the others. */
		if (a[0] >= 0 && a[0] <= 2) {
			r = cb->std_closed & (1u << a[0]) ? -EBADF : 0;
			cb->std_closed |= 1u << a[0];
		} else {
			r = sys(SYS_close, a[0], 0, 0, 0, 0, 0);
		}
		break;
	default: /* fork, vfork, execve, execveat: would take the whole process along */
		r = -ENOSYS;
		break;
	}
	ulp_arch_trap_set_ret(ucv, r);
	fix_altstack(ucv);
}

static void fault_handler(int sig, siginfo_t *si, void *ucv)
{
	struct ulp_cb *cb = ulp_current_cb();
	struct sigaction dfl;

	if (cb && cb->magic == ULP_CB_MAGIC) {
		cb->fault_addr = (uintptr_t)si->si_addr;
		cb->fault_pc = ulp_arch_trap_pc(ucv);
		ulp_end(cb, 0, sig);
	}
	/* A fault of the runtime or of a host thread: crash as the process would. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
}

/* ---- installation ---- */

static int install_filter(struct pvas_region *r)
{
	struct sock_filter f[16 + 2 * NTRAPPED];
	unsigned n = 0, i;
	uint32_t lo_hi = (uint32_t)(r->base >> 32), hi_hi = (uint32_t)((r->base + r->size) >> 32);
	struct sock_fprog prog;

#define STMT(c, k) (f[n++] = (struct sock_filter)BPF_STMT(c, k))
#define JUMP(c, k, t, e) (f[n++] = (struct sock_filter)BPF_JUMP(c, k, t, e))
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, ulp_arch_audit(), 1, 0);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* Region bounds are 4 GiB aligned: the high word of the pc decides. */
	STMT(BPF_LD | BPF_W | BPF_ABS, ULP_ARCH_SECCOMP_IP_HI);
	JUMP(BPF_JMP | BPF_JGE | BPF_K, lo_hi, 1, 0);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	JUMP(BPF_JMP | BPF_JGE | BPF_K, hi_hi, 0, 1);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	/* x32 numbers from a ULP: no way around the trap */
	JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x40000000, 0, 1);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	for (i = 0; i < NTRAPPED; i++) {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)trapped[i], 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	}
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#undef STMT
#undef JUMP
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return -errno;
	return 0;
}

/* In a new PVAS task: the handlers it inherited are whatever the launching process had at clone
 * time (a test framework may have replaced ours); put the runtime's back, raw. */
void ulp_trap_task_init(void)
{
	unsigned i;

	for (i = 0; i < NOWNED; i++)
		ulp_arch_syscall(SYS_rt_sigaction, owned[i], (long)&saved[i], 0, 8, 0, 0);
}

/* Raw system calls: this also runs on the workers of PVAS tasks, which have no libc. */
void ulp_trap_worker_init(struct ulp_worker *w)
{
	stack_t ss;
	long p;

	if (!w->altstack) {
		p = sys(SYS_mmap, 0, ULP_ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (is_err(p))
			return;
		w->altstack = (void *)p;
	}
	ss.ss_sp = w->altstack;
	ss.ss_size = ULP_ALTSTACK_SIZE;
	ss.ss_flags = 0;
	sys(SYS_sigaltstack, (long)&ss, 0, 0, 0, 0, 0);
}

int ulp_trap_install(struct pvas_region *r)
{
	static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
	struct sigaction sa;
	unsigned i;
	int rc;

	/* A seccomp filter cannot be removed: a later region must lie where the first one did. */
	if (trap_base) {
		if (trap_base != r->base || trap_size != r->size)
			return -EBUSY;
		trap_region = r;
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigsys_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return -errno;
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (sigaction(faults[i], &sa, NULL) != 0)
			return -errno;
	/* Keep them as the kernel has them (libc's restorer included) for ulp_trap_task_init. */
	for (i = 0; i < NOWNED; i++)
		ulp_arch_syscall(SYS_rt_sigaction, owned[i], 0, (long)&saved[i], 8, 0, 0);
	rc = install_filter(r);
	if (rc)
		return rc;
	trap_region = r;
	trap_base = r->base;
	trap_size = r->size;
	return 0;
}
