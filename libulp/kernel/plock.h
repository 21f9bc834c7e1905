/* SPDX-License-Identifier: MIT */
/*
 * Spin locks that the processes of one address space share: PVAS tasks, the manager, the ULPs'
 * placeholders. A process may be killed at any instruction (pvas_kill, pvas_destroy_force, a
 * placeholder's SIGKILL) while one of its threads holds such a lock; a plain spin lock is then
 * held for good and every other process that wants it spins forever. So the word holds the
 * holder's process id (0: free), and a waiter that has spun a while looks whether that process
 * has ended and, if so, takes the lock over (plock.c). Raw system calls only: PVAS tasks run
 * these without libc.
 */
#ifndef ULP_PLOCK_H
#define ULP_PLOCK_H

#include <stdatomic.h>
#include <stdint.h>

/* 1 when process pid has ended (a zombie, or reaped already); 0 while it runs, or when that
 * cannot be told (the caller asks again later). */
int ulp_pid_ended(uint32_t pid);

/* Take *l as process `self` (its getpid, > 1), or as 1: a holder never taken over (io_ring.c's
 * cq_lock, held so by the workers of the process that waits on it). Only for sections a dead holder
 * leaves nothing half-done in that the next holder reads: the guarded data is consistent after each
 * store, or is the dead process's alone. Released with ulp_spin_unlock. */
void ulp_plock_lock(uint32_t *l, uint32_t self);
/* The same for a lock held long (fork_copy.c's, across a fork's clone), taken as the calling
 * process: waiters sleep on the word (counted in *waiters) instead of spinning, which had kept a
 * CPU from the holder's work; a holder that ended is looked for at each timed-out wait (2 ms).
 * Released with ulp_plock_unlock_wake, which wakes one waiter. */
void ulp_plock_lock_sleep(uint32_t *l, _Atomic unsigned *waiters);
void ulp_plock_unlock_wake(uint32_t *l, _Atomic unsigned *waiters);

/* One round of a short spin wait for another thread (a worker, the timer thread, another
 * process's) that may share this CPU and have lost it to the kernel while it holds what the
 * spinner waits for: a spin-wait hint, and a sched_yield every 128th round (*n counts the
 * rounds, 0 at the start), else the spin lasts until the spinner's time slice ends. */
void ulp_spin_or_yield(unsigned *n);

#endif
