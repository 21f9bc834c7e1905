/* SPDX-License-Identifier: MIT */
/*
 * Guest of the memory benchmark (bench/ulp_mem.c): a static-pie hello world that stays alive.
 *
 *   ulp_guest_idle STOP_FD READY_FD
 *
 * Prints its greeting (through stdio, so the buffers a real program has are there), writes one
 * byte to READY_FD, then reads STOP_FD until end of file and exits 0. As a process the read
 * blocks. As a ULP it must not (it would block its worker): the benchmark makes STOP_FD
 * non-blocking, and the guest yields to the other ULPs while there is nothing to read. The code
 * is the same either way, so the two measure the same program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pvas.h"

int main(int argc, char **argv)
{
	int stop = argc == 3 ? atoi(argv[1]) : -1, ready = argc == 3 ? atoi(argv[2]) : -1;
	char c = 1;
	ssize_t n;

	if (stop < 0 || ready < 0) {
		fprintf(stderr, "usage: ulp_guest_idle STOP_FD READY_FD\n");
		return 2;
	}
	printf("hello, world\n");
	fflush(stdout);
	if (write(ready, &c, 1) != 1)
		return 1;
	for (;;) {
		n = read(stop, &c, 1);
		if (n == 0)
			return 0;
		if (n < 0 && errno == EAGAIN)
			pvas_yield();
		else if (n < 0 && errno != EINTR)
			return 1;
	}
}
