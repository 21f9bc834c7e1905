/* SPDX-License-Identifier: MIT */
/*
 * --pmi: the machine's topology, discovered once by the launcher and read by every rank. An MPI
 * rank's MPI_Init discovers the machine with hwloc: hundreds of files of /sys and /proc opened
 * and read per rank (842 openat and 986 read for 2 MPICH ranks under mpiexec, 388 and 698 with the
 * topology given; strace -c on the VM). Under ulpspawn these are the ULPs' own trapped calls, made
 * by every rank of a job while one address space serializes their mmap. hwloc reads a topology
 * from an XML file instead when HWLOC_XMLFILE names one (HWLOC_THISSYSTEM=1: it is this machine's,
 * so binding still works), as Open MPI's and Slurm's launchers hand ranks theirs.
 */
#ifndef ULP_LAUNCH_TOPO_H
#define ULP_LAUNCH_TOPO_H

/*
 * The topology as XML in a memory file of the launcher's, exported by the same libhwloc the ranks
 * load (dlopen'ed: none installed, nothing done), and the two variables that point the ranks
 * there (HWLOC_XMLFILE=/proc/PID/fd/N, HWLOC_THISSYSTEM=1) in vars[0..1]. 0 when done, -1 when
 * not: no libhwloc 2, ULP_MPI_TOPO=0, or the user set HWLOC_XMLFILE or HWLOC_THISSYSTEM (theirs
 * stay). The file lives as long as the launcher.
 */
int topo_export(char *vars[2]);

#endif
