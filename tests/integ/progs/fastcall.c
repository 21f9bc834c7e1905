/*
 * Fast-path probe (tests/integ/fastcall.sh). Runs the same calls through sites the runtime may
 * rewrite (libc's write and sched_yield, and an asm `mov $NR,%eax; syscall` here) and through a
 * site it cannot (`mov %ecx,%eax; syscall`), and prints what it sees: the results, whether the
 * registers the kernel ABI keeps survived, whether each site is rewritten in memory, and how many
 * bytes of its own text differ from its ELF file (a program that checks its own code).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* A site the fast path may take: mov $NR,%eax right before syscall. Checks every register but
 * rax, rcx, r11 (and the flags the asm clobbers) around it, and xmm0. */
__attribute__((noinline)) static long yield_site(int *kept)
{
	long rax, bx = 0x1111, dx = 0x2222, si = 0x3333, di = 0x4444, r8 = 0x5555, r9 = 0x6666,
		  r10 = 0x7777, r12 = 0x8888, r13 = 0x9999, r14 = 0xaaaa, r15 = 0xbbbb;
	double x = 1.25;

	__asm__ volatile("mov %[bx], %%rbx\n\t"
			 "mov %[r12], %%r12\n\t"
			 "mov %[r13], %%r13\n\t"
			 "mov %[r14], %%r14\n\t"
			 "mov %[r15], %%r15\n\t"
			 "mov $24, %%eax\n\t"
			 "syscall\n\t"
			 "mov %%rbx, %[bx]\n\t"
			 "mov %%r12, %[r12]\n\t"
			 "mov %%r13, %[r13]\n\t"
			 "mov %%r14, %[r14]\n\t"
			 "mov %%r15, %[r15]\n\t"
			 : "=a"(rax), [bx] "+m"(bx), [r12] "+m"(r12), [r13] "+m"(r13),
			   [r14] "+m"(r14), [r15] "+m"(r15), "+d"(dx), "+S"(si), "+D"(di), "+x"(x)
			 :
			 : "rcx", "r11", "rbx", "r12", "r13", "r14", "r15", "r8", "r9", "r10",
			   "memory", "cc");
	(void)r8, (void)r9, (void)r10;
	*kept = bx == 0x1111 && dx == 0x2222 && si == 0x3333 && di == 0x4444 && r12 == 0x8888 &&
		r13 == 0x9999 && r14 == 0xaaaa && r15 == 0xbbbb && x == 1.25;
	return rax;
}

/* The same call through a site that is never rewritten: a nop (not replayed by a trampoline) sits
 * right before the syscall. */
__attribute__((noinline)) static long raw_write(long nr, long fd, const void *buf, long n)
{
	long ret;

	__asm__ volatile("mov %%ecx, %%eax\n\tnop\n\tsyscall"
			 : "=a"(ret)
			 : "c"(nr), "D"(fd), "S"(buf), "d"(n)
			 : "r11", "memory");
	return ret;
}

/* Whether the first syscall site of the function at f is there as built, rewritten into a jmp
 * (5 bytes ending at the syscall, or covering its first byte), or not found. */
static const char *site_state(const void *f)
{
	const uint8_t *p = f;
	int i;

	for (i = 0; i < 96; i++) {
		if (p[i] == 0xe9 && ((p[i + 5] == 0x0f && p[i + 6] == 0x05) ||
				     (p[i + 5] == 0x05 && p[i + 6] == 0x48 && p[i + 7] == 0x3d)))
			return "rewritten";
		if (p[i] == 0x0f && p[i + 1] == 0x05)
			return "original";
	}
	return "not-found";
}

static uintptr_t asm_site(void)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)yield_site;
	int i;

	for (i = 0; i < 256; i++)
		if (p[i] == 0x0f && p[i + 1] == 0x05)
			return (uintptr_t)p + i;
	return 0;
}

extern const Elf64_Ehdr __ehdr_start; /* the linker's: this program's ELF header */

/* Places where this program's executable segment in memory differs from its file: each must be
 * one 5-byte jmp (the first byte of a rewritten window is always changed: it becomes 0xe9). *bad
 * counts places that are not. -1 when the file cannot be read. */
static long text_diff(const char *path, long *bad)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM), i;
	static char file[1 << 24];
	uintptr_t bias = 0;
	long places = 0;
	uint64_t k;
	int fd;

	*bad = 0;
	for (i = 0; i < n; i++) /* the segment holding the ELF header: where the image starts */
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
			bias = (uintptr_t)&__ehdr_start - ph[i].p_vaddr;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const uint8_t *mem = (const uint8_t *)(bias + ph[i].p_vaddr);

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (ph[i].p_filesz > sizeof(file) ||
		    pread(fd, file, ph[i].p_filesz, (off_t)ph[i].p_offset) !=
			(ssize_t)ph[i].p_filesz)
			return -1;
		for (k = 0; k < ph[i].p_filesz; k++) {
			if (mem[k] == (uint8_t)file[k])
				continue;
			places++;
			*bad += mem[k] != 0xe9;
			k += 4; /* the rest of the jmp */
		}
	}
	close(fd);
	return places;
}

int main(int argc, char **argv)
{
	int p[2], i, kept, all_kept = 1;
	char in[64], back[64];
	long a, b, y = 0;

	(void)argc;
	if (pipe(p))
		return 1;
	/* Several rounds: the first traps (and may rewrite the site), the next take the site as
	 * it is then. Every round must give the same. */
	for (i = 0; i < 4; i++) {
		snprintf(in, sizeof(in), "round %d", i);
		a = write(p[1], in, strlen(in));
		b = raw_write(1, p[1], in, (long)strlen(in));
		memset(back, 0, sizeof(back));
		if (read(p[0], back, (size_t)(a + b)) != a + b || memcmp(back, in, (size_t)a) ||
		    memcmp(back + a, in, (size_t)b)) {
			printf("round %d: data differs\n", i);
			return 1;
		}
		printf("write %ld raw %ld\n", a, b);
		errno = 0;
		a = write(-1, in, 1);
		b = raw_write(1, -1, in, 1);
		printf("bad fd: write %ld errno %d raw %ld\n", a, errno, b);
		if (i == 2) { /* the calls while a signal is blocked (they trap then) */
			sigset_t s;

			sigemptyset(&s);
			sigaddset(&s, SIGUSR1);
			sigprocmask(SIG_BLOCK, &s, NULL);
			y |= sched_yield();
			a = write(p[1], in, 1);
			b = read(p[0], back, 1);
			printf("masked: write %ld read %ld\n", a, b);
			sigprocmask(SIG_UNBLOCK, &s, NULL);
		}
		y |= sched_yield();
		y |= yield_site(&kept);
		all_kept &= kept;
	}
	printf("yield %ld registers %s\n", y, all_kept ? "kept" : "CHANGED");
	printf("libc write: %s\n", site_state((const void *)(uintptr_t)write));
	printf("libc read: %s\n", site_state((const void *)(uintptr_t)read));
	printf("libc sched_yield: %s\n", site_state((const void *)(uintptr_t)sched_yield));
	printf("own site: %s\n",
	       *(const uint8_t *)(asm_site() - 5) == 0xe9 ? "rewritten" : "original");
	a = text_diff(argv[0], &b);
	printf("text differs from file in %ld places, %ld of them not a jmp\n", a, b);
	return 0;
}
