/* SPDX-License-Identifier: MIT */
/*
 * Test assertions. Native builds use cmocka. Cross builds (aarch64, sparc64 under qemu-user) define
 * ULP_NO_CMOCKA: Debian has no cmocka for sparc64 (a debian-ports architecture) and the cross
 * toolchains ship no libcmocka, so the handful of cmocka calls the tests use are provided here
 * with the same names and the same closing lines.
 */
#ifndef ULP_TEST_CHECK_H
#define ULP_TEST_CHECK_H

#ifndef ULP_NO_CMOCKA
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
/* ULP_TEST_FILTER=PATTERN runs only the test cases whose names match (cmocka's own filter: '*'
 * and '?' wildcards): ULP_TEST_FILTER='*barrier*' build/tests/unit/test_sync */
static inline int ulp__filter(void)
{
	const char *f = getenv("ULP_TEST_FILTER");

	if (f && *f)
		cmocka_set_test_filter(f);
	return 0;
}
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(t, setup, teardown)                                                 \
	(ulp__filter(), _cmocka_run_group_tests(#t, t, sizeof(t) / sizeof((t)[0]), setup, teardown))
#else
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define ULP__FAIL(...)                                                                             \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		exit(1);                                                                           \
	} while (0)
#define assert_true(c)                                                                             \
	do {                                                                                       \
		if (!(c))                                                                          \
			ULP__FAIL("assert_true(%s) failed", #c);                                   \
	} while (0)
#define assert_false(c) assert_true(!(c))
#define assert_int_equal(a, b)                                                                     \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_)                                                                      \
			ULP__FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);                       \
	} while (0)
#define assert_int_not_equal(a, b) assert_true((a) != (b))
#define assert_ptr_equal(a, b) assert_true((const void *)(a) == (const void *)(b))
#define assert_ptr_not_equal(a, b) assert_true((const void *)(a) != (const void *)(b))
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_null(p) assert_true((p) == NULL)
#define assert_in_range(v, lo, hi) assert_true((v) >= (lo) && (v) <= (hi))
#define assert_string_equal(a, b) assert_true(strcmp((a), (b)) == 0)
#define fail_msg(...) ULP__FAIL(__VA_ARGS__)
#define skip()                                                                                     \
	do {                                                                                       \
		printf("[  SKIPPED ] %s\n", __func__);                                             \
		return;                                                                            \
	} while (0)

struct CMUnitTest {
	const char *name;
	void (*fn)(void **state);
};
#define cmocka_unit_test(f)                                                                        \
	{                                                                                          \
#f, f                                                                              \
	}
/* Group setup and teardown run once around the tests, and the state setup leaves is handed to
 * each test, as cmocka does. */
static inline int ulp__run_tests(const char *group, const struct CMUnitTest *t, size_t n,
				 int (*setup)(void **state), int (*teardown)(void **state))
{
	void *group_state = NULL;
	size_t i;

	printf("[==========] %s: Running %zu test(s).\n", group, n);
	if (setup && setup(&group_state) != 0) {
		printf("[  ERROR   ] %s: group setup failed\n", group);
		return 1;
	}
	for (i = 0; i < n; i++) {
		void *state = group_state;
		const char *f = getenv("ULP_TEST_FILTER");

		if (f && *f && fnmatch(f, t[i].name, 0) != 0)
			continue; /* as cmocka_set_test_filter */
		printf("[ RUN      ] %s\n", t[i].name);
		fflush(stdout);
		t[i].fn(&state); /* a failure exits the program */
		printf("[       OK ] %s\n", t[i].name);
	}
	if (teardown && teardown(&group_state) != 0) {
		printf("[  ERROR   ] %s: group teardown failed\n", group);
		return 1;
	}
	printf("[==========] %s: %zu test(s) run.\n[  PASSED  ] %zu test(s).\n", group, n, n);
	return 0;
}
#define cmocka_run_group_tests(t, setup, teardown)                                                 \
	ulp__run_tests(__FILE__, t, sizeof(t) / sizeof((t)[0]), setup, teardown)
#endif
#endif
