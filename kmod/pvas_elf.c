// SPDX-License-Identifier: GPL-2.0
/*
 * pvas ELF loading: map an ET_DYN program (and its interpreter) from the
 * file into a partition of the caller's mm and build its initial stack.
 *
 * Everything happens in current->mm, which the caller (pvas_as.c) has
 * checked to be the object's mm; only exported mm helpers are used
 * (vm_mmap with MAP_FIXED inside the partition, clear_user).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pvas_internal.h"

#ifndef PVAS_HAVE_EXE_FILE_ALLOW_WRITE_ACCESS
/* Kernels before the exe_file_* helpers pair open_exec with this. */
#define exe_file_allow_write_access(file) allow_write_access(file)
#endif

/* Program headers take at most 64 KiB, like the kernel's own loader. */
#define PVAS_PHNUM_MAX	(SZ_64K / sizeof(Elf64_Phdr))
/* Keeps p_vaddr + p_memsz and friends far from overflowing. */
#define PVAS_VADDR_MAX	BIT_ULL(46)

struct pvas_image {
	struct file *file;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	u64 lo, hi;		/* page-aligned span of the PT_LOAD vaddrs */
	u64 phdr_vaddr;		/* where the phdrs are in memory, unbiased */
	char *interp;		/* PT_INTERP path, or NULL */
};

static void pvas_image_close(struct pvas_image *im)
{
	if (im->file) {
		exe_file_allow_write_access(im->file);
		fput(im->file);
	}
	kfree(im->ph);
	kfree(im->interp);
	memset(im, 0, sizeof(*im));
}

/* Exactly len bytes at offset off, or an error (bad: not in the file). */
static int pvas_read(struct file *file, void *buf, size_t len, u64 off,
		     int bad)
{
	u64 isize = i_size_read(file_inode(file));
	loff_t pos = off;
	ssize_t n;

	if (off > isize || len > isize - off)
		return bad;
	n = kernel_read(file, buf, len, &pos);
	if (n < 0)
		return n;
	return (size_t)n == len ? 0 : bad;
}

static int pvas_check_ehdr(const Elf64_Ehdr *eh, int bad)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return bad;
	/* ET_EXEC cannot move into a partition: needs -fPIE -pie. */
	if (eh->e_type != ET_DYN || eh->e_machine != EM_X86_64)
		return bad;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum ||
	    eh->e_phnum > PVAS_PHNUM_MAX)
		return bad;
	return 0;
}

static int pvas_read_interp(struct pvas_image *im, const Elf64_Phdr *ph,
			    int bad)
{
	int err;

	if (im->interp || ph->p_filesz < 2 || ph->p_filesz > PATH_MAX)
		return bad;
	im->interp = kmalloc(ph->p_filesz, GFP_KERNEL);
	if (!im->interp)
		return -ENOMEM;
	err = pvas_read(im->file, im->interp, ph->p_filesz, ph->p_offset, bad);
	if (err)
		return err;
	if (strnlen(im->interp, ph->p_filesz) != ph->p_filesz - 1)
		return bad;
	return 0;
}

static int pvas_check_load(struct pvas_image *im, const Elf64_Phdr *ph,
			   u64 isize, int bad)
{
	u64 phsize = (u64)im->eh.e_phnum * sizeof(Elf64_Phdr);

	if (ph->p_filesz > ph->p_memsz || ph->p_vaddr >= PVAS_VADDR_MAX ||
	    ph->p_memsz >= PVAS_VADDR_MAX)
		return bad;
	if ((ph->p_vaddr - ph->p_offset) & ~PAGE_MASK)
		return bad;
	if (ph->p_offset > isize || ph->p_filesz > isize - ph->p_offset)
		return bad;
	im->lo = min(im->lo, ph->p_vaddr & PAGE_MASK);
	im->hi = max(im->hi, PAGE_ALIGN(ph->p_vaddr + ph->p_memsz));
	if (!im->phdr_vaddr && ph->p_offset <= im->eh.e_phoff &&
	    im->eh.e_phoff + phsize <= ph->p_offset + ph->p_filesz)
		im->phdr_vaddr = ph->p_vaddr + (im->eh.e_phoff - ph->p_offset);
	return 0;
}

static int pvas_check_phdrs(struct pvas_image *im, bool want_interp, int bad)
{
	u64 isize = i_size_read(file_inode(im->file));
	u64 pt_phdr = 0;
	unsigned int i, nload = 0;
	int err;

	im->lo = U64_MAX;
	im->hi = 0;
	for (i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &im->ph[i];

		switch (ph->p_type) {
		case PT_LOAD:
			err = pvas_check_load(im, ph, isize, bad);
			nload++;
			break;
		case PT_PHDR:
			pt_phdr = ph->p_vaddr;
			err = 0;
			break;
		case PT_INTERP:
			err = want_interp ? pvas_read_interp(im, ph, bad) : bad;
			break;
		default:
			err = 0;
			break;
		}
		if (err)
			return err;
	}
	if (!nload || im->eh.e_entry < im->lo || im->eh.e_entry >= im->hi)
		return bad;
	if (!im->phdr_vaddr)
		im->phdr_vaddr = pt_phdr;
	/* libc finds itself through AT_PHDR: it must be in the image. */
	if (im->phdr_vaddr < im->lo || im->phdr_vaddr >= im->hi)
		return bad;
	return 0;
}

/* Open path for execution and validate its ELF headers. */
static int pvas_image_open(struct pvas_image *im, const char *path,
			   bool want_interp, int bad)
{
	size_t phsize;
	int err;

	im->file = open_exec(path);
	if (IS_ERR(im->file)) {
		err = PTR_ERR(im->file);
		im->file = NULL;
		return err;
	}
	/*
	 * Unlike execve, the image lands in a memory the caller can read (and
	 * ptrace rules do not apply): an execute-only file stays closed.
	 */
	err = file_permission(im->file, MAY_READ);
	if (err)
		return err;
	err = pvas_read(im->file, &im->eh, sizeof(im->eh), 0, bad);
	if (err)
		return err;
	err = pvas_check_ehdr(&im->eh, bad);
	if (err)
		return err;
	phsize = im->eh.e_phnum * sizeof(Elf64_Phdr);
	im->ph = kmalloc(phsize, GFP_KERNEL);
	if (!im->ph)
		return -ENOMEM;
	err = pvas_read(im->file, im->ph, phsize, im->eh.e_phoff, bad);
	if (err)
		return err;
	return pvas_check_phdrs(im, want_interp, bad);
}

static int pvas_mmap(struct file *file, u64 addr, u64 len, int prot,
		     int flags, u64 off)
{
	unsigned long r;

	r = vm_mmap(file, addr, len, prot, flags | MAP_PRIVATE | MAP_FIXED,
		    off);
	if (IS_ERR_VALUE(r))
		return (int)r;
	return r == addr ? 0 : -ENOMEM;
}

/*
 * No transparent huge pages on a partition's stack: with THP "always", the
 * first write (argv, auxv) would fill a 2 MiB page per program; 1000 ULPs ran
 * a 1 GiB test VM out of memory. Done before the stack is written.
 */
static void pvas_no_hugepages(u64 addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	mmap_write_lock(mm);
	vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr)
		vma->vm_flags |= VM_NOHUGEPAGE;
	mmap_write_unlock(mm);
}

static int pvas_segment_prot(u32 flags)
{
	return (flags & PF_R ? PROT_READ : 0) |
	       (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

/* File-backed part, then the zeroed tail page and anonymous bss. */
static int pvas_map_segment(struct file *file, const Elf64_Phdr *ph, u64 bias)
{
	int prot = pvas_segment_prot(ph->p_flags);
	u64 addr = bias + ph->p_vaddr;
	u64 start = addr & PAGE_MASK;
	u64 file_end = addr + ph->p_filesz;
	u64 anon = start;
	u64 mem_end = PAGE_ALIGN(addr + ph->p_memsz);
	int err;

	if (ph->p_filesz) {
		anon = PAGE_ALIGN(file_end);
		err = pvas_mmap(file, start, anon - start, prot, 0,
				ph->p_offset - (addr - start));
		if (err)
			return err;
	}
	if (ph->p_memsz == ph->p_filesz)
		return 0;
	/* bss in a read-only segment would need mprotect: not exported. */
	if (!(prot & PROT_WRITE))
		return -ENOEXEC;
	if (anon > file_end &&
	    clear_user(u64_to_user_ptr(file_end), anon - file_end))
		return -EFAULT;
	if (mem_end > anon)
		return pvas_mmap(NULL, anon, mem_end - anon, prot,
				 MAP_ANONYMOUS, 0);
	return 0;
}

static int pvas_image_map(const struct pvas_image *im, u64 bias)
{
	unsigned int i;
	int err;

	for (i = 0; i < im->eh.e_phnum; i++) {
		if (im->ph[i].p_type != PT_LOAD)
			continue;
		err = pvas_map_segment(im->file, &im->ph[i], bias);
		if (err)
			return err;
	}
	return 0;
}

/* The caller must have reserved the whole partition (no holes). */
static int pvas_range_mapped(u64 start, u64 end)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	u64 addr = start;
	int err = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			err = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return err;
}

/* Everything but the control block back to a PROT_NONE reservation. */
static int pvas_reset(u64 start, u64 size)
{
	return pvas_mmap(NULL, start + PVAS_CB_SIZE, size - PVAS_CB_SIZE,
			 PROT_NONE, MAP_ANONYMOUS | MAP_NORESERVE, 0);
}

static char *pvas_copy_path(const char __user *upath)
{
	char *path = kmalloc(PVAS_PATH_MAX, GFP_KERNEL);
	long n;

	if (!path)
		return ERR_PTR(-ENOMEM);
	n = strncpy_from_user(path, upath, PVAS_PATH_MAX);
	if (n <= 0 || n >= PVAS_PATH_MAX) {
		kfree(path);
		if (n < 0)
			return ERR_PTR(n);
		return ERR_PTR(n ? -ENAMETOOLONG : -ENOENT);
	}
	return path;
}

struct pvas_loader {
	struct pvas_load_req req;
	struct pvas_image prog;
	struct pvas_image interp;
	struct pvas_args args;
	char *path;
};

void pvas_loader_free(struct pvas_loader *ld)
{
	if (IS_ERR_OR_NULL(ld))
		return;
	pvas_image_close(&ld->interp);
	pvas_image_close(&ld->prog);
	pvas_args_free(&ld->args);
	kfree(ld->path);
	kfree(ld);
}

/*
 * Copy the arguments, open and check the files: everything that may block
 * on user memory or file systems, done before the partition lock is taken.
 */
struct pvas_loader *pvas_loader_prepare(const struct pvas_load_req *req)
{
	u64 size = req->size;
	u64 stack = pvas_stack_size(size);
	struct pvas_loader *ld;
	int err;

	ld = kzalloc(sizeof(*ld), GFP_KERNEL_ACCOUNT);
	if (!ld)
		return ERR_PTR(-ENOMEM);
	ld->req = *req;
	ld->path = pvas_copy_path(req->path);
	if (IS_ERR(ld->path)) {
		err = PTR_ERR(ld->path);
		ld->path = NULL;
		goto fail;
	}
	err = pvas_args_copy(&ld->args, req, stack / 4);
	if (err)
		goto fail;
	err = pvas_image_open(&ld->prog, ld->path, true, -ENOEXEC);
	if (err)
		goto fail;
	err = -EFBIG;
	if (ld->prog.hi - ld->prog.lo >
	    PVAS_LAYOUT_IMAGE_END(size) - PVAS_LAYOUT_IMAGE(size))
		goto fail;
	if (ld->prog.interp) {
		err = pvas_image_open(&ld->interp, ld->prog.interp, false,
				      -ELIBBAD);
		if (err == -ENOEXEC)
			err = -ELIBBAD;
		if (err)
			goto fail;
		err = -EFBIG;
		if (ld->interp.hi - ld->interp.lo >
		    PVAS_LAYOUT_MMAP(size) - PVAS_LAYOUT_INTERP(size))
			goto fail;
	}
	return ld;

fail:
	pvas_loader_free(ld);
	return ERR_PTR(err);
}

static int pvas_loader_layout(struct pvas_loader *ld,
			      struct pvas_load_result *res)
{
	const struct pvas_load_req *req = &ld->req;
	u64 size = req->size;
	u64 top = req->start + PVAS_LAYOUT_IMAGE(size); /* of the stack area */
	struct pvas_auxv_info ai;
	int err;

	res->load_bias = req->start + PVAS_LAYOUT_IMAGE(size) - ld->prog.lo;
	err = pvas_image_map(&ld->prog, res->load_bias);
	if (err)
		return err;
	res->prog_entry = res->load_bias + ld->prog.eh.e_entry;
	res->entry = res->prog_entry;
	res->interp_bias = 0;
	res->mmap_start = req->start + PVAS_LAYOUT_MMAP(size);
	if (ld->interp.file) {
		res->interp_bias =
			req->start + PVAS_LAYOUT_INTERP(size) - ld->interp.lo;
		err = pvas_image_map(&ld->interp, res->interp_bias);
		if (err)
			return err;
		res->entry = res->interp_bias + ld->interp.eh.e_entry;
	}
	res->brk_start = res->load_bias + ld->prog.hi;
	res->brk_limit = req->start + PVAS_LAYOUT_BRK_END(size);
	/* The stack area's lowest page stays PROT_NONE: the guard. */
	res->stack_low = req->start + PVAS_LAYOUT_STACK(size) + PAGE_SIZE;
	err = pvas_mmap(NULL, res->stack_low, top - res->stack_low,
			PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_STACK, 0);
	if (err)
		return err;
	pvas_no_hugepages(res->stack_low);

	ai.phdr = res->load_bias + ld->prog.phdr_vaddr;
	ai.phnum = ld->prog.eh.e_phnum;
	ai.entry = res->prog_entry;
	ai.interp_bias = res->interp_bias;
	ai.execfn = ld->path;
	ai.aux_type = req->aux_type;
	ai.aux_val = req->aux_val;
	return pvas_stack_build(&ld->args, &ai, top, res->stack_low, &res->sp);
}

/*
 * Replace the partition's contents with the prepared program. The caller
 * holds the partition (its object's lock, ownership checked). On failure
 * after the reset the partition is left reset.
 */
int pvas_loader_map(struct pvas_loader *ld, struct pvas_load_result *res)
{
	u64 start = ld->req.start, size = ld->req.size;
	int err;

	err = pvas_range_mapped(start, start + size);
	if (err)
		return err;
	err = pvas_reset(start, size);
	if (err)
		return err;
	err = pvas_loader_layout(ld, res);
	if (err)
		pvas_reset(start, size);
	return err;
}
