// SPDX-License-Identifier: GPL-2.0
/*
 * pvas address-space objects: creation, partition ownership and the ioctls
 * on an object's descriptor.
 *
 * A partition belongs to a thread group (struct pid of PIDTYPE_TGID). The
 * claim is dropped when the owner gives it back, when the owner closes its
 * last descriptor of the object or exits (->flush), when any later
 * operation finds the owner dead (a killed task sharing its fd table with
 * a live one never reaches ->flush), and when the object dies (->release).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "pvas_internal.h"

/* The lowest base accepted: keeps partition 0 away from the NULL area. */
#define PVAS_BASE_MIN	SZ_16M

static DEFINE_MUTEX(pvas_list_lock);
static LIST_HEAD(pvas_list);
static DEFINE_IDA(pvas_ida);
static atomic_t pvas_nr_objects = ATOMIC_INIT(0);
static atomic_t pvas_nr_parts = ATOMIC_INIT(0);

static int pvas_check_hdr(u32 version, u32 size, size_t want)
{
	if (version != PVAS_ABI_VERSION)
		return -EPROTO;
	return size == want ? 0 : -EINVAL;
}

static bool pvas_is_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

/* True while at least one thread of the owner's group has not exited. */
static bool pvas_owner_alive(struct pid *owner)
{
	struct task_struct *t;
	bool alive = false;

	rcu_read_lock();
	t = pid_task(owner, PIDTYPE_TGID);
	if (t)
		alive = atomic_read(&t->signal->live) > 0;
	rcu_read_unlock();
	return alive;
}

/* Under as->lock. */
static void pvas_part_free(struct pvas_as *as, unsigned long pvid,
			   struct pvas_part *p)
{
	xa_erase(&as->parts, pvid);
	put_pid(p->owner);
	kfree(p);
	as->owned--;
	atomic_dec(&pvas_nr_parts);
}

/* Partition pvid's claim, or NULL when free; drops a dead owner's claim. */
static struct pvas_part *pvas_part_get(struct pvas_as *as, u32 pvid)
{
	struct pvas_part *p = xa_load(&as->parts, pvid);

	if (p && !pvas_owner_alive(p->owner)) {
		pvas_part_free(as, pvid, p);
		p = NULL;
	}
	return p;
}

/* Drop the claims of owner, or all claims when owner is NULL. */
static void pvas_part_drop(struct pvas_as *as, struct pid *owner)
{
	struct pvas_part *p;
	unsigned long pvid;

	xa_for_each(&as->parts, pvid, p) {
		if (!owner || p->owner == owner)
			pvas_part_free(as, pvid, p);
	}
}

/* Drop the claims of owners that are gone. */
static void pvas_part_reap(struct pvas_as *as)
{
	struct pvas_part *p;
	unsigned long pvid;

	xa_for_each(&as->parts, pvid, p) {
		if (!pvas_owner_alive(p->owner))
			pvas_part_free(as, pvid, p);
	}
}

static int pvas_match_file(const void *want, struct file *f, unsigned int fd)
{
	return f == want;
}

/*
 * Called on every close(2) of a descriptor and for each descriptor when a
 * task's fd table goes away at exit (then current->files is already NULL).
 */
static int pvas_as_flush(struct file *file, fl_owner_t id)
{
	struct pvas_as *as = file->private_data;
	struct files_struct *files = current->files;

	if (files) {
		/* Another descriptor of this table still reaches the object. */
		if (iterate_fd(files, 0, pvas_match_file, file))
			return 0;
	} else if (atomic_read(&current->signal->live) > 0) {
		/* One thread with a private table left; the group lives on. */
		return 0;
	}
	/* Killed while waiting: the claims go when the owner is found dead. */
	if (mutex_lock_killable(&as->lock))
		return 0;
	pvas_part_drop(as, task_tgid(current));
	mutex_unlock(&as->lock);
	return 0;
}

static int pvas_as_release(struct inode *inode, struct file *file)
{
	struct pvas_as *as = file->private_data;

	mutex_lock(&pvas_list_lock);
	list_del(&as->node);
	mutex_unlock(&pvas_list_lock);

	mutex_lock(&as->lock);
	pvas_part_drop(as, NULL);
	mutex_unlock(&as->lock);
	xa_destroy(&as->parts);
	put_pid(as->creator);
	mmdrop(as->mm);
	ida_free(&pvas_ida, as->id);
	kfree(as);
	atomic_dec(&pvas_nr_objects);
	return 0;
}

static long pvas_ioc_attach(struct pvas_as *as, void __user *uarg)
{
	struct pvas_attach a;
	struct pvas_part *p;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	err = pvas_check_hdr(a.version, a.size, sizeof(a));
	if (err)
		return err;
	if (a.flags || !pvas_is_zero(a.reserved, sizeof(a.reserved)) ||
	    a.pvid >= as->count)
		return -EINVAL;

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	p->owner = get_task_pid(current, PIDTYPE_TGID);
	p->state = PVAS_PART_OWNED;
	a.start = pvas_part_start(as, a.pvid);

	if (mutex_lock_killable(&as->lock)) {
		err = -EINTR;
		goto out_free;
	}
	if (pvas_part_get(as, a.pvid)) {
		err = -EBUSY;
		goto out_unlock;
	}
	err = xa_insert(&as->parts, a.pvid, p, GFP_KERNEL_ACCOUNT);
	if (err)
		goto out_unlock;
	as->owned++;
	atomic_inc(&pvas_nr_parts);
	if (copy_to_user(uarg, &a, sizeof(a))) {
		pvas_part_free(as, a.pvid, p);
		err = -EFAULT;
	}
	mutex_unlock(&as->lock);
	return err;

out_unlock:
	mutex_unlock(&as->lock);
out_free:
	put_pid(p->owner);
	kfree(p);
	return err;
}

/* The caller's own claim on pvid, or an error; under as->lock. */
static int pvas_part_mine(struct pvas_as *as, u32 pvid, struct pvas_part **pp)
{
	struct pvas_part *p = pvas_part_get(as, pvid);

	if (!p)
		return -ENOENT;
	if (p->owner != task_tgid(current))
		return -EPERM;
	*pp = p;
	return 0;
}

static long pvas_ioc_release(struct pvas_as *as, void __user *uarg)
{
	struct pvas_release r;
	struct pvas_part *p;
	int err;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	err = pvas_check_hdr(r.version, r.size, sizeof(r));
	if (err)
		return err;
	if (r.flags || !pvas_is_zero(r.reserved, sizeof(r.reserved)) ||
	    r.pvid >= as->count)
		return -EINVAL;

	if (mutex_lock_killable(&as->lock))
		return -EINTR;
	err = pvas_part_mine(as, r.pvid, &p);
	if (!err)
		pvas_part_free(as, r.pvid, p);
	mutex_unlock(&as->lock);
	return err;
}

static long pvas_ioc_info(struct pvas_as *as, void __user *uarg)
{
	struct pvas_info in;
	struct pvas_part *p;
	int err;

	if (copy_from_user(&in, uarg, sizeof(in)))
		return -EFAULT;
	err = pvas_check_hdr(in.version, in.size, sizeof(in));
	if (err)
		return err;
	if (in.flags || !pvas_is_zero(in.reserved, sizeof(in.reserved)) ||
	    in.pvid >= as->count)
		return -EINVAL;

	if (mutex_lock_killable(&as->lock))
		return -EINTR;
	p = pvas_part_get(as, in.pvid);
	in.base = as->base;
	in.part_size = as->part_size;
	in.count = as->count;
	in.id = as->id;
	in.owned = as->owned;
	in.state = p ? p->state : PVAS_PART_FREE;
	in.owner = p ? pid_vnr(p->owner) : 0;
	in.flags = p && p->owner == task_tgid(current) ? PVAS_INFO_MINE : 0;
	in.out_reserved0 = 0;
	in.start = pvas_part_start(as, in.pvid);
	memset(in.out_reserved, 0, sizeof(in.out_reserved));
	mutex_unlock(&as->lock);

	return copy_to_user(uarg, &in, sizeof(in)) ? -EFAULT : 0;
}

/* Under as->lock: the caller still owns pvid; map the prepared program. */
static int pvas_load_locked(struct pvas_as *as, u32 pvid,
			    struct pvas_loader *ld, struct pvas_load_result *res)
{
	struct pvas_part *p;
	int err;

	err = pvas_part_mine(as, pvid, &p);
	if (err)
		return err;
	err = pvas_loader_map(ld, res);
	p->state = err ? PVAS_PART_OWNED : PVAS_PART_LOADED;
	return err;
}

static long pvas_ioc_load(struct pvas_as *as, void __user *uarg)
{
	struct pvas_load l;
	struct pvas_load_req req;
	struct pvas_load_result res;
	struct pvas_loader *ld;
	struct pvas_part *p;
	int err;

	if (copy_from_user(&l, uarg, sizeof(l)))
		return -EFAULT;
	err = pvas_check_hdr(l.version, l.size, sizeof(l));
	if (err)
		return err;
	if (l.flags || !pvas_is_zero(l.reserved, sizeof(l.reserved)) ||
	    l.pvid >= as->count ||
	    (l.aux_type && l.aux_type < PVAS_AUX_PRIVATE_MIN))
		return -EINVAL;

	/* Fail early on a partition that is not ours; checked again below. */
	if (mutex_lock_killable(&as->lock))
		return -EINTR;
	err = pvas_part_mine(as, l.pvid, &p);
	mutex_unlock(&as->lock);
	if (err)
		return err;

	req.start = pvas_part_start(as, l.pvid);
	req.size = as->part_size;
	req.path = u64_to_user_ptr(l.path);
	req.argv = u64_to_user_ptr(l.argv);
	req.envp = u64_to_user_ptr(l.envp);
	req.aux_type = l.aux_type;
	req.aux_val = l.aux_val;
	ld = pvas_loader_prepare(&req);
	if (IS_ERR(ld))
		return PTR_ERR(ld);

	if (mutex_lock_killable(&as->lock)) {
		pvas_loader_free(ld);
		return -EINTR;
	}
	err = pvas_load_locked(as, l.pvid, ld, &res);
	mutex_unlock(&as->lock);
	pvas_loader_free(ld);
	if (err)
		return err;

	l.entry = res.entry;
	l.sp = res.sp;
	l.prog_entry = res.prog_entry;
	l.load_bias = res.load_bias;
	l.interp_bias = res.interp_bias;
	l.brk_start = res.brk_start;
	l.brk_limit = res.brk_limit;
	l.stack_low = res.stack_low;
	l.mmap_start = res.mmap_start;
	memset(l.out_reserved, 0, sizeof(l.out_reserved));
	return copy_to_user(uarg, &l, sizeof(l)) ? -EFAULT : 0;
}

static long pvas_as_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct pvas_as *as = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PVAS_IOC_ATTACH:
	case PVAS_IOC_RELEASE:
	case PVAS_IOC_LOAD:
	case PVAS_IOC_INFO:
		break;
	default:
		return -ENOTTY;
	}
	/* Partitions only make sense in the mm the object describes. */
	if (current->mm != as->mm)
		return -EXDEV;

	switch (cmd) {
	case PVAS_IOC_ATTACH:
		return pvas_ioc_attach(as, uarg);
	case PVAS_IOC_RELEASE:
		return pvas_ioc_release(as, uarg);
	case PVAS_IOC_LOAD:
		return pvas_ioc_load(as, uarg);
	default:
		return pvas_ioc_info(as, uarg);
	}
}

const struct file_operations pvas_as_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pvas_as_ioctl,
	.flush = pvas_as_flush,
	.release = pvas_as_release,
	.llseek = noop_llseek,
};

static int pvas_check_create(struct pvas_create *c)
{
	u64 len, end;
	int err;

	err = pvas_check_hdr(c->version, c->size, sizeof(*c));
	if (err)
		return err;
	if ((c->flags & ~PVAS_CREATE_CLOEXEC) || c->reserved0 ||
	    !pvas_is_zero(c->reserved, sizeof(c->reserved)))
		return -EINVAL;
	if (c->part_size < PVAS_PART_SIZE_MIN || !is_power_of_2(c->part_size))
		return -EINVAL;
	if (!c->base)
		c->base = PVAS_BASE_DEFAULT;
	if (!c->count || c->count > PVAS_COUNT_MAX ||
	    (c->base & ~PAGE_MASK) || c->base < PVAS_BASE_MIN)
		return -EINVAL;
	if (check_mul_overflow(c->part_size, (u64)c->count, &len) ||
	    check_add_overflow(c->base, len, &end) || end > DEFAULT_MAP_WINDOW)
		return -EINVAL;
	return 0;
}

long pvas_as_create(void __user *uarg)
{
	struct pvas_create c;
	struct pvas_as *as;
	struct file *file;
	int fd, id, err;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	err = pvas_check_create(&c);
	if (err)
		return err;
	if (!current->mm)
		return -EINVAL;

	as = kzalloc(sizeof(*as), GFP_KERNEL_ACCOUNT);
	if (!as)
		return -ENOMEM;
	id = ida_alloc_min(&pvas_ida, 1, GFP_KERNEL);
	if (id < 0) {
		kfree(as);
		return id;
	}
	mutex_init(&as->lock);
	xa_init(&as->parts);
	as->base = c.base;
	as->part_size = c.part_size;
	as->count = c.count;
	as->id = id;
	as->creator = get_task_pid(current, PIDTYPE_TGID);
	as->mm = current->mm;
	mmgrab(as->mm);

	fd = get_unused_fd_flags(O_RDWR |
				 (c.flags & PVAS_CREATE_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		err = fd;
		goto out_free;
	}
	file = anon_inode_getfile("[pvas]", &pvas_as_fops, as, O_RDWR);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto out_fd;
	}
	as->file = file;
	mutex_lock(&pvas_list_lock);
	list_add_tail(&as->node, &pvas_list);
	mutex_unlock(&pvas_list_lock);
	atomic_inc(&pvas_nr_objects);

	c.id = id;
	if (copy_to_user(uarg, &c, sizeof(c))) {
		put_unused_fd(fd);
		fput(file);	/* ->release frees the object */
		return -EFAULT;
	}
	fd_install(fd, file);
	return fd;

out_fd:
	put_unused_fd(fd);
out_free:
	put_pid(as->creator);
	mmdrop(as->mm);
	ida_free(&pvas_ida, id);
	kfree(as);
	return err;
}

/* The /proc/pvas listing; dead owners are reaped first so counts are live. */
int pvas_as_show_all(struct seq_file *m)
{
	struct pvas_as *as;
	struct pvas_part *p;
	unsigned long pvid;

	if (mutex_lock_killable(&pvas_list_lock))
		return -EINTR;
	list_for_each_entry(as, &pvas_list, node) {
		if (mutex_lock_killable(&as->lock))
			goto intr;
		pvas_part_reap(as);
		mutex_unlock(&as->lock);
	}
	seq_printf(m, "objects %d partitions %d\n",
		   atomic_read(&pvas_nr_objects), atomic_read(&pvas_nr_parts));
	list_for_each_entry(as, &pvas_list, node) {
		if (mutex_lock_killable(&as->lock))
			goto intr;
		seq_printf(m, "as %u base 0x%llx size 0x%llx count %u refs %ld owned %u creator %d\n",
			   as->id, as->base, as->part_size, as->count,
			   file_count(as->file), as->owned, pid_vnr(as->creator));
		xa_for_each(&as->parts, pvid, p)
			seq_printf(m, "  part %lu owner %d state %s\n", pvid,
				   pid_vnr(p->owner),
				   p->state == PVAS_PART_LOADED ? "loaded" : "owned");
		mutex_unlock(&as->lock);
	}
	mutex_unlock(&pvas_list_lock);
	return 0;

intr:
	mutex_unlock(&pvas_list_lock);
	return -EINTR;
}

int pvas_as_module_init(void)
{
	return 0;
}

void pvas_as_module_exit(void)
{
	ida_destroy(&pvas_ida);
}
