/* SPDX-License-Identifier: MIT */
/*
 * The syscall dispatch table: the one place that says which syscalls a ULP has emulated, and by
 * which handler (syscall.h says how to add one). trap.c builds the seccomp filter's trapped set
 * from it and dispatches through it.
 */
#include "syscall.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/* Calls on descriptors that run natively unless one of their descriptor arguments (the second
 * column: bit i, argument i) is 0-2, which may be a ULP's own (stdfds.c): the dispatch table's
 * entry, the descriptor arguments and the filter's rule are made from this one list. */
// clang-format off
#define STD_CALLS(X) \
	X(SYS_fstat, 1) X(SYS_newfstatat, 1) X(SYS_statx, 1) X(SYS_lseek, 1) \
	X(SYS_fsync, 1) X(SYS_fdatasync, 1) X(SYS_ftruncate, 1) \
	X(SYS_getdents64, 1) X(SYS_fchmod, 1) X(SYS_fchown, 1) X(SYS_fstatfs, 1) \
	X(SYS_fadvise64, 1) X(SYS_fallocate, 1) X(SYS_sync_file_range, 1) X(SYS_preadv2, 1) \
	X(SYS_pwritev2, 1) X(SYS_sendfile, 3) X(SYS_splice, 1 | 1 << 2) X(SYS_tee, 3) \
	X(SYS_vmsplice, 1) X(SYS_copy_file_range, 1 | 1 << 2) X(SYS_epoll_ctl, 1 << 2)
#define STD_HANDLER(nr, fds) [nr] = ulp_sys_std_call,
#define STD_FDS(nr, fds) [nr] = (fds),
#define STD_TRAP(nr, fds) {nr, 0, {0}, 1},
// clang-format on

const ulp_sys_fn ulp_sys_table[ULP_SYS_NR_MAX] = {
    /* memory: sys_mem.c */
    [SYS_brk] = ulp_sys_brk,
    [SYS_mmap] = ulp_sys_mmap,
    [SYS_munmap] = ulp_sys_munmap,
    [SYS_mremap] = ulp_sys_mremap,
    [SYS_mprotect] = ulp_sys_mprotect,
    [SYS_madvise] = ulp_sys_madvise,
    /* process: sys_proc.c */
    [SYS_exit_group] = ulp_sys_exit,
    [SYS_kill] = ulp_sys_kill,
    [SYS_tkill] = ulp_sys_kill,
    [SYS_tgkill] = ulp_sys_kill,
    [SYS_sched_yield] = ulp_sys_sched_yield,
    [SYS_seccomp] = ulp_sys_seccomp,
    [SYS_prctl] = ulp_sys_prctl,
    [SYS_getrusage] = ulp_sys_getrusage,
    [SYS_times] = ulp_sys_times,
    [SYS_clock_gettime] = ulp_sys_clock_gettime,
    [SYS_readlinkat] = ulp_sys_readlink,
    [SYS_getpid] = ulp_sys_getpid,
    [SYS_getppid] = ulp_sys_getppid,
    [SYS_getpriority] = ulp_sys_priority,
    [SYS_setpriority] = ulp_sys_priority,
    [SYS_ioprio_get] = ulp_sys_priority,
    [SYS_ioprio_set] = ulp_sys_priority,
    /* fcntl: record locks (sys_lock.c), F_DUPFD (fds.c, below); trapped for those only
     * (ulp_sys_arg_traps) */
    [SYS_fcntl] = ulp_sys_fcntl,
    /* flock's waits (LOCK_SH, LOCK_EX without LOCK_NB) park: sys_lock.c */
    [SYS_flock] = ulp_sys_flock,
    /* SysV and POSIX message queues and semaphores: their waits park (sys_ipc.c) */
    [SYS_msgsnd] = ulp_sys_ipc_wait,
    [SYS_msgrcv] = ulp_sys_ipc_wait,
    [SYS_semop] = ulp_sys_ipc_wait,
    [SYS_semtimedop] = ulp_sys_ipc_wait,
    [SYS_mq_timedsend] = ulp_sys_ipc_wait,
    [SYS_mq_timedreceive] = ulp_sys_ipc_wait,
    /* credentials: sys_cred.c */
    [SYS_setuid] = ulp_sys_cred,
    [SYS_setgid] = ulp_sys_cred,
    [SYS_setreuid] = ulp_sys_cred,
    [SYS_setregid] = ulp_sys_cred,
    [SYS_setresuid] = ulp_sys_cred,
    [SYS_setresgid] = ulp_sys_cred,
    [SYS_setfsuid] = ulp_sys_cred,
    [SYS_setfsgid] = ulp_sys_cred,
    [SYS_setgroups] = ulp_sys_cred,
    [SYS_capset] = ulp_sys_cred,
    [SYS_ptrace] = ulp_sys_ptrace,
    [SYS_unshare] = ulp_sys_cred,
    [SYS_setns] = ulp_sys_cred,
    [SYS_personality] = ulp_sys_cred,
    [SYS_landlock_restrict_self] = ulp_sys_cred,
    /* resource limits: sys_rlimit.c */
    [SYS_getrlimit] = ulp_sys_rlimit,
    [SYS_setrlimit] = ulp_sys_rlimit,
    [SYS_prlimit64] = ulp_sys_rlimit,
    [SYS_sched_setscheduler] = ulp_sys_sched_policy,
    [SYS_sched_getscheduler] = ulp_sys_sched_policy,
    [SYS_sched_setparam] = ulp_sys_sched_policy,
    [SYS_sched_getparam] = ulp_sys_sched_policy,
    [SYS_sched_setattr] = ulp_sys_sched_policy,
    [SYS_sched_getattr] = ulp_sys_sched_policy,
    [SYS_chdir] = ulp_sys_chdir,
    [SYS_fchdir] = ulp_sys_chdir,
    [SYS_umask] = ulp_sys_umask,
    [SYS_chroot] = ulp_sys_chroot,
    [SYS_execve] = ulp_sys_execve,
    [SYS_execveat] = ulp_sys_execve,
    [SYS_wait4] = ulp_sys_wait4,
    [SYS_waitid] = ulp_sys_waitid,
    /* process groups and sessions: sys_pgrp.c; ioctl: the terminal's foreground group
     * (TIOCSPGRP, TIOCGPGRP on any descriptor), else as the STD_CALLS below */
    [SYS_ioctl] = ulp_sys_ioctl,
    [SYS_setpgid] = ulp_sys_setpgid,
    [SYS_getpgid] = ulp_sys_getpgid,
    [SYS_setsid] = ulp_sys_setsid,
    [SYS_getsid] = ulp_sys_getsid,
    /* signals: sys_signal.c */
    [SYS_rt_sigaction] = ulp_sys_rt_sigaction,
    [SYS_rt_sigprocmask] = ulp_sys_rt_sigprocmask,
    [SYS_sigaltstack] = ulp_sys_sigaltstack,
    [SYS_rt_sigpending] = ulp_sys_rt_sigpending,
    [SYS_rt_sigsuspend] = ulp_sys_rt_sigsuspend,
    [SYS_rt_sigtimedwait] = ulp_sys_rt_sigtimedwait,
    [SYS_rt_sigqueueinfo] = ulp_sys_rt_sigqueueinfo,
    [SYS_rt_tgsigqueueinfo] = ulp_sys_rt_tgsigqueueinfo,
    [SYS_setitimer] = ulp_sys_setitimer,
    [SYS_getitimer] = ulp_sys_getitimer,
    [SYS_timer_create] = ulp_sys_timer_create,
    [SYS_timer_delete] = ulp_sys_timer_delete,
    /* threads: sys_thread.c */
    [SYS_clone] = ulp_sys_clone,
    [SYS_clone3] = ulp_sys_clone3,
    [SYS_set_tid_address] = ulp_sys_set_tid_address,
    [SYS_rseq] = ulp_sys_rseq,
    [SYS_exit] = ulp_sys_exit_thread,
    [SYS_gettid] = ulp_sys_gettid,
    [SYS_set_robust_list] = ulp_sys_set_robust_list,
    [SYS_get_robust_list] = ulp_sys_get_robust_list,
    [SYS_sched_getaffinity] = ulp_sys_sched_getaffinity,
    [SYS_sched_setaffinity] = ulp_sys_sched_setaffinity,
    [SYS_futex] = ulp_sys_futex,
    /* I/O: sys_io.c */
    [SYS_close] = ulp_sys_close,
    [SYS_close_range] = ulp_sys_close_range,
    [SYS_dup3] = ulp_sys_dup2,
    [SYS_read] = ulp_sys_read,
    [SYS_write] = ulp_sys_io_block,
    [SYS_readv] = ulp_sys_io_block,
    [SYS_writev] = ulp_sys_io_block,
    [SYS_pread64] = ulp_sys_io_block,
    [SYS_pwrite64] = ulp_sys_io_block,
    [SYS_preadv] = ulp_sys_io_block,
    [SYS_pwritev] = ulp_sys_io_block,
    [SYS_recvfrom] = ulp_sys_io_block,
    [SYS_sendto] = ulp_sys_io_block,
    [SYS_recvmsg] = ulp_sys_io_block,
    [SYS_sendmsg] = ulp_sys_io_block,
    [SYS_accept4] = ulp_sys_io_block,
    [SYS_connect] = ulp_sys_io_block,
    [SYS_ppoll] = ulp_sys_masked_wait,
    [SYS_pselect6] = ulp_sys_masked_wait,
    [SYS_epoll_pwait] = ulp_sys_masked_wait,
    [SYS_epoll_pwait2] = ulp_sys_masked_wait,
    [SYS_nanosleep] = ulp_sys_io_block,
    [SYS_clock_nanosleep] = ulp_sys_io_block,
    [SYS_openat] = ulp_sys_io_block,
    [SYS_recvmmsg] = ulp_sys_io_block,
    /* calls that make descriptors, recorded as the caller's (fds.c); fcntl F_DUPFD: ulp_sys_fcntl
     * passes it on here (ulp_sys_arg_traps). Every call of the kernel's table (6.18) that returns
     * new descriptors is here, in ULP_ARCH_SYS_TABLE, or above (open, openat, accept4, recvmsg,
     * dup3, which record in their handlers); docs/syscalls.md lists those that are not. */
    [SYS_openat2] = ulp_sys_fd_new,
    [SYS_open_by_handle_at] = ulp_sys_fd_new,
    [SYS_socket] = ulp_sys_fd_new,
    [SYS_dup] = ulp_sys_fd_new,
    [SYS_epoll_create1] = ulp_sys_fd_new,
    [SYS_eventfd2] = ulp_sys_fd_new,
    [SYS_timerfd_create] = ulp_sys_fd_new,
    [SYS_signalfd4] = ulp_sys_signalfd,
    [SYS_inotify_init1] = ulp_sys_fd_new,
    [SYS_fanotify_init] = ulp_sys_fd_new,
    [SYS_memfd_create] = ulp_sys_fd_new,
    [SYS_memfd_secret] = ulp_sys_fd_new,
    [SYS_pidfd_open] = ulp_sys_fd_new,
    [SYS_pidfd_getfd] = ulp_sys_fd_new,
    [SYS_userfaultfd] = ulp_sys_fd_new,
    [SYS_io_uring_setup] = ulp_sys_fd_new,
    [SYS_perf_event_open] = ulp_sys_fd_new,
    [SYS_bpf] = ulp_sys_fd_new,
    [SYS_mq_open] = ulp_sys_fd_new,
    [SYS_open_tree] = ulp_sys_fd_new,
    [SYS_fsopen] = ulp_sys_fd_new,
    [SYS_fspick] = ulp_sys_fd_new,
    [SYS_fsmount] = ulp_sys_fd_new,
    [SYS_landlock_create_ruleset] = ulp_sys_fd_new,
    [SYS_pipe2] = ulp_sys_fd_pair,
    [SYS_socketpair] = ulp_sys_fd_pair,
    /* calls on descriptors that a ULP may have made its own when they are 0-2 (stdfds.c):
     * trapped only then (ulp_sys_arg_traps) */
    STD_CALLS(STD_HANDLER)
    /* calls only this architecture has: libulp/arch/<arch>/sys_arch.{h,c} */
    ULP_ARCH_SYS_TABLE,
};

/* The descriptor arguments of the trapped calls (syscall.h). */
const uint8_t ulp_sys_fd_args[ULP_SYS_NR_MAX] = {
    [SYS_read] = 1,
    [SYS_write] = 1,
    [SYS_readv] = 1,
    [SYS_writev] = 1,
    [SYS_pread64] = 1,
    [SYS_pwrite64] = 1,
    [SYS_preadv] = 1,
    [SYS_pwritev] = 1,
    [SYS_recvfrom] = 1,
    [SYS_sendto] = 1,
    [SYS_recvmsg] = 1,
    [SYS_sendmsg] = 1,
    [SYS_recvmmsg] = 1,
    [SYS_accept4] = 1,
    [SYS_connect] = 1,
    [SYS_epoll_pwait] = 1,
    [SYS_epoll_pwait2] = 1,
    [SYS_openat] = 1,
    [SYS_openat2] = 1,
    [SYS_open_by_handle_at] = 1,
    [SYS_readlinkat] = 1,
    [SYS_execveat] = 1,
    [SYS_fchdir] = 1,
    [SYS_dup] = 1,
    [SYS_fcntl] = 1,
    [SYS_flock] = 1,
    [SYS_mq_timedsend] = 1,
    [SYS_mq_timedreceive] = 1,
    [SYS_ioctl] = 1,
    [SYS_mmap] = 1 << 4,
    STD_CALLS(STD_FDS) ULP_ARCH_SYS_FD_ARGS,
};

/* fcntl makes a descriptor only as F_DUPFD and F_DUPFD_CLOEXEC, and takes a record lock, the
 * ULP's own (sys_lock.c), as F_SETLK, F_SETLKW, F_GETLK: its other commands (F_GETFL, F_SETFL,
 * which UCX and libc call often) stay native, without a trap, but on 0-2, which may be the ULP's
 * own (stdfds.c); so do the calls on descriptors of STD_CALLS. */
const struct ulp_sys_arg_trap ulp_sys_arg_traps[] = {
    {SYS_fcntl, 5, {F_DUPFD, F_DUPFD_CLOEXEC, F_SETLK, F_SETLKW, F_GETLK}, 1},
    {SYS_ioctl, 2, {TIOCSPGRP, TIOCGPGRP}, 1},
    {SYS_flock, 2, {LOCK_SH, LOCK_EX}, 1},
    STD_CALLS(STD_TRAP)};
const unsigned ulp_sys_n_arg_traps = sizeof(ulp_sys_arg_traps) / sizeof(ulp_sys_arg_traps[0]);
