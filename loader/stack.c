/* SPDX-License-Identifier: MIT */
/*
 * The initial process stack, laid out as the Linux kernel lays it out for execve (x86_64 SysV
 * start-up), from the top of the stack down:
 *
 *	8 zero bytes
 *	AT_EXECFN string (the path)       \
 *	envp strings, envp[n-1] highest    > strings, ascending argv[0] .. envp[n-1], path
 *	argv strings, argv[0] lowest      /
 *	AT_PLATFORM string
 *	16 AT_RANDOM bytes
 *	(padding so that sp ends 16-byte aligned)
 *	auxv pairs ... AT_NULL pair
 *	NULL, envp pointers
 *	NULL, argv pointers
 *	argc                                <- sp
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"
#include "target.h"
#include "uapi/pvas_auxv.h"

#define ULP_LD_BASE_AUXV 24 /* room for the pairs aux_fill writes */
_Static_assert(ULP_LD_BASE_AUXV >= PVAS_AUXV_FILL_MAX, "aux_fill's pairs fit");

struct layout {
	char *const *argv, *const *envp;
	size_t argc, envc;
	size_t strbytes; /* argv + envp + path strings with their NULs */
	uintptr_t strings, platform, random;
};

/* The AT_EXECFN string: the name the program was asked for by. */
static const char *execfn_of(const struct ulp_load_req *req)
{
	return req->execfn ? req->execfn : req->path;
}

static size_t count_strings(char *const *v, size_t *bytes)
{
	size_t n = 0;

	for (; v && v[n]; n++)
		*bytes += strlen(v[n]) + 1;
	return n;
}

/* Where the strings go; fails when everything would take more than a quarter of the stack. */
static int plan(const struct ulp_load_req *req, struct layout *l, const struct ulp_ld_err *e)
{
	static char *const no_args[] = {"", NULL};
	uintptr_t usable = req->stack_hi - req->stack_lo - ulp_ld_pagesize(), need;

	/* argc 0 is what the kernel (since 5.18) turns into argv { "" }: nobody expects it. */
	l->argv = req->argv && req->argv[0] ? req->argv : no_args;
	l->envp = req->envp;
	l->strbytes = strlen(execfn_of(req)) + 1;
	l->argc = count_strings(l->argv, &l->strbytes);
	l->envc = count_strings(l->envp, &l->strbytes);
	/* An upper bound (the kernel's rule), checked before any address arithmetic. */
	need = 8 + l->strbytes + sizeof(ULP_LD_PLATFORM) + 16 + 16 +
	       8 * (3 + l->argc + l->envc + 2 * (ULP_LD_BASE_AUXV + req->n_extra_auxv + 1));
	if (need > usable / 4)
		return ulp_ld_fail(e, -E2BIG,
				   "argument list and environment too long: they need %zu "
				   "bytes, a quarter of the %lu-byte stack is %lu",
				   (size_t)need, (unsigned long)usable, (unsigned long)usable / 4);
	l->strings = req->stack_hi - 8 - l->strbytes;
	l->platform = l->strings - sizeof(ULP_LD_PLATFORM);
	l->random = (l->platform - 16) & ~(uintptr_t)15;
	return 0;
}

static uintptr_t put_strings(uintptr_t at, char *const *v, size_t n, uint64_t *ptrs)
{
	size_t i, len;

	for (i = 0; i < n; i++) {
		len = strlen(v[i]) + 1;
		memcpy((void *)at, v[i], len);
		ptrs[i] = at;
		at += len;
	}
	ptrs[n] = 0;
	return at;
}

/* The value of auxv entry type this process was started with, from /proc/self/auxv; dflt when
 * it cannot be read. getauxval is not that for AT_HWCAP on x86_64: glibc returns its own
 * HWCAP_X86_* word there (2), not the CPU's bits the kernel gave, which a program started by
 * the kernel sees. */
static uint64_t auxv_real(uint64_t type, uint64_t dflt)
{
	static uint64_t av[2 * 64];
	static size_t n = (size_t)-1;
	size_t i;

	if (n == (size_t)-1) {
		int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);
		ssize_t r = fd >= 0 ? read(fd, av, sizeof(av)) : -1;

		if (fd >= 0)
			close(fd);
		n = r > 0 ? (size_t)r / (2 * sizeof(av[0])) : 0;
	}
	for (i = 0; i < n && av[2 * i] != AT_NULL; i++)
		if (av[2 * i] == type)
			return av[2 * i + 1];
	return dflt;
}

/* The auxv pairs of uapi/pvas_auxv.h (the module's loader writes the same): the machine's and
 * this process's own values, as it was started with, and the program's. */
static size_t aux_fill(const struct ulp_stack_in *in, const struct layout *l, uintptr_t execfn,
		       __u64 *av)
{
	/* sysinfo_ehdr: the host's vDSO, which is mapped in this same address space */
	const struct pvas_auxv_host host = {
	    .sysinfo_ehdr = getauxval(AT_SYSINFO_EHDR),
	    .minsigstksz = getauxval(AT_MINSIGSTKSZ),
	    .hwcap = auxv_real(AT_HWCAP, getauxval(AT_HWCAP)),
	    .hwcap2 = getauxval(AT_HWCAP2),
	    .pagesz = ulp_ld_pagesize(),
	    .clktck = getauxval(AT_CLKTCK) ? getauxval(AT_CLKTCK) : (uint64_t)sysconf(_SC_CLK_TCK),
	    .uid = getuid(),
	    .euid = geteuid(),
	    .gid = getgid(),
	    .egid = getegid(),
	};
	const struct pvas_auxv_prog prog = {
	    .phdr = in->phdr,
	    .phnum = in->phnum,
	    .base = in->base,
	    .entry = in->entry,
	    .random = l->random,
	    .execfn = execfn,
	    .platform = l->platform,
	};

	return pvas_auxv_fill(av, &host, &prog);
}

static int put_random(uintptr_t at, const struct ulp_ld_err *e)
{
	ssize_t n;

	do
		n = getrandom((void *)at, 16, 0);
	while (n < 0 && errno == EINTR);
	if (n != 16)
		return ulp_ld_fail(e, n < 0 ? -errno : -EIO, "getrandom for AT_RANDOM: %s",
				   n < 0 ? strerror(errno) : "short read");
	return 0;
}

/* argc, argv, envp and auxv below the strings; returns sp. */
static uintptr_t put_vectors(const struct ulp_stack_in *in, const struct layout *l)
{
	const struct ulp_load_req *req = in->req;
	uintptr_t execfn = req->stack_hi - 8 - strlen(execfn_of(req)) - 1, at, sp;
	__u64 av[2 * ULP_LD_BASE_AUXV];
	uint64_t *w;
	size_t nav = aux_fill(in, l, execfn, av), nextra = req->n_extra_auxv;

	sp = (l->random - 8 * (3 + l->argc + l->envc + 2 * (nav + nextra + 1))) & ~(uintptr_t)15;
	w = (uint64_t *)sp;
	w[0] = l->argc;
	at = put_strings(l->strings, l->argv, l->argc, w + 1);
	at = put_strings(at, l->envp, l->envc, w + 2 + l->argc);
	memcpy((void *)at, execfn_of(req), strlen(execfn_of(req)) + 1);
	w += 3 + l->argc + l->envc;
	memcpy(w, av, nav * 2 * sizeof(av[0]));
	if (nextra)
		memcpy(w + 2 * nav, req->extra_auxv, nextra * sizeof(req->extra_auxv[0]));
	w[2 * (nav + nextra)] = AT_NULL;
	w[2 * (nav + nextra) + 1] = 0;
	return sp;
}

int ulp_stack_check(const struct ulp_load_req *req, const struct ulp_ld_err *e)
{
	struct layout l = {0};

	return plan(req, &l, e);
}

int ulp_stack_build(const struct ulp_stack_in *in, uintptr_t *sp, uintptr_t *random,
		    const struct ulp_ld_err *e)
{
	struct layout l = {0};
	int rc = plan(in->req, &l, e);

	if (!rc)
		rc = put_random(l.random, e);
	if (rc)
		return rc;
	memset((void *)(in->req->stack_hi - 8), 0, 8);
	memcpy((void *)l.platform, ULP_LD_PLATFORM, sizeof(ULP_LD_PLATFORM));
	*sp = put_vectors(in, &l);
	*random = l.random;
	return 0;
}
