/* SPDX-License-Identifier: MIT */
/*
 * A ULP that aims every range syscall outside its own partition: above it (another ULP's
 * partition), below it, at the launcher's code and heap, at its own control block, and with
 * lengths that wrap around. Each must fail with the kernel's errno for an unmapped range and
 * change nothing; the same calls on its own memory must still work. Prints "ok NAME" or
 * "FAIL NAME", then "bad ranges refused" when all passed.
 * Usage (as a ULP): bad_range PARTITION_SIZE_IN_BYTES
 */
#define _GNU_SOURCE /* mremap */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvas.h"
#include "uapi/pvas_cb.h"

#define ARCH_GET_FS 0x1003

static int failed;

static void check(const char *name, long r, long want_r, int want_errno)
{
	int e = errno;

	if (r == want_r && (!want_errno || e == want_errno)) {
		printf("ok %s\n", name);
	} else {
		printf("FAIL %s: returned %ld errno %d (%s), want %ld errno %d\n", name, r,
		       r == want_r ? 0 : e, strerror(e), want_r, want_errno);
		failed = 1;
	}
	errno = 0;
}

/* The first mapping of /proc/self/maps whose line contains `what` and `perm`. */
static int find_map(const char *what, const char *perm, uintptr_t *lo, uintptr_t *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char p[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, p) == 3 && strstr(line, what) &&
		    !strcmp(p, perm)) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	uintptr_t part = (uintptr_t)getauxval(PVAS_AT_CB);
	uintptr_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
	uintptr_t above, below, text_lo, text_hi, heap_lo, heap_hi, fs;
	long pg = sysconf(_SC_PAGESIZE);
	char *own;

	if (!part || !size) {
		printf("FAIL setup: not a ULP (cb %#lx) or no partition size given\n",
		       (unsigned long)part);
		return 2;
	}
	above = part + size + (1ul << 30); /* inside the next partition */
	below = part - (1ul << 30);	   /* inside the previous one (or below the region) */
	/* The launcher's heap; an ASan build of it has no [heap] (its allocator maps its own): its
	 * data segment then, another of its writable mappings outside every partition. */
	if (!find_map("ulpexec", "r-xp", &text_lo, &text_hi) ||
	    (!find_map("[heap]", "rw-p", &heap_lo, &heap_hi) &&
	     !find_map("ulpexec", "rw-p", &heap_lo, &heap_hi))) {
		printf("FAIL setup: the launcher's text or heap not found in /proc/self/maps\n");
		return 2;
	}

	check("mmap MAP_FIXED in the next partition",
	      (long)mmap((void *)above, pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
	      (long)MAP_FAILED, ENOMEM);
	check("mmap MAP_FIXED_NOREPLACE in the next partition",
	      (long)mmap((void *)above, pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0),
	      (long)MAP_FAILED, ENOMEM);
	check("mmap MAP_FIXED on the launcher's code",
	      (long)mmap((void *)text_lo, pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
	      (long)MAP_FAILED, ENOMEM);
	check("mmap MAP_FIXED on the own control block",
	      (long)mmap((void *)part, pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
	      (long)MAP_FAILED, ENOMEM);
	check("munmap in the next partition", munmap((void *)above, pg), -1, EINVAL);
	check("munmap in the previous partition", munmap((void *)below, pg), -1, EINVAL);
	check("munmap of the launcher's code", munmap((void *)text_lo, text_hi - text_lo), -1,
	      EINVAL);
	check("munmap from the own partition into the next",
	      munmap((void *)(part + size - pg), 2 * pg), -1, EINVAL);
	check("munmap with a length that wraps around",
	      munmap((void *)(part + size / 2), (size_t)-pg), -1, EINVAL);
	check("mprotect of the launcher's code",
	      mprotect((void *)text_lo, text_hi - text_lo, PROT_NONE), -1, ENOMEM);
	check("mprotect in the next partition", mprotect((void *)above, pg, PROT_READ), -1,
	      ENOMEM);
	check("mprotect of the own control block", mprotect((void *)part, pg, PROT_NONE), -1,
	      ENOMEM);
	check("mprotect with a length that wraps around",
	      mprotect((void *)(part + size / 2), (size_t)-pg, PROT_NONE), -1, ENOMEM);
	check("madvise MADV_DONTNEED of the launcher's heap",
	      madvise((void *)heap_lo, heap_hi - heap_lo, MADV_DONTNEED), -1, ENOMEM);
	check("madvise in the next partition", madvise((void *)above, pg, MADV_DONTNEED), -1,
	      ENOMEM);
	check("mremap of the launcher's code",
	      (long)mremap((void *)text_lo, pg, 2 * pg, MREMAP_MAYMOVE), (long)MAP_FAILED,
	      EINVAL);
	check("arch_prctl ARCH_GET_FS into the next partition",
	      syscall(SYS_arch_prctl, ARCH_GET_FS, above), -1, EFAULT);

	/* The same calls on its own memory still work. */
	own = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (own == MAP_FAILED) {
		printf("FAIL own mmap: %s\n", strerror(errno));
		return 1;
	}
	check("mremap MREMAP_FIXED into the next partition",
	      (long)mremap(own, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)above),
	      (long)MAP_FAILED, EINVAL);
	own[0] = 42;
	check("mprotect of own memory", mprotect(own, 2 * pg, PROT_READ), 0, 0);
	check("mprotect of own memory back", mprotect(own, 2 * pg, PROT_READ | PROT_WRITE), 0, 0);
	check("madvise MADV_DONTNEED of own memory", madvise(own, 2 * pg, MADV_DONTNEED), 0, 0);
	check("own memory is zero after MADV_DONTNEED", own[0], 0, 0);
	check("arch_prctl ARCH_GET_FS into own memory", syscall(SYS_arch_prctl, ARCH_GET_FS, &fs),
	      0, 0);
	check("munmap of own memory", munmap(own, 2 * pg), 0, 0);
	pvas_yield(); /* the other ULPs of the run are still there */
	if (failed)
		return 1;
	printf("bad ranges refused\n");
	return 0;
}
