/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * pvas_auxv.h - the auxiliary vector of a program loaded into a partition,
 * one list for both loaders: libulp's (loader/stack.c, the user backend) and
 * the module's (kmod/pvas_stack.c, PVAS_IOC_LOAD). Each loader fills in what
 * it knows of the machine and of the caller (struct pvas_auxv_host) and of
 * the program it mapped (struct pvas_auxv_prog); pvas_auxv_fill writes the
 * pairs in the order execve(2) writes them. Dual-licensed: the module is
 * GPL, libulp MIT.
 *
 * The AT_* numbers and Elf64_Phdr come from the includer: <elf.h> in user
 * space, <linux/auxvec.h> and <linux/elf.h> in the kernel.
 */
#ifndef _UAPI_PVAS_AUXV_H
#define _UAPI_PVAS_AUXV_H

#include <linux/types.h>

/* Pairs pvas_auxv_fill writes at the most (no AT_NULL: the caller ends it). */
#define PVAS_AUXV_FILL_MAX	20

struct pvas_auxv_host {
	__u64 sysinfo_ehdr;	/* the vDSO; 0: none, left out */
	__u64 minsigstksz;	/* 0: left out */
	__u64 hwcap;
	__u64 hwcap2;
	__u64 pagesz;
	__u64 clktck;
	__u64 uid;
	__u64 euid;
	__u64 gid;
	__u64 egid;
};

struct pvas_auxv_prog {
	__u64 phdr;		/* the program's headers, mapped */
	__u64 phnum;
	__u64 base;		/* its interpreter's load bias; 0: none */
	__u64 entry;		/* the program's entry */
	__u64 random;		/* on the new stack: 16 random bytes, */
	__u64 execfn;		/* the path it was run by, */
	__u64 platform;		/* the platform string */
};

/* Writes the pairs into v (2 * PVAS_AUXV_FILL_MAX words); returns how many. */
static inline __u32 pvas_auxv_fill(__u64 *v, const struct pvas_auxv_host *h,
				   const struct pvas_auxv_prog *p)
{
	__u32 n = 0;

#define PVAS_AUXV_PUT(type, val)		\
	do {					\
		v[2 * n] = (type);		\
		v[2 * n + 1] = (val);		\
		n++;				\
	} while (0)
	if (h->sysinfo_ehdr)
		PVAS_AUXV_PUT(AT_SYSINFO_EHDR, h->sysinfo_ehdr);
	if (h->minsigstksz)
		PVAS_AUXV_PUT(AT_MINSIGSTKSZ, h->minsigstksz);
	PVAS_AUXV_PUT(AT_HWCAP, h->hwcap);
	PVAS_AUXV_PUT(AT_PAGESZ, h->pagesz);
	PVAS_AUXV_PUT(AT_CLKTCK, h->clktck);
	PVAS_AUXV_PUT(AT_PHDR, p->phdr);
	PVAS_AUXV_PUT(AT_PHENT, sizeof(Elf64_Phdr));
	PVAS_AUXV_PUT(AT_PHNUM, p->phnum);
	PVAS_AUXV_PUT(AT_BASE, p->base);
	PVAS_AUXV_PUT(AT_FLAGS, 0);
	PVAS_AUXV_PUT(AT_ENTRY, p->entry);
	PVAS_AUXV_PUT(AT_UID, h->uid);
	PVAS_AUXV_PUT(AT_EUID, h->euid);
	PVAS_AUXV_PUT(AT_GID, h->gid);
	PVAS_AUXV_PUT(AT_EGID, h->egid);
	PVAS_AUXV_PUT(AT_SECURE, 0);	/* set-id bits are ignored */
	PVAS_AUXV_PUT(AT_RANDOM, p->random);
	PVAS_AUXV_PUT(AT_HWCAP2, h->hwcap2);
	PVAS_AUXV_PUT(AT_EXECFN, p->execfn);
	PVAS_AUXV_PUT(AT_PLATFORM, p->platform);
#undef PVAS_AUXV_PUT
	return n;
}

#endif /* _UAPI_PVAS_AUXV_H */
