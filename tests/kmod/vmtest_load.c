// SPDX-License-Identifier: MIT
/* In-VM tests: PVAS_IOC_LOAD runs programs; argument and ownership checks. */
#define _GNU_SOURCE
#include <elf.h>
#include <sys/auxv.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmtest.h"

static __attribute__((noreturn)) void jump(uint64_t entry, uint64_t sp)
{
	/* Our libc's rseq area would stay registered; the program registers its own. */
	if (__rseq_size)
		syscall(SYS_rseq, (char *)__builtin_thread_pointer() + __rseq_offset, __rseq_size,
			RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
	__asm__ volatile("mov %0, %%rsp\n\txor %%edx, %%edx\n\tjmp *%1"
			 :
			 : "r"(sp), "r"(entry)
			 : "memory");
	__builtin_unreachable();
}

static char *env_lo, *env_hi;
static char *prog_env[4];

/* Load prog into a fresh object in a child and run it; its output into out. */
static int run_loaded(const char *prog, char *const argv[], char *out, size_t outsz)
{
	int p[2], pid, as;
	size_t n = 0;
	ssize_t r;

	if (!env_lo) {
		CHECK(asprintf(&env_lo, "T_PART_LO=%llx", (unsigned long long)START) > 0);
		CHECK(asprintf(&env_hi, "T_PART_HI=%llx", (unsigned long long)(START + T_PART)) > 0);
		prog_env[0] = env_lo;
		prog_env[1] = env_hi;
		prog_env[2] = "T_GREETING=hi there";
	}
	CHECK(pipe(p) == 0);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct pvas_load l;
		long e;

		dup2(p[1], 1);
		close(p[0]);
		as = loader_as();
		e = as_load(as, PVID, prog, argv, prog_env, &l);
		if (e) {
			fprintf(stderr, "load %s: %s\n", prog, strerror((int)-e));
			_exit(100);
		}
		/* Results describe the layout of the ABI header. */
		if (l.load_bias != START + PVAS_LAYOUT_IMAGE(T_PART) || l.prog_entry < l.load_bias ||
		    l.brk_start <= l.load_bias || l.brk_start > START + PVAS_LAYOUT_IMAGE_END(T_PART) ||
		    l.brk_limit != START + PVAS_LAYOUT_BRK_END(T_PART) ||
		    l.stack_low != START + PVAS_LAYOUT_STACK(T_PART) + 4096 ||
		    l.sp < l.stack_low || l.sp >= START + PVAS_LAYOUT_IMAGE(T_PART) || (l.sp & 15) ||
		    (l.interp_bias && (l.interp_bias < START + PVAS_LAYOUT_INTERP(T_PART) ||
				       l.interp_bias >= START + PVAS_LAYOUT_MMAP(T_PART) ||
				       l.entry < l.interp_bias)) ||
		    (!l.interp_bias && l.entry != l.prog_entry) ||
		    l.mmap_start != START + PVAS_LAYOUT_MMAP(T_PART) ||
		    (l.interp_bias && l.mmap_start <= l.entry) ||
		    l.out_reserved[0] || l.out_reserved[2]) {
			fprintf(stderr, "load %s: unexpected layout\n", prog);
			_exit(101);
		}
		jump(l.entry, l.sp);
	}
	close(p[1]);
	while (n + 1 < outsz && (r = read(p[0], out + n, outsz - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(p[0]);
	return wait_exit(pid);
}

static void expect_run(const char *prog, int interp)
{
	char out[4096], want[512];
	char *argv[] = { (char *)prog, "one", "two words", "", NULL };

	CHECK_EQ(run_loaded(prog, argv, out, sizeof(out)), 42);
	fputs(out, stderr);
	snprintf(want, sizeof(want),
		 "argc=4 [%s] [one] [two words] []\nenv=hi there\nexecfn=%s\ninterp=%d\nhello-ok\n",
		 prog, prog, interp);
	CHECK(strcmp(out, want) == 0);
}

void test_load_static_pie(void)
{
	expect_run(tpath("hello_spie"), 0);
}

void test_load_dynamic_pie(void)
{
	expect_run(tpath("hello_dyn"), 1);
}

static struct pvas_load load_args(const void *path, const void *argv, const void *envp)
{
	struct pvas_load l = {
		.version = PVAS_ABI_VERSION,
		.size = sizeof(l),
		.pvid = PVID,
		.path = (uintptr_t)path,
		.argv = (uintptr_t)argv,
		.envp = (uintptr_t)envp,
	};
	return l;
}

void test_load_bad_args(void)
{
	int as = loader_as();
	const char *prog = tpath("hello_spie");
	char *argv[24] = { (char *)prog, NULL }, *bad_argv[] = { (char *)prog, (char *)8, NULL };
	char *longpath = malloc(8192), *big = malloc(200 << 10);
	struct pvas_load l;
	int i;

	l = load_args(NULL, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args((void *)0xffffffff81000000ULL, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args((void *)0x10000, argv, NULL); /* unmapped */
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args("", argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -ENOENT);
	memset(longpath, 'a', 8192);
	l = load_args(longpath, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -ENAMETOOLONG);
	l = load_args(prog, (void *)0x10000, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args(prog, (void *)-4096L, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args(prog, bad_argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	l = load_args(prog, argv, bad_argv);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EFAULT);
	/* One string over PVAS_ARG_STRLEN_MAX. */
	memset(big, 'b', (200 << 10) - 1);
	big[(200 << 10) - 1] = 0;
	argv[1] = big;
	l = load_args(prog, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -E2BIG);
	/* Many strings under the per-string limit but over stack_size / 4. */
	big[(100 << 10)] = 0;
	for (i = 1; i < 23; i++)
		argv[i] = big;
	argv[23] = NULL;
	l = load_args(prog, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -E2BIG);
	argv[1] = NULL;

	l = load_args(prog, argv, NULL);
	l.version = 9;
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EPROTO);
	l = load_args(prog, argv, NULL);
	l.flags = 2;
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EINVAL);
	l = load_args(prog, argv, NULL);
	l.reserved[1] = 1;
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EINVAL);
	l = load_args(prog, argv, NULL);
	l.aux_type = 7; /* AT_BASE: a standard entry cannot be added */
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EINVAL);
	l = load_args(prog, argv, NULL);
	l.pvid = T_COUNT;
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), -EINVAL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, NULL), -EFAULT);

	/* No argv and no envp: like execve, argc is 1 with an empty argv[0]. */
	l = load_args(prog, NULL, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), 0);
	CHECK_EQ(*(uint64_t *)(uintptr_t)l.sp, 1);
	CHECK_EQ(**(char **)(uintptr_t)(l.sp + 8), 0);

	/* One private auxv entry (libulp's control block address) lands before AT_NULL. */
	{
		uint64_t *v;
		int found = 0;

		l = load_args(prog, NULL, NULL);
		l.aux_type = 0x50564153;
		l.aux_val = 0x1234;
		CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), 0);
		v = (uint64_t *)(uintptr_t)l.sp;
		v += 1 + v[0] + 1; /* argc, argv, NULL */
		while (*v)
			v++;	   /* envp */
		for (v++; v[0] != 0; v += 2)
			if (v[0] == 0x50564153 && v[1] == 0x1234)
				found = 1;
		CHECK_EQ(found, 1);
	}
	l = load_args(prog, argv, NULL);
	CHECK_EQ(xioctl(as, PVAS_IOC_LOAD, &l), 0);
	CHECK_EQ(*(uint64_t *)(uintptr_t)l.sp, 1);
	CHECK(strcmp(*(char **)(uintptr_t)(l.sp + 8), prog) == 0);
	free(longpath);
	free(big);
	close(as);
}

static int kid_attach(void *p)
{
	volatile long *rc = p;
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = 5 };

	*rc = rsys(16, (long)rc[1], PVAS_IOC_ATTACH, (long)&a);
	for (;;)
		rsys(34 /* pause */, 0, 0, 0);
	return 0;
}

void test_load_not_owned(void)
{
	int as = loader_as(), pid;
	volatile long k[2] = { 1, as };

	CHECK_EQ(as_load(as, 3, tpath("hello_spie"), NULL, NULL, NULL), -ENOENT);
	pid = vm_child(kid_attach, (void *)k, 0);
	while (k[0] == 1)
		sched_yield();
	CHECK_EQ(k[0], 0);
	CHECK_EQ(as_load(as, 5, tpath("hello_spie"), NULL, NULL, NULL), -EPERM);
	kill(pid, SIGKILL);
	CHECK_EQ(wait_exit(pid), 128 + SIGKILL);
	close(as);
}

void test_load_not_reserved(void)
{
	int dev = dev_open();
	uint64_t base = 0x200000000000ULL;
	int as = as_create(dev, T_PART, base, 4, 0);

	CHECK(as >= 0);
	CHECK_EQ(as_attach(as, 1), 0);
	CHECK_EQ(as_load(as, 1, tpath("hello_spie"), NULL, NULL, NULL), -EFAULT);
	/* Half reserved is not reserved. */
	reserve(base + T_PART, T_PART / 2);
	CHECK_EQ(as_load(as, 1, tpath("hello_spie"), NULL, NULL, NULL), -EFAULT);
	reserve(base + T_PART + T_PART / 2, T_PART / 2);
	CHECK_EQ(as_load(as, 1, tpath("hello_spie"), NULL, NULL, NULL), 0);
	close(as);
	close(dev);
}

/* Protection of the mapping that holds addr, from /proc/self/maps ("" if none). */

/* The value of auxv entry type in the initial stack at sp, or -1. */
static long auxv_at(uint64_t sp, uint64_t type)
{
	uint64_t *p = (uint64_t *)(uintptr_t)sp;

	p += 1 + p[0] + 1; /* argc, argv, NULL */
	while (*p++)
		;
	for (; p[0] != AT_NULL; p += 2)
		if (p[0] == type)
			return (long)p[1];
	return -1;
}

/* Any user may load what it may execute and read; execute-only files are refused. */
void test_load_unprivileged(void)
{
	size_t len;
	char *img = read_file(tpath("hello_spie"), &len);
	int pid;

	write_file("/tmp/xonly", img, len, 0111);
	write_file("/tmp/xread", img, len, 0555);
	free(img);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct pvas_load l;
		int as;

		CHECK(setgid(65534) == 0 && setuid(65534) == 0);
		as = loader_as();
		CHECK_EQ(as_load(as, PVID, "/tmp/xonly", NULL, NULL, NULL), -EACCES);
		CHECK_EQ(as_load(as, PVID, "/tmp/xread", NULL, NULL, &l), 0);
		CHECK_EQ(auxv_at(l.sp, AT_UID), 65534);
		CHECK_EQ(auxv_at(l.sp, AT_EGID), 65534);
		CHECK_EQ(auxv_at(l.sp, AT_SECURE), 0);
		CHECK_EQ(auxv_at(l.sp, AT_PAGESZ), 4096);
		CHECK_EQ(auxv_at(l.sp, AT_ENTRY), l.prog_entry);
		_exit(0);
	}
	CHECK_EQ(wait_exit(pid), 0);
}
