/* SPDX-License-Identifier: MIT */
/* The machine's topology for the ranks of a --pmi job (topo.h). */
#include "topo.h"

#include <dlfcn.h>
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

int topo_export(char *vars[2])
{
	static char file[64], this_sys[] = "HWLOC_THISSYSTEM=1";
	const char *e = getenv("ULP_MPI_TOPO");
	char self[64];
	struct hwloc_api h;
	topo_t t = NULL;
	int fd, rc = -1;

	if ((e && !strcmp(e, "0")) || getenv("HWLOC_XMLFILE") || getenv("HWLOC_THISSYSTEM"))
		return -1;
	if (api_open(&h))
		return -1;
	fd = pvas_fd_high(memfd_create("hwloc-topology.xml", MFD_CLOEXEC));
	if (fd < 0)
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* Every object, I/O devices and instruction caches too: a rank's hwloc loading the XML
	 * drops what its own type filters drop, as its discovery would (MPICH keeps the I/O
	 * devices that matter, for the NICs' locality). */
	if (h.init(&t) == 0 && h.filter_all(t, HWLOC_KEEP_ALL) == 0 && h.load(t) == 0 &&
	    h.export_xml(t, self, 0) == 0 && lseek(fd, 0, SEEK_END) > 0) {
		snprintf(file, sizeof(file), "HWLOC_XMLFILE=/proc/%d/fd/%d", (int)getpid(), fd);
		vars[0] = file;
		vars[1] = this_sys;
		rc = 0;
	}
	if (t)
		h.destroy(t);
	if (rc)
		close(fd);
	return rc;
}
