/* SPDX-License-Identifier: MIT */
/*
 * libulp-mpiyield.so: an MPI rank that waits gives its CPU away, as Open MPI's ranks do with
 * mpi_yield_when_idle. ulpspawn --pmi preloads it into its ranks (docs/mpi.md, "Yield when idle";
 * ULP_MPI_YIELD=0 leaves it out).
 *
 * Why: Debian's MPICH (ch4:ucx) waits for a message, a barrier or a request by calling UCX's
 * ucp_worker_progress in a loop, with no system call and no yield (MPICH's yield is compiled to
 * nothing on Linux). Oversubscribed, a waiting rank then keeps its worker until the preemption
 * tick, while the rank it waits for is ready on the same worker.
 *
 * What: this library defines ucp_worker_progress. It calls UCX's, and when that progressed
 * nothing ULP_MPI_YIELD times in a row (default 1), it yields: as a ULP with pvas_yield, a
 * call into the runtime that switches to the next ULP of the worker (no trap, no kernel entry),
 * as a process with sched_yield. A poll that progressed returns at once. Nothing else changes:
 * the same result is returned, UCX's own function does the work.
 *
 * Inside ucp_worker_progress only while no other thread of the rank can be waiting for MPICH's
 * lock: under MPI_THREAD_MULTIPLE MPICH calls UCX with its lock held, so a yield there hands the
 * worker to a thread that wants that lock; it finds it taken and waits again, the holder's unlock
 * wakes it only for the holder to take the lock back at once (MPICH's own yield, between the two,
 * is compiled to nothing on Linux), and ranks whose holders wait for each other's threads never
 * progress (4 ranks of 4 threads each hung for good before 27 Nov; two threads per rank in
 * MPI_Sendrecv, 3 jobs in about 70, before 28 Nov). So once a second thread called
 * ucp_worker_progress, or, where the MPI library provides MPI_THREAD_MULTIPLE, once the program
 * has started a thread of its own (one created outside MPI_Init, where UCX starts its own: a
 * thread that waits for the lock from its first call never polls), the yield waits for the
 * thread's next pthread_mutex_unlock, which this library also defines: MPICH's release of its
 * lock between two polls of a wait (the unlock and relock its compiled-out yield sits between).
 * The thread the unlock woke then runs and takes the lock; the holder waits for it in turn. The
 * level is asked with MPI_Query_thread when MPI_Init or MPI_Init_thread returns, which this
 * library wraps.
 *
 * The constructor takes this library out of LD_PRELOAD again, so the program, and what it runs,
 * see the environment ulpspawn was asked to give them.
 *
 * It is also the gate of the machine's topology that ulpspawn discovers while the ranks start
 * (launch/topo.h, topo_start): the MPI_Init* wrappers wait for it, then point hwloc at it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvas.h"

typedef unsigned (*progress_fn)(void *worker);

static void *real_progress;	    /* UCX's ucp_worker_progress (cached_def) */
static unsigned yield_after = 1;    /* idle polls before a yield */
static unsigned idle;		    /* idle polls in a row (a hint: threads may race on it) */
static unsigned long polls, yields; /* ULP_MPI_YIELD_STATS=1: printed at exit */
static int stats;
static unsigned long poller; /* the thread that polls (pthread_self), 0 before the first poll */
static int several;	     /* another thread polled too: yields wait for unlocks (see above) */
static int multiple;	     /* MPI_Init* returned MPI_THREAD_MULTIPLE */
static int own_threads;	     /* threads the program started (not MPI_Init, while it ran) */
static unsigned long init_thread; /* the thread inside MPI_Init* (pthread_self), 0: none */
static int init_depth;		  /* MPI_Init calling PMPI_Init: nested wrappers */

/* MPI_THREAD_MULTIPLE in MPICH's and Open MPI's mpi.h (no MPI header is needed to build this) */
#define THREAD_MULTIPLE 3

__attribute__((visibility("default"))) unsigned ucp_worker_progress(void *worker);

struct find {
	const char *name;
	void *self, *found;
};

static int find_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	void *h, *s;

	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name) /* the program: in the global scope */
		return 0;
	h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	s = dlsym(h, f->name); /* the object, then what it needs */
	dlclose(h);
	if (!s || s == f->self)
		return 0;
	f->found = s;
	return 1;
}

/* name's definition other than this library's (self): the next one in the global scope, or,
 * where the library that has it was opened without RTLD_GLOBAL (a plugin linked with MPI, which
 * a program or an interpreter dlopen()s; its calls still reach this library's definition), the
 * first loaded object that has it. NULL: none. */
static void *next_def(const char *name, void *self)
{
	struct find f = {name, self, NULL};
	void *s = dlsym(RTLD_NEXT, name);

	if (s && s != self)
		return s;
	dl_iterate_phdr(find_in, &f);
	return f.found;
}

/* name's definition other than this library's, which must be there: else the rank stops, saying
 * why (missing). */
static void *must_def(const char *name, void *self, const char *missing)
{
	void *f = next_def(name, self);

	if (!f) {
		fprintf(stderr, "libulp-mpiyield: %s: %s\n", name, missing);
		abort();
	}
	return f;
}

/* *slot, looked up with must_def at the first call. */
static inline void *cached_def(void **slot, const char *name, void *self, const char *missing)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!f) {
		f = must_def(name, self, missing);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* 1 while only the calling thread has ever polled. */
static int one_poller(void)
{
	unsigned long me = (unsigned long)pthread_self(), first = 0;

	if (__atomic_load_n(&several, __ATOMIC_RELAXED))
		return 0;
	if (__atomic_compare_exchange_n(&poller, &first, me, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED) ||
	    first == me)
		return 1;
	__atomic_store_n(&several, 1, __ATOMIC_RELAXED);
	return 0;
}

/* 1 when a yield inside ucp_worker_progress cannot keep another thread of the rank from MPICH's
 * lock (see the top); else the yield waits for the thread's next unlock. */
static int may_yield(void)
{
	if (__atomic_load_n(&multiple, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&own_threads, __ATOMIC_RELAXED))
		return 0;
	return one_poller();
}

static __thread int yield_due; /* a yield at this thread's next pthread_mutex_unlock */

static void yield_now(void)
{
	if (stats)
		__atomic_add_fetch(&yields, 1, __ATOMIC_RELAXED);
	if (pvas_yield() != 0) /* not a ULP */
		sched_yield();
}

typedef int (*unlock_fn)(pthread_mutex_t *);

/* glibc's, then the yield a poll left due (see the top): MPICH's lock is free, and the thread
 * its unlock woke, if one waited, is ready to take it. */
__attribute__((visibility("default"))) int pthread_mutex_unlock(pthread_mutex_t *m)
{
	static void *real;
	unlock_fn f =
	    (unlock_fn)cached_def(&real, "pthread_mutex_unlock", (void *)pthread_mutex_unlock,
				  "libc's definition not found");
	int rc = f(m);

	if (__builtin_expect(yield_due, 0)) {
		yield_due = 0;
		yield_now();
	}
	return rc;
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

__attribute__((visibility("default"))) int pthread_create(pthread_t *th, const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg)
{
	static pthread_create_fn real;
	pthread_create_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);

	if (!f) {
		f = (pthread_create_fn)next_def("pthread_create", (void *)pthread_create);
		if (!f)
			return EAGAIN;
		__atomic_store_n(&real, f, __ATOMIC_RELEASE);
	}
	/* UCX's progress thread, started by MPI_Init on the thread that called it, does not
	 * call MPI; every other thread may */
	if (__atomic_load_n(&init_thread, __ATOMIC_RELAXED) != (unsigned long)pthread_self())
		__atomic_store_n(&own_threads, 1, __ATOMIC_RELAXED);
	return f(th, attr, fn, arg);
}

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*query_fn)(int *);

/* ulpspawn's topology, discovered while the ranks start (launch/topo.h, topo_start): the gate
 * pipe and the XML file, as /proc/PID/fd/N paths; taken out of the environment at load. */
static char topo_gate[64], topo_xml[64];
static int no_plugins; /* HWLOC_PLUGINS_PATH set empty for the MPI_Init* call */

static void take_env(const char *name, char *to, size_t size)
{
	const char *v = getenv(name);

	if (v && strlen(v) < size)
		strcpy(to, v);
	unsetenv(name);
}

/* Before MPICH's MPI_Init reads HWLOC_XMLFILE: wait until the launcher has written the XML (a
 * byte of the gate: a blocking read, which parks a ULP), then point hwloc there, unless the
 * program chose a topology of its own. '0' (hwloc failed in the launcher), EOF or an error: the
 * rank discovers the machine itself, as it would without ulpspawn. */
static void topo_wait(void)
{
	char c = 0;
	ssize_t n = -1;
	int fd;

	if (!topo_gate[0])
		return;
	fd = open(topo_gate, O_RDONLY | O_CLOEXEC);
	topo_gate[0] = 0;
	if (fd < 0)
		return;
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n == 1 && c == '1' && topo_xml[0] && !getenv("HWLOC_XMLFILE") &&
	    !getenv("HWLOC_THISSYSTEM")) {
		setenv("HWLOC_XMLFILE", topo_xml, 0);
		setenv("HWLOC_THISSYSTEM", "1", 0);
		/* hwloc loads every plugin of its directory at its first topology, even to read
		 * XML: libxml2 and ICU, libX11, libOpenCL, libpciaccess (2.5 ms per process here,
		 * more as a ULP). The XML holds what they find, and hwloc's own parser reads it
		 * the same (lstopo's XML of it identical with and without them). None for MPICH's
		 * topology, which it keeps until MPI_Finalize (so hwloc keeps none loaded after).
		 */
		if (!getenv("HWLOC_PLUGINS_PATH") && !getenv("HWLOC_PLUGINS_BLACKLIST"))
			no_plugins = !setenv("HWLOC_PLUGINS_PATH", "", 0);
	}
}

static void init_enter(void)
{
	if (init_depth++ == 0) {
		topo_wait();
		__atomic_store_n(&init_thread, (unsigned long)pthread_self(), __ATOMIC_RELAXED);
	}
}

/* The outermost MPI_Init* returned rc: ask for the thread level it gave. */
static void init_leave(int rc)
{
	query_fn q;
	int level = 0;

	if (--init_depth)
		return;
	if (no_plugins) {
		unsetenv("HWLOC_PLUGINS_PATH");
		no_plugins = 0;
	}
	__atomic_store_n(&init_thread, 0, __ATOMIC_RELAXED);
	q = (query_fn)next_def("MPI_Query_thread", NULL);
	if (rc == 0 && q && q(&level) == 0 && level == THREAD_MULTIPLE)
		__atomic_store_n(&multiple, 1, __ATOMIC_RELAXED);
}

/* The MPI library's own name (self: this library's). */
static void *mpi_real(const char *name, void *self)
{
	return must_def(name, self, "the MPI library's definition not found");
}

static int wrap_init(const char *name, init_fn self, int *argc, char ***argv)
{
	init_fn f = (init_fn)mpi_real(name, (void *)self);
	int rc;

	init_enter();
	rc = f(argc, argv);
	init_leave(rc);
	return rc;
}

static int wrap_init_thread(const char *name, init_thread_fn self, int *argc, char ***argv,
			    int required, int *provided)
{
	init_thread_fn f = (init_thread_fn)mpi_real(name, (void *)self);
	int rc;

	init_enter();
	rc = f(argc, argv, required, provided);
	init_leave(rc);
	return rc;
}

/* Both names: a program calls MPI_Init*, MPICH's Fortran library calls either. */
__attribute__((visibility("default"))) int MPI_Init(int *argc, char ***argv)
{
	return wrap_init("MPI_Init", MPI_Init, argc, argv);
}

__attribute__((visibility("default"))) int PMPI_Init(int *argc, char ***argv)
{
	return wrap_init("PMPI_Init", PMPI_Init, argc, argv);
}

__attribute__((visibility("default"))) int MPI_Init_thread(int *argc, char ***argv, int required,
							   int *provided)
{
	return wrap_init_thread("MPI_Init_thread", MPI_Init_thread, argc, argv, required, provided);
}

__attribute__((visibility("default"))) int PMPI_Init_thread(int *argc, char ***argv, int required,
							    int *provided)
{
	return wrap_init_thread("PMPI_Init_thread", PMPI_Init_thread, argc, argv, required,
				provided);
}

unsigned ucp_worker_progress(void *worker)
{
	/* Only UCX's callers call this: UCX must be loaded. */
	progress_fn f = (progress_fn)cached_def(
	    &real_progress, "ucp_worker_progress", (void *)ucp_worker_progress,
	    "UCX's definition not found (libucp.so.0 not loaded)");
	unsigned n = f(worker);

	if (stats)
		__atomic_add_fetch(&polls, 1, __ATOMIC_RELAXED);
	if (n || !yield_after) {
		__atomic_store_n(&idle, 0, __ATOMIC_RELAXED);
		return n;
	}
	if (__atomic_add_fetch(&idle, 1, __ATOMIC_RELAXED) >= yield_after) {
		__atomic_store_n(&idle, 0, __ATOMIC_RELAXED);
		if (may_yield())
			yield_now();
		else
			yield_due = 1;
	}
	return n;
}

/* LD_PRELOAD without the entries naming this library (path as loaded). */
static void unpreload(void)
{
	const char *v = getenv("LD_PRELOAD");
	Dl_info info;
	char *out, *copy, *tok, *save = NULL;
	size_t k = 0;

	if (!v || !dladdr((void *)unpreload, &info) || !info.dli_fname)
		return;
	out = malloc(strlen(v) + 1);
	copy = strdup(v);
	if (!out || !copy) {
		free(out);
		free(copy);
		return;
	}
	/* ld.so separates entries with spaces or colons */
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (!strcmp(tok, info.dli_fname))
			continue;
		if (k)
			out[k++] = ':';
		memcpy(out + k, tok, strlen(tok));
		k += strlen(tok);
	}
	out[k] = 0;
	if (k)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(out);
	free(copy);
}

static void print_stats(void)
{
	const char *rank = getenv("PMI_RANK");

	fprintf(stderr, "libulp-mpiyield: rank %s: %lu polls, %lu yields%s\n", rank ? rank : "?",
		polls, yields,
		multiple && own_threads ? " (MPI_THREAD_MULTIPLE, then threads: yields at unlocks)"
		: several		? " (then several threads polled: yields at unlocks)"
		: multiple		? " (MPI_THREAD_MULTIPLE, one thread)"
					: "");
}

__attribute__((constructor)) static void init(void)
{
	const char *e = getenv("ULP_MPI_YIELD"), *st = getenv("ULP_MPI_YIELD_STATS");
	char *end;
	unsigned long v;

	if (e && *e) {
		v = strtoul(e, &end, 10);
		if (!*end && v <= 1000000)
			yield_after = (unsigned)v;
		else
			fprintf(stderr,
				"libulp-mpiyield: ULP_MPI_YIELD=%s: not a number of polls (0 to "
				"1000000; 0: never yield); using %u\n",
				e, yield_after);
	}
	if (st && !strcmp(st, "1")) {
		stats = 1;
		atexit(print_stats);
	}
	take_env("ULP_MPI_TOPO_GATE", topo_gate, sizeof(topo_gate));
	take_env("ULP_MPI_TOPO_XML", topo_xml, sizeof(topo_xml));
	unpreload();
}
