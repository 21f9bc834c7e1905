#!/bin/sh
# 64 MPICH ranks (tests/mpi/mpi_check: hello, ring, halo, allreduce, 64 KiB-16 MiB messages) as
# ULPs in 1 and in 2 PVAS tasks on this machine's cores print what mpiexec.mpich's 64 processes
# print for the same binary. MPICH busy-polls: 64 processes on 2 vCPUs take tens of seconds, the
# ULP ranks (preempted every ULP_QUANTUM_US) about as long; TEST_TIMEOUT is only a hang guard.
# Usage: tests/mpi/mpi64.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
B=$O/tests/mpi
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
export TEST_TIMEOUT=600

if expect "mpiexec -n 64" 0 "$MPIEXEC" -n 64 $B/mpi_check && cp "$T/out" "$T/ref" &&
	grep -q '^hello from 64 ranks$' "$T/ref" && grep -q '^ring: 2080 (want 2080)$' "$T/ref" &&
	[ "$(grep -c 'intact' "$T/ref")" = 5 ]; then
	for t in 1 2; do
		if expect "ulpspawn --pmi -n 64 -t $t" 0 $S --pmi -n 64 -t $t $B/mpi_check &&
			cmp -s "$T/out" "$T/ref"; then
			ok "64 MPICH ranks as ULPs in $t task(s) print what mpiexec's 64 processes print"
		else
			diff "$T/ref" "$T/out" >>"$T/out" 2>&1
			no "64 MPICH ranks as ULPs in $t task(s) print what mpiexec's 64 processes print"
		fi
	done
else
	no "mpiexec.mpich -n 64 mpi_check (the reference)"
fi

finish mpi-64
