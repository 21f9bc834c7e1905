/* SPDX-License-Identifier: MIT */
#include "cmdline.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fallback.h"
#include "pvas.h"
#include "execfile.h"
#include "shebang.h"

extern char **environ;

long cmd_count(const char *tool, const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "%s: %s: '%s' is not a number from 1 to %ld\n", tool, opt, s, max);
		exit(2);
	}
	return v;
}

void cmd_segment_opt(const char *tool, int c, struct segment *seg, cmd_usage_fn usage)
{
	switch (c) {
	case 'h':
		usage(stdout);
		exit(0);
	case 'n':
		seg->n = cmd_count(tool, "-n", optarg, 1 << 20);
		return;
	default:
		usage(stderr);
		exit(2);
	}
}

int cmd_segment_prog(const char *tool, int argc, int at, int first, cmd_usage_fn usage)
{
	if (at < argc)
		return at;
	fprintf(stderr, "%s: missing PROG%s\n", tool, first ? "" : " after ':'");
	usage(stderr);
	exit(2);
}

void cmd_quantum(const char *tool, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 10000000) {
		fprintf(stderr,
			"%s: --quantum: '%s' is not a number of microseconds from 0 (no "
			"preemption) to 10000000\n",
			tool, s);
		exit(2);
	}
	if (v > 0 && v < 50) { /* ticks faster than their handler pile up (preempt.c) */
		fprintf(stderr, "%s: --quantum: %ld is below 50 microseconds (0: no preemption)\n",
			tool, v);
		exit(2);
	}
	/* The runtime reads it once, when the job's region is created (preempt.c). */
	setenv("ULP_QUANTUM_US", s, 1);
}

size_t cmd_partition_size(const char *tool, const char *s)
{
	static const char units[] = "kmgt";
	const char *u;
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		goto too_large;
	if (end == s || *s == '-')
		goto bad;
	if (*end && (u = strchr(units, *end | 0x20)) != NULL) {
		shift = 10 * (int)(u - units + 1);
		end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		goto bad;
	if (v > (ULLONG_MAX >> shift))
		goto too_large; /* the shift would wrap around */
	v <<= shift;
	if (v & (v - 1))
		goto bad;
	if (v < PVAS_PARTITION_MIN) {
		fprintf(stderr,
			"%s: --partition-size: '%s' is too small: a partition holds a 64k control "
			"block, its stack (1/32) and the program below 1/8 of it; the smallest is "
			"%llum\n",
			tool, s, PVAS_PARTITION_MIN >> 20);
		exit(2);
	}
	if (v > PVAS_PARTITION_MAX)
		goto too_large;
	return (size_t)v;
bad:
	fprintf(stderr, "%s: --partition-size: '%s' is not a power of two such as 128m, 4g or 1t\n",
		tool, s);
	exit(2);
too_large:
	fprintf(stderr, "%s: --partition-size: '%s' is larger than the %llut address space\n", tool,
		s, PVAS_PARTITION_MAX >> 40);
	exit(2);
}

/* "0-3,6" into cpus; 0 when s is not such a list. */
static unsigned parse_cpulist(const char *s, int *cpus, unsigned max)
{
	const char *p = s;
	unsigned n = 0;

	while (*p) {
		char *end;
		long a, b;

		if (*p < '0' || *p > '9')
			return 0;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return 0;
			b = strtol(p, &end, 10);
		}
		if (a < 0 || b < a || b >= INT_MAX)
			return 0;
		for (; a <= b && n < max; a++)
			cpus[n++] = (int)a;
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return 0;
		else if (*end)
			end++;
		p = end;
	}
	return n;
}

unsigned cmd_cpulist(const char *tool, const char *s, int *cpus, unsigned max)
{
	char online[256] = "";
	static int on[4096];
	unsigned n = parse_cpulist(s, cpus, max), non = 0, i, j;
	FILE *f;

	if (!n) {
		fprintf(stderr, "%s: --bind: '%s' is not a CPU list such as 0-3,6\n", tool, s);
		exit(2);
	}
	f = fopen("/sys/devices/system/cpu/online", "r");
	if (f) {
		if (fgets(online, sizeof(online), f))
			online[strcspn(online, "\n")] = '\0';
		fclose(f);
	}
	non = parse_cpulist(online, on, sizeof(on) / sizeof(on[0]));
	if (!non) { /* no sysfs (a container without it): CPUs 0..N-1 */
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		for (non = 0; non < (unsigned)(c > 0 ? c : 1) && non < 4096; non++)
			on[non] = (int)non;
		snprintf(online, sizeof(online), "0-%u", non - 1);
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < non && on[j] != cpus[i]; j++)
			;
		if (j == non) {
			fprintf(stderr, "%s: --bind: CPU %d is not online (online CPUs: %s)\n",
				tool, cpus[i], online);
			exit(2);
		}
	}
	return n;
}

/* path opened, and its ELF header in *eh: a 64-bit ELF with Elf64_Phdr program headers; else -1
 * (the loader says why). */
static int elf64_open(const char *path, Elf64_Ehdr *eh)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (pread(fd, eh, sizeof(*eh), 0) != sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Mappings of one ELF object: one per PT_LOAD, one more when PT_GNU_RELRO splits the data segment
 * (ld.so makes part of it read-only). needed: its DT_NEEDED count; interp: its PT_INTERP path.
 * -1 when the file is not a 64-bit ELF (the loader will say why).
 */
static long elf_maps(const char *path, long *needed, char *interp, size_t interplen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	long maps = 0, i;
	int fd = elf64_open(path, &eh);

	*needed = 0;
	if (interp)
		interp[0] = '\0';
	if (fd < 0)
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD || ph.p_type == PT_GNU_RELRO)
			maps++;
		if (ph.p_type == PT_INTERP && interp && ph.p_filesz < interplen &&
		    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			interp[ph.p_filesz] = '\0';
		if (ph.p_type == PT_DYNAMIC) {
			Elf64_Dyn d;
			uint64_t k;

			for (k = 0; k < ph.p_filesz / sizeof(d); k++) {
				if (pread(fd, &d, sizeof(d),
					  (off_t)(ph.p_offset + k * sizeof(d))) != sizeof(d) ||
				    d.d_tag == DT_NULL)
					break;
				*needed += d.d_tag == DT_NEEDED;
			}
		}
	}
	close(fd);
	return maps;
}

/* The file offset of virtual address v in one of n program headers' PT_LOAD, or -1. */
static long vaddr_offset(const Elf64_Phdr *ph, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v < ph[i].p_vaddr + ph[i].p_filesz)
			return (long)(ph[i].p_offset + (v - ph[i].p_vaddr));
	return -1;
}

/* Which MPI a DT_NEEDED name is: MPICH's libraries (libmpich*, and libmpi.so.12, the MPICH ABI
 * that derived MPIs keep) find their launcher through simple PMI-1; Open MPI's (soname
 * version 40) through PMIx. */
static enum cmd_mpi mpi_of(const char *name)
{
	if (!strncmp(name, "libmpich", 8) || !strcmp(name, "libmpi.so.12"))
		return CMD_MPI_PMI1;
	if ((!strncmp(name, "libmpi.so.", 10) || !strncmp(name, "libmpi_", 7) ||
	     !strncmp(name, "libopen-", 8)) &&
	    strstr(name, ".so.40"))
		return CMD_MPI_PMIX;
	return CMD_MPI_NONE;
}

enum cmd_mpi cmd_mpi_library(const char *path, char *lib, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[128];
	Elf64_Dyn dyn[512];
	long nd = 0, strtab = -1, off;
	enum cmd_mpi kind = CMD_MPI_NONE;
	int fd = elf64_open(path, &eh), n = 0, i;

	if (fd < 0)
		return CMD_MPI_NONE;
	if (eh.e_phnum <= 128 && pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) ==
				     (ssize_t)(eh.e_phnum * sizeof(ph[0])))
		n = eh.e_phnum;
	for (i = 0; i < n && !nd; i++)
		if (ph[i].p_type == PT_DYNAMIC) {
			ssize_t got = pread(
			    fd, dyn, ph[i].p_filesz < sizeof(dyn) ? ph[i].p_filesz : sizeof(dyn),
			    (off_t)ph[i].p_offset);

			nd = got > 0 ? got / (long)sizeof(dyn[0]) : 0;
		}
	for (i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = vaddr_offset(ph, n, dyn[i].d_un.d_ptr);
	for (i = 0; strtab >= 0 && i < nd && dyn[i].d_tag != DT_NULL && !kind; i++) {
		char name[256];
		ssize_t got;

		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		off = strtab + (long)dyn[i].d_un.d_val;
		got = pread(fd, name, sizeof(name) - 1, (off_t)off);
		if (got <= 0)
			continue;
		name[got] = '\0';
		kind = mpi_of(name);
		if (kind && lib)
			snprintf(lib, len, "%s", name);
	}
	close(fd);
	return kind;
}

/*
 * Measured on static-pie and dynamic programs (ulpexec, /proc/PID/maps lines per added ULP):
 * besides its ELF objects' segments a ULP has its control block, stack guard, stack, brk heap and
 * the PROT_NONE rest of its partition (5); a dynamic one has, per shared library, its segments
 * and a gap (7 counted for each DT_NEEDED; their own dependencies are not followed) and its TLS
 * blocks and the mmap area's allocations (8).
 */
#define MAPS_FIXED 5
#define MAPS_PER_LIB 7
#define MAPS_DYNAMIC 8

long cmd_maps_per_rank(const char *path)
{
	char interp[4096];
	long needed, iset, maps = elf_maps(path, &needed, interp, sizeof(interp));

	if (maps < 0)
		return MAPS_FIXED;
	maps += MAPS_FIXED;
	if (interp[0]) {
		long ld = elf_maps(interp, &iset, NULL, 0);

		maps += (ld > 0 ? ld : 5) + MAPS_PER_LIB * needed + MAPS_DYNAMIC;
	}
	return maps;
}

/* Lines of /proc/self/maps: the mappings this process has now. */
static long maps_now(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* vm.max_map_count, or 0 when it cannot be read. */
static long map_count_limit(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long limit = 0;

	if (f) {
		if (fscanf(f, "%ld", &limit) != 1)
			limit = 0;
		fclose(f);
	}
	return limit;
}

/* The limit to suggest for n mappings: the next multiple of 65536 above them. */
static long map_count_suggest(long n)
{
	return (n / 65536 + 1) * 65536;
}

void cmd_check_map_count(const char *tool, const struct segment *segs, int nsegs)
{
	long limit = map_count_limit(), now = maps_now(), need = 0, per_max = 0, total = 0;
	/* the tools' own later mappings: worker stacks, io_uring rings, libc arenas */
	const long slack = 256;
	int i;

	if (limit <= 0 || now < 0)
		return; /* no procfs: nothing to check against */
	for (i = 0; i < nsegs; i++) {
		long per = segs[i].process ? 0 : cmd_maps_per_rank(segs[i].path);

		need += segs[i].n * per;
		total += segs[i].n;
		per_max = per > per_max ? per : per_max;
	}
	if (now + need + slack <= limit)
		return;
	fprintf(
	    stderr,
	    "%s: %ld ranks need about %ld memory mappings in this one address space (up to %ld "
	    "per rank), more than vm.max_map_count (%ld) leaves: %ld are in use; nothing was "
	    "started.\n"
	    "%s: raise the limit as root: sysctl -w vm.max_map_count=%ld (or run fewer ranks)\n",
	    tool, total, need, per_max, limit, now, tool, map_count_suggest(now + need + slack));
	exit(1);
}

/* Within this many mappings of the limit: near it (a rank that ended released its own, some
 * hundreds for an MPI rank). */
#define MAP_COUNT_NEAR 1024

void cmd_map_count_hint(const char *tool)
{
	static int said;
	long limit, now;

	if (said)
		return;
	said = 1;
	limit = map_count_limit();
	now = maps_now();
	if (limit <= 0 || now < 0 || now + MAP_COUNT_NEAR < limit)
		return;
	fprintf(
	    stderr,
	    "%s: this job's address space holds %ld memory mappings, near vm.max_map_count "
	    "(%ld): a rank's mmap or shmat fails there with ENOMEM (\"Cannot allocate "
	    "memory\"); an MPI rank maps about 2 more per other rank.\n"
	    "%s: raise the limit as root: sysctl -w vm.max_map_count=%ld (or run fewer ranks)\n",
	    tool, now, limit, tool, map_count_suggest(2 * limit));
}

char *cmd_resolve(const char *prog)
{
	const char *p = getenv("PATH");
	char buf[4096];
	struct stat st;

	if (strchr(prog, '/') || !p)
		return strdup(prog);
	while (*p) {
		size_t len = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		p += len + (p[len] == ':');
	}
	return strdup(prog); /* let the loader say what is wrong */
}

/* A program that is not there: 127 before any rank starts, as a shell says it (other reasons,
 * such as permission or format, the loader reports with status 126). */
static void missing_program(const char *tool, const char *prog, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return;
	if (strchr(prog, '/'))
		fprintf(stderr, "%s: %s: %s\n", tool, prog, strerror(errno));
	else
		fprintf(stderr, "%s: %s: command not found (No such file or directory in PATH)\n",
			tool, prog);
	exit(127);
}

/* Where the "#!" line of a script names its interpreter and its one optional argument
 * (libulp/shebang.h); 0 when path is no script. */
static int script_line(const char *path, char *line, size_t size, char **interp, char **arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return 0;
	len = read(fd, line, size - 1);
	close(fd);
	if (len < 2)
		return 0;
	line[len] = 0;
	return ulp_shebang(line, interp, arg);
}

/*
 * PROG a "#!" script: its interpreter is the program, as execve makes it (argv: the interpreter
 * as the line names it, its optional argument, the script's path, then the arguments), also
 * through interpreters that are scripts (4 levels, as Linux). The loader takes ELF files only:
 * `ulpexec ./job.sh` said "not an ELF file", and so did a command that is a script in PATH
 * (pyenv's python3). A script run so is as a process of its interpreter (fallback.h decides).
 */
static void follow_scripts(const char *tool, struct segment *seg)
{
	char line[ULP_SHEBANG_HEAD], *interp, *arg, **argv;
	int depth, argc, k;

	for (depth = 0; script_line(seg->path, line, sizeof(line), &interp, &arg); depth++) {
		/* the script itself as execve asks it (the loader asks the ELF file, here its
		 * interpreter) */
		int rc = ulp_exec_allowed(seg->path);

		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", tool, seg->path, strerror(-rc));
			exit(126);
		}
		if (depth == 4 || !*interp) {
			fprintf(stderr, "%s: %s: %s\n", tool, seg->path,
				*interp ? "too many levels of #! interpreters"
					: "no interpreter after #!");
			exit(126);
		}
		if (access(interp, X_OK) != 0) { /* a missing one: 127, as a shell says it */
			fprintf(stderr, "%s: %s: %s: bad interpreter: %s\n", tool, seg->path,
				interp, strerror(errno));
			exit(errno == ENOENT || errno == ENOTDIR ? 127 : 126);
		}
		for (argc = 0; seg->argv[argc]; argc++)
			;
		argv = calloc((size_t)argc + 3, sizeof(char *));
		if (!argv) {
			fprintf(stderr, "%s: out of memory\n", tool);
			exit(1);
		}
		k = 0;
		argv[k++] = strdup(interp);
		if (arg)
			argv[k++] = strdup(arg);
		argv[k++] = seg->path;
		memcpy(argv + k, seg->argv + 1, (size_t)argc * sizeof(char *)); /* with its NULL */
		seg->argv = argv;
		seg->path = strdup(interp);
	}
}

int cmd_split(const char *tool, int argc, char **argv, struct segment *segs, int max,
	      cmd_parse_fn parse, void *ctx)
{
	int n = 0, at = 0;

	while (at < argc) {
		int end = at + 1, prog;
		char *saved;

		while (end < argc && strcmp(argv[end], ":"))
			end++;
		if (n == max) {
			fprintf(stderr, "%s: more than %d programs\n", tool, max);
			exit(2);
		}
		saved = argv[at];
		argv[at] = (char *)tool;
		prog = parse(end - at, argv + at, &segs[n], n == 0, ctx);
		argv[at] = saved;
		segs[n].argv = argv + at + prog;
		argv[end < argc ? end : argc] = NULL; /* ends this segment's argv */
		segs[n].path = cmd_resolve(segs[n].argv[0]);
		missing_program(tool, segs[n].argv[0], segs[n].path);
		follow_scripts(tool, &segs[n]);
		segs[n].process = fallback_needed(segs[n].path);
		n++;
		at = end; /* at the ':' (now NULL) or at argc */
	}
	return n;
}

/* The three variables live in static storage: the array is used (copied into the new rank by
 * the load) before the next call, and nothing is left to free but the array. */
char **cmd_rank_env(long rank, long size, long task)
{
	static char vars[3][32];
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(char *));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "ULP_RANK=", 9) && strncmp(environ[i], "ULP_SIZE=", 9) &&
		    strncmp(environ[i], "ULP_TASK=", 9))
			env[k++] = environ[i];
	snprintf(vars[0], sizeof(vars[0]), "ULP_RANK=%ld", rank);
	snprintf(vars[1], sizeof(vars[1]), "ULP_SIZE=%ld", size);
	env[k++] = vars[0];
	env[k++] = vars[1];
	if (task >= 0) {
		snprintf(vars[2], sizeof(vars[2]), "ULP_TASK=%ld", task);
		env[k++] = vars[2];
	}
	return env;
}

void cmd_free_segments(struct segment *segs, int n)
{
	while (n-- > 0)
		free(segs[n].path);
}
