/* SPDX-License-Identifier: MIT */
/* Helpers shared by the loader tests: a reserved test region, requests, memory and fd probes. */
#ifndef ULP_LOADER_TEST_H
#define ULP_LOADER_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loader.h"

#define LT_BASE 0x200000000000UL /* far from where the kernel puts the test's own mappings */
#define LT_SIZE (1UL << 30)
#define LT_PAGE 4096UL

/* Parse argv[1] (the fixture folder), reserve the region. Call first in main. */
void lt_init(int argc, char **argv);
/* "<fixture folder>/<name>", in one of 8 static buffers used in turn. */
char *lt_fix(const char *name);

/* Back to one PROT_NONE reservation: no leftovers of an earlier (maybe failed) test. */
void lt_region_reset(void);
/* A request with the default ranges: image 256 MiB, interpreter 256 MiB, stack 8 MiB, all
 * inside the region with a sentinel page (read-only, known bytes) right outside each range. */
void lt_req(struct ulp_load_req *req, const char *path, char *const *argv, char *const *envp);
void lt_sentinels_place(const struct ulp_load_req *req);
void lt_sentinels_check(const struct ulp_load_req *req);

/* Fails the test unless [lo, hi) is entirely a PROT_NONE anonymous (NORESERVE) reservation. */
void lt_assert_reserved(uintptr_t lo, uintptr_t hi);
void lt_assert_req_reserved(const struct ulp_load_req *req);
/* The same, in another process (pid) of ours. */
void lt_assert_reserved_in(pid_t pid, uintptr_t lo, uintptr_t hi);
void lt_assert_req_reserved_in(pid_t pid, const struct ulp_load_req *req);
/* The /proc/self/maps line covering addr (perms and path), or 0 when unmapped. */
int lt_maps_at(uintptr_t addr, char perms[5], char *path, size_t pathlen);

int lt_count_fds(void);

/* Walk a start-up stack: the auxv value of type, *found = 0 when absent. */
uint64_t lt_auxv(uintptr_t sp, uint64_t type, int *found);
/* Pointer to the first auxv pair on the stack. */
uint64_t *lt_auxv_start(uintptr_t sp);

#endif
