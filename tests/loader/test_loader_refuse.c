/* SPDX-License-Identifier: MIT */
/*
 * Every program or request the loader must refuse: the right -errno, a message that names the
 * file and the reason, the partition ranges back to PROT_NONE, nothing outside them touched and
 * no file descriptor leaked.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"
#include "lt.h"

struct refusal {
	const char *name;    /* test name */
	const char *fixture; /* file in the fixture folder ("" = an absent file) */
	int err;	     /* expected -errno */
	const char *reason;  /* must appear in the message */
	const char *reason2; /* and this too, when not NULL */
	void (*shape)(struct ulp_load_req *req); /* changes the default request */
};

static void tiny_image(struct ulp_load_req *req)
{
	req->image_limit = req->image_base + 4 * LT_PAGE;
}

static void tiny_interp(struct ulp_load_req *req)
{
	req->interp_limit = req->interp_base + 4 * LT_PAGE;
}

static char *huge_argv[200];

/* 200 arguments of 1000 bytes: more than a quarter of a 512 KiB stack. Refused before anything
 * is mapped (counted in the checks, for execve in place). */
static void small_stack_big_args(struct ulp_load_req *req)
{
	static char arg[1000];
	int i;

	memset(arg, 'x', sizeof(arg) - 1);
	for (i = 0; i < 199; i++)
		huge_argv[i] = arg;
	req->argv = huge_argv;
	req->stack_lo = req->stack_hi - (512UL << 10);
}

static void unaligned_image(struct ulp_load_req *req)
{
	req->image_base += 8;
}

static void overlapping(struct ulp_load_req *req)
{
	req->interp_base = req->image_limit - LT_PAGE;
}

static void stack_one_page(struct ulp_load_req *req)
{
	req->stack_lo = req->stack_hi - LT_PAGE;
}

static const uint64_t null_aux[1][2] = {{0, 5}};

static void aux_null(struct ulp_load_req *req)
{
	req->extra_auxv = null_aux;
	req->n_extra_auxv = 1;
}

#define ET_EXEC_MSG "not a position-independent executable (ET_EXEC); rebuild with -fPIE -pie"

/* Every case fills all fields: -Wmissing-field-initializers stays on. */
static const struct refusal cases[] = {
    {"absent_file", "", -ENOENT, "No such file or directory", NULL, NULL},
    {"directory", "dir", -EACCES, "is a directory", NULL, NULL},
    {"fifo", "fifo", -EACCES, "not a regular file", NULL, NULL},
    {"no_execute_permission", "noexec", -EACCES, "permission denied (not executable)", NULL, NULL},
    {"empty_file", "empty", -ENOEXEC, "empty file", NULL, NULL},
    {"shell_script", "script", -ENOEXEC, "not an ELF file", NULL, NULL},
    {"truncated_elf_header", "trunc-ehdr", -ENOEXEC, "truncated ELF header (40 bytes)", NULL, NULL},
    {"truncated_program_headers", "trunc-phdr", -ENOEXEC, "program headers at offset 0x40",
     "do not fit in the file (200 bytes)", NULL},
    {"truncated_segments", "trunc-seg", -ENOEXEC, "goes past the end of the file", NULL, NULL},
    {"corrupt_phoff", "bad-phoff", -ENOEXEC, "program headers at offset 0xffffff00", NULL, NULL},
    {"elfclass32", "class32", -ENOEXEC, "not a 64-bit ELF (ELFCLASS32)", NULL, NULL},
    {"big_endian", "bigendian", -ENOEXEC, "wrong byte order (big-endian)", NULL, NULL},
    {"aarch64_program", "hello-aarch64", -ENOEXEC, "wrong machine: aarch64", "runs x86_64", NULL},
    {"et_exec_program", "hello-exec", -ENOEXEC, ET_EXEC_MSG, NULL, NULL},
    {"et_rel_object", "hello.o", -ENOEXEC, "a relocatable object (ET_REL)", NULL, NULL},
    {"et_core_file", "core", -ENOEXEC, "a core dump (ET_CORE)", NULL, NULL},
    {"no_pt_load", "noload", -ENOEXEC, "no loadable segment (PT_LOAD)", NULL, NULL},
    {"filesz_above_memsz", "filesz-gt-memsz", -ENOEXEC, "has p_filesz 0x", "> p_memsz 0x", NULL},
    {"offset_vaddr_misaligned", "misaligned", -ENOEXEC, "differ modulo the page size", NULL, NULL},
    {"vaddr_memsz_overflow", "overflow", -ENOEXEC, "address range 0xfffffffffffff000+", "overflows",
     NULL},
    {"segment_past_eof", "seg-past-eof", -ENOEXEC, "segment", "goes past the end of the file",
     NULL},
    {"entry_outside_text", "bad-entry", -ENOEXEC,
     "entry point 0x7fff0000 is not inside an executable segment", NULL, NULL},
    {"phdr_not_loaded", "phdr-unmapped", -ENOEXEC,
     "program headers are not inside a loaded segment", NULL, NULL},
    {"interp_not_nul_terminated", "interp-no-nul", -ENOEXEC,
     "corrupt PT_INTERP (not a NUL-terminated path)", NULL, NULL},
    {"no_entry_point", "no-entry", -ENOEXEC, "no entry point (e_entry is 0)", NULL, NULL},
    {"image_too_big_for_area", "bigbss", -ENOMEM, "program needs 2",
     "partition image area has 268369920", NULL},
    {"image_in_tiny_area", "hello-dyn", -ENOMEM, "program needs", "image area has 16384",
     tiny_image},
    {"interp_in_tiny_area", "hello-dyn", -ENOMEM, "interpreter /lib64/ld-linux-x86-64.so.2: needs",
     "interpreter area has 16384", tiny_interp},
    {"interp_missing", "bad-interp", -ENOENT,
     "interpreter /nonexistent/ld-linux-x86-64.so.2: No such file or directory", NULL, NULL},
    {"interp_wrong_machine", "interp-arm", -ENOEXEC, "hello-aarch64: wrong machine: aarch64", NULL,
     NULL},
    {"interp_wants_interp", "interp-dyn", -ENOEXEC,
     "hello-dyn: asks for an interpreter (/lib64/ld-linux-x86-64.so.2)", NULL, NULL},
    {"interp_not_executable", "interp-noexec", -EACCES,
     "noexec: permission denied (not executable)", NULL, NULL},
    {"args_overflow_static", "hello-static", -E2BIG, "argument list and environment too long",
     "a quarter of the 520192-byte stack", small_stack_big_args},
    {"args_overflow_dynamic", "hello-dyn", -E2BIG, "argument list and environment too long", NULL,
     small_stack_big_args},
    {"unaligned_image_base", "hello-dyn", -EINVAL, "image range", "not a page-aligned",
     unaligned_image},
    {"overlapping_ranges", "hello-dyn", -EINVAL, "image and interpreter ranges overlap", NULL,
     overlapping},
    {"stack_without_room", "hello-dyn", -EINVAL, "guard page", NULL, stack_one_page},
    {"extra_auxv_at_null", "hello-dyn", -EINVAL, "extra auxv pair 0 is AT_NULL", NULL, aux_null},
};

static void refuse(void **state)
{
	const struct refusal *c = *state;
	char *path = lt_fix(c->fixture[0] ? c->fixture : "does-not-exist");
	char *const argv[] = {"prog", NULL};
	struct ulp_load_req req;
	struct ulp_image img;
	char err[512], prefix[600];
	int fds, rc;

	lt_region_reset();
	lt_req(&req, path, argv, NULL);
	if (c->shape)
		c->shape(&req);
	lt_sentinels_place(&req);
	memset(&img, 0xff, sizeof(img));
	memset(err, 'X', sizeof(err));
	fds = lt_count_fds();
	rc = ulp_load(&req, &img, err, sizeof(err));
	print_message("%s -> %d: %s\n", c->fixture, rc, err);
	assert_int_equal(rc, c->err);
	snprintf(prefix, sizeof(prefix), "%s: ", path);
	assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
	if (!strstr(err, c->reason) || (c->reason2 && !strstr(err, c->reason2)))
		fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", err, c->reason,
			 c->reason2 ? c->reason2 : "");
	assert_int_equal(img.entry, 0);
	assert_int_equal(img.sp, 0);
	assert_int_equal(lt_count_fds(), fds);
	if (req.image_base % LT_PAGE == 0) /* an unaligned request has no range to check */
		lt_assert_req_reserved(&req);
	lt_sentinels_check(&req);
}

/* A too-small message buffer still gets a NUL-terminated start of the message. */
static void short_error_buffer(void **state)
{
	char *path = lt_fix("empty");
	struct ulp_load_req req;
	struct ulp_image img;
	char err[16];

	lt_req(&req, path, NULL, NULL);
	memset(err, 'X', sizeof(err));
	assert_int_equal(ulp_load(&req, &img, err, 8), -ENOEXEC);
	assert_int_equal(strlen(err), 7);
	assert_true(strncmp(err, path, 7) == 0);
	assert_int_equal(err[8], 'X');
	assert_int_equal(ulp_load(&req, &img, NULL, 0), -ENOEXEC);
}

/* A load refused over an earlier image (E2BIG: counted before anything is mapped) leaves that
 * image as it was, stack included. */
static void failed_reload_leaves_earlier_image(void **state)
{
	char *ok = lt_fix("hello-dyn");
	char *const argv[] = {"prog", NULL};
	struct ulp_load_req req, first;
	struct ulp_image img;
	char err[256], perms[5];

	(void)state;
	lt_region_reset();
	lt_req(&first, ok, argv, NULL);
	assert_int_equal(ulp_load(&first, &img, err, sizeof(err)), 0);
	req = first;
	small_stack_big_args(&req);
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), -E2BIG);
	assert_true(lt_maps_at(first.stack_lo + LT_PAGE, perms, NULL, 0));
	assert_string_equal(perms, "rw-p");
	assert_true(lt_maps_at(req.stack_hi - LT_PAGE, perms, NULL, 0));
	assert_string_equal(perms, "rw-p");
	assert_true(lt_maps_at(first.image_base, perms, NULL, 0));
	ulp_unload(&first);
	lt_assert_req_reserved(&first);
}

/* execve in place: every refusal comes from ulp_load_prepare before any page is touched (the
 * image loaded in the same ranges stays mapped, no descriptor leaks); a prepared load that is
 * aborted holds nothing, one that is committed replaces the image. */
static void prepare_refuses_touching_nothing(void **state)
{
	char *const argv[] = {"prog", NULL};
	struct ulp_load_req first, req;
	struct ulp_load_prep *p;
	struct ulp_image img;
	char err[512], perms[5];
	size_t i;
	int fds;

	(void)state;
	lt_region_reset();
	lt_req(&first, lt_fix("hello-dyn"), argv, NULL);
	assert_int_equal(ulp_load(&first, &img, err, sizeof(err)), 0);
	fds = lt_count_fds();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct refusal *c = &cases[i];

		req = first;
		req.path = lt_fix(c->fixture[0] ? c->fixture : "does-not-exist");
		if (c->shape)
			c->shape(&req);
		p = (struct ulp_load_prep *)1;
		assert_int_equal(ulp_load_prepare(&req, &p, err, sizeof(err)), c->err);
		assert_null(p);
		if (!strstr(err, c->reason))
			fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err, c->reason);
		assert_int_equal(lt_count_fds(), fds);
		assert_true(lt_maps_at(first.stack_hi - LT_PAGE, perms, NULL, 0));
		assert_string_equal(perms, "rw-p");
		assert_true(lt_maps_at(first.image_base, perms, NULL, 0));
		assert_string_equal(perms, "r--p");
	}
	req = first;
	req.path = lt_fix("hello-static");
	assert_int_equal(ulp_load_prepare(&req, &p, err, sizeof(err)), 0);
	ulp_load_abort(p);
	assert_int_equal(lt_count_fds(), fds);
	assert_int_equal(ulp_load_prepare(&req, &p, err, sizeof(err)), 0);
	ulp_unload(&first);
	assert_int_equal(ulp_load_commit(p, &img, err, sizeof(err)), 0);
	assert_int_equal(lt_count_fds(), fds);
	assert_true(img.is_static && img.entry > req.image_base);
	ulp_unload(&req);
	lt_assert_req_reserved(&req);
}

/* In this process only: mmap of a file with PROT_EXEC fails with EPERM (as on a noexec mount). */
static void deny_exec_file_mmap(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 5),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(99);
}

struct midway {
	int rc, fds_before, fds_after;
	char err[512];
};

/*
 * A mapping that fails after earlier segments were mapped: everything goes back to PROT_NONE.
 * The child loads under a seccomp filter and stops; the parent inspects its maps.
 */
static void mmap_failure_midway_rolls_back(void **state)
{
	char *const argv[] = {"prog", NULL};
	struct ulp_load_req req;
	struct ulp_image img;
	struct midway m;
	int pfd[2], status;
	pid_t pid;

	lt_region_reset();
	lt_req(&req, lt_fix("hello-dyn"), argv, NULL);
	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		deny_exec_file_mmap();
		m.fds_before = lt_count_fds();
		m.rc = ulp_load(&req, &img, m.err, sizeof(m.err));
		m.fds_after = lt_count_fds();
		if (write(pfd[1], &m, sizeof(m)) != sizeof(m))
			_exit(98);
		raise(SIGSTOP);
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &m, sizeof(m)), sizeof(m));
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	assert_true(WIFSTOPPED(status));
	print_message("%d: %s\n", m.rc, m.err);
	assert_int_equal(m.rc, -EPERM);
	assert_non_null(strstr(m.err, "hello-dyn: mmap segment "));
	assert_non_null(strstr(m.err, ": Operation not permitted"));
	assert_int_equal(m.fds_after, m.fds_before);
	lt_assert_req_reserved_in(pid, &req);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Debian's own python3 is linked -no-pie: the real-world case the ET_EXEC message is for. */
static void debian_et_exec_refused(void **state)
{
	const char *path = "/usr/bin/python3";
	struct ulp_load_req req;
	struct ulp_image img;
	Elf64_Ehdr eh;
	char err[512];
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_type != ET_EXEC) {
		if (fd >= 0)
			close(fd);
		skip();
	}
	close(fd);
	lt_region_reset();
	lt_req(&req, path, NULL, NULL);
	assert_int_equal(ulp_load(&req, &img, err, sizeof(err)), -ENOEXEC);
	assert_string_equal(err, "/usr/bin/python3: " ET_EXEC_MSG);
	lt_assert_req_reserved(&req);
}

/*
 * A program file cut short after the checks and before the mapping (another process truncating
 * it; 1 run in 30 under ulpexec): the loader used to write the bss start into the file's last
 * page and die of SIGBUS. It must refuse the file, naming it, and live. Run in a child so a
 * SIGBUS is a test failure, not the end of the test program. cut: where to cut, from the end of
 * the last PT_LOAD's file part.
 */
static void truncated_at(const char *fixture, int into_tail)
{
	char tmp[] = "/tmp/ulp-trunc-XXXXXX", cmd[512], err[512] = "";
	struct ulp_ld_err e = {err, sizeof(err), tmp, NULL};
	struct ulp_elf f;
	uint64_t cut = 0;
	size_t i;
	int fd = mkstemp(tmp), st;
	pid_t pid;

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 755 %s", lt_fix(fixture), tmp, tmp);
	assert_int_equal(system(cmd), 0);
	lt_region_reset();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (ulp_elf_open(&f, tmp, &e))
			_exit(10);
		for (i = 0; i < f.phnum; i++)
			if (f.ph[i].p_type == PT_LOAD && f.ph[i].p_memsz > f.ph[i].p_filesz)
				cut = f.ph[i].p_offset + f.ph[i].p_filesz;
		if (!cut || (cut & (LT_PAGE - 1)) == 0)
			_exit(11); /* the fixture has no partial page before bss */
		/* into_tail: the last file page is gone; else only its last byte */
		if (truncate(tmp, (off_t)(into_tail ? cut & ~(LT_PAGE - 1) : cut - 1)))
			_exit(12);
		if (ulp_map_segments(&f, LT_BASE, &e) != -EIO)
			_exit(13);
		if (!strstr(err, tmp) || !strstr(err, "truncated while being loaded"))
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(tmp);
	if (WIFSIGNALED(st))
		fail_msg("%s cut %s: the loader was killed by signal %d", fixture,
			 into_tail ? "into the bss page" : "by one byte", WTERMSIG(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void loader_survives_file_truncated_while_loading(void **state)
{
	(void)state;
	truncated_at("hello-dyn", 1);
	truncated_at("hello-dyn", 0);
	truncated_at("hello-static", 1);
}

int main(int argc, char **argv)
{
	size_t n = sizeof(cases) / sizeof(cases[0]), i;
	struct CMUnitTest *t = calloc(n + 6, sizeof(*t));

	lt_init(argc, argv);
	for (i = 0; i < n; i++) {
		t[i].name = cases[i].name;
		t[i].test_func = refuse;
		t[i].initial_state = (void *)&cases[i];
	}
	t[n] = (struct CMUnitTest)cmocka_unit_test(short_error_buffer);
	t[n + 1] = (struct CMUnitTest)cmocka_unit_test(failed_reload_leaves_earlier_image);
	t[n + 2] = (struct CMUnitTest)cmocka_unit_test(debian_et_exec_refused);
	t[n + 3] = (struct CMUnitTest)cmocka_unit_test(mmap_failure_midway_rolls_back);
	t[n + 4] =
	    (struct CMUnitTest)cmocka_unit_test(loader_survives_file_truncated_while_loading);
	t[n + 5] = (struct CMUnitTest)cmocka_unit_test(prepare_refuses_touching_nothing);
	return _cmocka_run_group_tests("loader-refuse", t, n + 6, NULL, NULL);
}
