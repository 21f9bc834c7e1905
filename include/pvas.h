/* SPDX-License-Identifier: MIT */
/*
 * PVAS: partitioned virtual address space, user-level processes (ULPs).
 *
 * Guest API: for programs that know they may run as ULPs (under ulpexec). Link libpvas-guest.a
 * (no other part of libulp goes into the guest): it finds the runtime through the control block
 * of its partition, whose address the loader passes in a private auxv entry, so it works in
 * static-pie and dynamic PIE guests alike. Run as an ordinary process, every call returns
 * -ENOTSUP instead of crashing.
 *
 * All functions return 0 or a negative errno code.
 */
#ifndef PVAS_H
#define PVAS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The caller's PVAS id (its partition number) in *pvid. */
int pvas_get_pvid(int *pvid);

/* Switch straight to ULP pvid, as in the User-level Process paper; the caller is queued behind
 * the ready work. 0 once the caller runs again (or at once when pvid is the caller).
 * -EINVAL: no such partition; -ESRCH: no running ULP there; -EAGAIN: it is running on another
 * worker or blocked, so it cannot be switched to now. */
int pvas_ulp_switch(int pvid);

/* Let other ULPs and threads run; the caller goes behind the ready work. */
int pvas_yield(void);

/* Publish addr under name (< 64 bytes) for the other ULPs of the address space, in any PVAS
 * task: the space is shared, so the address is usable as it is. -EEXIST: name taken; -ENOSPC:
 * table full. The name goes away when the exporting ULP's partition is released. */
int pvas_export(const char *name, void *addr);

/* Look name up. -ENOENT while nobody exported it (retry after pvas_yield to wait for it). */
int pvas_import(const char *name, void **addr);

#ifdef __cplusplus
}
#endif
#endif
