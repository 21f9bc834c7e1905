// SPDX-License-Identifier: MIT
/*
 * Leave the VM through qemu's isa-debug-exit device (iobase 0xf4): qemu
 * exits with status (code << 1) | 1. Usage: vmexit CODE
 */
#include <stdlib.h>
#include <sys/io.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : 0;

	sync();
	if (ioperm(0xf4, 4, 1))
		return 1;
	outl((unsigned)code, 0xf4);
	return 1; /* not reached when the device is there */
}
