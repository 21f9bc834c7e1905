/* SPDX-License-Identifier: MIT */
/*
 * The arch layer on its own (libulp/arch/<arch>/): context switch, switch-and-call, new contexts,
 * the TLS register, the self pointer, raw system calls, program entry. No scheduler runs here;
 * every test switches between contexts it builds itself. Register-level checks live in
 * tests/arch/<arch>/regs.S, so this file builds unchanged for every ARCH.
 */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "../arch/regs.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
/* Contexts that are never resumed leave their frames' redzones poisoned; a later mapping at the
 * same address must not inherit them. */
#define STACK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define STACK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define STACK_SIZE (64 * 1024)
#define ROUNDS 64

struct stack {
	unsigned char *lo;
	size_t size;
};

static ulp_ctx_t main_ctx, peer_ctx, other_ctx;

static struct stack stack_new(void)
{
	struct stack s = {NULL, STACK_SIZE};
	void *p = mmap(NULL, s.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	STACK_UNPOISON(p, s.size);
	s.lo = p;
	return s;
}

static void stack_free(struct stack s)
{
	STACK_UNPOISON(s.lo, s.size);
	assert_int_equal(munmap(s.lo, s.size), 0);
}

static int in_stack(struct stack s, uintptr_t a)
{
	return a >= (uintptr_t)s.lo && a < (uintptr_t)s.lo + s.size;
}

/* "x19 x25" for the set bits of a ulp_test_regs_switch bitmap */
static const char *reg_names(unsigned long bits, char *buf, size_t len)
{
	const char *p = ulp_test_regs_names;
	size_t used = 0;
	int bit = 0;

	buf[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, " ");
		if ((bits >> bit & 1) && used + n + 2 < len) {
			memcpy(buf + used, p, n);
			used += n;
			buf[used++] = ' ';
			buf[used] = '\0';
		}
		p += n;
		p += *p == ' ';
		bit++;
	}
	return buf;
}

/* --- (a) callee-saved registers and FP control state --------------------------------------- */

static unsigned long peer_bad;
static int peer_rounds;
static ulp_arch_fn round_fn; /* NULL: ulp_arch_switch; else ulp_arch_switch_call with it */

/* The other side: its own register values (row 1) and FP control state, switching back each
 * time; it checks its registers too, so both directions of the switch are covered. */
static void regs_peer(void *arg)
{
	for (;;) {
		peer_bad |= ulp_test_regs_switch(&peer_ctx, &main_ctx, 1, round_fn);
		peer_rounds++;
	}
}

/* Run by ulp_arch_switch_call on the target's stack: a change of FP control state here must not
 * reach the target, which resumes with its own. */
static void scramble_fp(void *arg)
{
	ulp_test_fpctl_set(ulp_test_fpctl_pattern(0) ^ ulp_test_fpctl_pattern(1) ^
			   ulp_test_fpctl_get());
}

static void registers_survive_round_trips(ulp_arch_fn fn)
{
	struct stack s = stack_new();
	unsigned long fp_before = ulp_test_fpctl_get(), bad;
	char names[256];
	int i;

	/* the two sides really differ, and differ from what the process started with */
	assert_true(ulp_test_fpctl_pattern(0) != ulp_test_fpctl_pattern(1));
	assert_true(ulp_test_fpctl_pattern(0) != fp_before);
	assert_true(ulp_test_fpctl_pattern(1) != fp_before);

	peer_bad = 0;
	peer_rounds = 0;
	round_fn = fn;
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, regs_peer, NULL);
	for (i = 0; i < ROUNDS; i++) {
		bad = ulp_test_regs_switch(&main_ctx, &peer_ctx, 0, fn);
		if (bad)
			fail_msg("round %d: changed across a switch: %s", i,
				 reg_names(bad, names, sizeof(names)));
	}
	if (peer_bad)
		fail_msg("the other context's registers changed: %s",
			 reg_names(peer_bad, names, sizeof(names)));
	assert_int_equal(peer_rounds, ROUNDS - 1);
	assert_true(ulp_test_fpctl_get() == fp_before);
	stack_free(s);
}

static void test_switch_preserves_callee_saved_registers_and_fp_control(void **state)
{
	registers_survive_round_trips(NULL);
}

static void test_switch_call_preserves_callee_saved_registers_and_fp_control(void **state)
{
	registers_survive_round_trips(scramble_fp);
}

/* --- (b) ulp_arch_switch_call ---------------------------------------------------------------- */

static struct {
	char log[16];
	int n;
	uintptr_t fn_sp;
	void *fn_arg;
	void *from_sp_in_fn; /* main_ctx.sp as fn saw it */
	int unmapped;
} ev;

static void ev_log(char c)
{
	if (ev.n < (int)sizeof(ev.log) - 1)
		ev.log[ev.n++] = c;
}

static void record_fn(void *arg)
{
	volatile char here = 0;

	ev.fn_sp = (uintptr_t)&here;
	ev.fn_arg = arg;
	ev.from_sp_in_fn = main_ctx.sp;
	ev_log('f');
}

/* The target: logs each time it runs, then goes back to main. */
static void logging_peer(void *arg)
{
	for (;;) {
		ev_log('r');
		ulp_arch_switch(&peer_ctx, &main_ctx);
	}
}

static void test_switch_call_runs_fn_on_target_stack_before_target_resumes(void **state)
{
	struct stack s = stack_new();
	int token1, token2;

	memset(&ev, 0, sizeof(ev));
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, logging_peer, NULL);

	/* a fresh target: fn runs before the trampoline enters it */
	main_ctx.sp = NULL;
	ulp_arch_switch_call(&main_ctx, &peer_ctx, record_fn, &token1);
	assert_string_equal(ev.log, "fr");
	assert_true(in_stack(s, ev.fn_sp));
	assert_ptr_equal(ev.fn_arg, &token1);
	assert_non_null(ev.from_sp_in_fn); /* from was saved before fn ran */

	/* a target suspended in ulp_arch_switch */
	main_ctx.sp = NULL;
	ulp_arch_switch_call(&main_ctx, &peer_ctx, record_fn, &token2);
	assert_string_equal(ev.log, "frfr");
	assert_true(in_stack(s, ev.fn_sp));
	assert_ptr_equal(ev.fn_arg, &token2);
	assert_non_null(ev.from_sp_in_fn);
	stack_free(s);
}

/* fn of the abandoning switch: unmaps the abandoned stack, as an exiting thread's would be freed */
static void unmap_fn(void *arg)
{
	struct stack *dead = arg;
	volatile char here = 0;

	ev.fn_sp = (uintptr_t)&here;
	STACK_UNPOISON(dead->lo, dead->size);
	ev.unmapped = munmap(dead->lo, dead->size) == 0;
	ev_log('f');
}

static void abandoning_entry(void *arg)
{
	ev_log('a');
	ulp_arch_switch_call(NULL, &peer_ctx, unmap_fn, arg);
	__builtin_trap(); /* never resumed: nothing was saved */
}

static void test_switch_call_from_null_leaves_old_stack_unused(void **state)
{
	struct stack dead = stack_new(), s = stack_new();

	memset(&ev, 0, sizeof(ev));
	ulp_arch_ctx_init(&other_ctx, dead.lo, dead.size, abandoning_entry, &dead);
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, logging_peer, NULL);
	ulp_arch_switch(&main_ctx, &other_ctx);
	/* back through logging_peer's switch: after fn ran, nothing touched the dead stack */
	assert_string_equal(ev.log, "afr");
	assert_true(ev.unmapped);
	assert_true(in_stack(s, ev.fn_sp));
	stack_free(s);
}

/* --- (c) ulp_arch_ctx_init and the trampoline ----------------------------------------------- */

struct entry_seen {
	struct ulp_test_probe probe; /* first: the probe's argument is this struct */
	uintptr_t sp;
	int ran;
	unsigned long fpctl;
};

static void entry_body(struct ulp_test_probe *p, uintptr_t sp)
{
	struct entry_seen *e = (struct entry_seen *)p;

	e->sp = sp;
	e->fpctl = ulp_test_fpctl_get();
	e->ran = 1;
	ulp_arch_switch(&peer_ctx, &main_ctx);
	__builtin_trap(); /* not resumed */
}

/* Whatever the alignment of the area given, the entry sees an ABI-conforming stack and its
 * argument; the context starts through ulp_arch_ctx_init + ulp_arch_switch, or (start) through
 * ulp_arch_switch_start. */
static void entry_sees_abi_aligned_stack(int start)
{
	static const size_t skew[] = {0, 1, 3, 8, 13, 15};
	struct stack s = stack_new();
	size_t i;

	for (i = 0; i < sizeof(skew) / sizeof(skew[0]); i++) {
		unsigned char *lo = s.lo + skew[i];
		size_t size = s.size - skew[i] - 2 * skew[i];
		struct entry_seen e = {{entry_body}, 0, 0, 0};

		if (start) {
			ulp_arch_switch_start(&main_ctx, lo, size, ulp_test_entry_probe, &e, NULL);
		} else {
			ulp_arch_ctx_init(&peer_ctx, lo, size, ulp_test_entry_probe, &e);
			ulp_arch_switch(&main_ctx, &peer_ctx);
		}
		assert_true(e.ran); /* entry_body got &e: the argument arrived */
		if (e.sp % 16 != 0)
			fail_msg("skew %zu: stack at entry %#lx is not as the ABI wants", skew[i],
				 (unsigned long)e.sp);
		assert_true(e.sp > (uintptr_t)lo && e.sp <= (uintptr_t)lo + size);
	}
	stack_free(s);
}

static void test_ctx_init_enters_with_arg_on_abi_aligned_stack(void **state)
{
	entry_sees_abi_aligned_stack(0);
}

static void test_ctx_init_gives_new_context_the_creators_fp_control(void **state)
{
	struct stack s = stack_new();
	unsigned long before = ulp_test_fpctl_get();
	struct entry_seen e = {{entry_body}, 0, 0, 0};

	ulp_test_fpctl_set(ulp_test_fpctl_pattern(1));
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, ulp_test_entry_probe, &e);
	ulp_test_fpctl_set(before);
	ulp_arch_switch(&main_ctx, &peer_ctx);
	assert_true(e.ran);
	assert_true(e.fpctl == ulp_test_fpctl_pattern(1));
	assert_true(ulp_test_fpctl_get() == before); /* and ours came back with us */
	stack_free(s);
}

/* --- (c2) ulp_arch_switch_start and ulp_arch_jump ------------------------------------------- */

/* A started context that loads the other row and goes back at once: from must come back with
 * its own registers, from the frame ulp_arch_switch_start saved. */
static void start_regs_peer(void *arg)
{
	ulp_test_regs_switch(&peer_ctx, &main_ctx, 1, NULL);
	__builtin_trap(); /* never resumed: each round starts a new context */
}

static void test_switch_start_preserves_callee_saved_registers_and_fp_control(void **state)
{
	struct stack s = stack_new();
	unsigned long fp_before = ulp_test_fpctl_get(), bad;
	char names[256];
	int i;

	for (i = 0; i < ROUNDS; i++) {
		bad = ulp_test_regs_start(&main_ctx, s.lo, s.size, start_regs_peer, 0);
		if (bad)
			fail_msg("round %d: changed across a start: %s", i,
				 reg_names(bad, names, sizeof(names)));
	}
	assert_true(ulp_test_fpctl_get() == fp_before);
	stack_free(s);
}

static struct {
	void *arg;
	uintptr_t sp;
} started;

static void started_entry(void *arg)
{
	volatile char here = 0;

	started.arg = arg;
	started.sp = (uintptr_t)&here;
	ev_log('e');
	ulp_arch_switch(&peer_ctx, &main_ctx);
	__builtin_trap(); /* not resumed */
}

static void test_switch_start_runs_after_with_from_saved_then_entry(void **state)
{
	struct stack s = stack_new();
	int token;

	memset(&ev, 0, sizeof(ev));
	memset(&started, 0, sizeof(started));
	main_ctx.sp = NULL;
	ulp_arch_switch_start(&main_ctx, s.lo, s.size, started_entry, &token, record_fn);
	assert_string_equal(ev.log, "fe");
	assert_ptr_equal(ev.fn_arg, &main_ctx); /* after gets from */
	assert_non_null(ev.from_sp_in_fn);	/* saved before after ran */
	assert_true(in_stack(s, ev.fn_sp));
	assert_ptr_equal(started.arg, &token);
	assert_true(in_stack(s, started.sp));

	/* without after: entry only */
	memset(&ev, 0, sizeof(ev));
	ulp_arch_switch_start(&main_ctx, s.lo, s.size, started_entry, &token, NULL);
	assert_string_equal(ev.log, "e");
	stack_free(s);
}

static void test_switch_start_enters_with_arg_on_abi_aligned_stack(void **state)
{
	entry_sees_abi_aligned_stack(1);
}

static void test_switch_start_gives_new_context_the_creators_fp_control(void **state)
{
	struct stack s = stack_new();
	unsigned long before = ulp_test_fpctl_get();
	struct entry_seen e = {{entry_body}, 0, 0, 0};

	ulp_test_fpctl_set(ulp_test_fpctl_pattern(1));
	ulp_arch_switch_start(&main_ctx, s.lo, s.size, ulp_test_entry_probe, &e, NULL);
	assert_true(ulp_test_fpctl_get() == ulp_test_fpctl_pattern(1)); /* ours, back with us */
	ulp_test_fpctl_set(before);
	assert_true(e.ran);
	assert_true(e.fpctl == ulp_test_fpctl_pattern(1));
	stack_free(s);
}

static unsigned long jump_peer_bad;

/* Suspended with row 1 loaded; when resumed (by a jump) its registers must be row 1 again. */
static void jump_target(void *arg)
{
	jump_peer_bad = ulp_test_regs_switch(&peer_ctx, &main_ctx, 1, NULL);
	ev_log('t');
	ulp_arch_switch(&peer_ctx, &main_ctx);
	__builtin_trap(); /* not resumed */
}

static void jumping_entry(void *arg)
{
	ev_log('j');
	ulp_arch_jump(&peer_ctx);
}

static void test_jump_resumes_target_and_saves_nothing(void **state)
{
	struct stack dead = stack_new(), s = stack_new();
	void *other_sp;
	char names[256];

	memset(&ev, 0, sizeof(ev));
	jump_peer_bad = ~0ul;
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, jump_target, NULL);
	ulp_arch_switch(&main_ctx, &peer_ctx); /* the target suspends itself with row 1 loaded */
	ulp_arch_ctx_init(&other_ctx, dead.lo, dead.size, jumping_entry, NULL);
	other_sp = other_ctx.sp;
	ulp_arch_switch(&main_ctx, &other_ctx);
	assert_string_equal(ev.log, "jt");
	if (jump_peer_bad)
		fail_msg("the target's registers changed across the jump: %s",
			 reg_names(jump_peer_bad, names, sizeof(names)));
	assert_ptr_equal(other_ctx.sp, other_sp); /* the jumping context saved nothing */
	stack_free(dead);
	stack_free(s);
}

/* --- (d) the TLS register ------------------------------------------------------------------- */

/* A stand-in thread control block: while it is loaded, nothing may use TLS (no libc, no errno). */
static uintptr_t fake_tcb[64] __attribute__((aligned(64)));

static void test_tls_set_then_get_returns_value_written(void **state)
{
	int slow;

	fake_tcb[0] = (uintptr_t)fake_tcb; /* the x86_64 TCB starts with a pointer to itself */
	for (slow = 0; slow < 2; slow++) {
		uintptr_t orig, got, back, fake = (uintptr_t)fake_tcb;

		ulp_arch_tls_force_syscall(slow);
		orig = ulp_arch_tls_get();
		ulp_arch_tls_set(fake);
		got = ulp_arch_tls_get();
		ulp_arch_tls_set(orig);
		back = ulp_arch_tls_get();
		ulp_arch_tls_force_syscall(0);

		assert_non_null(ulp_arch_tls_method());
		assert_true(got == fake);
		assert_true(back == orig);
	}
}

static uintptr_t tls_seen;

static void tls_peer(void *arg)
{
	for (;;) {
		tls_seen = ulp_arch_tls_get();
		ulp_arch_switch(&peer_ctx, &main_ctx);
	}
}

static void test_switch_leaves_tls_register_alone(void **state)
{
	struct stack s = stack_new();
	uintptr_t orig, after, fake = (uintptr_t)fake_tcb;

	fake_tcb[0] = (uintptr_t)fake_tcb;
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, tls_peer, NULL);
	orig = ulp_arch_tls_get();
	ulp_arch_tls_set(fake); /* the switch must carry it over untouched, both ways */
	ulp_arch_switch(&main_ctx, &peer_ctx);
	after = ulp_arch_tls_get();
	ulp_arch_tls_set(orig);

	assert_true(tls_seen == fake);
	assert_true(after == fake);
	stack_free(s);
}

/* --- the self pointer, system calls, program entry ------------------------------------------ */

struct self_word {
	struct self_word *self; /* x86_64 reads the self pointer through %gs:0 */
};

static struct self_word main_self = {&main_self}, thread_self = {&thread_self};

static void *self_thread(void *arg)
{
	void *got;

	ulp_arch_self_set(&thread_self);
	got = ulp_arch_self_get();
	ulp_arch_self_set(NULL);
	return got;
}

static void test_self_pointer_is_per_kernel_thread(void **state)
{
	pthread_t th;
	void *in_thread = NULL;

	ulp_arch_self_set(&main_self);
	assert_int_equal(pthread_create(&th, NULL, self_thread, NULL), 0);
	assert_int_equal(pthread_join(th, &in_thread), 0);
	assert_ptr_equal(in_thread, &thread_self);
	assert_ptr_equal(ulp_arch_self_get(), &main_self);
	ulp_arch_self_set(NULL);
}

/*
 * A context suspended on one kernel thread and resumed on another must see the new thread's self
 * pointer: compilers take the TLS base for constant within a function, so an arch that reaches
 * the self pointer through TLS has to reread the base every time.
 */
static ulp_ctx_t thread_ctx;
static void *self_before, *self_after;

static void migrating_peer(void *arg)
{
	self_before = ulp_arch_self_get();
	ulp_arch_switch(&peer_ctx, &main_ctx); /* resumed by resume_thread */
	self_after = ulp_arch_self_get();
	ulp_arch_switch(&peer_ctx, &thread_ctx);
	__builtin_trap(); /* not resumed */
}

static void *resume_thread(void *arg)
{
	ulp_arch_self_set(&thread_self);
	ulp_arch_switch(&thread_ctx, &peer_ctx);
	ulp_arch_self_set(NULL);
	return NULL;
}

static void test_self_pointer_follows_context_to_another_kernel_thread(void **state)
{
	struct stack s = stack_new();
	pthread_t th;

	self_before = self_after = NULL;
	ulp_arch_self_set(&main_self);
	ulp_arch_ctx_init(&peer_ctx, s.lo, s.size, migrating_peer, NULL);
	ulp_arch_switch(&main_ctx, &peer_ctx);
	assert_int_equal(pthread_create(&th, NULL, resume_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_ptr_equal(self_before, &main_self);
	assert_ptr_equal(self_after, &thread_self);
	assert_ptr_equal(ulp_arch_self_get(), &main_self);
	ulp_arch_self_set(NULL);
	stack_free(s);
}

static void test_syscall_returns_negative_errno_and_keeps_errno(void **state)
{
	long p;

	errno = 4242;
	assert_int_equal(ulp_arch_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0), getpid());
	assert_int_equal(ulp_arch_syscall(SYS_close, -1, 0, 0, 0, 0, 0), -EBADF);
	/* six arguments, and a result that is an address */
	p = ulp_arch_syscall(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	assert_true(p > 0 || p < -4095);
	*(volatile int *)p = 7;
	assert_int_equal(ulp_arch_syscall(SYS_munmap, p, 4096, 0, 0, 0, 0), 0);
	assert_int_equal(ulp_arch_syscall(SYS_munmap, p + 1, 4096, 0, 0, 0, 0), -EINVAL);
	assert_int_equal(errno, 4242);
	ulp_arch_relax();
}

static struct {
	int ran;
	unsigned long regs_or;
	uintptr_t argc_at;
} prog;

static void program_body(unsigned long regs_or, uintptr_t argc_at)
{
	prog.ran = 1;
	prog.regs_or = regs_or;
	prog.argc_at = argc_at;
	ulp_arch_switch(&other_ctx, &main_ctx);
	__builtin_trap(); /* not resumed */
}

/* Not instrumented: ASan would try to unpoison "the" stack before the no-return call, and this
 * is not a stack it knows. */
static void __attribute__((no_sanitize_address)) launch_entry(void *arg)
{
	ulp_arch_enter_program((uintptr_t)ulp_test_program_probe, (uintptr_t)arg);
}

static void test_enter_program_starts_at_given_sp_with_registers_cleared(void **state)
{
	struct stack launcher = stack_new(), image = stack_new();
	uintptr_t sp = ((uintptr_t)image.lo + image.size / 2) & ~(uintptr_t)15;

	memset(&prog, 0, sizeof(prog));
	*(ulp_test_program_body *)sp = program_body; /* where argc would be */
	ulp_arch_ctx_init(&peer_ctx, launcher.lo, launcher.size, launch_entry, (void *)sp);
	ulp_arch_switch(&main_ctx, &peer_ctx);
	assert_true(prog.ran);
	assert_true(prog.argc_at == sp);
	if (prog.regs_or != 0)
		fail_msg("registers not cleared at program entry (OR of them: %#lx)", prog.regs_or);
	stack_free(launcher);
	stack_free(image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_switch_preserves_callee_saved_registers_and_fp_control),
	    cmocka_unit_test(test_switch_call_preserves_callee_saved_registers_and_fp_control),
	    cmocka_unit_test(test_switch_call_runs_fn_on_target_stack_before_target_resumes),
	    cmocka_unit_test(test_switch_call_from_null_leaves_old_stack_unused),
	    cmocka_unit_test(test_ctx_init_enters_with_arg_on_abi_aligned_stack),
	    cmocka_unit_test(test_ctx_init_gives_new_context_the_creators_fp_control),
	    cmocka_unit_test(test_switch_start_preserves_callee_saved_registers_and_fp_control),
	    cmocka_unit_test(test_switch_start_runs_after_with_from_saved_then_entry),
	    cmocka_unit_test(test_switch_start_enters_with_arg_on_abi_aligned_stack),
	    cmocka_unit_test(test_switch_start_gives_new_context_the_creators_fp_control),
	    cmocka_unit_test(test_jump_resumes_target_and_saves_nothing),
	    cmocka_unit_test(test_tls_set_then_get_returns_value_written),
	    cmocka_unit_test(test_switch_leaves_tls_register_alone),
	    cmocka_unit_test(test_self_pointer_is_per_kernel_thread),
	    cmocka_unit_test(test_self_pointer_follows_context_to_another_kernel_thread),
	    cmocka_unit_test(test_syscall_returns_negative_errno_and_keeps_errno),
	    cmocka_unit_test(test_enter_program_starts_at_given_sp_with_registers_cleared),
	};

	ulp_arch_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
