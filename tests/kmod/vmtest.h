/* SPDX-License-Identifier: MIT */
/*
 * In-VM tests of the pvas kernel module: shared helpers. Tests run as root
 * inside the qemu guest booted by tests/kmod/run.sh; each test runs in its
 * own forked process so a failed CHECK ends only that test.
 */
#ifndef PVAS_VMTEST_H
#define PVAS_VMTEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pvas_ioctl.h"

#define T_PART	(64ULL << 20)	/* partition size used by most tests */
#define T_COUNT	8
#define T_BASE	PVAS_BASE_DEFAULT

#define CHECK(c)                                                                  \
	do {                                                                      \
		if (!(c)) {                                                       \
			fprintf(stderr, "%s:%d: CHECK(%s) failed (errno %d %s)\n", \
				__FILE__, __LINE__, #c, errno, strerror(errno));   \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

#define CHECK_EQ(a, b)                                                              \
	do {                                                                        \
		long long a_ = (long long)(a), b_ = (long long)(b);                 \
		if (a_ != b_) {                                                     \
			fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, a_, b_);                          \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

/* Raw syscall: -errno on failure, never touches errno (safe in CLONE_VM children). */
static inline long rsys(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

/* vmtest_util.c */
extern const char *t_dir; /* where the test programs are */
extern unsigned t_scale;  /* loop counts are divided by this (quick runs) */
int dev_open(void);
long xioctl(int fd, unsigned long cmd, void *arg);
int as_create(int dev, uint64_t part, uint64_t base, uint32_t count, uint32_t flags);
int as_new(void); /* /dev/pvas + default object, /dev/pvas closed again */
long as_attach(int as, uint32_t pvid);
long as_release(int as, uint32_t pvid);
long as_info(int as, uint32_t pvid, struct pvas_info *in);
long as_load(int as, uint32_t pvid, const char *path, char *const argv[], char *const envp[],
	     struct pvas_load *out);
void *reserve(uint64_t base, uint64_t len);
int listing(int *objects, int *parts);
void listing_dump(void);
/* Files of the load tests. */
char *tpath(const char *name); /* t_dir/name (4 rotating buffers) */
void *read_file(const char *path, size_t *len);
void write_file(const char *path, const void *buf, size_t len, mode_t mode);
/* The load tests' object: partition PVID claimed, the whole region reserved. */
#define PVID 2
#define START (T_BASE + PVID * T_PART)
int loader_as(void);
/* clone(CLONE_VM | flags) running fn(arg) on a fresh stack; returns the pid. */
int vm_child(int (*fn)(void *), void *arg, int flags);
int wait_exit(int pid); /* exit status, or 128 + signal */

/* Test groups. */
void test_create_invalid(void);
void test_create_cloexec(void);
void test_attach_release(void);
void test_attach_other_task(void);
void test_exdev_other_mm(void);
void test_release_on_close(void);
void test_dup_keeps_claim(void);
void test_info(void);
void test_load_static_pie(void);
void test_load_dynamic_pie(void);
void test_load_refused(void);
void test_load_bad_args(void);
void test_load_not_owned(void);
void test_load_not_reserved(void);
void test_load_unprivileged(void);
void test_reload_resets(void);
void test_elf_fuzz(void);
void test_fuzz(void);
void test_create_destroy_cycles(void);
void test_killed_task_cycles(void);
void test_attach_race(void);
void test_load_killed(void);
void test_load_release_race(void);
void test_rmmod(void);

#endif
