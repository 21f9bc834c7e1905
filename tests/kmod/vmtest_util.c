// SPDX-License-Identifier: MIT
/* In-VM tests of the pvas module: helpers and the test runner. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

const char *t_dir = "/t";
unsigned t_scale = 1;

int dev_open(void)
{
	int fd = open(PVAS_DEVICE, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0);
	return fd;
}

long xioctl(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

int as_create(int dev, uint64_t part, uint64_t base, uint32_t count, uint32_t flags)
{
	struct pvas_create c = {
		.version = PVAS_ABI_VERSION,
		.size = sizeof(c),
		.part_size = part,
		.base = base,
		.count = count,
		.flags = flags,
	};

	return (int)xioctl(dev, PVAS_IOC_CREATE, &c);
}

int as_new(void)
{
	int dev = dev_open();
	int as = as_create(dev, T_PART, T_BASE, T_COUNT, PVAS_CREATE_CLOEXEC);

	CHECK(as >= 0);
	close(dev);
	return as;
}

long as_attach(int as, uint32_t pvid)
{
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = pvid };

	return xioctl(as, PVAS_IOC_ATTACH, &a);
}

long as_release(int as, uint32_t pvid)
{
	struct pvas_release r = { .version = PVAS_ABI_VERSION, .size = sizeof(r), .pvid = pvid };

	return xioctl(as, PVAS_IOC_RELEASE, &r);
}

long as_info(int as, uint32_t pvid, struct pvas_info *in)
{
	memset(in, 0, sizeof(*in));
	in->version = PVAS_ABI_VERSION;
	in->size = sizeof(*in);
	in->pvid = pvid;
	return xioctl(as, PVAS_IOC_INFO, in);
}

long as_load(int as, uint32_t pvid, const char *path, char *const argv[], char *const envp[],
	     struct pvas_load *out)
{
	struct pvas_load l = {
		.version = PVAS_ABI_VERSION,
		.size = sizeof(l),
		.pvid = pvid,
		.path = (uintptr_t)path,
		.argv = (uintptr_t)argv,
		.envp = (uintptr_t)envp,
	};
	long r = xioctl(as, PVAS_IOC_LOAD, &l);

	if (out)
		*out = l;
	return r;
}

void *reserve(uint64_t base, uint64_t len)
{
	void *p = mmap((void *)(uintptr_t)base, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	CHECK(p == (void *)(uintptr_t)base);
	return p;
}

int listing(int *objects, int *parts)
{
	FILE *f = fopen(PVAS_PROC_LIST, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "objects %d partitions %d", objects, parts);
	fclose(f);
	return n == 2 ? 0 : -EINVAL;
}

void listing_dump(void)
{
	char buf[4096];
	FILE *f = fopen(PVAS_PROC_LIST, "r");
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	fprintf(stderr, "%s", buf);
}

int vm_child(int (*fn)(void *), void *arg, int flags)
{
	static const size_t sz = 256 << 10;
	/* Leaked on purpose: a killed child may still be on it. Small and bounded by loops. */
	static char *stacks[4];
	static unsigned next;
	char *stk;
	int pid;

	if (!stacks[next % 4]) {
		stacks[next % 4] = mmap(NULL, sz, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		CHECK(stacks[next % 4] != MAP_FAILED);
	}
	stk = stacks[next++ % 4];
	pid = clone(fn, stk + sz, CLONE_VM | SIGCHLD | flags, arg);
	CHECK(pid > 0);
	return pid;
}

int wait_exit(int pid)
{
	int st;

	CHECK(waitpid(pid, &st, __WALL) == pid);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

char *tpath(const char *name)
{
	static char buf[4][256];
	static unsigned n;
	char *p = buf[n++ % 4];

	snprintf(p, 256, "%s/%s", t_dir, name);
	return p;
}

void *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *buf;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc(st.st_size);
	CHECK(buf && read(fd, buf, st.st_size) == st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

void write_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len);
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

/* An object with partition PVID claimed and the whole region reserved. */
int loader_as(void)
{
	int as = as_new();

	reserve(T_BASE, T_COUNT * T_PART);
	CHECK_EQ(as_attach(as, PVID), 0);
	return as;
}

static const struct {
	const char *name;
	void (*fn)(void);
	unsigned timeout; /* seconds under TCG */
} tests[] = {
	{ "create_invalid", test_create_invalid, 20 },
	{ "create_cloexec", test_create_cloexec, 20 },
	{ "attach_release", test_attach_release, 20 },
	{ "attach_other_task", test_attach_other_task, 20 },
	{ "exdev_other_mm", test_exdev_other_mm, 20 },
	{ "release_on_close", test_release_on_close, 20 },
	{ "dup_keeps_claim", test_dup_keeps_claim, 20 },
	{ "info", test_info, 20 },
	{ "load_static_pie", test_load_static_pie, 30 },
	{ "load_dynamic_pie", test_load_dynamic_pie, 30 },
	{ "load_refused", test_load_refused, 30 },
	{ "load_bad_args", test_load_bad_args, 30 },
	{ "load_not_owned", test_load_not_owned, 20 },
	{ "load_not_reserved", test_load_not_reserved, 20 },
	{ "load_unprivileged", test_load_unprivileged, 20 },
	{ "reload_resets", test_reload_resets, 30 },
	{ "elf_fuzz", test_elf_fuzz, 120 },
	{ "fuzz", test_fuzz, 120 },
	{ "create_destroy_cycles", test_create_destroy_cycles, 120 },
	{ "killed_task_cycles", test_killed_task_cycles, 120 },
	{ "attach_race", test_attach_race, 60 },
	{ "load_killed", test_load_killed, 60 },
	{ "load_release_race", test_load_release_race, 60 },
	{ "rmmod", test_rmmod, 30 },
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Usage: pvas_vmtest [-d DIR] [-s SCALE] [NAME...] */
int main(int argc, char **argv)
{
	unsigned pass = 0, fail = 0, i;
	int opt;

	while ((opt = getopt(argc, argv, "d:s:")) != -1) {
		if (opt == 'd')
			t_dir = optarg;
		else if (opt == 's')
			t_scale = (unsigned)atoi(optarg) ? (unsigned)atoi(optarg) : 1;
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int st, objects = -1, parts = -1, j, want = optind >= argc;
		double t0 = now();
		pid_t pid;

		for (j = optind; j < argc; j++)
			want |= !strcmp(argv[j], tests[i].name);
		if (!want)
			continue;
		fflush(NULL);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			setpgid(0, 0);
			alarm(tests[i].timeout);
			tests[i].fn();
			fflush(NULL);
			_exit(0);
		}
		st = wait_exit(pid);
		/* A failed test may leave PVAS tasks behind: they hold descriptors. */
		if (kill(-pid, SIGKILL) == 0)
			while (waitpid(-pid, NULL, __WALL) > 0)
				;
		/* Every test closes all it made: the module must hold nothing afterwards. */
		if (!st && strcmp(tests[i].name, "rmmod") &&
		    (listing(&objects, &parts) || objects || parts)) {
			fprintf(stderr, "leak after %s: objects %d partitions %d\n", tests[i].name,
				objects, parts);
			listing_dump();
			st = 1;
		}
		printf("%s: %s (%.1f s)\n", st ? "FAIL" : "PASS", tests[i].name, now() - t0);
		if (st)
			fail++;
		else
			pass++;
	}
	printf("vmtest: %u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
