/* SPDX-License-Identifier: MIT */
/*
 * Guests that check themselves (sigs.c, ident.c): each check prints "NAME: ok" or "NAME: FAIL
 * why", flushed at once, so that the drivers count lines whatever the buffering and however a
 * ULP ends.
 */
#ifndef ULP_TESTS_SELFCHECK_H
#define ULP_TESTS_SELFCHECK_H

#include <stdio.h>

#define CHECK(name, cond, ...)                                                                     \
	do {                                                                                       \
		if (cond)                                                                          \
			printf("%s: ok\n", name);                                                  \
		else {                                                                             \
			printf("%s: FAIL ", name);                                                 \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

#endif
