/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pvas_ioctl.h - ABI of the pvas kernel module (/dev/pvas), shared by the
 * module (kmod/) and the libulp "kmod" backend.
 *
 * Model
 *   An address-space object (AS) describes one partitioned virtual address
 *   space inside the mm of the process that created it:
 *
 *       partition N = [base + N * part_size, base + (N + 1) * part_size)
 *
 *   PVAS_IOC_CREATE on /dev/pvas makes an AS and returns a new file
 *   descriptor for it (the ioctl's return value). The AS lives as long as a
 *   descriptor refers to it (dup, fork and SCM_RIGHTS keep it alive).
 *   All other operations are ioctls on that AS descriptor and only work for
 *   tasks in the mm the AS was created in (the creator and its CLONE_VM
 *   children, "PVAS tasks"); any other caller gets -EXDEV.
 *
 *   The module does not reserve the region: user space maps
 *   [base, base + count * part_size) itself (PROT_NONE, MAP_NORESERVE)
 *   before it loads programs; PVAS_IOC_LOAD refuses a partition that is not
 *   fully mapped (-EFAULT).
 *
 * Ownership
 *   PVAS_IOC_ATTACH gives partition pvid to the calling process (thread
 *   group); one process may own many partitions. A partition goes back to
 *   the free pool on PVAS_IOC_RELEASE, when its owner closes its last
 *   descriptor of the AS, when the owner exits or is killed (checked at
 *   exit and again lazily by every later operation), and when the AS dies.
 *   Releasing a partition does not unmap it: its memory stays as it was
 *   until the next PVAS_IOC_LOAD resets it.
 *
 * Partition layout: one for both backends (libulp's user-space loader
 * uses the same macros, below). Offsets from the partition start, S the
 * partition size:
 *
 *   [0, PVAS_CB_SIZE)              control block, never touched by the module
 *   [PVAS_CB_SIZE, ..IMAGE(S))     stack, PVAS_STACK_SIZE(S) bytes; its lowest
 *                                  page is a guard (it also guards the
 *                                  control block)
 *   [..IMAGE(S), S / 8)            program image
 *   [image end, 3 * S / 16)        its brk heap (..BRK_END(S))
 *   [3 * S / 16, S / 4)            ELF interpreter (ld.so), if any
 *   [S / 4, S)                     mmap area (..MMAP(S))
 *
 * Everything a small program touches lies in the first quarter of its
 * partition: it needs few page-table pages, each of which costs a fault.
 *
 * Conventions
 *   Every argument struct starts with version (= PVAS_ABI_VERSION) and size
 *   (= sizeof the struct). A wrong version gives -EPROTO, a wrong size, an
 *   unknown flag or a non-zero reserved field -EINVAL. Output fields are
 *   written only on success. Errors are returned as -1/errno by ioctl(2).
 *   User pointers are carried in __u64 fields (cast via uintptr_t).
 *   x86_64 callers only: there is no 32-bit compat ioctl (-ENOTTY).
 *   Struct sizes are fixed by the ABI: create 56, attach 40, release 32,
 *   load 168, info 96 bytes.
 */
#ifndef _UAPI_PVAS_IOCTL_H
#define _UAPI_PVAS_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PVAS_DEVICE		"/dev/pvas"
#define PVAS_PROC_LIST		"/proc/pvas"
#define PVAS_ABI_VERSION	2	/* 2: one partition layout, below */

#define PVAS_PART_SIZE_MIN	(16ULL << 20)	/* 16 MiB */
#define PVAS_BASE_DEFAULT	0x100000000000ULL	/* 16 TiB */
#define PVAS_CB_SIZE		(64ULL << 10)	/* control block: 64 KiB */
#define PVAS_COUNT_MAX		(1U << 16)	/* partitions per object */
#define PVAS_STACK_SIZE_MAX	(8ULL << 20)	/* 8 MiB */
/* Stack mapping size of a partition of size s (guard page included). */
#define PVAS_STACK_SIZE(s) \
	((s) / 32 < PVAS_STACK_SIZE_MAX ? (s) / 32 : PVAS_STACK_SIZE_MAX)
/* Partition layout (see above): offsets of each area in a partition of s. */
#define PVAS_LAYOUT_STACK(s)		PVAS_CB_SIZE
#define PVAS_LAYOUT_IMAGE(s)		(PVAS_CB_SIZE + PVAS_STACK_SIZE(s))
#define PVAS_LAYOUT_IMAGE_END(s)	((s) / 8)
#define PVAS_LAYOUT_BRK_END(s)		((s) / 16 * 3)
#define PVAS_LAYOUT_INTERP(s)		((s) / 16 * 3)
#define PVAS_LAYOUT_MMAP(s)		((s) / 4)

/* Limits of PVAS_IOC_LOAD. */
#define PVAS_AUX_PRIVATE_MIN	0x1000	/* extra auxv types start here */
#define PVAS_PATH_MAX		4096	/* path, NUL included */
#define PVAS_ARG_STRLEN_MAX	(128 << 10)	/* one argv/envp string */
#define PVAS_ARGC_MAX		(1 << 16)	/* argv and envp entries each */
/* argv + envp strings and pointers together: at most stack_size / 4. */

/*
 * PVAS_IOC_CREATE, on /dev/pvas: make an address-space object.
 * Returns the new descriptor (>= 0).
 * Errors: -EINVAL part_size not a power of two or < PVAS_PART_SIZE_MIN,
 * base not page aligned or below 16 MiB, count 0 or > PVAS_COUNT_MAX, or
 * the region leaves the 47-bit user address space; -EPROTO wrong version; -ENOMEM; -EMFILE.
 */
#define PVAS_CREATE_CLOEXEC	0x1U	/* the new descriptor is O_CLOEXEC */

struct pvas_create {
	__u32 version;
	__u32 size;
	__u64 part_size;	/* in: bytes per partition */
	__u64 base;		/* in: 0 = PVAS_BASE_DEFAULT; out: base used */
	__u32 count;		/* in: number of partitions */
	__u32 flags;		/* in: PVAS_CREATE_* */
	__u32 id;		/* out: object id, as listed in /proc/pvas */
	__u32 reserved0;	/* zero */
	__u64 reserved[2];	/* zero */
};

/*
 * PVAS_IOC_ATTACH, on an AS descriptor: the calling process claims
 * partition pvid. Errors: -EINVAL pvid >= count; -EBUSY owned (also by the
 * caller itself); -EXDEV the caller is not in the AS's mm.
 */
struct pvas_attach {
	__u32 version;
	__u32 size;
	__u32 pvid;		/* in */
	__u32 flags;		/* in: zero */
	__u64 start;		/* out: first address of the partition */
	__u64 reserved[2];	/* zero */
};

/*
 * PVAS_IOC_RELEASE, on an AS descriptor: give partition pvid back.
 * Errors: -EINVAL out of range; -ENOENT not owned; -EPERM owned by another
 * process; -EXDEV.
 */
struct pvas_release {
	__u32 version;
	__u32 size;
	__u32 pvid;		/* in */
	__u32 flags;		/* in: zero */
	__u64 reserved[2];	/* zero */
};

/*
 * PVAS_IOC_LOAD, on an AS descriptor: load an ELF program into partition
 * pvid, which the caller must own. Like execve(2) without replacing the
 * caller: the file is opened with exec permission checks, its PT_LOAD
 * segments (and those of its PT_INTERP) are mapped from the file into the
 * partition, bss is zeroed and a System V initial stack (argc, argv, envp,
 * auxv) is built at the top of the partition's stack area. The files must
 * also be readable by the caller (their pages end up in its memory). Set-id bits
 * are ignored (AT_SECURE is 0) and there is no credential or LSM exec
 * transition: the program runs as the caller. argv may be 0 or empty:
 * argc is then 1 with argv[0] = "", as execve does.
 *
 * The partition (except its control block) is reset to PROT_NONE first;
 * after a failure found while mapping it is left reset, a failure found
 * earlier (files, arguments) leaves it untouched.
 *
 * aux_type/aux_val add one private auxv entry (libulp passes the address of
 * the partition's control block this way); a type below
 * PVAS_AUX_PRIVATE_MIN gives -EINVAL, so no standard entry can be forged.
 * To start the program, set rsp = sp, rdx = 0 and jump to entry. The
 * partition's free room for mmap emulation is [mmap_start, partition end),
 * mmap_start = PVAS_LAYOUT_MMAP(part_size) from the partition start.
 *
 * Errors: -ENOENT/-ENOTDIR... no such file; -EACCES no exec or read
 * permission, noexec mount or not a regular file; -ENOEXEC not an x86_64
 * ELF64 ET_DYN (ET_EXEC: rebuild with -fPIE -pie) or malformed headers;
 * -ELIBBAD bad interpreter; -EFBIG image does not fit its part of the
 * partition; -E2BIG argv/envp over the limits; -ENAMETOOLONG; -EFAULT bad
 * pointer or partition not mapped; -ENOENT partition not owned; -EPERM
 * owned by another process; -EXDEV; -EINTR fatal signal.
 */
struct pvas_load {
	__u32 version;
	__u32 size;
	__u32 pvid;		/* in */
	__u32 flags;		/* in: zero */
	__u64 path;		/* in: const char * */
	__u64 argv;		/* in: const char *const[], NULL-terminated */
	__u64 envp;		/* in: same; 0 = empty environment */
	__u64 aux_type;		/* in: 0, or one extra auxv entry of this */
	__u64 aux_val;		/* type (>= PVAS_AUX_PRIVATE_MIN) and value */
	__u64 reserved[2];	/* zero */
	/* out */
	__u64 entry;		/* where to jump: ld.so entry, or the program's */
	__u64 sp;		/* initial stack pointer, points at argc */
	__u64 prog_entry;	/* the program's entry (AT_ENTRY) */
	__u64 load_bias;	/* added to the program's p_vaddr */
	__u64 interp_bias;	/* same for the interpreter (AT_BASE); 0: none */
	__u64 brk_start;	/* first page after the program image */
	__u64 brk_limit;	/* the brk heap may grow up to here */
	__u64 stack_low;	/* lowest usable stack byte (above the guard) */
	__u64 mmap_start;	/* [mmap_start, partition end) is free */
	__u64 out_reserved[3];	/* written as zero */
};

/*
 * PVAS_IOC_INFO, on an AS descriptor: describe the AS and partition pvid.
 * Errors: -EINVAL pvid >= count; -EXDEV.
 */
enum pvas_part_state {
	PVAS_PART_FREE = 0,
	PVAS_PART_OWNED = 1,	/* attached, nothing loaded yet */
	PVAS_PART_LOADED = 2,	/* attached, a program was loaded */
};

#define PVAS_INFO_MINE		0x1U	/* out flag: owned by the caller */

struct pvas_info {
	__u32 version;
	__u32 size;
	__u32 pvid;		/* in */
	__u32 flags;		/* in: zero; out: PVAS_INFO_* */
	__u64 reserved[2];	/* zero */
	/* out */
	__u64 base;
	__u64 part_size;
	__u32 count;
	__u32 id;
	__u32 owned;		/* partitions owned in this AS */
	__u32 state;		/* enum pvas_part_state of pvid */
	__s32 owner;		/* owner's pid (caller's namespace), 0: none */
	__u32 out_reserved0;
	__u64 start;		/* first address of the partition */
	__u64 out_reserved[2];
};

#define PVAS_IOC_MAGIC		0xC5
#define PVAS_IOC_CREATE		_IOWR(PVAS_IOC_MAGIC, 0x01, struct pvas_create)
#define PVAS_IOC_ATTACH		_IOWR(PVAS_IOC_MAGIC, 0x02, struct pvas_attach)
#define PVAS_IOC_RELEASE	_IOW(PVAS_IOC_MAGIC, 0x03, struct pvas_release)
#define PVAS_IOC_LOAD		_IOWR(PVAS_IOC_MAGIC, 0x04, struct pvas_load)
#define PVAS_IOC_INFO		_IOWR(PVAS_IOC_MAGIC, 0x05, struct pvas_info)

#endif /* _UAPI_PVAS_IOCTL_H */
