/* SPDX-License-Identifier: MIT */
/*
 * x86_64 part of the syscall dispatch table (libulp/kernel/syscall.h): the table's size, the calls
 * only this architecture has with their handlers, and the numbers the filter refuses outright.
 */
#ifndef ULP_ARCH_SYS_ARCH_H
#define ULP_ARCH_SYS_ARCH_H

#include <sys/syscall.h>

/* Above the highest syscall number trapped (clone3, 435). */
#define ULP_SYS_NR_MAX 448

/* x32 syscall numbers (__X32_SYSCALL_BIT): the same calls under other numbers, which would get
 * around the trap. The filter answers them with ENOSYS. */
#define ULP_ARCH_SYS_NR_FOREIGN 0x40000000u

/* Entries of ulp_sys_table for calls only x86_64 has (designated initializers). */
#define ULP_ARCH_SYS_TABLE                                                                         \
	[SYS_arch_prctl] = ulp_sys_arch_prctl, [SYS_fork] = ulp_sys_fork,                          \
	[SYS_vfork] = ulp_sys_fork, [SYS_accept] = ulp_sys_io_block,                               \
	[SYS_poll] = ulp_sys_io_block, [SYS_select] = ulp_sys_io_block,                            \
	[SYS_epoll_wait] = ulp_sys_io_block, [SYS_pause] = ulp_sys_io_block,                       \
	[SYS_open] = ulp_sys_io_block, [SYS_alarm] = ulp_sys_alarm,                                \
	[SYS_readlink] = ulp_sys_readlink, [SYS_dup2] = ulp_sys_dup2,                              \
	[SYS_creat] = ulp_sys_fd_new, [SYS_epoll_create] = ulp_sys_fd_new,                         \
	[SYS_eventfd] = ulp_sys_fd_new, [SYS_signalfd] = ulp_sys_signalfd,                         \
	[SYS_inotify_init] = ulp_sys_fd_new, [SYS_pipe] = ulp_sys_fd_pair,                         \
	[SYS_getpgrp] = ulp_sys_getpgrp, [ULP_ARCH_SYS_FAST_RETURN] = ulp_sys_fast_return

/* A number no x86_64 kernel has (335-423 are left free there): the fast path's return through
 * the trap (libulp/kernel/fastcall.c); from a program's own code it gives -ENOSYS, as the
 * kernel. */
#define ULP_ARCH_SYS_FAST_RETURN 400

/* their descriptor arguments (ulp_sys_fd_args) */
#define ULP_ARCH_SYS_FD_ARGS [SYS_accept] = 1, [SYS_epoll_wait] = 1

/* poll and select, which only some architectures have (ppoll, pselect6 elsewhere) */
#define ULP_ARCH_SYS_POLL SYS_poll
#define ULP_ARCH_SYS_SELECT SYS_select

/* readlink, which only some architectures have (readlinkat elsewhere) */
#define ULP_ARCH_SYS_READLINK SYS_readlink

/* Calls only x86_64 has whose sites may be rewritten (libulp/kernel/fastcall.c); pipe and dup2
 * make descriptors (glibc's pipe() and dup2() are these calls). */
#define ULP_ARCH_SYS_FAST                                                                          \
	SYS_poll, SYS_select, SYS_epoll_wait, SYS_pipe, SYS_dup2, SYS_open, ULP_ARCH_SYS_READLINK

/* Their handlers (sys_arch.c), declared by syscall.h. */
#define ULP_ARCH_SYS_HANDLERS ulp_sys_arch_prctl

#endif
