/*
 * Fast-path probe (tests/integ/fastcall.sh). Runs the same calls through sites the runtime may
 * rewrite (libc's write and sched_yield, and an asm `mov $NR,%eax; syscall` here) and through a
 * site it cannot (`mov %ecx,%eax; syscall`), and prints what it sees: the results, whether the
 * registers the kernel ABI keeps survived, whether each site is rewritten in memory, and how many
 * bytes of its own text differ from its ELF file (a program that checks its own code). The vector
 * sites load every vector register the CPU has (zmm0-31 and k1-k7 with AVX-512, else ymm0-15,
 * else xmm0-15), a non-default MXCSR and x87 control word and a value on the x87 stack, make a
 * read or a sched_yield (which may run another ULP), and check that all of it came back.
 */
#include "sitestate.h"

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

/* ---- vector, x87 and MXCSR state across a call ---- */

#define VEC_REGS 32

struct fp_state {
	uint32_t mxcsr;
	uint16_t cw;
	long double st0;
};

/* MXCSR: round toward zero, all exceptions masked; x87: round toward zero, 64-bit precision. */
#define TEST_MXCSR 0x7f80u
#define TEST_CW 0x0f7fu
static const long double test_st0 = 2.718281828459045235360287L;

/* One site per call and register set: mov $NR,%eax right before syscall (rewritable). r10 (no
 * argument of read or sched_yield; the kernel keeps it) points at the registers' images: no push,
 * the compiler may keep locals in the red zone. */
#define ZMM_LOAD(i) "vmovdqa64 " #i "*64(%%r10), %%zmm" #i "\n\t"
#define ZMM_STORE(i) "vmovdqa64 %%zmm" #i ", " #i "*64(%%r10)\n\t"
#define YMM_LOAD(i) "vmovdqa " #i "*64(%%r10), %%ymm" #i "\n\t"
#define YMM_STORE(i) "vmovdqa %%ymm" #i ", " #i "*64(%%r10)\n\t"
#define XMM_LOAD(i) "movdqa " #i "*64(%%r10), %%xmm" #i "\n\t"
#define XMM_STORE(i) "movdqa %%xmm" #i ", " #i "*64(%%r10)\n\t"
#define K_LOAD(i) "kmovq 2048+" #i "*8(%%r10), %%k" #i "\n\t"
#define K_STORE(i) "kmovq %%k" #i ", 2048+" #i "*8(%%r10)\n\t"
/* clang-format off */
#define R16(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define R32(M) R16(M) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) \
	M(28) M(29) M(30) M(31)
/* clang-format on */
#define K7(M) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define XCLOB16                                                                                    \
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",   \
	    "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#define XCLOB32                                                                                    \
	XCLOB16, "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",  \
	    "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", \
	    "k5", "k6", "k7"

/* Images: 32 registers of 64 bytes, then k0-k7 (k0 unused). */
struct vec_image {
	uint64_t v[VEC_REGS][8];
	uint64_t k[8];
} __attribute__((aligned(64)));
static struct vec_image vec_in, vec_out;

#define VEC_SITE(name, nr, attr, LOAD, STORE, CLOB)                                                \
	__attribute__((noinline, target(attr))) static long name(long a0, long a1, long a2,        \
								 struct fp_state *fp)              \
	{                                                                                          \
		uint32_t mx = TEST_MXCSR, omx;                                                     \
		uint16_t cw = TEST_CW, ocw;                                                        \
		long rax;                                                                          \
		register long r10 __asm__("r10") = (long)&vec_in;                                  \
		__asm__ volatile(                                                                  \
		    LOAD "stmxcsr %[omx]\n\t"                                                      \
			 "fnstcw %[ocw]\n\t"                                                       \
			 "ldmxcsr %[mx]\n\t"                                                       \
			 "fldcw %[cw]\n\t"                                                         \
			 "fldt %[st0in]\n\t"                                                       \
			 "mov $" #nr ", %%eax\n\t"                                                 \
			 "syscall\n\t"                                                             \
			 "fstpt %[st0]\n\t"                                                        \
			 "stmxcsr %[gmx]\n\t"                                                      \
			 "fnstcw %[gcw]\n\t"                                                       \
			 "ldmxcsr %[omx]\n\t"                                                      \
			 "fldcw %[ocw]\n\t"                                                        \
			 "lea %[out], %%r10\n\t" STORE                                             \
		    : "=a"(rax), "+D"(a0), "+S"(a1), "+d"(a2),                                     \
		      "+r"(r10), [omx] "=m"(omx), [ocw] "=m"(ocw), [gmx] "=m"(fp->mxcsr),          \
		      [gcw] "=m"(fp->cw), [st0] "=m"(fp->st0), [out] "=m"(vec_out)                 \
		    : [mx] "m"(mx), [cw] "m"(cw), [st0in] "m"(test_st0), "m"(vec_in)               \
		    : "rcx", "r11", "memory", "cc", "st", "st(1)", CLOB);                          \
		return rax;                                                                        \
	}

VEC_SITE(read_zmm, 0, "avx512f", R32(ZMM_LOAD) K7(K_LOAD), R32(ZMM_STORE) K7(K_STORE), XCLOB32)
VEC_SITE(yield_zmm, 24, "avx512f", R32(ZMM_LOAD) K7(K_LOAD), R32(ZMM_STORE) K7(K_STORE), XCLOB32)
VEC_SITE(read_ymm, 0, "avx", R16(YMM_LOAD), R16(YMM_STORE), XCLOB16)
VEC_SITE(yield_ymm, 24, "avx", R16(YMM_LOAD), R16(YMM_STORE), XCLOB16)
VEC_SITE(read_xmm, 0, "sse2", R16(XMM_LOAD), R16(XMM_STORE), XCLOB16)
VEC_SITE(yield_xmm, 24, "sse2", R16(XMM_LOAD), R16(XMM_STORE), XCLOB16)

/* The same across a read from x87 and SSE state in their initial configuration (XSAVEC does not
 * save such a component: the fast path must still give it back, with the MXCSR asked for). */
struct init_result {
	uint32_t mxcsr;
	uint16_t cw, sw, tw; /* from fnstenv: control, status, tag words */
	uint16_t pad;
	uint64_t xmm[16][2]; /* at 16 */
};

#define XMM_OUT(i) "movdqu %%xmm" #i ", " #i "*16+16(%%r10)\n\t"
__attribute__((noinline, target("avx"))) static long read_from_init(long fd, long buf, uint32_t mx,
								    struct init_result *res)
{
	uint32_t omx;
	uint16_t ocw;
	uint32_t env[7];
	long rax, n = 1;
	register long r10 __asm__("r10") = (long)res;

	__asm__ volatile("stmxcsr %[omx]\n\t"
			 "fnstcw %[ocw]\n\t"
			 "vzeroall\n\t"
			 "fninit\n\t"
			 "ldmxcsr %[mx]\n\t"
			 "mov $0, %%eax\n\t"
			 "syscall\n\t"
			 "stmxcsr (%%r10)\n\t"
			 "fnstenv %[env]\n\t" R16(XMM_OUT) "ldmxcsr %[omx]\n\t"
							   "fldcw %[ocw]\n\t"
			 : "=a"(rax), "+D"(fd), "+S"(buf), "+d"(n),
			   "+r"(r10), [omx] "=m"(omx), [ocw] "=m"(ocw), [env] "=m"(env)
			 : [mx] "m"(mx)
			 : "rcx", "r11", "memory", "cc", XCLOB16);
	res->cw = (uint16_t)env[0];
	res->sw = (uint16_t)env[1];
	res->tw = (uint16_t)env[2];
	return rax;
}

static int init_kept(int rfd, int wfd, int rounds)
{
	static const uint32_t mxcsrs[] = {0x1f80, TEST_MXCSR};
	struct init_result res;
	int r, m, i;
	char c;

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx"))
		return 1; /* no vzeroall: the SSE state cannot be put back to its initial one */
	for (r = 0; r < rounds; r++)
		for (m = 0; m < 2; m++) {
			memset(&res, 0xa5, sizeof(res));
			if (read_from_init(rfd, (long)&c, mxcsrs[m], &res) != 1 ||
			    write(wfd, &c, 1) != 1)
				return 0;
			if (res.mxcsr != mxcsrs[m] || res.cw != 0x37f || (res.sw & 0x3800) ||
			    res.tw != 0xffff)
				return 0;
			for (i = 0; i < 16; i++)
				if (res.xmm[i][0] || res.xmm[i][1])
					return 0;
		}
	return 1;
}

/* The widest register set the CPU and kernel have: 64 (zmm), 32 (ymm) or 16 (xmm) bytes. */
static int vec_width(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return 64;
	return __builtin_cpu_supports("avx") ? 32 : 16;
}

/* Whether the syscall of a vector site is rewritten (the mov before it became a jmp). */
static const char *vec_site_state(const void *f)
{
	const uint8_t *p = f;
	int i;

	for (i = 5; i < 2048; i++)
		if (p[i] == 0x0f && p[i + 1] == 0x05)
			return p[i - 5] == 0xe9 ? "rewritten" : "original";
	return "not-found";
}

/* Registers and FP state across a read (rfd holds a byte, written back to wfd) and a sched_yield,
 * each site called rounds times (the first traps and may rewrite it): 1 when everything came
 * back. A pattern per ULP (seed), so that another ULP run by the yield would show through. */
static int vec_kept(int rfd, int wfd, uint64_t seed, int rounds, const char **what)
{
	int w = vec_width(), r, i, j, call;
	struct fp_state fp;
	char c;
	long ret;

	for (r = 0; r < rounds; r++) {
		for (call = 0; call < 2; call++) {
			for (i = 0; i < VEC_REGS; i++)
				for (j = 0; j < 8; j++)
					vec_in.v[i][j] =
					    seed * 0x9e3779b97f4a7c15ull ^
					    (uint64_t)(i * 8 + j + r) * 0x0101010101010101ull;
			for (i = 0; i < 8; i++)
				vec_in.k[i] = seed ^ (0x1234567890abcdefull << i);
			memset(&vec_out, 0, sizeof(vec_out));
			memset(&fp, 0, sizeof(fp));
			*what = call == 0 ? "read" : "sched_yield";
			if (call == 0)
				ret = w == 64	? read_zmm(rfd, (long)&c, 1, &fp)
				      : w == 32 ? read_ymm(rfd, (long)&c, 1, &fp)
						: read_xmm(rfd, (long)&c, 1, &fp);
			else
				ret = w == 64	? yield_zmm(0, 0, 0, &fp)
				      : w == 32 ? yield_ymm(0, 0, 0, &fp)
						: yield_xmm(0, 0, 0, &fp);
			if (ret != (call == 0 ? 1 : 0))
				return 0;
			if (call == 0 && write(wfd, &c, 1) != 1)
				return 0;
			for (i = 0; i < (w == 64 ? 32 : 16); i++)
				if (memcmp(vec_in.v[i], vec_out.v[i], (size_t)w))
					return 0;
			if (w == 64 && memcmp(vec_in.k + 1, vec_out.k + 1, 7 * sizeof(uint64_t)))
				return 0;
			if (fp.mxcsr != TEST_MXCSR || fp.cw != TEST_CW || fp.st0 != test_st0)
				return 0;
		}
	}
	return 1;
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

/* Whether the first syscall site of the function at f is there as built, rewritten (sitestate.h),
 * or not found. */
static const char *site_state(const void *f)
{
	int rewritten;

	if (site_next(f, 0, 96, &rewritten) < 0)
		return "not-found";
	return rewritten ? "rewritten" : "original";
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
 * one jmp, 5-byte (the first byte of a rewritten window is always changed: it becomes 0xe9) or
 * 2-byte (0xeb, into padding that became a 5-byte one), maybe followed by nops (the rest of an
 * instruction it covers). *bad counts places that are not. -1 when the file cannot be read. */
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
			*bad += mem[k] != 0xe9 && mem[k] != 0xeb;
			k += mem[k] == 0xeb ? 1 : 4; /* the rest of the jmp */
			while (k + 1 < ph[i].p_filesz && mem[k + 1] == 0x90 &&
			       (uint8_t)file[k + 1] != 0x90)
				k++; /* its nops */
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
	{
		const char *what = "";
		int q[2], kept_v;
		char one = 'v';
		const void *site = vec_width() == 64   ? (const void *)(uintptr_t)read_zmm
				   : vec_width() == 32 ? (const void *)(uintptr_t)read_ymm
						       : (const void *)(uintptr_t)read_xmm;

		if (pipe(q) || write(q[1], &one, 1) != 1)
			return 1;
		/* first: before any x87 use here (a CPU may keep x87 in use from then on) */
		printf("initial x87 and SSE state %s\n",
		       init_kept(q[0], q[1], 8) ? "kept" : "CHANGED");
		kept_v = vec_kept(q[0], q[1], (uint64_t)(uintptr_t)&what >> 4, 8, &what);
		printf("vector, x87 and MXCSR state %s\n", kept_v ? "kept" : "CHANGED");
		if (!kept_v)
			fprintf(stderr, "fastcall: state changed across %s\n", what);
		printf("vector read site: %s\n", vec_site_state(site));
		close(q[0]);
		close(q[1]);
	}
	printf("libc write: %s\n", site_state((const void *)(uintptr_t)write));
	printf("libc read: %s\n", site_state((const void *)(uintptr_t)read));
	printf("libc sched_yield: %s\n", site_state((const void *)(uintptr_t)sched_yield));
	printf("own site: %s\n",
	       *(const uint8_t *)(asm_site() - 5) == 0xe9 ? "rewritten" : "original");
	a = text_diff(argv[0], &b);
	printf("text differs from file in %ld places, %ld of them not a jmp\n", a, b);
	return 0;
}
