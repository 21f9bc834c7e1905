// SPDX-License-Identifier: MIT
/* In-VM tests: object creation, partition ownership, release paths. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmtest.h"

static long create_raw(int dev, struct pvas_create *c)
{
	return xioctl(dev, PVAS_IOC_CREATE, c);
}

static struct pvas_create good_create(void)
{
	struct pvas_create c = {
		.version = PVAS_ABI_VERSION,
		.size = sizeof(c),
		.part_size = T_PART,
		.count = T_COUNT,
	};
	return c;
}

void test_create_invalid(void)
{
	int dev = dev_open(), objects, parts;
	struct pvas_create c;
	long fd;

	c = good_create();
	c.version = 0;
	CHECK_EQ(create_raw(dev, &c), -EPROTO);
	c = good_create();
	c.version = PVAS_ABI_VERSION + 1;
	CHECK_EQ(create_raw(dev, &c), -EPROTO);
	c = good_create();
	c.size = sizeof(c) - 8;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.part_size = PVAS_PART_SIZE_MIN / 2;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.part_size = T_PART + 4096;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.count = 0;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.part_size = PVAS_PART_SIZE_MIN;
	c.count = PVAS_COUNT_MAX; /* the largest count is fine */
	fd = create_raw(dev, &c);
	CHECK(fd >= 0);
	close((int)fd);
	c = good_create();
	c.base = T_BASE + 1;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.base = 4096; /* below the minimum base */
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.count = PVAS_COUNT_MAX + 1;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.part_size = 1ULL << 32;
	c.count = PVAS_COUNT_MAX; /* 256 TiB: leaves the 47-bit address space */
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.count = 0xffffffffu;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.part_size = 1ULL << 62; /* size * count overflows */
	c.count = 8;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.flags = 0x80;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.reserved0 = 1;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	c = good_create();
	c.reserved[1] = 1;
	CHECK_EQ(create_raw(dev, &c), -EINVAL);
	CHECK_EQ(xioctl(dev, PVAS_IOC_CREATE, NULL), -EFAULT);
	CHECK_EQ(xioctl(dev, PVAS_IOC_CREATE, (void *)0xffffffff81000000ULL), -EFAULT);
	CHECK_EQ(xioctl(dev, PVAS_IOC_ATTACH, &c), -ENOTTY);
	CHECK_EQ(xioctl(dev, _IOWR(PVAS_IOC_MAGIC, 0x01, int), &c), -ENOTTY);

	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 0);
	/* A good one: base defaults, id and base written back, listed. */
	c = good_create();
	fd = create_raw(dev, &c);
	CHECK(fd >= 0);
	CHECK_EQ(c.base, PVAS_BASE_DEFAULT);
	CHECK(c.id > 0);
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 1);
	CHECK_EQ(parts, 0);
	/* The object descriptor does not answer /dev/pvas's ioctls. */
	CHECK_EQ(xioctl((int)fd, PVAS_IOC_CREATE, &c), -ENOTTY);
	close((int)fd);
	CHECK(listing(&objects, &parts) == 0);
	CHECK_EQ(objects, 0);
	close(dev);
}

void test_create_cloexec(void)
{
	int dev = dev_open();
	int a = as_create(dev, T_PART, 0, 1, 0);
	int b = as_create(dev, T_PART, 0, 1, PVAS_CREATE_CLOEXEC);

	CHECK(a >= 0 && b >= 0);
	CHECK_EQ(fcntl(a, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(b, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(a);
	close(b);
	close(dev);
}

void test_attach_release(void)
{
	int as = as_new();
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = 3 };
	struct pvas_info in;

	CHECK_EQ(xioctl(as, PVAS_IOC_ATTACH, &a), 0);
	CHECK_EQ(a.start, T_BASE + 3 * T_PART);
	CHECK_EQ(as_attach(as, 3), -EBUSY); /* also when the caller owns it */
	CHECK_EQ(as_attach(as, T_COUNT), -EINVAL);
	CHECK_EQ(as_attach(as, 0xffffffffu), -EINVAL);
	CHECK_EQ(as_attach(as, 0), 0); /* one process may own several */
	CHECK_EQ(as_info(as, 0, &in), 0);
	CHECK_EQ(in.owned, 2);
	CHECK_EQ(as_release(as, 3), 0);
	CHECK_EQ(as_release(as, 3), -ENOENT);
	CHECK_EQ(as_release(as, T_COUNT), -EINVAL);
	CHECK_EQ(as_attach(as, 3), 0);

	/* Malformed arguments. */
	a.version = 7;
	CHECK_EQ(xioctl(as, PVAS_IOC_ATTACH, &a), -EPROTO);
	a.version = PVAS_ABI_VERSION;
	a.flags = 1;
	a.pvid = 5;
	CHECK_EQ(xioctl(as, PVAS_IOC_ATTACH, &a), -EINVAL);
	a.flags = 0;
	a.reserved[0] = 1;
	CHECK_EQ(xioctl(as, PVAS_IOC_ATTACH, &a), -EINVAL);
	CHECK_EQ(xioctl(as, PVAS_IOC_ATTACH, NULL), -EFAULT);
	CHECK_EQ(xioctl(as, PVAS_IOC_RELEASE, (void *)-4096L), -EFAULT);
	CHECK_EQ(xioctl(as, 0xC5FF, &a), -ENOTTY);
	CHECK_EQ(as_info(as, 5, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_FREE);
	close(as);
}

struct kid {
	int as;
	uint32_t pvid;
	volatile long rc;
	volatile int step; /* 1: child did its part; 2: parent says go on */
};

static void kid_wait(volatile int *step, int want)
{
	while (__atomic_load_n(step, __ATOMIC_ACQUIRE) < want)
		rsys(24 /* sched_yield */, 0, 0, 0);
}

static int kid_attach_then_release(void *p)
{
	struct kid *k = p;
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = k->pvid };
	struct pvas_release r = { .version = PVAS_ABI_VERSION, .size = sizeof(r) };

	k->rc = rsys(16 /* ioctl */, k->as, PVAS_IOC_ATTACH, (long)&a);
	__atomic_store_n(&k->step, 1, __ATOMIC_RELEASE);
	kid_wait(&k->step, 2);
	r.pvid = k->pvid; /* the parent changed it meanwhile */
	k->rc = rsys(16, k->as, PVAS_IOC_RELEASE, (long)&r);
	__atomic_store_n(&k->step, 3, __ATOMIC_RELEASE);
	kid_wait(&k->step, 4);
	return 0;
}

void test_attach_other_task(void)
{
	int as = as_new(), pid;
	struct kid k = { .as = as, .pvid = 2 };
	struct pvas_info in;

	CHECK_EQ(as_attach(as, 1), 0);
	pid = vm_child(kid_attach_then_release, &k, 0);
	kid_wait(&k.step, 1);
	CHECK_EQ(k.rc, 0);
	/* The partition is the child's: busy for us, not ours to release. */
	CHECK_EQ(as_attach(as, 2), -EBUSY);
	CHECK_EQ(as_release(as, 2), -EPERM);
	CHECK_EQ(as_info(as, 2, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	CHECK_EQ(in.owner, pid);
	CHECK_EQ(in.flags & PVAS_INFO_MINE, 0);
	k.pvid = 1; /* the child may not release ours either */
	__atomic_store_n(&k.step, 2, __ATOMIC_RELEASE);
	kid_wait(&k.step, 3);
	CHECK_EQ(k.rc, -EPERM);
	__atomic_store_n(&k.step, 4, __ATOMIC_RELEASE);
	CHECK_EQ(wait_exit(pid), 0);
	/* The child exited: its claim went with it. */
	CHECK_EQ(as_info(as, 2, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_FREE);
	CHECK_EQ(as_attach(as, 2), 0);
	close(as);
}

void test_exdev_other_mm(void)
{
	int as = as_new(), pid;
	struct pvas_info in;

	CHECK_EQ(as_attach(as, 0), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* Same object, different mm (fork copies it): refused. */
		if (as_attach(as, 1) != -EXDEV || as_release(as, 0) != -EXDEV ||
		    as_info(as, 0, &in) != -EXDEV ||
		    as_load(as, 0, "/t/hello_spie", NULL, NULL, NULL) != -EXDEV)
			_exit(1);
		_exit(0);
	}
	CHECK_EQ(wait_exit(pid), 0);
	/* The child's exit (and its descriptor going away) left our claim alone. */
	CHECK_EQ(as_info(as, 0, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	CHECK(in.flags & PVAS_INFO_MINE);
	close(as);
}

static int kid_attach_close(void *p)
{
	struct kid *k = p;
	struct pvas_attach a = { .version = PVAS_ABI_VERSION, .size = sizeof(a), .pvid = k->pvid };

	k->rc = rsys(16, k->as, PVAS_IOC_ATTACH, (long)&a);
	__atomic_store_n(&k->step, 1, __ATOMIC_RELEASE);
	kid_wait(&k->step, 2);
	rsys(3 /* close */, k->as, 0, 0);
	__atomic_store_n(&k->step, 3, __ATOMIC_RELEASE);
	kid_wait(&k->step, 4);
	return 0;
}

void test_release_on_close(void)
{
	int as = as_new(), pid;
	struct kid k = { .as = as, .pvid = 4 };
	struct pvas_info in;

	/* The child has its own fd table (no CLONE_FILES): closing is its own. */
	pid = vm_child(kid_attach_close, &k, 0);
	kid_wait(&k.step, 1);
	CHECK_EQ(k.rc, 0);
	CHECK_EQ(as_info(as, 4, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	__atomic_store_n(&k.step, 2, __ATOMIC_RELEASE);
	kid_wait(&k.step, 3);
	/* Its last descriptor is closed while it still runs: claim dropped. */
	CHECK_EQ(as_info(as, 4, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_FREE);
	__atomic_store_n(&k.step, 4, __ATOMIC_RELEASE);
	CHECK_EQ(wait_exit(pid), 0);
	close(as);
}

void test_dup_keeps_claim(void)
{
	int as = as_new(), as2;
	struct pvas_info in;

	CHECK_EQ(as_attach(as, 6), 0);
	as2 = dup(as);
	CHECK(as2 >= 0);
	close(as);
	CHECK_EQ(as_info(as2, 6, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	CHECK(in.flags & PVAS_INFO_MINE);
	as = dup(as2);
	close(as2);
	CHECK_EQ(as_info(as, 6, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	close(as);
}

void test_info(void)
{
	int as = as_new();
	struct pvas_info in;

	CHECK_EQ(as_info(as, 7, &in), 0);
	CHECK_EQ(in.base, T_BASE);
	CHECK_EQ(in.part_size, T_PART);
	CHECK_EQ(in.count, T_COUNT);
	CHECK_EQ(in.start, T_BASE + 7 * T_PART);
	CHECK_EQ(in.state, PVAS_PART_FREE);
	CHECK_EQ(in.owner, 0);
	CHECK_EQ(as_attach(as, 7), 0);
	CHECK_EQ(as_info(as, 7, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	CHECK_EQ(in.owner, getpid());
	CHECK_EQ(in.flags, PVAS_INFO_MINE);
	CHECK_EQ(in.owned, 1);
	CHECK_EQ(as_info(as, T_COUNT, &in), -EINVAL);
	memset(&in, 0, sizeof(in));
	in.version = PVAS_ABI_VERSION;
	in.size = sizeof(in) + 1;
	CHECK_EQ(xioctl(as, PVAS_IOC_INFO, &in), -EINVAL);
	close(as);
}
