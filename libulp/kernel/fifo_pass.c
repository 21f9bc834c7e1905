/* SPDX-License-Identifier: MIT */
/*
 * A FIFO's (or a pipe's) bytes passed from a writing ULP to a reading ULP of the same task without
 * the kernel.
 *
 * Two ULPs (or threads of one) of a task that talk through a FIFO or a pipe share the address
 * space: when the reader waits in its turn (io_calls.c: a blocking read that found nothing, or
 * whose last one was answered in a turn, lets the worker's ready ULPs run before it tries again,
 * or before it parks) it offers its buffer here, and a writer of the same pipe (the same inode:
 * one pipe while both ends are open) copies its bytes into that buffer and ends both calls,
 * where the kernel would take two system calls and a poll. The write stays what a process
 * sees only if no byte is waiting in the pipe before it (FIONREAD says 0, asked while the writer
 * holds the reader's offer, so the read stays under way: else the reader must get those bytes
 * first), so the pass happens at that instant: the pipe is empty and the reader's read is under
 * way, and the kernel could give the reader this write's bytes then. Bytes another
 * writer puts in the pipe afterwards come after them, as in the kernel. Conditions, each
 * checked: the write is one buffer of at most PIPE_BUF bytes (atomic in the kernel too) and the
 * read one buffer that holds them all (the read returns them all at once, as it would from the
 * pipe); the writer's descriptor is open for writing (its access mode, asked once per
 * descriptor); not in a fork child (whose copy of the offers is nobody's). What a process would
 * see and a pass does not do: the FIFO's modification and access times are not updated, and
 * nothing polling the FIFO sees it readable in between (the bytes are read at once).
 *
 * A fault on either buffer during the copy (a program's bad pointer) ends the pass with nothing
 * passed (the copy's fault is caught: ulp_fifo_copy_fault, from the fault handler); the writer
 * then writes as usual and the reader reads as usual, and the kernel says EFAULT to whoever's
 * buffer it was (the reader's buffer may hold some of the bytes meanwhile).
 *
 * What each descriptor is (a FIFO: device and inode, access mode) is learnt once, by fstat and
 * fcntl, and kept by number with the descriptor table's word (fds.c), whose owner and
 * generation change with every record and forget of the number, which also wipes what was
 * learnt (ulp_fifo_forget): a new file there is learnt anew.
 */
#include "io.h"
#include "plock.h"
#include "syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define PASS_FDS 1024 /* descriptors whose identity is kept (others: no pass) */
#define PASS_SLOTS 64 /* offers open at once in a task */

enum { ID_OTHER = 1, ID_FIFO_R, ID_FIFO_W }; /* what a descriptor is (ID_FIFO_W: writable) */
enum { OFF_FREE, OFF_SETUP, OFF_OPEN, OFF_TAKEN, OFF_DONE };

struct pass_id {
	_Atomic uint32_t word; /* the word (ULP_FD_WORD_ID bits) it was learnt for; 0: none */
	_Atomic uint32_t kind;
	_Atomic uint64_t dev, ino;
};

struct ulp_fifo_offer {
	_Atomic int state;
	uint64_t dev, ino; /* the reader's FIFO */
	void *buf;
	size_t len;
	long got; /* OFF_DONE: the read's result; -EAGAIN: nothing passed */
};

struct ulp_fifo_pass {
	_Atomic int open; /* offers made and not withdrawn: a writer looks only when some are */
	struct ulp_fifo_offer offer[PASS_SLOTS];
	struct pass_id id[PASS_FDS];
};

static long sys(long nr, long a, long b, long c)
{
	return ulp_arch_syscall(nr, a, b, c, 0, 0, 0);
}

/* The task's offers and identities; mapped at the first offer (create). */
static struct ulp_fifo_pass *pass_table(int create)
{
	struct ulp_fd_table *t = ulp_io_fd_table();
	struct ulp_fifo_pass *p, *none = NULL;

	if (!t || ulp_sys_in_child())
		return NULL;
	p = atomic_load_explicit(&t->pass, memory_order_acquire);
	if (p || !create)
		return p;
	p = ulp_raw_mmap(sizeof(*p), MAP_NORESERVE);
	if (!p)
		return NULL;
	if (!atomic_compare_exchange_strong(&t->pass, &none, p)) { /* another worker's first */
		ulp_raw_munmap(p, sizeof(*p));
		p = none;
	}
	return p;
}

/* What fd (whose table word is word) is: ID_*, and for a FIFO its device and inode. Learnt at
 * the first ask (fstat, and fcntl for a FIFO), kept as a seqlock: the word is 0 while the entry
 * is written. 0: not known (no word, a number past the table). */
static unsigned identify(struct ulp_fifo_pass *p, int fd, uint32_t word, uint64_t *dev,
			 uint64_t *ino)
{
	struct pass_id *e;
	struct stat st;
	uint32_t w = word & ULP_FD_WORD_ID, kind;
	long fl;

	if (!w || fd < 0 || fd >= PASS_FDS)
		return 0;
	e = &p->id[fd];
	if (atomic_load_explicit(&e->word, memory_order_acquire) == w) {
		kind = atomic_load_explicit(&e->kind, memory_order_relaxed);
		*dev = atomic_load_explicit(&e->dev, memory_order_relaxed);
		*ino = atomic_load_explicit(&e->ino, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&e->word, memory_order_relaxed) == w)
			return kind;
	}
	if (sys(SYS_fstat, fd, (long)&st, 0) != 0)
		return 0;
	kind = ID_OTHER;
	if (S_ISFIFO(st.st_mode)) {
		fl = sys(SYS_fcntl, fd, F_GETFL, 0);
		if (fl < 0)
			return 0;
		kind = (fl & O_ACCMODE) == O_RDONLY ? ID_FIFO_R : ID_FIFO_W;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	atomic_store_explicit(&e->word, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&e->kind, kind, memory_order_relaxed);
	atomic_store_explicit(&e->dev, *dev, memory_order_relaxed);
	atomic_store_explicit(&e->ino, *ino, memory_order_relaxed);
	atomic_store_explicit(&e->word, w, memory_order_release);
	return kind;
}

void ulp_fifo_forget(int fd)
{
	struct ulp_fd_table *t = ulp_io_fd_table();
	struct ulp_fifo_pass *p = t ? atomic_load_explicit(&t->pass, memory_order_acquire) : NULL;

	if (p && fd >= 0 && fd < PASS_FDS)
		atomic_store_explicit(&p->id[fd].word, 0, memory_order_release);
}

/*
 * The copy of a pass: rep movsb, whose fault the fault handler turns into a return of -EFAULT
 * (ulp_fifo_copy_fault). 0: copied.
 */
long ulp_fifo_copy(void *dst, const void *src, size_t n);
__asm__(".text\n"
	".globl ulp_fifo_copy\n"
	".type ulp_fifo_copy, @function\n"
	"ulp_fifo_copy:\n"
	"	mov %rdx, %rcx\n"
	".globl ulp_fifo_copy_insn\n"
	"ulp_fifo_copy_insn:\n"
	"	rep movsb\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".globl ulp_fifo_copy_fixup\n"
	"ulp_fifo_copy_fixup:\n"
	"	mov $-14, %rax\n"
	"	ret\n"
	".size ulp_fifo_copy, .-ulp_fifo_copy\n");
extern const char ulp_fifo_copy_insn[], ulp_fifo_copy_fixup[];

int ulp_fifo_copy_fault(void *uc)
{
	if (ulp_arch_trap_pc(uc) != (uintptr_t)ulp_fifo_copy_insn)
		return 0;
	ulp_arch_trap_set_pc(uc, (uintptr_t)ulp_fifo_copy_fixup);
	return 1;
}

/* Offer o moved from state `from` to `to`, if it was in `from` (looked at first: no locked
 * instruction on a slot in another state). */
static int claim(struct ulp_fifo_offer *o, int from, int to)
{
	int s = from;

	return atomic_load_explicit(&o->state, memory_order_relaxed) == from &&
	       atomic_compare_exchange_strong(&o->state, &s, to);
}

struct ulp_fifo_offer *ulp_fifo_offer(int fd, uint32_t word, void *buf, size_t len)
{
	struct ulp_fifo_pass *p;
	struct ulp_fifo_offer *o;
	uint64_t dev, ino;
	int i;

	if (!len || !(p = pass_table(1)) || identify(p, fd, word, &dev, &ino) != ID_FIFO_R)
		return NULL;
	for (i = 0; i < PASS_SLOTS; i++) {
		o = &p->offer[i];
		if (!claim(o, OFF_FREE, OFF_SETUP))
			continue;
		o->dev = dev;
		o->ino = ino;
		o->buf = buf;
		o->len = len;
		o->got = -EAGAIN;
		atomic_fetch_add(&p->open, 1);
		atomic_store_explicit(&o->state, OFF_OPEN, memory_order_release);
		return o;
	}
	return NULL;
}

long ulp_fifo_withdraw(struct ulp_fifo_offer *o)
{
	struct ulp_fifo_pass *p = pass_table(0);
	unsigned spins = 0;
	long r;
	int s;

	for (;;) {
		s = OFF_OPEN;
		if (atomic_compare_exchange_strong(&o->state, &s, OFF_SETUP)) {
			r = -EAGAIN;
			break;
		}
		if (s == OFF_DONE) {
			r = o->got;
			break;
		}
		/* taken: a writer looks at the pipe or copies (runtime code, never preempted by
		 * the tick; its thread may have lost its CPU to the kernel) */
		ulp_spin_or_yield(&spins);
	}
	if (p)
		atomic_fetch_sub(&p->open, 1);
	atomic_store_explicit(&o->state, OFF_FREE, memory_order_release);
	return r;
}

long ulp_fifo_give(int fd, uint32_t word, const void *buf, size_t n)
{
	struct ulp_fifo_pass *p;
	struct ulp_fifo_offer *o;
	uint64_t dev, ino;
	int i, avail;

	if (!n || n > PIPE_BUF || !(p = pass_table(0)) ||
	    !atomic_load_explicit(&p->open, memory_order_acquire) ||
	    identify(p, fd, word, &dev, &ino) != ID_FIFO_W)
		return -EAGAIN;
	for (i = 0; i < PASS_SLOTS; i++) {
		o = &p->offer[i];
		if (!claim(o, OFF_OPEN, OFF_TAKEN))
			continue;
		/* Claimed: the reader waits until it is given back or done. Another FIFO's, or
		 * too small a buffer: given back. */
		if (o->dev != dev || o->ino != ino || o->len < n) {
			atomic_store_explicit(&o->state, OFF_OPEN, memory_order_release);
			continue;
		}
		/* Bytes waiting in the pipe go to the reader first: no pass then. Asked while the
		 * reader's read is held under way, so the pass is the instant of this answer. */
		if (sys(SYS_ioctl, fd, FIONREAD, (long)&avail) != 0 || avail != 0) {
			atomic_store_explicit(&o->state, OFF_OPEN, memory_order_release);
			return -EAGAIN;
		}
		if (ulp_fifo_copy(o->buf, buf, n) != 0) {
			atomic_store_explicit(&o->state, OFF_DONE, memory_order_release);
			return -EAGAIN; /* a bad buffer: both calls as usual, the kernel's EFAULT */
		}
		o->got = (long)n;
		atomic_store_explicit(&o->state, OFF_DONE, memory_order_release);
		return (long)n;
	}
	return -EAGAIN;
}
