/* SPDX-License-Identifier: MIT */
/*
 * pvas_cb.h - the part of a ULP's control block that the program running as the ULP may see, and
 * the entry points it may call. One copy, shared by libulp (libulp/kernel/proc.h puts it first in
 * struct ulp_cb) and the guest library (libulp/guest/pvas_guest.c, linked into guest programs).
 *
 * The launcher passes the control block's address in the auxiliary vector under PVAS_AT_CB, a
 * private type the kernel never uses. The guest library finds it with getauxval(PVAS_AT_CB),
 * checks magic and ops->version, and calls ops->fn(cb, ...) for each pvas_* call; version says
 * which entries exist: 1 get_pvid, yield, switch_to; 2 export_addr, import_addr; 3 exec, barrier.
 *
 * A guest program is linked once and may run under a newer runtime: nothing here moves; entries are
 * only added at the end of struct ulp_guest_ops, with a new version.
 */
#ifndef PVAS_UAPI_PVAS_CB_H
#define PVAS_UAPI_PVAS_CB_H

#include <stddef.h>
#include <stdint.h>

#define PVAS_CB_MAGIC 0x50564153434231ull /* "PVASCB1" */
#define PVAS_AT_CB 0x50564153		  /* private auxv tag: the control block's address */

/* The whole control block: the runtime's; a guest only passes the pointer back. */
struct ulp_cb;

struct ulp_guest_ops {
	uint32_t version;
	int (*get_pvid)(struct ulp_cb *cb);
	int (*yield)(struct ulp_cb *cb);
	int (*switch_to)(struct ulp_cb *cb, int pvid);
	int (*export_addr)(struct ulp_cb *cb, const char *name, void *addr);
	int (*import_addr)(struct ulp_cb *cb, const char *name, void **addr);
	int (*exec)(struct ulp_cb *cb, int pvid, const char *file, char *const argv[],
		    char *const envp[]);
	int (*barrier)(struct ulp_cb *cb, const char *name, int count);
};

/*
 * The first bytes of struct ulp_cb. The fields come as a macro so that struct ulp_cb can embed
 * them unnamed (cb->magic, as before) in a union with struct pvas_cb: one declaration, both
 * views.
 */
#define PVAS_CB_FIELDS                                                                             \
	uint64_t magic;	  /* PVAS_CB_MAGIC once the ULP is loaded */                               \
	int32_t pvid;	  /* its partition */                                                      \
	int32_t reserved; /* 0 (the ULP's state is in the runtime's partition table) */            \
	const struct ulp_guest_ops *ops;

struct pvas_cb {
	PVAS_CB_FIELDS
};

_Static_assert(offsetof(struct pvas_cb, magic) == 0 && offsetof(struct pvas_cb, pvid) == 8 &&
		   offsetof(struct pvas_cb, reserved) == 12 &&
		   offsetof(struct pvas_cb, ops) == 16 && sizeof(struct pvas_cb) == 24,
	       "struct pvas_cb is an ABI with guest programs built earlier");

#endif
