// SPDX-License-Identifier: MIT
/*
 * In-VM tests: PVAS_IOC_LOAD refuses bad files with the right errno (damaged
 * copies of the test programs), resets the partition, survives header fuzzing.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmtest.h"

static void expect_refused(int as, const char *path, long err)
{
	struct pvas_info in;
	char *argv[] = { (char *)path, NULL };
	long r = as_load(as, PVID, path, argv, NULL, NULL);

	if (r != err) {
		fprintf(stderr, "load %s: got %ld (%s), want %ld (%s)\n", path, r,
			strerror((int)-r), err, strerror((int)-err));
		exit(1);
	}
	CHECK_EQ(as_info(as, PVID, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
}

/* A copy of an ELF file with one change, executable, at path. */
static void patched(const char *from, const char *to, void (*fix)(char *img, size_t len))
{
	size_t len;
	char *img = read_file(from, &len);

	fix(img, len);
	write_file(to, img, len, 0755);
	free(img);
}

static Elf64_Phdr *phdr(char *img, unsigned type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff);
	unsigned i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	CHECK(!"no such program header");
	return NULL;
}

static void fix_machine(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_machine = EM_AARCH64;
}

static void fix_class(char *img, size_t len)
{
	img[EI_CLASS] = ELFCLASS32;
}

static void fix_phoff(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_phoff = len - 8;
}

static void fix_phoff_huge(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_phoff = ~0ULL - 16;
}

static void fix_interp_offset(char *img, size_t len)
{
	phdr(img, PT_INTERP)->p_offset = ~0ULL - 8;
}

static void fix_phentsize(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_phentsize = 32;
}

static void fix_phnum(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_phnum = 0;
}

static void fix_filesz(char *img, size_t len)
{
	Elf64_Phdr *ph = phdr(img, PT_LOAD);

	ph->p_filesz = ph->p_memsz + 4096;
}

static void fix_offset(char *img, size_t len)
{
	phdr(img, PT_LOAD)->p_offset = len + 4096 * 16; /* past the end, page congruent */
	phdr(img, PT_LOAD)->p_vaddr = 4096 * 16;
}

static void fix_huge(char *img, size_t len)
{
	phdr(img, PT_LOAD)->p_memsz = 1ULL << 40; /* cannot fit a 64 MiB partition */
}

static void fix_entry(char *img, size_t len)
{
	((Elf64_Ehdr *)img)->e_entry = 1ULL << 44;
}

/* bss in the first (read-only) segment: refused once mapping has started. */
static void fix_ro_bss(char *img, size_t len)
{
	Elf64_Phdr *ph = phdr(img, PT_LOAD);

	CHECK(!(ph->p_flags & PF_W));
	ph->p_memsz += 4096;
}

static const char *interp_target;

static void fix_interp(char *img, size_t len)
{
	Elf64_Phdr *ph = phdr(img, PT_INTERP);

	CHECK(strlen(interp_target) + 1 == ph->p_filesz);
	memcpy(img + ph->p_offset, interp_target, ph->p_filesz);
}

static void fix_interp_unterminated(char *img, size_t len)
{
	Elf64_Phdr *ph = phdr(img, PT_INTERP);

	img[ph->p_offset + ph->p_filesz - 1] = 'x';
}

/* A path as long as the dynamic program's PT_INTERP, under /tmp. */
static char *same_length_path(void)
{
	size_t len;
	char *img = read_file(tpath("hello_dyn"), &len);
	Elf64_Phdr *ph = phdr(img, PT_INTERP);
	static char path[256];
	size_t n = ph->p_filesz - 1;

	CHECK(n > 8 && n < sizeof(path));
	memset(path, 'g', n);
	memcpy(path, "/tmp/", 5);
	path[n] = 0;
	free(img);
	return path;
}

void test_load_refused(void)
{
	int as = loader_as();
	char junk[4096], *gpath;
	size_t len, i;
	char *img;

	expect_refused(as, tpath("hello_exec"), -ENOEXEC); /* ET_EXEC */
	expect_refused(as, "/t/does-not-exist", -ENOENT);
	expect_refused(as, "/t/hello_spie/x", -ENOTDIR);
	expect_refused(as, t_dir, -EACCES);     /* a directory */
	expect_refused(as, "/dev/null", -EACCES); /* not a regular file */

	img = read_file(tpath("hello_spie"), &len);
	write_file("/tmp/nox", img, len, 0644); /* no x bit: refused even for root */
	expect_refused(as, "/tmp/nox", -EACCES);
	CHECK(mkdir("/tmp/noexec", 0755) == 0 || errno == EEXIST);
	CHECK(mount("none", "/tmp/noexec", "tmpfs", MS_NOEXEC, NULL) == 0);
	write_file("/tmp/noexec/hello", img, len, 0755);
	expect_refused(as, "/tmp/noexec/hello", -EACCES);
	CHECK(umount("/tmp/noexec") == 0);
	write_file("/tmp/header-only", img, sizeof(Elf64_Ehdr), 0755);
	expect_refused(as, "/tmp/header-only", -ENOEXEC);
	free(img);

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7919 + 13);
	write_file("/tmp/garbage", junk, sizeof(junk), 0755);
	expect_refused(as, "/tmp/garbage", -ENOEXEC);
	write_file("/tmp/tiny", "\177EL", 3, 0755);
	expect_refused(as, "/tmp/tiny", -ENOEXEC);
	write_file("/tmp/empty", "", 0, 0755);
	expect_refused(as, "/tmp/empty", -ENOEXEC);
	write_file("/tmp/script", "#!/bin/sh\necho hi\n", 19, 0755);
	expect_refused(as, "/tmp/script", -ENOEXEC);

	static const struct {
		const char *name;
		void (*fix)(char *, size_t);
	} bad[] = {
		{ "machine", fix_machine }, { "class", fix_class },	  { "phoff", fix_phoff },
		{ "phentsize", fix_phentsize }, { "phnum", fix_phnum }, { "filesz", fix_filesz },
		{ "offset", fix_offset },	  { "entry", fix_entry },
		{ "phoff-huge", fix_phoff_huge },
	};
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[64];

		snprintf(path, sizeof(path), "/tmp/bad-%s", bad[i].name);
		patched(tpath("hello_spie"), path, bad[i].fix);
		expect_refused(as, path, -ENOEXEC);
	}
	patched(tpath("hello_spie"), "/tmp/bad-huge", fix_huge);
	expect_refused(as, "/tmp/bad-huge", -EFBIG);

	/* Interpreter problems. */
	gpath = same_length_path();
	interp_target = gpath;
	patched(tpath("hello_dyn"), "/tmp/dyn-missing-interp", fix_interp);
	expect_refused(as, "/tmp/dyn-missing-interp", -ENOENT);
	write_file(gpath, junk, sizeof(junk), 0755);
	patched(tpath("hello_dyn"), "/tmp/dyn-garbage-interp", fix_interp);
	expect_refused(as, "/tmp/dyn-garbage-interp", -ELIBBAD);
	img = read_file(tpath("hello_exec"), &len);
	write_file(gpath, img, len, 0755);
	free(img);
	expect_refused(as, "/tmp/dyn-garbage-interp", -ELIBBAD); /* interp is ET_EXEC */
	img = read_file(tpath("hello_spie"), &len);
	write_file(gpath, img, len, 0644);
	free(img);
	expect_refused(as, "/tmp/dyn-garbage-interp", -EACCES); /* interp not executable */
	patched(tpath("hello_dyn"), "/tmp/dyn-unterminated", fix_interp_unterminated);
	expect_refused(as, "/tmp/dyn-unterminated", -ENOEXEC);
	patched(tpath("hello_dyn"), "/tmp/dyn-interp-offset", fix_interp_offset);
	expect_refused(as, "/tmp/dyn-interp-offset", -ENOEXEC);
	close(as);
}

static void prot_at(uint64_t addr, char prot[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi;
	char line[512];

	strcpy(prot, "");
	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, prot) == 3 && addr >= lo && addr < hi)
			break;
		else
			strcpy(prot, "");
	fclose(f);
}

void test_reload_resets(void)
{
	int as = loader_as();
	struct pvas_load dyn, st;
	struct pvas_info in;
	char prot[5];

	CHECK_EQ(as_load(as, PVID, tpath("hello_dyn"), NULL, NULL, &dyn), 0);
	CHECK(dyn.interp_bias);
	prot_at(dyn.entry, prot);
	CHECK(strcmp(prot, "r-xp") == 0);
	CHECK_EQ(as_info(as, PVID, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_LOADED);
	/* A static program in its place: the interpreter is gone. */
	CHECK_EQ(as_load(as, PVID, tpath("hello_spie"), NULL, NULL, &st), 0);
	CHECK_EQ(st.interp_bias, 0);
	prot_at(dyn.entry, prot);
	CHECK(strcmp(prot, "---p") == 0);
	prot_at(st.entry, prot);
	CHECK(strcmp(prot, "r-xp") == 0);
	/* A failed load leaves the partition reset, the control block untouched. */
	CHECK(mprotect((void *)(uintptr_t)START, PVAS_CB_SIZE, PROT_READ | PROT_WRITE) == 0);
	*(volatile uint64_t *)(uintptr_t)START = 0x600dcafe;
	CHECK_EQ(as_load(as, PVID, tpath("hello_exec"), NULL, NULL, NULL), -ENOEXEC);
	CHECK_EQ(as_load(as, PVID, "/dev/null", NULL, NULL, NULL), -EACCES);
	prot_at(st.entry, prot);
	CHECK(strcmp(prot, "r-xp") == 0); /* refused before touching anything */
	/* Found only while mapping: the partition is reset. */
	patched(tpath("hello_spie"), "/tmp/bad-late", fix_ro_bss);
	CHECK_EQ(as_load(as, PVID, "/tmp/bad-late", NULL, NULL, NULL), -ENOEXEC);
	prot_at(st.entry, prot);
	CHECK(strcmp(prot, "---p") == 0);
	CHECK_EQ(*(volatile uint64_t *)(uintptr_t)START, 0x600dcafe);
	CHECK_EQ(as_info(as, PVID, &in), 0);
	CHECK_EQ(in.state, PVAS_PART_OWNED);
	close(as);
}

/* Random damage to the headers of real programs: every load ends in 0 or an errno, nothing else. */
void test_elf_fuzz(void)
{
	static const char *const progs[] = { "hello_spie", "hello_dyn" };
	static const char *const copies[] = { "/tmp/fuzz-spie", "/tmp/fuzz-dyn" };
	int as = loader_as();
	unsigned i, n = 1000 / t_scale, ok = 0, k; /* 1000: ~17 s under TCG with slub_debug */
	uint64_t x = 0x243f6a8885a308d3ULL;
	char *orig[2], *img;
	size_t len[2], hdr[2];

	for (i = 0; i < 2; i++) {
		Elf64_Ehdr *eh;

		orig[i] = read_file(tpath(progs[i]), &len[i]);
		eh = (Elf64_Ehdr *)orig[i];
		hdr[i] = eh->e_phoff + eh->e_phnum * sizeof(Elf64_Phdr);
		CHECK(hdr[i] < 4096);
		write_file(copies[i], orig[i], len[i], 0755);
	}
	img = malloc(4096);
	for (i = 0; i < n; i++) {
		unsigned p = i % 2;
		int fd;
		long r;

		/* A few random bytes or words in the ELF and program headers. */
		memcpy(img, orig[p], hdr[p]);
		for (k = 0; k < 1 + i % 4; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (x % 3)
				img[x % hdr[p]] = (char)(x >> 32);
			else
				memcpy(img + (x % (hdr[p] - 8)), &x, 8);
		}
		fd = open(copies[p], O_WRONLY);
		CHECK(fd >= 0 && pwrite(fd, img, hdr[p], 0) == (ssize_t)hdr[p]);
		close(fd);
		r = as_load(as, PVID, copies[p], NULL, NULL, NULL);
		CHECK(r <= 0 && r > -4096);
		ok += r == 0;
	}
	fprintf(stderr, "elf-fuzz: %u damaged programs, %u still loaded\n", n, ok);
	free(img);
	free(orig[0]);
	free(orig[1]);
	close(as);
}
