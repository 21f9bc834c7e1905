/* SPDX-License-Identifier: MIT */
/*
 * An MPI program as a plugin: a shared object linked with MPICH that a program which knows
 * nothing of MPI dlopen()s without RTLD_GLOBAL (tests/mpi/mpi_plugin_main.c), as an interpreter
 * loads an MPI module. MPICH is then outside the global scope, where libulp-mpiyield's wrappers,
 * which the plugin's calls reach first, looked for it in their first version: every such rank
 * aborted in MPI_Init_thread under ulpspawn --pmi (tests/mpi/mpi_more.sh).
 */
#include <mpi.h>
#include <stdio.h>

__attribute__((visibility("default"))) int plugin_run(int *argc, char ***argv)
{
	int provided, rank, size, sum = 0, one = 1, i;

	if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 0; i < 20; i++) { /* waits in which a rank may yield */
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (sum != size)
			break;
	}
	if (rank == 0)
		printf("plugin: %d ranks, %s, allreduce %s\n", size,
		       provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "less",
		       sum == size ? "ok" : "wrong");
	MPI_Finalize();
	return sum != size;
}
