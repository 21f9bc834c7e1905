/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "lt.h"

static const char *fix_dir;

void lt_init(int argc, char **argv)
{
	void *p;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		exit(2);
	}
	fix_dir = argv[1];
	p = mmap((void *)LT_BASE, LT_SIZE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)LT_BASE) {
		perror("reserving the test region");
		exit(2);
	}
}

char *lt_fix(const char *name)
{
	static char ring[8][PATH_MAX];
	static unsigned int next;
	char *s = ring[next++ % 8];

	if ((size_t)snprintf(s, PATH_MAX, "%s/%s", fix_dir, name) >= PATH_MAX)
		fail_msg("fixture path too long");
	return s;
}

void lt_req(struct ulp_load_req *req, const char *path, char *const *argv, char *const *envp)
{
	memset(req, 0, sizeof(*req));
	req->path = path;
	req->argv = argv;
	req->envp = envp;
	req->image_base = LT_BASE + 16 * LT_PAGE;
	req->image_limit = LT_BASE + (256UL << 20);
	req->interp_base = req->image_limit + 16 * LT_PAGE;
	req->interp_limit = LT_BASE + (512UL << 20);
	req->stack_hi = LT_BASE + LT_SIZE - 16 * LT_PAGE;
	req->stack_lo = req->stack_hi - (8UL << 20);
}

static void sentinel(uintptr_t page, int place)
{
	unsigned char *p = (unsigned char *)page;
	char perms[5];
	size_t i;

	if (place) {
		assert_ptr_equal(mmap(p, LT_PAGE, PROT_READ | PROT_WRITE,
				      MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
				 p);
		memset(p, 0xa5, LT_PAGE);
		assert_int_equal(mprotect(p, LT_PAGE, PROT_READ), 0);
		return;
	}
	assert_true(lt_maps_at(page, perms, NULL, 0));
	assert_string_equal(perms, "r--p");
	for (i = 0; i < LT_PAGE; i++)
		if (p[i] != 0xa5)
			fail_msg("sentinel page %#lx byte %zu changed", (unsigned long)page, i);
}

static int in_range(uintptr_t page, uintptr_t lo, uintptr_t hi)
{
	return page + LT_PAGE > lo && page < hi;
}

/* A sentinel page below and above each range, unless that page is inside another range. */
static void sentinels(const struct ulp_load_req *req, int place)
{
	uintptr_t lo[3] = {req->image_base, req->interp_base, req->stack_lo};
	uintptr_t hi[3] = {req->image_limit, req->interp_limit, req->stack_hi};
	uintptr_t at[6];
	int i, j, k;

	for (i = 0; i < 3; i++) {
		at[2 * i] = (lo[i] & ~(LT_PAGE - 1)) - LT_PAGE;
		at[2 * i + 1] = (hi[i] + LT_PAGE - 1) & ~(LT_PAGE - 1);
	}
	for (k = 0; k < 6; k++) {
		for (j = 0; j < 3; j++)
			if (in_range(at[k], lo[j], hi[j]))
				break;
		if (j == 3 && in_range(at[k], LT_BASE, LT_BASE + LT_SIZE))
			sentinel(at[k], place);
	}
}

void lt_region_reset(void)
{
	assert_ptr_equal(mmap((void *)LT_BASE, LT_SIZE, PROT_NONE,
			      MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
			 (void *)LT_BASE);
}

void lt_sentinels_place(const struct ulp_load_req *req)
{
	sentinels(req, 1);
}

void lt_sentinels_check(const struct ulp_load_req *req)
{
	sentinels(req, 0);
}

static int overcommit_never(void)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v == 2;
}

/* Walk smaps: every VMA overlapping [lo, hi) must be ---p, anonymous, NORESERVE. */
void lt_assert_reserved_in(pid_t pid, uintptr_t lo, uintptr_t hi)
{
	char name[64];
	FILE *f;

	if (pid)
		snprintf(name, sizeof(name), "/proc/%d/smaps", (int)pid);
	else
		snprintf(name, sizeof(name), "/proc/self/smaps");
	f = fopen(name, "r");
	char line[512], perms[5] = "";
	int want_nr = !overcommit_never();
	unsigned long s, e, ino, covered = 0;
	int in = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %lu", &s, &e, perms, &ino) == 4) {
			in = s < hi && lo < e;
			if (!in)
				continue;
			if (strcmp(perms, "---p") || ino != 0)
				fail_msg("%#lx-%#lx inside %#lx-%#lx is %s inode %lu, not a "
					 "PROT_NONE reservation",
					 s, e, (unsigned long)lo, (unsigned long)hi, perms, ino);
			covered += (e < hi ? e : hi) - (s > lo ? s : lo);
		} else if (in && want_nr && !strncmp(line, "VmFlags:", 8) && !strstr(line, " nr")) {
			fail_msg("reservation in %#lx-%#lx lost MAP_NORESERVE: %s",
				 (unsigned long)lo, (unsigned long)hi, line);
		}
	}
	fclose(f);
	if (covered != hi - lo)
		fail_msg("%#lx-%#lx: only %#lx bytes still mapped", (unsigned long)lo,
			 (unsigned long)hi, covered);
}

void lt_assert_reserved(uintptr_t lo, uintptr_t hi)
{
	lt_assert_reserved_in(0, lo, hi);
}

void lt_assert_req_reserved_in(pid_t pid, const struct ulp_load_req *req)
{
	lt_assert_reserved_in(pid, req->image_base, req->image_limit);
	lt_assert_reserved_in(pid, req->interp_base, req->interp_limit);
	lt_assert_reserved_in(pid, req->stack_lo, req->stack_hi);
}

void lt_assert_req_reserved(const struct ulp_load_req *req)
{
	lt_assert_req_reserved_in(0, req);
}

int lt_maps_at(uintptr_t addr, char perms[5], char *path, size_t pathlen)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], name[4096];
	unsigned long s, e;
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %*u %4095s", &s, &e, perms, name) < 3)
			continue;
		if (addr < s || addr >= e)
			continue;
		found = 1;
		if (path)
			snprintf(path, pathlen, "%s", name);
	}
	fclose(f);
	return found;
}

int lt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

uint64_t *lt_auxv_start(uintptr_t sp)
{
	uint64_t *w = (uint64_t *)sp;

	w += 1 + w[0] + 1; /* argc, argv, NULL */
	while (*w)
		w++;
	return w + 1;
}

uint64_t lt_auxv(uintptr_t sp, uint64_t type, int *found)
{
	uint64_t *a;

	for (a = lt_auxv_start(sp); a[0] != 0; a += 2)
		if (a[0] == type) {
			*found = 1;
			return a[1];
		}
	*found = 0;
	return 0;
}
