/* SPDX-License-Identifier: MIT */
/*
 * What a successful load leaves behind: segments mapped from the file with the right
 * protections and zeroed bss, the interpreter at interp_base, and a start-up stack laid out as
 * the kernel lays it out (argc, argv, envp, auxv with the values libc and ld.so read).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "check.h"
#include "lt.h"

struct elfinfo {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
};

static void read_elf(const char *path, struct elfinfo *ei)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &ei->eh, sizeof(ei->eh), 0), sizeof(ei->eh));
	assert_true(ei->eh.e_phnum <= 64);
	assert_int_equal(pread(fd, ei->ph, ei->eh.e_phnum * sizeof(Elf64_Phdr), ei->eh.e_phoff),
			 ei->eh.e_phnum * sizeof(Elf64_Phdr));
	close(fd);
}

static uint64_t aux(uintptr_t sp, uint64_t type)
{
	int found;
	uint64_t v = lt_auxv(sp, type, &found);

	if (!found)
		fail_msg("auxv type %llu missing", (unsigned long long)type);
	return v;
}

static void check_strings(uintptr_t sp, char *const *argv, char *const *envp)
{
	uint64_t *w = (uint64_t *)sp;
	size_t argc = 0, envc = 0, i;

	while (argv[argc])
		argc++;
	while (envp[envc])
		envc++;
	assert_int_equal(w[0], argc);
	for (i = 0; i < argc; i++)
		assert_string_equal((char *)w[1 + i], argv[i]);
	assert_int_equal(w[1 + argc], 0);
	for (i = 0; i < envc; i++)
		assert_string_equal((char *)w[2 + argc + i], envp[i]);
	assert_int_equal(w[2 + argc + envc], 0);
	assert_ptr_equal(lt_auxv_start(sp), &w[3 + argc + envc]);
	/* Strings ascend argv[0] .. envp[n-1], as the kernel copies them. */
	for (i = 1; i < argc + envc; i++)
		assert_true(w[1 + i + (i >= argc)] > w[i + (i > argc)]);
}

/* The stack items the kernel puts there, and the values the request asked for. */
/* What the kernel gave this process for type (/proc/self/auxv). */
static uint64_t kernel_auxv(uint64_t type)
{
	uint64_t av[2 * 64];
	FILE *f = fopen("/proc/self/auxv", "rb");
	size_t n = f ? fread(av, 2 * sizeof(av[0]), 64, f) : 0, i;

	if (f)
		fclose(f);
	for (i = 0; i < n && av[2 * i] != AT_NULL; i++)
		if (av[2 * i] == type)
			return av[2 * i + 1];
	fail_msg("/proc/self/auxv: no entry %llu", (unsigned long long)type);
	return 0;
}

static void check_auxv(const struct ulp_load_req *req, const struct ulp_image *img,
		       const struct elfinfo *ei)
{
	uintptr_t sp = img->sp;
	const unsigned char *rnd;
	uint64_t *a;

	assert_int_equal(aux(sp, AT_PHDR), img->phdr);
	assert_int_equal(aux(sp, AT_PHENT), sizeof(Elf64_Phdr));
	assert_int_equal(aux(sp, AT_PHNUM), ei->eh.e_phnum);
	assert_int_equal(memcmp((void *)img->phdr, ei->ph, ei->eh.e_phnum * sizeof(Elf64_Phdr)), 0);
	assert_int_equal(aux(sp, AT_PAGESZ), sysconf(_SC_PAGESIZE));
	assert_int_equal(aux(sp, AT_BASE), img->interp_bias);
	assert_int_equal(aux(sp, AT_FLAGS), 0);
	assert_int_equal(aux(sp, AT_ENTRY), req->image_base + ei->eh.e_entry);
	assert_int_equal(aux(sp, AT_UID), getuid());
	assert_int_equal(aux(sp, AT_EUID), geteuid());
	assert_int_equal(aux(sp, AT_GID), getgid());
	assert_int_equal(aux(sp, AT_EGID), getegid());
	assert_int_equal(aux(sp, AT_SECURE), 0);
	/* the kernel's AT_HWCAP, which glibc's getauxval does not give on x86_64 (its own word) */
	assert_int_equal(aux(sp, AT_HWCAP), kernel_auxv(AT_HWCAP));
	assert_int_equal(aux(sp, AT_HWCAP2), getauxval(AT_HWCAP2));
	assert_int_equal(aux(sp, AT_CLKTCK), sysconf(_SC_CLK_TCK));
	assert_int_equal(aux(sp, AT_SYSINFO_EHDR), getauxval(AT_SYSINFO_EHDR));
	if (getauxval(AT_MINSIGSTKSZ))
		assert_int_equal(aux(sp, AT_MINSIGSTKSZ), getauxval(AT_MINSIGSTKSZ));
	assert_string_equal((char *)aux(sp, AT_EXECFN), req->path);
	assert_string_equal((char *)aux(sp, AT_PLATFORM), "x86_64");
	rnd = (const unsigned char *)aux(sp, AT_RANDOM);
	assert_ptr_equal(rnd, img->random);
	assert_true((uintptr_t)rnd > sp && (uintptr_t)rnd + 16 <= req->stack_hi);
	assert_true(memcmp(rnd, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) != 0);
	/* The extra pairs come last, right before AT_NULL. */
	for (a = lt_auxv_start(sp); a[0] != 0; a += 2)
		;
	assert_int_equal(a[1], 0);
	assert_int_equal(a[-2], req->extra_auxv[req->n_extra_auxv - 1][0]);
	assert_int_equal(a[-1], req->extra_auxv[req->n_extra_auxv - 1][1]);
}

/* Stack placement: aligned, inside the range above the guard, path string at the very top. */
static void check_stack(const struct ulp_load_req *req, const struct ulp_image *img)
{
	size_t len = strlen(req->path) + 1;
	char perms[5];

	assert_int_equal(img->sp % 16, 0);
	assert_true(img->sp > req->stack_lo + LT_PAGE && img->sp < req->stack_hi);
	assert_int_equal(*(uint64_t *)(req->stack_hi - 8), 0);
	assert_ptr_equal(aux(img->sp, AT_EXECFN), req->stack_hi - 8 - len);
	assert_true(lt_maps_at(req->stack_lo, perms, NULL, 0));
	assert_string_equal(perms, "---p");
	assert_true(lt_maps_at(req->stack_lo + LT_PAGE, perms, NULL, 0));
	assert_string_equal(perms, "rw-p");
}

/* Each PT_LOAD: named after the file in maps, right protections, bss reads as zeros. */
static void check_segments(const char *file, uintptr_t bias, const struct elfinfo *ei)
{
	char perms[5], path[PATH_MAX], real[PATH_MAX];
	const Elf64_Phdr *p;
	unsigned char *m;
	uint64_t i;
	int k;

	assert_non_null(realpath(file, real));
	for (k = 0; k < ei->eh.e_phnum; k++) {
		p = &ei->ph[k];
		if (p->p_type != PT_LOAD)
			continue;
		assert_true(lt_maps_at(bias + p->p_vaddr, perms, path, sizeof(path)));
		assert_string_equal(path, real);
		assert_int_equal(perms[0] == 'r', !!(p->p_flags & PF_R));
		assert_int_equal(perms[1] == 'w', !!(p->p_flags & PF_W));
		assert_int_equal(perms[2] == 'x', !!(p->p_flags & PF_X));
		m = (unsigned char *)(bias + p->p_vaddr);
		for (i = p->p_filesz; i < p->p_memsz; i++)
			if (m[i])
				fail_msg("bss byte %#llx of segment %d is not zero",
					 (unsigned long long)i, k);
		/* The rest of the last file page, too (execve zeroes it when there is bss). */
		for (i = p->p_memsz; p->p_memsz > p->p_filesz && (bias + p->p_vaddr + i) % LT_PAGE;
		     i++)
			if (m[i])
				fail_msg("byte past bss %#llx of segment %d is not zero",
					 (unsigned long long)i, k);
	}
}

static uint64_t image_end(const struct elfinfo *ei)
{
	uint64_t end = 0;
	int k;

	for (k = 0; k < ei->eh.e_phnum; k++)
		if (ei->ph[k].p_type == PT_LOAD && ei->ph[k].p_vaddr + ei->ph[k].p_memsz > end)
			end = ei->ph[k].p_vaddr + ei->ph[k].p_memsz;
	return (end + LT_PAGE - 1) & ~(LT_PAGE - 1);
}

static const uint64_t extra[2][2] = {{0x1000, 7}, {0x1001, 0xfeedface}};
static char *const test_argv[] = {"prog-name", "first", "", "third argument", NULL};
static char *const test_envp[] = {"A=1", "ULP_LOADER_TEST=yes", "EMPTY=", NULL};

static void load_fixture(const char *name, struct ulp_load_req *req, struct ulp_image *img,
			 struct elfinfo *ei)
{
	char err[512];
	int rc, fds = lt_count_fds();

	lt_region_reset();
	lt_req(req, lt_fix(name), test_argv, test_envp);
	req->extra_auxv = extra;
	req->n_extra_auxv = 2;
	lt_sentinels_place(req);
	rc = ulp_load(req, img, err, sizeof(err));
	if (rc)
		fail_msg("ulp_load: %d %s", rc, err);
	assert_int_equal(err[0], '\0');
	assert_int_equal(lt_count_fds(), fds);
	read_elf(req->path, ei);
	check_strings(img->sp, test_argv, test_envp);
	check_auxv(req, img, ei);
	check_stack(req, img);
	check_segments(req->path, req->image_base, ei);
	assert_int_equal(img->load_bias, req->image_base);
	assert_int_equal(img->prog_entry, req->image_base + ei->eh.e_entry);
	assert_int_equal(img->phnum, ei->eh.e_phnum);
	assert_int_equal(img->brk_start, req->image_base + image_end(ei));
	lt_sentinels_check(req);
}

static void static_pie_layout(void **state)
{
	struct ulp_load_req req;
	struct ulp_image img;
	struct elfinfo ei;

	load_fixture("hello-static", &req, &img, &ei);
	assert_int_equal(img.is_static, 1);
	assert_int_equal(img.interp_bias, 0);
	assert_int_equal(img.entry, img.prog_entry);
	lt_assert_reserved(req.interp_base, req.interp_limit);
	ulp_unload(&req);
	lt_assert_req_reserved(&req);
	lt_sentinels_check(&req);
}

static void dynamic_pie_layout(void **state)
{
	struct ulp_load_req req;
	struct ulp_image img;
	struct elfinfo ei, ld;
	char ldpath[PATH_MAX];

	load_fixture("hello-dyn", &req, &img, &ei);
	assert_int_equal(img.is_static, 0);
	assert_int_equal(img.interp_bias, req.interp_base);
	assert_non_null(realpath("/lib64/ld-linux-x86-64.so.2", ldpath));
	read_elf(ldpath, &ld);
	assert_int_equal(img.entry, req.interp_base + ld.eh.e_entry);
	assert_int_equal(img.interp_end, req.interp_base + image_end(&ld));
	check_segments(ldpath, req.interp_base, &ld);
	ulp_unload(&req);
	lt_assert_req_reserved(&req);
	lt_sentinels_check(&req);
}

/* A Debian program: stripped, BIND_NOW, RELRO; same checks. */
static void debian_binary_layout(void **state)
{
	struct ulp_load_req req;
	struct ulp_image img;
	struct elfinfo ei;
	char err[512];

	lt_region_reset();
	lt_req(&req, "/usr/bin/sha256sum", test_argv, test_envp);
	req.extra_auxv = extra;
	req.n_extra_auxv = 2;
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), 0);
	read_elf(req.path, &ei);
	check_auxv(&req, &img, &ei);
	check_segments(req.path, req.image_base, &ei);
	ulp_unload(&req);
	lt_assert_req_reserved(&req);
}

/* argc 0: what Linux 5.18+ does, argv becomes { "" }. */
static void empty_argv_gets_empty_name(void **state)
{
	char *const none[] = {NULL};
	struct ulp_load_req req;
	struct ulp_image img;
	uint64_t *w;
	char err[256];

	lt_region_reset();
	lt_req(&req, lt_fix("hello-static"), none, NULL);
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), 0);
	w = (uint64_t *)img.sp;
	assert_int_equal(w[0], 1);
	assert_string_equal((char *)w[1], "");
	assert_int_equal(w[2], 0);
	assert_int_equal(w[3], 0); /* no environment */
	ulp_unload(&req);
}

/* Loading over a loaded image (reuse of a partition) and after an unload both work. */
static void load_again(void **state)
{
	struct ulp_load_req req;
	struct ulp_image img, img2;
	char err[256];
	int i;

	lt_region_reset();
	lt_req(&req, lt_fix("hello-dyn"), test_argv, test_envp);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), 0);
		assert_int_equal(ulp_load(&req, &img2, err, sizeof(err)), 0);
		assert_int_equal(img.entry, img2.entry);
		assert_int_equal(img.sp, img2.sp);
		ulp_unload(&req);
		lt_assert_req_reserved(&req);
	}
}

/* Exactly at the limit: an image area of precisely the program's size is enough. */
static void image_area_exact_fit(void **state)
{
	struct ulp_load_req req;
	struct ulp_image img;
	struct elfinfo ei;
	char err[256];

	lt_region_reset();
	lt_req(&req, lt_fix("hello-static"), test_argv, NULL);
	read_elf(req.path, &ei);
	req.image_limit = req.image_base + image_end(&ei);
	lt_sentinels_place(&req);
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), 0);
	assert_int_equal(img.brk_start, req.image_limit);
	lt_sentinels_check(&req);
	req.image_limit -= LT_PAGE;
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), -ENOMEM);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(static_pie_layout),    cmocka_unit_test(dynamic_pie_layout),
	    cmocka_unit_test(debian_binary_layout), cmocka_unit_test(empty_argv_gets_empty_name),
	    cmocka_unit_test(load_again),	    cmocka_unit_test(image_area_exact_fit),
	};

	lt_init(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
