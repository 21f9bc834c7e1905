// SPDX-License-Identifier: GPL-2.0
/*
 * pvas: partitioned virtual address spaces for user-level processes.
 *
 * /dev/pvas hands out address-space objects (pvas_as.c); each splits a
 * region of the caller's mm into fixed-size partitions that processes
 * sharing that mm claim, and into which the module loads ELF programs
 * (pvas_elf.c, pvas_stack.c). /proc/pvas lists objects and owners.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "pvas_internal.h"

static long pvas_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	if (cmd == PVAS_IOC_CREATE)
		return pvas_as_create((void __user *)arg);
	return -ENOTTY;
}

static const struct file_operations pvas_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pvas_dev_ioctl,
	.llseek = noop_llseek,
};

/* Anyone may create objects: they only act on the caller's own mm. */
static struct miscdevice pvas_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pvas",
	.fops = &pvas_dev_fops,
	.mode = 0666,
};

static int pvas_proc_show(struct seq_file *m, void *v)
{
	return pvas_as_show_all(m);
}

static struct proc_dir_entry *pvas_proc;

/* The ABI structs have no implicit padding; their sizes are part of it. */
static void __init pvas_abi_check(void)
{
	BUILD_BUG_ON(sizeof(struct pvas_create) != 56);
	BUILD_BUG_ON(sizeof(struct pvas_attach) != 40);
	BUILD_BUG_ON(sizeof(struct pvas_release) != 32);
	BUILD_BUG_ON(sizeof(struct pvas_load) != 168);
	BUILD_BUG_ON(sizeof(struct pvas_info) != 96);
}

static int __init pvas_init(void)
{
	int err;

	pvas_abi_check();
	err = pvas_as_module_init();
	if (err)
		return err;
	pvas_proc = proc_create_single("pvas", 0444, NULL, pvas_proc_show);
	if (!pvas_proc) {
		err = -ENOMEM;
		goto out_as;
	}
	err = misc_register(&pvas_misc);
	if (err)
		goto out_proc;
	pr_info("ABI %d, /dev/pvas ready\n", PVAS_ABI_VERSION);
	return 0;

out_proc:
	proc_remove(pvas_proc);
out_as:
	pvas_as_module_exit();
	return err;
}

/* No descriptor is open here: each one holds a module reference. */
static void __exit pvas_exit(void)
{
	misc_deregister(&pvas_misc);
	proc_remove(pvas_proc);
	pvas_as_module_exit();
}

module_init(pvas_init);
module_exit(pvas_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Partitioned virtual address spaces for user-level processes");
MODULE_VERSION("0.1.0");
