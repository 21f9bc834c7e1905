/* SPDX-License-Identifier: MIT */
/* Loads an MPI plugin (tests/mpi/mpi_plugin.c) with RTLD_LOCAL and runs it: no MPI here.
 * Usage: mpi_plugin_main PLUGIN.so */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*run)(int *, char ***);
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: mpi_plugin_main PLUGIN.so\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "mpi_plugin_main: dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	run = (int (*)(int *, char ***))dlsym(h, "plugin_run");
	if (!run) {
		fprintf(stderr, "mpi_plugin_main: %s: no plugin_run\n", argv[1]);
		return 2;
	}
	return run(&argc, &argv);
}
