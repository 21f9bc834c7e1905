// SPDX-License-Identifier: GPL-2.0
/*
 * pvas initial stack: argv/envp strings copied in from the caller, then
 * written with an auxiliary vector at the top of the stack area, in the
 * System V layout execve(2) produces:
 *
 *   sp -> argc, argv[0..argc-1], NULL, envp[..], NULL, auxv pairs, AT_NULL
 *         ... random bytes, platform, argument strings, execfn, 0 <- top
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/auxvec.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "pvas_internal.h"
#include "pvas_auxv.h"

#ifndef CONFIG_X86_64
#error "pvas builds for x86_64 only (auxv and vDSO lookup are x86_64 code)"
#endif
#include <asm/cpufeature.h>
#include <asm/hwcap2.h>

#define PVAS_PLATFORM	"x86_64"
#define PVAS_AUXV_MAX	24	/* pairs, AT_NULL included */
static_assert(PVAS_AUXV_FILL_MAX + 2 <= PVAS_AUXV_MAX);

void pvas_args_free(struct pvas_args *a)
{
	kvfree(a->strs);
	a->strs = NULL;
}

/* Append one NUL-terminated string; strings and pointers share a->limit. */
static int pvas_args_add(struct pvas_args *a, const char __user *s)
{
	/* argc slot, argv/envp pointers so far plus this one, two NULLs */
	size_t ptrs = (a->argc + a->envc + 4) * sizeof(u64);
	size_t room;
	long n;

	if (ptrs + a->used >= a->limit)
		return -E2BIG;
	room = min_t(size_t, a->limit - ptrs - a->used, PVAS_ARG_STRLEN_MAX);
	n = strncpy_from_user(a->strs + a->used, s, room);
	if (n < 0)
		return n;
	if (n >= room)
		return -E2BIG;
	a->used += n + 1;
	return 0;
}

static int pvas_args_vec(struct pvas_args *a,
			 const char __user *const __user *vec, u32 *count)
{
	const char __user *s;
	int err;

	if (!vec)
		return 0;
	for (;;) {
		if (get_user(s, vec + *count))
			return -EFAULT;
		if (!s)
			return 0;
		if (*count >= PVAS_ARGC_MAX)
			return -E2BIG;
		err = pvas_args_add(a, s);
		if (err)
			return err;
		(*count)++;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
}

int pvas_args_copy(struct pvas_args *a, const struct pvas_load_req *req,
		   size_t limit)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->limit = limit;
	a->strs = kvmalloc(limit, GFP_KERNEL_ACCOUNT);
	if (!a->strs)
		return -ENOMEM;
	err = pvas_args_vec(a, req->argv, &a->argc);
	if (err)
		return err;
	if (!a->argc) {
		/* Like execve since 5.18: argv[0] is "" rather than missing. */
		a->strs[a->used++] = '\0';
		a->argc = 1;
	}
	return pvas_args_vec(a, req->envp, &a->envc);
}

/* Push len bytes below *p; the result stays above low. */
static int pvas_push(u64 *p, u64 low, const void *src, size_t len)
{
	if (*p - low < len)
		return -E2BIG;
	*p -= len;
	return copy_to_user(u64_to_user_ptr(*p), src, len) ? -EFAULT : 0;
}

/* Pointers to the n strings packed at strs, copied to user address at. */
static size_t pvas_fill_ptrs(u64 *vec, const char *strs, size_t *off,
			     u32 n, u64 at)
{
	u32 i;

	for (i = 0; i < n; i++) {
		vec[i] = at + *off;
		*off += strlen(strs + *off) + 1;
	}
	vec[n] = 0;
	return n + 1;
}

/* The auxv pairs of pvas_auxv.h (libulp's loader writes the same), then the
 * caller's private entry and AT_NULL; returns the words written.
 */
static size_t pvas_fill_auxv(u64 *v, const struct pvas_auxv_info *ai,
			     u64 random, u64 platform, u64 execfn)
{
	const struct cred *cred = current_cred();
	const struct pvas_auxv_host host = {
		.sysinfo_ehdr = (u64)(unsigned long)current->mm->context.vdso,
		.hwcap = boot_cpu_data.x86_capability[CPUID_1_EDX],
		.hwcap2 = boot_cpu_has(X86_FEATURE_FSGSBASE) ?
			  HWCAP2_FSGSBASE : 0,
		.pagesz = PAGE_SIZE,
		.clktck = USER_HZ,
		.uid = from_kuid_munged(cred->user_ns, cred->uid),
		.euid = from_kuid_munged(cred->user_ns, cred->euid),
		.gid = from_kgid_munged(cred->user_ns, cred->gid),
		.egid = from_kgid_munged(cred->user_ns, cred->egid),
	};
	const struct pvas_auxv_prog prog = {
		.phdr = ai->phdr,
		.phnum = ai->phnum,
		.base = ai->interp_bias,
		.entry = ai->entry,
		.random = random,
		.execfn = execfn,
		.platform = platform,
	};
	size_t n = 2 * pvas_auxv_fill(v, &host, &prog);

	if (ai->aux_type) {
		v[n++] = ai->aux_type;
		v[n++] = ai->aux_val;
	}
	v[n++] = AT_NULL;
	v[n++] = 0;
	return n;
}

int pvas_stack_build(const struct pvas_args *a,
		     const struct pvas_auxv_info *ai, u64 top, u64 low,
		     u64 *sp)
{
	static const char platform[] = PVAS_PLATFORM;
	u64 p = top, execfn, strs, plat, random, zero = 0;
	size_t nvec, n, off = 0;
	u8 rnd[16];
	u64 *vec;
	int err;

	err = pvas_push(&p, low, &zero, sizeof(zero));
	if (!err)
		err = pvas_push(&p, low, ai->execfn, strlen(ai->execfn) + 1);
	execfn = p;
	if (!err)
		err = pvas_push(&p, low, a->strs, a->used);
	strs = p;
	if (!err)
		err = pvas_push(&p, low, platform, sizeof(platform));
	plat = p;
	get_random_bytes(rnd, sizeof(rnd));
	if (!err)
		err = pvas_push(&p, low, rnd, sizeof(rnd));
	random = p;
	if (err)
		return err;

	nvec = 1 + a->argc + 1 + a->envc + 1 + 2 * PVAS_AUXV_MAX;
	vec = kvmalloc_array(nvec, sizeof(*vec), GFP_KERNEL_ACCOUNT);
	if (!vec)
		return -ENOMEM;
	n = 0;
	vec[n++] = a->argc;
	n += pvas_fill_ptrs(vec + n, a->strs, &off, a->argc, strs);
	n += pvas_fill_ptrs(vec + n, a->strs, &off, a->envc, strs);
	n += pvas_fill_auxv(vec + n, ai, random, plat, execfn);

	/* The ABI wants sp 16-byte aligned at argc. */
	p = round_down(p, 16);
	if (p - low < n * sizeof(*vec) + 16) {
		err = -E2BIG;
	} else {
		p = round_down(p - n * sizeof(*vec), 16);
		err = copy_to_user(u64_to_user_ptr(p), vec, n * sizeof(*vec)) ?
		      -EFAULT : 0;
	}
	kvfree(vec);
	*sp = p;
	return err;
}
