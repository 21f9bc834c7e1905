/* SPDX-License-Identifier: MIT */
/*
 * The wait-loop classifier (libulp/arch/x86_64/spinloop.c) on byte sequences: which loops it
 * accepts for rewriting, which it refuses, and which instruction it would rewrite. Each sequence
 * is a whole "function" here (decoded from its first byte); the comments give its disassembly.
 */
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "spinloop.h"
#include "arch.h"

struct loop_case {
	const uint8_t *code;
	size_t len;
	size_t pc;
};

static int classify(const uint8_t *code, size_t len, size_t pc, struct ulp_x86_loop *l)
{
	uintptr_t lo = (uintptr_t)code;

	memset(l, 0, sizeof(*l));
	return ulp_x86_wait_loop(lo, lo + len, lo + pc, l);
}

/* MPICH 4.0.2's MPIDU_Init_shm_barrier wait (libmpich.so.12, 0x2ff9e0). */
static _Alignas(16) const uint8_t mpich[] = {
    0x48, 0x8b, 0x05, 0x89, 0x15, 0x4d, 0x02, /*  0: mov 0x24d1589(%rip),%rax */
    0x8b, 0x50, 0x04,			      /*  7: mov 0x4(%rax),%edx */
    0x8b, 0x05, 0x74, 0x15, 0x4d, 0x02,	      /* 10: mov 0x24d1574(%rip),%eax */
    0x39, 0xd0,				      /* 16: cmp %edx,%eax */
    0x74, 0xec,				      /* 18: je 0 */
    0xc3,				      /* 20: ret */
};

static void mpich_barrier_accepted(void **state)
{
	struct ulp_x86_loop l;
	size_t pcs[] = {0, 7, 10, 16, 18};
	unsigned i;

	for (i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		assert_int_equal(classify(mpich, sizeof(mpich), pcs[i], &l), 0);
		assert_true(l.head == (uintptr_t)mpich && l.end == (uintptr_t)mpich + 20);
		assert_true(l.site == (uintptr_t)mpich); /* the 7-byte load */
		assert_true(l.any == (uintptr_t)mpich);
	}
	/* ret is no instruction of the loop */
	assert_int_equal(classify(mpich, sizeof(mpich), 20, &l), -ENOENT);
	/* nor is the middle of an instruction */
	assert_int_equal(classify(mpich, sizeof(mpich), 3, &l), -ENOENT);
}

/* gcc -O2, `while (!flag) _mm_pause();` on a global volatile int: entered in the middle. */
static _Alignas(16) const uint8_t pause_global[] = {
    0xeb, 0x02,				/*  0: jmp 4 */
    0xf3, 0x90,				/*  2: pause */
    0x8b, 0x05, 0x10, 0x20, 0x30, 0x00, /*  4: mov 0x302010(%rip),%eax */
    0x85, 0xc0,				/* 10: test %eax,%eax */
    0x74, 0xf4,				/* 12: je 2 */
    0xc3,				/* 14: ret */
};

static void pause_loop_accepted(void **state)
{
	struct ulp_x86_loop l;

	assert_int_equal(classify(pause_global, sizeof(pause_global), 4, &l), 0);
	assert_true(l.head == (uintptr_t)pause_global + 2 && l.end == (uintptr_t)pause_global + 14);
	assert_true(l.site == (uintptr_t)pause_global + 4);
	assert_int_equal(classify(pause_global, sizeof(pause_global), 2, &l), 0);
	/* the jmp before the loop is outside it */
	assert_int_equal(classify(pause_global, sizeof(pause_global), 0, &l), -ENOENT);
}

/* The same through a pointer in a register: a wait loop, but no instruction of 5 bytes to
 * rewrite. */
static _Alignas(16) const uint8_t pause_ptr[] = {
    0xf3, 0x90, /* 0: pause */
    0x8b, 0x07, /* 2: mov (%rdi),%eax */
    0x85, 0xc0, /* 4: test %eax,%eax */
    0x74, 0xf8, /* 6: je 0 */
    0xc3,	/* 8: ret */
};

static void short_loop_accepted_without_site(void **state)
{
	struct ulp_x86_loop l;

	assert_int_equal(classify(pause_ptr, sizeof(pause_ptr), 2, &l), 0);
	assert_true(l.site == 0 && l.any == 0);
}

/* A loop whose only 5-byte instruction crosses a 16-byte boundary: no site for one atomic
 * store (rewritten only while the ULP has one thread). */
static _Alignas(16) const uint8_t crossing[] = {
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, /* 0-12: nops */
    0x8b, 0x05, 0x10, 0x20, 0x30, 0x00, /* 13: mov 0x302010(%rip),%eax */
    0x85, 0xc0,				/* 19: test %eax,%eax */
    0x74, 0xf6,				/* 21: je 13 */
    0xc3,				/* 23: ret */
};

static void site_within_16_bytes(void **state)
{
	struct ulp_x86_loop l;

	assert_int_equal(classify(crossing, sizeof(crossing), 13, &l), 0);
	assert_true(l.site == 0 && l.any == (uintptr_t)crossing + 13);
}

/* Loops that must be refused: they compute, store, call or carry state. */
static _Alignas(16) const uint8_t reduction[] = {
    0x48, 0x03, 0x04, 0xcf, /*  0: add (%rdi,%rcx,8),%rax */
    0x48, 0x83, 0xc1, 0x01, /*  4: add $0x1,%rcx */
    0x48, 0x39, 0xce,	    /*  8: cmp %rcx,%rsi */
    0x75, 0xf3,		    /* 11: jne 0 */
    0xc3,
};
static _Alignas(16) const uint8_t counting[] = {
    0x8b, 0x07,	      /* 0: mov (%rdi),%eax */
    0x83, 0xc2, 0x01, /* 2: add $0x1,%edx */
    0x85, 0xc0,	      /* 5: test %eax,%eax */
    0x74, 0xf7,	      /* 7: je 0 */
    0xc3,
};
static _Alignas(16) const uint8_t incrementing[] = {
    0x8b, 0x07,	      /* 0: mov (%rdi),%eax */
    0x48, 0xff, 0xc2, /* 2: inc %rdx (not whitelisted) */
    0x85, 0xc0,	      /* 5: test %eax,%eax */
    0x74, 0xf7,	      /* 7: je 0 */
    0xc3,
};
static _Alignas(16) const uint8_t storing[] = {
    0x8b, 0x07, /* 0: mov (%rdi),%eax */
    0x89, 0x06, /* 2: mov %eax,(%rsi) */
    0x85, 0xc0, /* 4: test %eax,%eax */
    0x74, 0xf8, /* 6: je 0 */
    0xc3,
};
static _Alignas(16) const uint8_t cas[] = {
    0x8b, 0x07,		    /* 0: mov (%rdi),%eax */
    0x8d, 0x50, 0x01,	    /* 2: lea 0x1(%rax),%edx */
    0xf0, 0x0f, 0xb1, 0x17, /* 5: lock cmpxchg %edx,(%rdi) */
    0x75, 0xf5,		    /* 9: jne 0 */
    0xc3,
};
static _Alignas(16) const uint8_t calling[] = {
    0x8b, 0x07,			  /*  0: mov (%rdi),%eax */
    0xe8, 0x00, 0x00, 0x00, 0x00, /*  2: call 7 */
    0x85, 0xc0,			  /*  7: test %eax,%eax */
    0x74, 0xf5,			  /*  9: je 0 */
    0xc3,
};
static _Alignas(16) const uint8_t syscalling[] = {
    0x8b, 0x07, /* 0: mov (%rdi),%eax */
    0x0f, 0x05, /* 2: syscall */
    0x85, 0xc0, /* 4: test %eax,%eax */
    0x74, 0xf8, /* 6: je 0 */
    0xc3,
};
/* flags read at the top, set at the bottom: carried from the previous iteration */
static _Alignas(16) const uint8_t flags_carried[] = {
    0x75, 0x06, /* 0: jne 8 */
    0x8b, 0x07, /* 2: mov (%rdi),%eax */
    0x85, 0xc0, /* 4: test %eax,%eax */
    0xeb, 0xf8, /* 6: jmp 0 */
    0xc3,	/* 8: ret */
};
/* a byte load keeps the rest of eax, which the body also wrote: carried */
static _Alignas(16) const uint8_t partial[] = {
    0x8a, 0x07, /* 0: mov (%rdi),%al */
    0x85, 0xc0, /* 2: test %eax,%eax */
    0x74, 0xfa, /* 4: je 0 */
    0xc3,
};
/* no memory read: a register loop (never ends by itself, or counts) */
static _Alignas(16) const uint8_t no_memory[] = {
    0x85, 0xff, /* 0: test %edi,%edi */
    0x74, 0xfc, /* 2: je 0 */
    0xc3,
};
/* an indirect jump in the loop */
static _Alignas(16) const uint8_t indirect[] = {
    0x8b, 0x07, /* 0: mov (%rdi),%eax */
    0x85, 0xc0, /* 2: test %eax,%eax */
    0x75, 0x02, /* 4: jne 8 */
    0xff, 0xe6, /* 6: jmp *%rsi */
    0xeb, 0xf6, /* 8: jmp 0 */
    0xc3,
};

static void computing_loops_refused(void **state)
{
	static const struct loop_case cases[] = {
	    {reduction, sizeof(reduction), 0},
	    {counting, sizeof(counting), 0},
	    {incrementing, sizeof(incrementing), 0},
	    {storing, sizeof(storing), 2},
	    {cas, sizeof(cas), 5},
	    {calling, sizeof(calling), 0},
	    {syscalling, sizeof(syscalling), 4},
	    {flags_carried, sizeof(flags_carried), 2},
	    {partial, sizeof(partial), 0},
	    {no_memory, sizeof(no_memory), 0},
	    {indirect, sizeof(indirect), 0},
	};
	struct ulp_x86_loop l;
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = classify(cases[i].code, cases[i].len, cases[i].pc, &l);

		if (rc != -EILSEQ)
			fail_msg("case %u: %d, wanted -EILSEQ", i, rc);
	}
}

/* A zeroing xor and reg-reg moves write before they read: still a wait loop. */
static _Alignas(16) const uint8_t zeroing[] = {
    0x31, 0xc0,				      /*  0: xor %eax,%eax */
    0x48, 0x8b, 0x15, 0x00, 0x10, 0x00, 0x00, /*  2: mov 0x1000(%rip),%rdx */
    0x0f, 0xb6, 0x0a,			      /*  9: movzbl (%rdx),%ecx */
    0x89, 0xc8,				      /* 12: mov %ecx,%eax */
    0x83, 0xf8, 0x01,			      /* 14: cmp $0x1,%eax */
    0x75, 0xed,				      /* 17: jne 0 */
    0xc3,
};

/* Waiting on a local that another thread writes: reads rsp, never moves it. */
static _Alignas(16) const uint8_t local[] = {
    0x8b, 0x44, 0x24, 0x08, /* 0: mov 0x8(%rsp),%eax */
    0x85, 0xc0,		    /* 4: test %eax,%eax */
    0x74, 0xf8,		    /* 6: je 0 */
    0xc3,
};
static _Alignas(16) const uint8_t moving_sp[] = {
    0x48, 0x83, 0xc4, 0x08, /* 0: add $0x8,%rsp */
    0x8b, 0x04, 0x24,	    /* 4: mov (%rsp),%eax */
    0x85, 0xc0,		    /* 7: test %eax,%eax */
    0x74, 0xf5,		    /* 9: je 0 */
    0xc3,
};

static void zeroing_idiom_and_stack_reads_accepted(void **state)
{
	struct ulp_x86_loop l;

	assert_int_equal(classify(zeroing, sizeof(zeroing), 12, &l), 0);
	assert_true(l.site == (uintptr_t)zeroing + 2);
	assert_int_equal(classify(local, sizeof(local), 0, &l), 0);
	assert_int_equal(classify(moving_sp, sizeof(moving_sp), 4, &l), -EILSEQ);
}

/* Nested: the innermost loop around pc is the one judged. */
static _Alignas(16) const uint8_t nested[] = {
    0x83, 0xc1, 0x01, /*  0: add $0x1,%ecx   (outer loop: counts) */
    0x8b, 0x07,	      /*  3: mov (%rdi),%eax  (inner loop: waits) */
    0x85, 0xc0,	      /*  5: test %eax,%eax */
    0x74, 0xfa,	      /*  7: je 3 */
    0x39, 0xf1,	      /*  9: cmp %esi,%ecx */
    0x75, 0xf3,	      /* 11: jne 0 */
    0xc3,
};

static void innermost_loop_judged(void **state)
{
	struct ulp_x86_loop l;

	assert_int_equal(classify(nested, sizeof(nested), 5, &l), 0);
	assert_true(l.head == (uintptr_t)nested + 3 && l.end == (uintptr_t)nested + 9);
	assert_int_equal(classify(nested, sizeof(nested), 9, &l), -EILSEQ);
}

/* ---- probes (spin_patch.c): one iteration of a waiting loop, run by the scheduler ---- */

/* Registers as fast_entry.S pushes them (fastcall.c's struct ulp_fast_frame). */
struct frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t rflags, ret;
};

/* Code at 0, the probe's slot at 2048, data at 3072 of one read-write-execute page, so that
 * rip-relative loads of the loop reach the data from the probe too. */
static uint8_t *page;
static volatile int *flag;
#define PROBE_AT 2048

static void page_new(void)
{
	if (!page) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(page != MAP_FAILED);
	}
	memset(page, 0xcc, 4096);
	flag = (volatile int *)(page + 3072);
}

/* The loop of code[0, len) around pc accepted, its probe built: the probe's address, or 0 with
 * *rc the builder's refusal. */
static uintptr_t probe_of(const uint8_t *code, size_t len, size_t pc, int *rc)
{
	struct ulp_x86_loop l;
	uintptr_t lo = (uintptr_t)page;

	memcpy(page, code, len);
	memset(&l, 0, sizeof(l));
	assert_int_equal(ulp_x86_wait_loop(lo, lo + len, lo + pc, &l), 0);
	*rc = ulp_x86_spin_probe_build(lo + PROBE_AT, &l);
	return *rc ? 0 : lo + PROBE_AT + 16;
}

static void put_disp(uint8_t *at, uintptr_t end, uintptr_t target)
{
	int32_t d = (int32_t)((intptr_t)target - (intptr_t)end);

	memcpy(at, &d, 4);
}

/* Through a pointer in rdi, and in r9 (REX.R loads): 0 while the flag holds, 1 once it changed. */
static void probe_reads_through_input_registers(void **state)
{
	static const uint8_t via_r9[] = {
	    0x41, 0x8b, 0x01, /* 0: mov (%r9),%eax */
	    0x85, 0xc0,	      /* 3: test %eax,%eax */
	    0x74, 0xf9,	      /* 5: je 0 */
	    0xc3,
	};
	struct frame f;
	uintptr_t pr;
	int rc;

	page_new();
	pr = probe_of(pause_ptr, sizeof(pause_ptr), 2, &rc);
	assert_true(pr != 0);
	memset(&f, 0x5a, sizeof(f)); /* registers it does not read: anything */
	f.rdi = (uintptr_t)flag;
	*flag = 0;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	*flag = 3;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);

	page_new();
	pr = probe_of(via_r9, sizeof(via_r9), 0, &rc);
	assert_true(pr != 0);
	memset(&f, 0x5a, sizeof(f));
	f.r9 = (uintptr_t)flag;
	*flag = 0;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	*flag = -1;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);
}

/* rip-relative loads re-aimed from the probe: `while (*flag == 0)` on a global, and MPICH's
 * barrier (a pointer loaded, then the word it points to, against a global). */
static void probe_reaims_rip_relative_loads(void **state)
{
	uint8_t glob[] = {
	    0x8b, 0x05, 0, 0, 0, 0, /* 0: mov flag(%rip),%eax */
	    0x85, 0xc0,		    /* 6: test %eax,%eax */
	    0x74, 0xf6,		    /* 8: je 0 */
	    0xc3,
	};
	uint8_t barrier[sizeof(mpich)];
	volatile int *shm, *val;
	struct frame f;
	uintptr_t pr;
	int rc;

	page_new();
	put_disp(glob + 2, (uintptr_t)page + 6, (uintptr_t)flag);
	pr = probe_of(glob, sizeof(glob), 0, &rc);
	assert_true(pr != 0);
	memset(&f, 0, sizeof(f));
	*flag = 0;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	*flag = 1;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);

	/* mpich[]: mov P(%rip),%rax at 0 (ends at 7); mov 4(%rax),%edx; mov V(%rip),%eax at 10
	 * (ends at 16); cmp; je 0: waits while *(P + 4) == V */
	page_new();
	memcpy(barrier, mpich, sizeof(barrier));
	shm = (volatile int *)(page + 3200);
	val = (volatile int *)(page + 3296);
	*(volatile uintptr_t *)(page + 3104) = (uintptr_t)shm - 4;
	put_disp(barrier + 3, (uintptr_t)page + 7, (uintptr_t)page + 3104);
	put_disp(barrier + 12, (uintptr_t)page + 16, (uintptr_t)val);
	pr = probe_of(barrier, sizeof(barrier), 18, &rc);
	assert_true(pr != 0);
	*shm = 5;
	*val = 5;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	*shm = 6;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);
}

/* A forward exit in the middle leaves the loop as the fall-through after the back branch does. */
static void probe_sees_every_exit(void **state)
{
	static const uint8_t two_exits[] = {
	    0x8b, 0x07,	      /*  0: mov (%rdi),%eax */
	    0x83, 0xf8, 0x05, /*  2: cmp $0x5,%eax */
	    0x74, 0x04,	      /*  5: je 11 */
	    0x85, 0xc0,	      /*  7: test %eax,%eax */
	    0x74, 0xf5,	      /*  9: je 0 */
	    0xc3,	      /* 11: ret */
	};
	struct frame f;
	uintptr_t pr;
	int rc;

	page_new();
	pr = probe_of(two_exits, sizeof(two_exits), 7, &rc);
	assert_true(pr != 0);
	memset(&f, 0, sizeof(f));
	f.rdi = (uintptr_t)flag;
	*flag = 0;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 0);
	*flag = 5;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);
	*flag = 3;
	assert_int_equal(ulp_arch_spin_probe(pr, &f), 1);
}

/* Loops that get no probe: they read rsp (a local), TLS, or flags set before the loop. */
static void probe_refused_where_the_scheduler_cannot_run_it(void **state)
{
	static const uint8_t tls[] = {
	    0x64, 0x8b, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00, /* 0: mov %fs:0x10,%eax */
	    0x85, 0xc0,					    /* 8: test %eax,%eax */
	    0x74, 0xf4,					    /* 10: je 0 */
	    0xc3,
	};
	static const uint8_t flags_in[] = {
	    0x75, 0x04, /* 0: jne 6 (flags from before the loop) */
	    0x8b, 0x07, /* 2: mov (%rdi),%eax */
	    0xeb, 0xfa, /* 4: jmp 0 */
	    0xc3,
	};
	int rc;

	page_new();
	assert_int_equal(probe_of(local, sizeof(local), 0, &rc), 0);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(probe_of(tls, sizeof(tls), 0, &rc), 0);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(probe_of(flags_in, sizeof(flags_in), 2, &rc), 0);
	assert_int_equal(rc, -EINVAL);
}

/* A probe that faults (the waited-on memory unmapped meanwhile) answers 1 through the fault
 * handler's fix-up: the thread runs and meets the fault itself. */
static uintptr_t faulting_probe;
static int fixed_up;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	if (ulp_arch_spin_probe_fault(faulting_probe, uc))
		fixed_up++;
	else
		abort();
}

static void probe_fault_answers_run_it(void **state)
{
	struct sigaction sa, old;
	struct frame f;
	void *gone;
	int rc;

	page_new();
	faulting_probe = probe_of(pause_ptr, sizeof(pause_ptr), 2, &rc);
	assert_true(faulting_probe != 0);
	gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(gone != MAP_FAILED);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	memset(&f, 0, sizeof(f));
	f.rdi = (uintptr_t)gone;
	assert_int_equal(ulp_arch_spin_probe(faulting_probe, &f), 1);
	assert_int_equal(fixed_up, 1);
	/* a fault elsewhere is not the probe's */
	assert_int_equal(ulp_arch_spin_probe_fault(0, NULL), 0);
	sigaction(SIGSEGV, &old, NULL);
	munmap(gone, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mpich_barrier_accepted),
	    cmocka_unit_test(pause_loop_accepted),
	    cmocka_unit_test(short_loop_accepted_without_site),
	    cmocka_unit_test(site_within_16_bytes),
	    cmocka_unit_test(computing_loops_refused),
	    cmocka_unit_test(zeroing_idiom_and_stack_reads_accepted),
	    cmocka_unit_test(innermost_loop_judged),
	    cmocka_unit_test(probe_reads_through_input_registers),
	    cmocka_unit_test(probe_reaims_rip_relative_loads),
	    cmocka_unit_test(probe_sees_every_exit),
	    cmocka_unit_test(probe_refused_where_the_scheduler_cannot_run_it),
	    cmocka_unit_test(probe_fault_answers_run_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
