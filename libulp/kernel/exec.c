/* SPDX-License-Identifier: MIT */
/*
 * execve and execveat from a ULP: the new program replaces the ULP in its own partition, as the
 * kernel replaces a process image. The ULP keeps its pvid, rank, pid (its placeholder), parent,
 * cwd, umask, descriptors, signal mask, pending signals and alarm; docs/syscalls.md, "execve".
 *
 *   1. The trap (ULP context) asks the host, which owns the loader and a libc, to prepare: copy
 *      the path, argv and envp out of the old image, resolve the path as the ULP would (its cwd
 *      or dirfd, through its placeholder's /proc entries), follow a "#!" line to its interpreter,
 *      and run every check of the load (open, ELF, fit, E2BIG). A failure goes back to the old
 *      program, untouched. A target the loader refuses but the kernel runs (ET_EXEC) is answered
 *      ULP_EXEC_CHILD: sys_fork.c runs it as a child process whose status becomes the ULP's.
 *   2. Point of no return: the ULP goes RUNNING -> EXEC and ends every thread as exit_group does
 *      (sys_thread.c); the last one's exit path (proc.c, on a stack outside the partition) calls
 *      ulp_exec_reload, which does in the ULP's task what exec does to a process: handlers reset
 *      (SIG_IGN kept), alternate stack and POSIX timers gone, close-on-exec descriptors closed.
 *   3. The host empties the partition (not the control block), loads the new program, and the
 *      ULP's task starts afresh at its entry (proc.c: EXEC -> RUNNING).
 *
 * The host side runs on the host's request thread (libulp/host/api.c) with its libc; the ULP side
 * runs with the ULP's TLS loaded or on a PVAS task's worker: raw system calls only.
 */
#include "backend.h"
#include "io.h"
#include "execfile.h"
#include "shebang.h"
#include "proc.h"
#include "syscall.h"
#include "ulp_signal.h"
#include "uthread.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXEC_MAX_STRINGS (32u << 20) /* argv + envp copied at most: beyond, E2BIG */
/* One string of argv or envp at most, its NUL included: the kernel's MAX_ARG_STRLEN (32 pages),
 * beyond which its execve says E2BIG (before 28 Nov a ULP's in-place exec took a 600 KB
 * variable that the same execve from a process is refused). */
#define EXEC_MAX_STRLEN (32u * 4096)

/* Host memory: the new program between its checks and its load. */
struct exec_prep {
	struct ulp_host_call call; /* the commit, posted by ulp_exec_reload */
	struct ulp_cb *cb;
	/* cb's backend, kept here: cb may be gone when this is freed */
	const struct ulp_backend_ops *backend;
	char *execfn;	     /* the name the ULP gave */
	char *path;	     /* what the loader opens (/proc/PID/cwd/NAME for a relative one) */
	char **argv, **envp; /* copies; for a script, the interpreter's argv */
	char exe[PATH_MAX];  /* /proc/self/exe from now on */
	void *bprep;	     /* the backend's preparation */
};

/* The ULP's question, on its stack while it waits for the answer. */
struct exec_ask {
	struct ulp_host_call call;
	struct ulp_cb *cb;
	struct ulp_task *task; /* the asking thread */
	long nr, a[6];
	int cwdfd; /* its directory at the call (O_PATH), or -1 */
	long result;
};

/* ---- host side: copying out of the ULP ---- */

/* Read the ULP's memory without trusting its pointers: a bad one is EFAULT, not a fault here. */
static int peek(void *dst, uintptr_t src, size_t len)
{
	struct iovec l = {dst, len}, r = {(void *)src, len};

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int copy_str(uintptr_t src, char **out, size_t *budget)
{
	size_t cap = 0, n = 0, chunk;
	char *buf = NULL, *z, *nb;

	for (;;) {
		chunk = 4096 - (src + n) % 4096; /* never across a page that may be unmapped */
		if (n + chunk > *budget) {
			free(buf);
			return -E2BIG;
		}
		if (n + chunk > cap) {
			cap = (n + chunk) * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		if (peek(buf + n, src + n, chunk)) {
			free(buf);
			return -EFAULT;
		}
		z = memchr(buf + n, 0, chunk);
		if ((z ? (size_t)(z - buf) + 1 : n + chunk) > EXEC_MAX_STRLEN) {
			free(buf);
			return -E2BIG;
		}
		if (z) {
			*budget -= (size_t)(z - buf) + 1;
			*out = buf;
			return 0;
		}
		n += chunk;
	}
}

static void free_vec(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* A NULL-terminated array of strings (NULL itself: none, as Linux takes it). */
static int copy_vec(uintptr_t vec, char ***out, size_t *budget)
{
	size_t n = 0, cap = 16;
	char **v = calloc(cap, sizeof(*v)), **nv;
	uintptr_t p;
	int rc = 0;

	if (!v)
		return -ENOMEM;
	while (vec) {
		rc = peek(&p, vec + n * sizeof(p), sizeof(p));
		if (rc || !p)
			break;
		if (*budget < sizeof(p)) {
			rc = -E2BIG;
			break;
		}
		*budget -= sizeof(p);
		if (n + 1 >= cap) {
			nv = realloc(v, 2 * cap * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap *= 2;
		}
		v[n + 1] = NULL;
		rc = copy_str(p, &v[n], budget);
		if (rc)
			break;
		n++;
	}
	if (rc) {
		free_vec(v);
		return rc;
	}
	*out = v;
	return 0;
}

/* ---- host side: what to load ---- */

/* The path the host opens for the ULP's name: its own directory (cwdfd, opened by the ULP at the
 * call: its placeholder's cwd may lag behind a chdir, fs.c gives up waiting after 2 s) or dirfd,
 * through its placeholder's descriptors (it shares the task's table, ident.c). */
static int resolve(const struct ulp_cb *cb, int dirfd, int cwdfd, const char *name, int flags,
		   char **out)
{
	char base[64];
	struct stat st;
	int n;

	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	if (!name[0] && !(flags & AT_EMPTY_PATH))
		return -ENOENT;
	if (dirfd != AT_FDCWD && dirfd < 0 && name[0] != '/')
		return -EBADF;
	if (dirfd == AT_FDCWD && cwdfd >= 0)
		snprintf(base, sizeof(base), "/proc/%d/fd/%d", cb->pid, cwdfd);
	else if (dirfd == AT_FDCWD)
		snprintf(base, sizeof(base), "/proc/%d/cwd", cb->pid);
	else
		snprintf(base, sizeof(base), "/proc/%d/fd/%d", cb->pid, dirfd);
	/* the host's /proc/self is not the ULP's: its own exe, its placeholder's entries */
	if (!strcmp(name, "/proc/self/exe") || !strcmp(name, "/proc/thread-self/exe"))
		n = asprintf(out, "%s", cb->exe);
	else if (!strncmp(name, "/proc/self/", 11) && cb->pid)
		n = asprintf(out, "/proc/%d/%s", cb->pid, name + 11);
	else if (name[0] == '/')
		n = asprintf(out, "%s", name);
	else if (!cb->pid)
		n = asprintf(out, "%s/%s", cb->cwd, name); /* no placeholder: its kept path */
	else
		n = asprintf(out, name[0] ? "%s/%s" : "%s", base, name);
	if (n < 0)
		return -ENOMEM;
	if (name[0] && (flags & AT_SYMLINK_NOFOLLOW) && lstat(*out, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return 0;
}

/* The first bytes of a file, NUL-terminated; 0 when unreadable. */
static size_t head(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, len - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

/* An ELF program that is not position-independent: the kernel runs it, the loader cannot. */
static int is_et_exec(const char *path)
{
	char buf[sizeof(Elf64_Ehdr) + 1];
	Elf64_Ehdr eh;

	if (head(path, buf, sizeof(buf)) < sizeof(eh))
		return 0;
	memcpy(&eh, buf, sizeof(eh));
	return !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_type == ET_EXEC;
}

/* "#!interp [arg]": argv becomes interp, [arg,] the script's name, argv[1..], as the kernel
 * makes it; p->path becomes the interpreter's. 0 when it is no script, 1 when it is, 2 when its
 * interpreter is a script too, -errno. */
static int script(struct exec_prep *p, int dirfd, int cwdfd)
{
	char buf[ULP_SHEBANG_HEAD], *interp, *arg, *name, *old, **v;
	size_t n, i, k = 0;
	int rc;

	if (head(p->path, buf, sizeof(buf)) < 2 || !ulp_shebang(buf, &interp, &arg))
		return 0;
	rc = ulp_exec_allowed(p->path); /* the script's own file (the loader asks the ELF's) */
	if (rc)
		return rc;
	if (!*interp)
		return -ENOEXEC;
	/* the script's name as the kernel passes it: the one given, or /dev/fd/N[/name] */
	if (dirfd == AT_FDCWD || p->execfn[0] == '/')
		rc = asprintf(&name, "%s", p->execfn);
	else
		rc = asprintf(&name, p->execfn[0] ? "/dev/fd/%d/%s" : "/dev/fd/%d", dirfd,
			      p->execfn);
	if (rc < 0)
		return -ENOMEM;
	for (n = 0; p->argv[n]; n++)
		;
	v = calloc(n + 4, sizeof(*v));
	if (!v) {
		free(name);
		return -ENOMEM;
	}
	v[k++] = strdup(interp);
	if (arg)
		v[k++] = strdup(arg);
	v[k++] = name;
	for (i = 1; i < n; i++)
		v[k++] = p->argv[i];
	for (i = 0; i < k; i++)
		if (!v[i]) {
			free(v);
			return -ENOMEM;
		}
	free(p->argv[0]);
	free(p->argv);
	p->argv = v;
	old = p->path;
	rc = resolve(p->cb, AT_FDCWD, cwdfd, interp, 0, &p->path);
	free(old);
	if (rc < 0)
		return rc;
	/* an interpreter that is a script itself: left to the kernel */
	return head(p->path, buf, 3) == 2 && buf[0] == '#' && buf[1] == '!' ? 2 : 1;
}

/* Where the ULP's exec goes to a child process: said on stderr once per file. */
static void say_child(const char *file, const char *why)
{
	static char *said[64];
	static unsigned nsaid;
	unsigned i;

	for (i = 0; i < nsaid; i++)
		if (!strcmp(said[i], file))
			return;
	if (nsaid < sizeof(said) / sizeof(said[0]))
		said[nsaid++] = strdup(file);
	fprintf(stderr,
		"libulp: %s: %s: it runs as a child process of the ULP, whose exit status "
		"becomes the ULP's\n",
		file, why);
}

static void prep_free(struct exec_prep *p)
{
	if (p->bprep)
		p->backend->exec_abort(p->bprep);
	free(p->execfn);
	free(p->path);
	free_vec(p->argv);
	free_vec(p->envp);
	free(p);
}

/* Copy the request and check the new program: 0 (p ready to load), ULP_EXEC_CHILD, -errno. */
static long prepare(struct exec_prep *p, const struct exec_ask *ask)
{
	const struct ulp_backend_ops *b = p->cb->region->backend;
	int execveat = ask->nr == SYS_execveat, dirfd = AT_FDCWD, flags = 0, isscript;
	const long *a = ask->a + execveat;
	size_t budget = EXEC_MAX_STRINGS;
	const char *san;
	char err[1024];
	long rc;

	if (execveat) {
		dirfd = (int)ask->a[0];
		flags = (int)ask->a[4];
	}
	rc = copy_str((uintptr_t)a[0], &p->execfn, &budget);
	if (!rc)
		rc = copy_vec((uintptr_t)a[1], &p->argv, &budget);
	if (!rc)
		rc = copy_vec((uintptr_t)a[2], &p->envp, &budget);
	if (!rc)
		rc = resolve(p->cb, dirfd, ask->cwdfd, p->execfn, flags, &p->path);
	if (rc)
		return rc;
	if (!p->execfn[0]) { /* fexecve: the kernel's name for it */
		free(p->execfn);
		if (asprintf(&p->execfn, "/dev/fd/%d", dirfd) < 0) {
			p->execfn = NULL;
			return -ENOMEM;
		}
	}
	if (!b->exec_prepare) {
		say_child(p->execfn, "the kmod backend loads no program in place");
		return ULP_EXEC_CHILD;
	}
	isscript = script(p, dirfd, ask->cwdfd);
	if (isscript < 0)
		return isscript;
	if (isscript == 2) {
		say_child(p->execfn, "a script whose interpreter is a script");
		return ULP_EXEC_CHILD;
	}
	if (ulp_exec_sets_ids(p->path, p->cb->nnp)) {
		say_child(p->execfn, isscript
					 ? "its interpreter is set-user-ID or set-group-ID"
					 : "set-user-ID or set-group-ID (or file capabilities): "
					   "the kernel's execve gives it its credentials");
		return ULP_EXEC_CHILD;
	}
	if ((san = ulp_exec_sanitizer(p->path))) {
		snprintf(err, sizeof(err), "%sbuilt with %s, " ULP_EXEC_SHADOW_WHY,
			 isscript ? "its interpreter is " : "", san);
		say_child(p->execfn, err);
		return ULP_EXEC_CHILD;
	}
	rc = b->exec_prepare(p->cb, p->path, p->execfn, p->argv, p->envp, &p->bprep, err,
			     sizeof(err));
	if (rc == -ENOEXEC && is_et_exec(p->path)) {
		say_child(p->execfn, isscript ? "its interpreter is not a position-independent "
						"executable (ET_EXEC)"
					      : "not a position-independent executable (ET_EXEC)");
		return ULP_EXEC_CHILD;
	}
	if (rc)
		return rc;
	if (!realpath(p->path, p->exe))
		snprintf(p->exe, sizeof(p->exe), "%s", p->path);
	return 0;
}

/* The host's half of step 1; the asking thread resumes with the answer. */
static void prepare_call(struct ulp_host_call *c)
{
	struct exec_ask *ask = (struct exec_ask *)((char *)c - offsetof(struct exec_ask, call));
	struct ulp_cb *cb = ask->cb;
	struct pvas_region *r = cb->region;
	int pvid = cb->pvid;
	struct exec_prep *p;
	long rc = -ENOMEM;

	/* Its task was killed meanwhile: nobody waits for the answer. */
	if (ulp_proc_state(r, pvid) != ULP_PROC_RUNNING) {
		ulp_proc_unhold(r, pvid);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p) {
		p->cb = cb;
		p->backend = r->backend;
		/* Another thread of the ULP won the race: the kernel says EAGAIN too. */
		rc = cb->exec_prep ? -EAGAIN : prepare(p, ask);
		if (rc)
			prep_free(p);
		else
			cb->exec_prep = p;
	}
	ask->result = rc;
	ulp_task_resume(ask->task);
	ulp_proc_unhold(r, pvid);
}

/* Step 3, on the host: the old program goes, the new one comes. */
static void commit_call(struct ulp_host_call *c)
{
	struct exec_prep *p = (struct exec_prep *)((char *)c - offsetof(struct exec_prep, call));
	struct ulp_cb *cb = p->cb;
	struct pvas_region *r = cb->region;
	int pvid = cb->pvid;
	struct ulp_backend_image img;
	const char *name;
	char err[1024];
	int rc;

	if (ulp_proc_state(r, pvid) != ULP_PROC_EXEC) { /* its task died: a zombie now */
		prep_free(p);
		ulp_proc_unhold(r, pvid);
		return;
	}
	cb->exec_prep = NULL;
	ulp_tg_release(cb); /* its threads have all ended */
	pvas_names_drop(r, pvid);
	rc = r->backend->exec_commit(cb, p->bprep, &img, err, sizeof(err));
	p->bprep = NULL;
	if (rc) {
		fprintf(stderr,
			"libulp: ULP %d: execve %s: %s; its old program is gone: it ends, "
			"killed by SIGKILL\n",
			pvid, p->execfn, err);
		prep_free(p);
		ulp_proc_exec_failed(cb);
		ulp_proc_unhold(r, pvid);
		return;
	}
	/* its name for the launcher: as given, unless the host's /proc would name another */
	name = strncmp(p->execfn, "/proc/", 6) ? p->execfn : p->exe;
	memcpy(cb->path, name, strnlen(name, sizeof(cb->path) - 1));
	cb->path[strnlen(name, sizeof(cb->path) - 1)] = 0;
	snprintf(cb->exe, sizeof(cb->exe), "%s", p->exe);
	ulp_ident_exec(cb);
	prep_free(p); /* the strings are on the new stack */
	ulp_proc_exec_loaded(cb, &img);
	ulp_proc_unhold(r, pvid);
}

/* An exec prepared and not done (the ULP is dying meanwhile). */
static void abort_call(struct ulp_host_call *c)
{
	prep_free((struct exec_prep *)((char *)c - offsetof(struct exec_prep, call)));
}

/* ---- ULP side ---- */

static void post_ask(void *arg)
{
	struct exec_ask *ask = arg;

	ulp_proc_hold(ask->cb); /* until prepare_call is done with it and its stack */
	ask->cb->region->host_post(ask->cb->region, &ask->call);
}

long ulp_proc_exec(struct ulp_cb *cb, long nr, const long a[6])
{
	struct exec_ask ask = {{NULL, prepare_call}, cb, ulp_cur_task(), nr, {0}, -1, 0};
	struct ulp_uthread *u;
	struct exec_prep *p;
	int i;

	if (!cb->region->host_post)
		return ULP_EXEC_CHILD;
	for (i = 0; i < 6; i++)
		ask.a[i] = a[i];
	/* the ULP's while the host uses it: no other ULP's double close reaches it (fds.c) */
	ask.cwdfd = (int)ulp_fd_make_own(cb, SYS_openat, AT_FDCWD, (long)".",
					 O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	ulp_task_suspend(ask.task, post_ask, &ask);
	if (ask.cwdfd >= 0)
		ulp_fd_drop(cb, ask.cwdfd);
	if (ask.result)
		return ask.result;
	/* The point of no return, unless the ULP is ending already (exit_group, a fatal
	 * signal, or another exec): then, as the kernel does, this exec fails with EAGAIN. */
	p = cb->exec_prep;
	if ((cb->tg && __atomic_load_n(&cb->tg->dying, __ATOMIC_ACQUIRE)) ||
	    ulp_proc_exec_begin(cb)) {
		cb->exec_prep = NULL;
		p->call.fn = abort_call;
		cb->region->host_post(cb->region, &p->call);
		return -EAGAIN;
	}
	/* the asking thread's mask and pending signals are the new program's */
	u = ulp_tg_current(cb);
	cb->exec_mask = *ulp_sig_mask(cb);
	cb->exec_pend = u ? atomic_exchange(&u->sigpending, 0) & ~ULP_SIG_QUEUED_BITS : 0;
	if (u)
		ulp_sig_adopt(cb, u);
	ulp_tg_die(cb, 0, 0);
}

int ulp_exec_reload(struct ulp_cb *cb)
{
	struct exec_prep *p = cb->exec_prep;
	struct pvas_region *r = cb->region;
	int sig;

	if (!p || !r->host_post)
		return -ENOSYS;
	cb->sig.mask = cb->exec_mask;
	for (sig = 1; sig <= ULP_NSIG; sig++)
		if (cb->exec_pend & ULP_SIG_BIT(sig))
			ulp_sig_record(cb->pvid, sig, SI_TKILL, cb->pid,
				       (int)ulp_arch_syscall(SYS_getuid, 0, 0, 0, 0, 0, 0), 0);
	ulp_sig_exec(cb);
	ulp_io_exec_fds(cb, ulp_proc_count_task(r, ulp_proc_task(cb)) == 1);
	ulp_fast_exec(cb);
	p->call.fn = commit_call;
	ulp_proc_hold(cb);
	r->host_post(r, &p->call);
	return 0;
}
