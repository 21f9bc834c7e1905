/* SPDX-License-Identifier: MIT */
/*
 * The spawn benchmark's second guest (bench/ulp_spawn.c): a static-pie program with no C runtime
 * start-up (linked -nostartfiles), whose entry point only exits 0. Compared with ulp_guest_true,
 * which runs glibc's start-up first, it shows what creating and ending a ULP or a process costs
 * by itself.
 */
#include <unistd.h>

void _start(void);

void _start(void)
{
	_exit(0);
}
