/* SPDX-License-Identifier: MIT */
/*
 * The proof that the start-up stack is right: in a forked child, load a program into the test
 * region and jump to its entry with the built stack pointer; its libc (or ld.so) starts from
 * there as from execve. The output and exit status must match the same program run by execve.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lt.h"

struct run {
	int status;
	char out[1 << 16];
	size_t len;
};

/* ELF process start-up: rsp at argc, rdx 0 (no termination function from the "kernel"). */
static void __attribute__((noreturn)) jump(uintptr_t entry, uintptr_t sp)
{
	__asm__ volatile("mov %0, %%rsp\n\txor %%edx, %%edx\n\tjmp *%1"
			 :
			 : "D"(sp), "S"(entry)
			 : "memory");
	__builtin_unreachable();
}

/* The child starts like a new process would: default signal dispositions, nothing blocked. */
static void child_setup(int out)
{
	sigset_t none;
	int sig, in = open("/dev/null", O_RDONLY);

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(in, 0);
	dup2(out, 1);
}

static void child_loaded(const char *path, char *const argv[], char *const envp[])
{
	struct ulp_load_req req;
	struct ulp_image img;
	char err[512];

	lt_req(&req, path, argv, envp);
	if (ulp_load(&req, &img, err, sizeof(err))) {
		dprintf(2, "ulp_load: %s\n", err);
		_exit(120);
	}
	jump(img.entry, img.sp);
}

static void run(int loaded, const char *path, char *const argv[], char *const envp[], struct run *r)
{
	int pfd[2];
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_setup(pfd[1]);
		close(pfd[0]);
		close(pfd[1]);
		if (loaded)
			child_loaded(path, argv, envp);
		execve(path, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	r->len = 0;
	while ((n = read(pfd[0], r->out + r->len, sizeof(r->out) - 1 - r->len)) > 0)
		r->len += n;
	r->out[r->len] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
}

/* Loaded and execve'd runs give the same bytes and the same exit status. */
static void same_as_execve(const char *path, char *const argv[], char *const envp[],
			   struct run *loaded)
{
	static struct run native;

	lt_region_reset();
	run(1, path, argv, envp, loaded);
	run(0, path, argv, envp, &native);
	print_message("%s: status %#x, %zu bytes\n", path, loaded->status, loaded->len);
	if (!WIFEXITED(loaded->status))
		fail_msg("%s loaded: killed by signal %d", path, WTERMSIG(loaded->status));
	assert_int_equal(loaded->status, native.status);
	if (loaded->len != native.len || memcmp(loaded->out, native.out, native.len))
		fail_msg("%s output differs:\nloaded:\n%s\nexecve:\n%s", path, loaded->out,
			 native.out);
}

static void hello(const char *fixture)
{
	static struct run r;
	char *path = lt_fix(fixture), expect[1024];
	char *const argv[] = {"hello", "one", "two words", NULL};
	char *const envp[] = {"PATH=/nonexistent", "ULP_LOADER_TEST=yes", NULL};

	same_as_execve(path, argv, envp, &r);
	assert_int_equal(WEXITSTATUS(r.status), 42);
	snprintf(expect, sizeof(expect),
		 "argc=3\nargv[0]=hello\nargv[1]=one\nargv[2]=two words\nenv=yes\nexecfn=%s\n"
		 "platform=x86_64\nrandom=ok bss=zero heap=ok tls=6\n",
		 path);
	assert_string_equal(r.out, expect);
}

static void static_pie_runs(void **state)
{
	hello("hello-static");
}

static void dynamic_pie_runs(void **state)
{
	hello("hello-dyn");
}

static void debian_sha256sum_runs(void **state)
{
	static struct run r;
	char file[] = "/tmp/ulp-loader-sha-XXXXXX";
	char *const argv[] = {"sha256sum", file, NULL};
	char *const envp[] = {"LC_ALL=C", NULL};
	char buf[4096];
	int fd = mkstemp(file), i;

	assert_true(fd >= 0);
	for (i = 0; i < 256; i++) {
		memset(buf, i, sizeof(buf));
		assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	}
	close(fd);
	same_as_execve("/usr/bin/sha256sum", argv, envp, &r);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_true(strstr(r.out, file) != NULL);
	assert_int_equal(strlen(r.out), 64 + 2 + strlen(file) + 1);
	unlink(file);
}

static void debian_env_runs(void **state)
{
	static struct run r;
	char *const argv[] = {"env", NULL};
	char *const envp[] = {"A=1", "B=two words", "EMPTY=", NULL};

	same_as_execve("/usr/bin/env", argv, envp, &r);
	assert_string_equal(r.out, "A=1\nB=two words\nEMPTY=\n");
}

static void debian_ls_runs(void **state)
{
	static struct run r;
	char *dir = lt_fix("");
	char *const argv[] = {"ls", "-la", dir, NULL};
	char *const envp[] = {"LC_ALL=C", "TZ=UTC", NULL};

	same_as_execve("/usr/bin/ls", argv, envp, &r);
	assert_true(strstr(r.out, " hello-static\n") != NULL);
}

static void debian_perl_runs(void **state)
{
	static struct run r;
	char *const argv[] = {"perl", "-e",
			      "print join(',', map { $_ * $_ } 1..5), qq{\\n}; exit 3", NULL};
	char *const envp[] = {"LC_ALL=C", NULL};

	if (access("/usr/bin/perl", X_OK))
		skip();
	same_as_execve("/usr/bin/perl", argv, envp, &r);
	assert_string_equal(r.out, "1,4,9,16,25\n");
	assert_int_equal(WEXITSTATUS(r.status), 3);
}

/* ld.so started as the program (no PT_INTERP: loaded like a static PIE) maps env itself. */
static void ldso_as_program_runs(void **state)
{
	static struct run r;
	char *const argv[] = {"ld.so", "/usr/bin/env", NULL};
	char *const envp[] = {"X=from-ld.so", NULL};

	same_as_execve("/lib64/ld-linux-x86-64.so.2", argv, envp, &r);
	assert_string_equal(r.out, "X=from-ld.so\n");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(static_pie_runs),	     cmocka_unit_test(dynamic_pie_runs),
	    cmocka_unit_test(debian_sha256sum_runs), cmocka_unit_test(debian_env_runs),
	    cmocka_unit_test(debian_ls_runs),	     cmocka_unit_test(debian_perl_runs),
	    cmocka_unit_test(ldso_as_program_runs),
	};

	lt_init(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
