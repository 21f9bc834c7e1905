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

/*
 * The same discovery while the ranks start, in a helper process forked by the launcher (its own
 * address space: the ranks' mmaps and hwloc's do not take turns on one lock), for ranks that load
 * libulp-mpiyield.so. Done before the ranks, it took 11-14 ms of a 2-rank MPICH job's 51 on the
 * 2-vCPU VM. vars[0..1] are ULP_MPI_TOPO_GATE=/proc/PID/fd/G, a pipe the helper fills with '1'
 * when the XML is written ('0' when hwloc failed; its death is EOF, it being the one writer), and
 * ULP_MPI_TOPO_XML=/proc/PID/fd/N. The library takes both out of the rank's environment when it
 * loads; its MPI_Init* reads one byte of the gate before MPICH's (whose hwloc reads HWLOC_XMLFILE
 * before the first PMI command), a blocking read that parks the ULP, and on '1' sets
 * HWLOC_XMLFILE and HWLOC_THISSYSTEM=1 unless the program set either. So hwloc called before
 * MPI_Init discovers the machine itself, as under mpiexec, and never reads a half-written file.
 * The pipe holds 64 KiB of bytes: one per MPI_Init. -1: not started (as topo_export's).
 */
int topo_start(char *vars[2]);

/* A pidfd of topo_start's helper (readable when it has ended), -1 when there is none: the
 * launcher's loop polls it and calls topo_end then, so that no zombie of it outlives its ~15 ms
 * among the launcher's children (which tools and tests count as the job's tasks). */
int topo_pollfd(void);

/* Reaps topo_start's helper, waiting for it if it runs (its pidfd: closed). */
void topo_end(void);

#endif
