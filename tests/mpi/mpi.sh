#!/bin/sh
# Debian's MPICH programs under libulp's PMI-1 server (launch/pmi.c), compared with mpiexec.mpich
# running the same binary. Usage: tests/mpi/mpi.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
B=$O/tests/mpi
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
export TEST_TIMEOUT=240

for n in 2 8; do
	if expect "mpiexec -n $n" 0 "$MPIEXEC" -n $n $B/mpi_check && cp "$T/out" "$T/ref" &&
		expect "pmi_procs -n $n" 0 $B/pmi_procs -n $n $B/mpi_check &&
		cmp -s "$T/out" "$T/ref" && [ "$(grep -c 'want\|intact' "$T/ref")" -ge 3 ] &&
		! grep -q CORRUPT "$T/out"; then
		ok "mpi_check on $n ranks: the PMI server's run prints what mpiexec's prints"
	else
		diff "$T/ref" "$T/out" >>"$T/out" 2>&1
		no "mpi_check on $n ranks: the PMI server's run prints what mpiexec's prints"
	fi
done

if expect "abort" 9 $B/pmi_procs -n 4 $B/mpi_check abort 2 9 &&
	grep -q "rank 2 called abort with exit code 9" "$T/out"; then
	ok "MPI_Abort(9) in rank 2 ends the job with status 9 and names the rank"
else
	no "MPI_Abort(9) in rank 2 ends the job with status 9 and names the rank"
fi

if expect "crash" 139 $B/pmi_procs -n 4 $B/mpi_check crash 1 &&
	grep -q "rank 1 ended before MPI_Finalize" "$T/out" &&
	grep -q "rank 1: killed by signal 11" "$T/out"; then
	ok "a rank that segfaults after MPI_Init ends the job (139) and is named"
else
	no "a rank that segfaults after MPI_Init ends the job (139) and is named"
fi

finish mpi-pmi
