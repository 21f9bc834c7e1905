/* SPDX-License-Identifier: MIT */
/* I/O syscalls of a ULP. Descriptors are per process, so shared by every ULP of a task. The calls
 * that may block are in io_calls.c (ulp_sys_io_block), parked on the task's io_uring (io_ring.c).
 */
#include "io.h"
#include "proc.h"
#include "sys.h"
#include "syscall.h"

#include <errno.h>

/* A ULP that closes stdin, stdout or stderr at exit (coreutils' close_stdout) must not close them
 * for the others: it sees them closed, they stay open. */
long ulp_sys_close(struct ulp_cb *cb, struct ulp_sys *s)
{
	long fd = s->a[0];
	long r;

	if (fd >= 0 && fd <= 2) {
		r = cb->std_closed & (1u << fd) ? -EBADF : 0;
		cb->std_closed |= 1u << fd;
		return r;
	}
	if (fd == ulp_io_fd())
		return -EBADF; /* the task's io_uring, not the program's */
	return ulp_arch_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
}
