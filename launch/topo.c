/* SPDX-License-Identifier: MIT */
/* The machine's topology for the ranks of a --pmi job (topo.h). */
#include "topo.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pvas.h"

/* hwloc 2's API, as libhwloc.so.15 exports it (hwloc.h is not needed to build the launcher). */
typedef void *topo_t;
#define HWLOC_KEEP_ALL 0 /* enum hwloc_type_filter_e's HWLOC_TYPE_FILTER_KEEP_ALL */
struct hwloc_api {
	unsigned (*version)(void);
	int (*init)(topo_t *t);
	int (*filter_all)(topo_t t, int filter);
	int (*load)(topo_t t);
	int (*export_xml)(topo_t t, const char *path, unsigned long flags);
	void (*destroy)(topo_t t);
};

static int api_open(struct hwloc_api *h)
{
	void *lib = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return -1;
	*(void **)&h->version = dlsym(lib, "hwloc_get_api_version");
	*(void **)&h->init = dlsym(lib, "hwloc_topology_init");
	*(void **)&h->filter_all = dlsym(lib, "hwloc_topology_set_all_types_filter");
	*(void **)&h->load = dlsym(lib, "hwloc_topology_load");
	*(void **)&h->export_xml = dlsym(lib, "hwloc_topology_export_xml");
	*(void **)&h->destroy = dlsym(lib, "hwloc_topology_destroy");
	/* The XML format and export_xml's signature are hwloc 2's (API 0x20000-0x2ffff). */
	if (!h->version || !h->init || !h->filter_all || !h->load || !h->export_xml ||
	    !h->destroy || (h->version() >> 16) != 2) {
		dlclose(lib);
		return -1;
	}
	return 0; /* kept loaded: the launcher is short-lived and hwloc's plugins may stay */
}

/* The user asked for none (ULP_MPI_TOPO=0) or gave the ranks their own (theirs stay). */
static int wanted(void)
{
	const char *e = getenv("ULP_MPI_TOPO");

	return !(e && !strcmp(e, "0")) && !getenv("HWLOC_XMLFILE") && !getenv("HWLOC_THISSYSTEM");
}

/* The machine's topology as XML into fd (a memory file): 0, or -1 (no hwloc 2, or it failed). */
static int discover(int fd)
{
	struct hwloc_api h = {0};
	char self[64];
	topo_t t = NULL;
	int rc = -1;

	if (api_open(&h))
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* Every object, I/O devices and instruction caches too: a rank's hwloc loading the XML
	 * drops what its own type filters drop, as its discovery would (MPICH keeps the I/O
	 * devices that matter, for the NICs' locality). */
	if (h.init(&t) == 0 && h.filter_all(t, HWLOC_KEEP_ALL) == 0 && h.load(t) == 0 &&
	    h.export_xml(t, self, 0) == 0 && lseek(fd, 0, SEEK_END) > 0)
		rc = 0;
	if (t)
		h.destroy(t);
	return rc;
}

static int xml_file(void)
{
	return pvas_fd_high(memfd_create("hwloc-topology.xml", MFD_CLOEXEC));
}

int topo_export(char *vars[2])
{
	static char file[64], this_sys[] = "HWLOC_THISSYSTEM=1";
	int fd;

	if (!wanted() || (fd = xml_file()) < 0)
		return -1;
	if (discover(fd)) {
		close(fd);
		return -1;
	}
	snprintf(file, sizeof(file), "HWLOC_XMLFILE=/proc/%d/fd/%d", (int)getpid(), fd);
	vars[0] = file;
	vars[1] = this_sys;
	return 0;
}

static pid_t helper = -1; /* topo_start's process, and a pidfd of it */
static int helper_fd = -1;

/* In topo_start's process: the XML, then the gate filled with '1' (done) or '0' (failed). */
static void discover_bg(int xml, int gate)
{
	char buf[4096];

	memset(buf, discover(xml) == 0 ? '1' : '0', sizeof(buf));
	while (write(gate, buf, sizeof(buf)) > 0) /* O_NONBLOCK: until the pipe is full */
		;
}

int topo_start(char *vars[2])
{
	static char xml_var[64], gate_var[64];
	int p[2] = {-1, -1}, xml;
	pid_t launcher = getpid();

	if (!wanted() || (xml = xml_file()) < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) != 0 || (p[0] = pvas_fd_high(p[0])) < 0 ||
	    fcntl(p[1], F_SETFL, O_NONBLOCK) != 0 || (helper = fork()) < 0) {
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		close(xml);
		return -1;
	}
	if (helper == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != launcher)
			_exit(1);
		discover_bg(xml, p[1]);
		_exit(0);
	}
	close(p[1]); /* the helper's is the one writer: its end (a crash) is EOF at the ranks */
	helper_fd = pvas_fd_high((int)syscall(SYS_pidfd_open, helper, 0));
	snprintf(gate_var, sizeof(gate_var), "ULP_MPI_TOPO_GATE=/proc/%d/fd/%d", (int)launcher,
		 p[0]);
	snprintf(xml_var, sizeof(xml_var), "ULP_MPI_TOPO_XML=/proc/%d/fd/%d", (int)launcher, xml);
	vars[0] = gate_var;
	vars[1] = xml_var;
	return 0;
}

int topo_pollfd(void)
{
	return helper_fd;
}

void topo_end(void)
{
	if (helper > 0)
		while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
			;
	helper = -1;
	if (helper_fd >= 0)
		close(helper_fd);
	helper_fd = -1;
}
