// SPDX-License-Identifier: MIT
/* In-VM tests: ioctl fuzzing, create/destroy and killed-task cycles, races, rmmod. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

/*
 * Loop counts, full size: measured under TCG (-smp 2, no KVM) on the 2-core
 * dev machine, fuzz 100k ioctls takes 4-8 s, 10k create/destroy 0.3 s, 1k
 * killed tasks 3-15 s (spin-waits on 2 vCPUs); the whole VM run, boot
 * included, 15-40 s. -s N divides them for quick runs.
 */
#define FUZZ_CALLS	100000
#define CYCLES		10000
#define KILLS		1000

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const unsigned long known_cmds[] = {
	PVAS_IOC_CREATE, PVAS_IOC_ATTACH, PVAS_IOC_RELEASE, PVAS_IOC_LOAD, PVAS_IOC_INFO,
};

static unsigned long fuzz_cmd(void)
{
	unsigned long c = known_cmds[rnd() % 5];

	switch (rnd() % 6) {
	case 0: case 1: case 2:
		return c;
	case 3: /* right number, wrong size or direction */
		return _IOC(rnd() % 4, PVAS_IOC_MAGIC, _IOC_NR(c), rnd() % 256);
	case 4:
		return _IOC(rnd() % 4, PVAS_IOC_MAGIC, rnd() % 256, rnd() % 512);
	default:
		return (unsigned long)rnd();
	}
}

static char *page; /* 2 RW pages then a PROT_NONE page */

static void *fuzz_ptr(void)
{
	switch (rnd() % 10) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffffffff81000000ULL; /* kernel text */
	case 2:
		return (void *)(0xffff888000000000ULL + (rnd() % (1 << 20))); /* direct map */
	case 3:
		return (void *)(uintptr_t)(rnd() | 1); /* anything */
	case 4:
		return (void *)0x10000; /* unmapped */
	case 5:
		return page + 2 * 4096 - (rnd() % 160); /* runs into the PROT_NONE page */
	default:
		return page + rnd() % 4096;
	}
}

/*
 * Fill the buffer with noise; half of the time the argument is shaped like
 * a request for cmd (version, size, small pvid, pointers into the buffer or
 * anywhere) so that the checks after the header are reached too.
 */
static void *fuzz_arg(unsigned long cmd)
{
	uint64_t *w = (uint64_t *)page;
	uint32_t *h;
	unsigned i;

	for (i = 0; i < 2 * 4096 / 8; i++)
		w[i] = rnd();
	if (rnd() % 2)
		return rnd() % 3 ? fuzz_ptr() : page;
	h = (uint32_t *)(page + (rnd() % 8) * 256);
	memset(h, 0, 256);
	h[0] = rnd() % 16 ? PVAS_ABI_VERSION : rnd();
	h[1] = rnd() % 16 ? _IOC_SIZE(cmd) : rnd() % 256;
	h[2] = rnd() % 12;
	h[3] = rnd() % 16 ? 0 : rnd();
	if (cmd == PVAS_IOC_CREATE) {
		((uint64_t *)h)[1] = rnd() % 2 ? T_PART << (rnd() % 4) : rnd();
		((uint64_t *)h)[2] = rnd() % 2 ? 0x400000000000ULL : rnd() & ~4095ULL;
		h[6] = rnd() % 2 ? rnd() % 64 : rnd();
	} else if (cmd == PVAS_IOC_LOAD) {
		for (i = 2; i < 5; i++)
			((uint64_t *)h)[i] = rnd() % 4 ? (uintptr_t)fuzz_ptr() : 0;
	}
	if (rnd() % 8 == 0)
		((uint64_t *)h)[2 + rnd() % 10] = rnd(); /* a reserved field */
	return h;
}

void test_fuzz(void)
{
	unsigned long i, n = FUZZ_CALLS / t_scale, created = 0, ok = 0;
	int dev = dev_open(), fds[8], objects, parts, pid;

	page = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	CHECK(mprotect(page + 2 * 4096, 4096, PROT_NONE) == 0);
	for (i = 0; i < 8; i++)
		fds[i] = i < 4 ? as_create(dev, T_PART, 0x300000000000ULL + i * (1ULL << 32),
					   T_COUNT, 0) : dev;
	for (i = 0; i < 4; i++)
		CHECK(fds[i] >= 0);
	for (i = 0; i < n; i++) {
		int fd = fds[rnd() % 8];
		long r;

		unsigned long cmd = fuzz_cmd();

		r = ioctl(fd, cmd, fuzz_arg(cmd));
		if (r >= 0)
			ok++;
		/* Only CREATE hands out a descriptor: do not let them pile up. */
		if (r >= 0 && cmd == PVAS_IOC_CREATE) {
			CHECK(close((int)r) == 0);
			created++;
		}
	}
	fprintf(stderr, "fuzz: %lu calls, %lu succeeded, %lu objects created\n", n, ok, created);
	/* A forked copy (other mm) fuzzes too: everything must say EXDEV or ENOTTY. */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		for (i = 0; i < n / 10; i++) {
			long r;

			unsigned long cmd = fuzz_cmd();

			r = ioctl(fds[rnd() % 4], cmd, fuzz_arg(cmd));
			if (r >= 0 || (errno != EXDEV && errno != ENOTTY))
				_exit(1);
		}
		_exit(0);
	}
	CHECK_EQ(wait_exit(pid), 0);
	for (i = 0; i < 4; i++)
		close(fds[i]);
	close(dev);
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 0);
	CHECK_EQ(parts, 0);
}

void test_create_destroy_cycles(void)
{
	int dev = dev_open(), objects, parts;
	unsigned i, n = CYCLES / t_scale;

	for (i = 0; i < n; i++) {
		int as = as_create(dev, T_PART, 0, 1 + i % 64, PVAS_CREATE_CLOEXEC);

		CHECK(as >= 0);
		CHECK_EQ(as_attach(as, i % (1 + i % 64)), 0);
		if (i % 3 == 0)
			CHECK_EQ(as_release(as, i % (1 + i % 64)), 0);
		close(as);
	}
	close(dev);
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 0);
	CHECK_EQ(parts, 0);
	fprintf(stderr, "cycles: %u objects created and destroyed\n", n);
}

struct victim {
	int as;
	uint32_t pvid;
	volatile long rc;
	volatile int ready;
};

static int victim_fn(void *p)
{
	struct victim *v = p;
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = v->pvid };

	v->rc = rsys(16, v->as, PVAS_IOC_ATTACH, (long)&a);
	__atomic_store_n(&v->ready, 1, __ATOMIC_RELEASE);
	for (;;)
		rsys(34 /* pause */, 0, 0, 0);
	return 0;
}

/*
 * A PVAS task claims a partition and is SIGKILLed. Three ways it can go:
 * its own fd table (claim dropped by ->flush at exit), a table shared with
 * us (CLONE_FILES: no flush; the next operation finds the owner dead), and
 * an unreaped zombie (dead, not yet waited for).
 */
void test_killed_task_cycles(void)
{
	int as = as_new(), objects, parts;
	unsigned i, n = KILLS / t_scale;
	struct pvas_info in;

	for (i = 0; i < n; i++) {
		struct victim v = { .as = as, .pvid = i % T_COUNT };
		int mode = i % 3, pid;
		siginfo_t si;

		pid = vm_child(victim_fn, &v, mode == 1 ? CLONE_FILES : 0);
		while (!__atomic_load_n(&v.ready, __ATOMIC_ACQUIRE))
			sched_yield();
		CHECK_EQ(v.rc, 0);
		CHECK_EQ(as_attach(as, v.pvid), -EBUSY);
		CHECK(kill(pid, SIGKILL) == 0);
		if (mode == 2) {
			CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT | __WALL) == 0);
			CHECK_EQ(as_info(as, v.pvid, &in), 0);
			CHECK_EQ(in.state, PVAS_PART_FREE);
		}
		CHECK_EQ(wait_exit(pid), 128 + SIGKILL);
		CHECK_EQ(as_info(as, v.pvid, &in), 0);
		CHECK_EQ(in.state, PVAS_PART_FREE);
		if (i % 10 == 0) {
			CHECK_EQ(as_attach(as, v.pvid), 0);
			CHECK_EQ(as_release(as, v.pvid), 0);
		}
	}
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 1);
	CHECK_EQ(parts, 0);
	fprintf(stderr, "kills: %u PVAS tasks killed owning a partition\n", n);
	close(as);
}

struct racer {
	int as;
	unsigned iters;
	volatile long wins;
	volatile long bad;
	volatile int done;
};

static int racer_fn(void *p)
{
	struct racer *r = p;
	unsigned i;

	for (i = 0; i < r->iters; i++) {
		uint32_t pvid = i % 3;
		struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = pvid };
		struct pvas_release rel = { .version = PVAS_ABI_VERSION, .size = sizeof(rel),
					    .pvid = pvid };
		long rc = rsys(16, r->as, PVAS_IOC_ATTACH, (long)&a);

		if (rc == 0) {
			__atomic_add_fetch(&r->wins, 1, __ATOMIC_RELAXED);
			if (rsys(16, r->as, PVAS_IOC_RELEASE, (long)&rel) != 0)
				__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		} else if (rc != -EBUSY) {
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_add_fetch(&r->done, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Two PVAS tasks fight over three partitions while the listing is read. */
void test_attach_race(void)
{
	int as = as_new(), p1, p2, objects, parts;
	struct racer r = { .as = as, .iters = 20000 / t_scale };

	p1 = vm_child(racer_fn, &r, 0);
	p2 = vm_child(racer_fn, &r, CLONE_FILES);
	while (__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) < 2)
		CHECK(listing(&objects, &parts) == 0 && parts <= 3);
	CHECK_EQ(wait_exit(p1), 0);
	CHECK_EQ(wait_exit(p2), 0);
	CHECK_EQ(r.bad, 0);
	CHECK(r.wins > 0);
	fprintf(stderr, "race: %ld wins of %u attempts\n", r.wins, 2 * r.iters);
	close(as);
}

static const char *ko_path(void)
{
	const char *p = getenv("PVAS_KO");

	return p ? p : "/pvas.ko";
}

/* A module reference is held by every descriptor, /dev/pvas or object. */
void test_rmmod(void)
{
	int dev = dev_open(), as = as_create(dev, T_PART, 0, 2, 0), ko, objects, parts;

	CHECK(as >= 0);
	CHECK_EQ(syscall(SYS_delete_module, "pvas", O_NONBLOCK), -1);
	CHECK_EQ(errno, EWOULDBLOCK);
	close(dev);
	CHECK_EQ(as_attach(as, 1), 0);
	CHECK_EQ(syscall(SYS_delete_module, "pvas", O_NONBLOCK), -1);
	CHECK_EQ(errno, EWOULDBLOCK);
	CHECK(access(PVAS_DEVICE, F_OK) == 0);
	close(as);
	CHECK_EQ(syscall(SYS_delete_module, "pvas", O_NONBLOCK), 0);
	CHECK(access(PVAS_PROC_LIST, F_OK) != 0);
	CHECK(open(PVAS_DEVICE, O_RDWR) < 0);
	/* Load it again for whatever runs next. */
	ko = open(ko_path(), O_RDONLY | O_CLOEXEC);
	CHECK(ko >= 0);
	CHECK_EQ(syscall(SYS_finit_module, ko, "", 0), 0);
	close(ko);
	dev = dev_open();
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 0);
	close(dev);
}

struct loader {
	int as;
	uint32_t pvid;
	const char *prog;
	volatile long loads;
	volatile long bad;
};

static int loader_fn(void *p)
{
	struct loader *l = p;
	char *argv[] = { (char *)l->prog, "x", NULL };
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = l->pvid };
	struct pvas_load ld;
	long rc;

	if (rsys(16, l->as, PVAS_IOC_ATTACH, (long)&a))
		__atomic_add_fetch(&l->bad, 1, __ATOMIC_RELAXED);
	for (;;) {
		memset(&ld, 0, sizeof(ld));
		ld.version = PVAS_ABI_VERSION;
		ld.size = sizeof(ld);
		ld.pvid = l->pvid;
		ld.path = (uintptr_t)l->prog;
		ld.argv = (uintptr_t)argv;
		rc = rsys(16, l->as, PVAS_IOC_LOAD, (long)&ld);
		if (rc && rc != -ENOENT) /* -ENOENT: released under us (race test) */
			__atomic_add_fetch(&l->bad, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&l->loads, 1, __ATOMIC_RELAXED);
		if (rc == -ENOENT)
			rsys(16, l->as, PVAS_IOC_ATTACH, (long)&a);
	}
	return 0;
}

/* PVAS tasks killed in the middle of loading programs: nothing may leak or splat. */
void test_load_killed(void)
{
	int as = as_new(), i, n = 60 / (int)(t_scale < 6 ? t_scale : 6), objects, parts;
	struct pvas_info in;
	long loads = 0;

	reserve(T_BASE, T_COUNT * T_PART);
	for (i = 0; i < n; i++) {
		struct loader l = { .as = as, .pvid = (uint32_t)i % T_COUNT,
				    .prog = i % 2 ? "/t/hello_dyn" : "/t/hello_spie" };
		struct timespec ts = { 0, (long)(rnd() % 60000000) };
		int pid = vm_child(loader_fn, &l, i % 3 == 0 ? CLONE_FILES : 0);

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		CHECK_EQ(wait_exit(pid), 128 + SIGKILL);
		CHECK_EQ(l.bad, 0);
		loads += l.loads;
		CHECK_EQ(as_info(as, l.pvid, &in), 0);
		CHECK_EQ(in.state, PVAS_PART_FREE);
	}
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(parts, 0);
	fprintf(stderr, "load-kill: %d loaders killed after %ld loads\n", n, loads);
	close(as);
}

/* One thread loads while another of the same process releases and re-claims. */
void test_load_release_race(void)
{
	int as = as_new(), pid, i, n = 200 / (int)t_scale;
	struct loader l = { .as = as, .pvid = 1, .prog = "/t/hello_spie" };
	struct pvas_release r = { .version = PVAS_ABI_VERSION, .size = sizeof(r), .pvid = 1 };
	long rc;

	reserve(T_BASE, T_COUNT * T_PART);
	/* CLONE_THREAD: same thread group, so both may release and load. */
	pid = vm_child(loader_fn, &l, CLONE_THREAD | CLONE_SIGHAND | CLONE_FILES);
	(void)pid;
	for (i = 0; i < 100000 && __atomic_load_n(&l.loads, __ATOMIC_RELAXED) < n; i++) {
		struct timespec ts = { 0, (long)(rnd() % 2000000) };

		rc = rsys(16, as, PVAS_IOC_RELEASE, (long)&r);
		CHECK(rc == 0 || rc == -ENOENT);
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(l.bad, 0);
	CHECK(l.loads >= n);
	fprintf(stderr, "load-release: %ld loads against %d releases\n", l.loads, i);
	/* The thread loops forever: end the whole group from here. */
	fflush(NULL);
	_exit(0);
}
