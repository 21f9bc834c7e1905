/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvas: objects shared by the files of the module.
 *
 * Locking: pvas_list_lock (global list of address-space objects) is taken
 * before pvas_as.lock, never the other way. pvas_as.lock is held while a
 * LOAD maps the program (mmap_lock below it); files are opened and read and
 * arguments copied before it is taken.
 */
#ifndef PVAS_INTERNAL_H
#define PVAS_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "pvas_ioctl.h"

struct file;
struct mm_struct;
struct seq_file;

/* One partition that has an owner; free partitions have no entry. */
struct pvas_part {
	struct pid *owner;		/* thread group that claimed it */
	u32 state;			/* enum pvas_part_state */
};

/* An address-space object: the private data of its anon-inode file. */
struct pvas_as {
	struct list_head node;		/* in pvas_list, under pvas_list_lock */
	struct mutex lock;		/* parts, owned, LOAD */
	struct xarray parts;		/* pvid -> struct pvas_part */
	struct mm_struct *mm;		/* creator's mm (mmgrab'ed) */
	struct file *file;
	u64 base;
	u64 part_size;
	u32 count;
	u32 id;
	u32 owned;
	struct pid *creator;		/* for the listing */
};

/* pvas_as.c */
extern const struct file_operations pvas_as_fops;
long pvas_as_create(void __user *uarg);
int pvas_as_show_all(struct seq_file *m);
int pvas_as_module_init(void);
void pvas_as_module_exit(void);

/* Partition geometry. */
static inline u64 pvas_part_start(const struct pvas_as *as, u32 pvid)
{
	return as->base + (u64)pvid * as->part_size;
}

static inline u64 pvas_stack_size(u64 part_size)
{
	return PVAS_STACK_SIZE(part_size);
}

/*
 * pvas_elf.c: load a program into [start, start + size) of current->mm:
 * prepare (copy arguments, open and check files; no lock needed), then map
 * under the object's lock.
 */
struct pvas_load_req {
	u64 start;			/* partition start */
	u64 size;			/* partition size */
	const char __user *path;
	const char __user *const __user *argv;
	const char __user *const __user *envp;
	u64 aux_type;			/* 0, or an extra auxv entry */
	u64 aux_val;
};

struct pvas_load_result {
	u64 entry;
	u64 sp;
	u64 prog_entry;
	u64 load_bias;
	u64 interp_bias;
	u64 brk_start;
	u64 brk_limit;
	u64 stack_low;
	u64 mmap_start;
};

struct pvas_loader;
struct pvas_loader *pvas_loader_prepare(const struct pvas_load_req *req);
int pvas_loader_map(struct pvas_loader *ld, struct pvas_load_result *res);
void pvas_loader_free(struct pvas_loader *ld);

/* pvas_stack.c: argv/envp copied in, initial stack written out. */
struct pvas_args {
	char *strs;			/* argv strings, then envp strings */
	size_t used;			/* bytes used in strs */
	size_t limit;			/* strings + pointers may take this much */
	u32 argc;
	u32 envc;
};

struct pvas_auxv_info {
	u64 phdr;
	u64 phnum;
	u64 entry;
	u64 interp_bias;
	const char *execfn;		/* kernel copy of the path */
	u64 aux_type;			/* 0, or an extra entry before AT_NULL */
	u64 aux_val;
};

int pvas_args_copy(struct pvas_args *a, const struct pvas_load_req *req,
		   size_t limit);
void pvas_args_free(struct pvas_args *a);
int pvas_stack_build(const struct pvas_args *a,
		     const struct pvas_auxv_info *ai, u64 top, u64 low,
		     u64 *sp);

#endif /* PVAS_INTERNAL_H */
