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

# ulpspawn --pmi: ranks as ULPs, one per PVAS task.
S=$O/bin/ulpspawn
if expect "pmi_guest" 0 $S --pmi -n 4 -t 4 $B/pmi_guest &&
	[ "$(grep -c 'app 0' "$T/out")" = 4 ] && grep -q 'rank 0 app 0 next=v1$' "$T/out" &&
	grep -q 'rank 3 app 0 next=v0$' "$T/out" && grep -q 'rank 2 app 0 next=v9$' "$T/out"; then
	ok "ulpspawn --pmi: 4 ULP ranks put, meet at the barrier, get each other's values"
else
	no "ulpspawn --pmi: 4 ULP ranks put, meet at the barrier, get each other's values"
fi
if expect "pmi_guest mpmd" 0 $S --pmi -t 4 -n 2 $B/pmi_guest : -n 2 $B/pmi_guest &&
	[ "$(grep -c 'app 0' "$T/out")" = 2 ] && [ "$(grep -c 'app 1' "$T/out")" = 2 ] &&
	grep -q 'rank 3 app 1' "$T/out"; then
	ok "ulpspawn --pmi: MPMD gives each program its appnum"
else
	no "ulpspawn --pmi: MPMD gives each program its appnum"
fi
if expect "pmi_guest abort" 7 $S --pmi -n 3 -t 3 $B/pmi_guest abort 7 &&
	grep -q "rank 1 called MPI_Abort with exit code 7" "$T/out"; then
	ok "ulpspawn --pmi: a PMI abort ends the job with its code and names the rank"
else
	no "ulpspawn --pmi: a PMI abort ends the job with its code and names the rank"
fi
if expect "pmi_guest die" 3 $S --pmi -n 3 -t 3 $B/pmi_guest die &&
	grep -q "rank 1 ended before MPI_Finalize" "$T/out"; then
	ok "ulpspawn --pmi: a rank that exits inside MPI ends the job (its status, 3)"
else
	no "ulpspawn --pmi: a rank that exits inside MPI ends the job (its status, 3)"
fi

# PMI_Spawn_multiple (MPICH builds whose device can spawn send it; Debian's ch4:ucx fails before,
# tests/mpi/mpi_more.sh): answered with an error, the launcher names the call, nothing hangs.
if expect "pmi_guest spawn" 0 $S --pmi -n 2 -t 1 $B/pmi_guest spawn &&
	grep -q '^spawn answered: cmd=spawn_result rc=-1 msg=spawn_not_supported_by_ulpspawn$' "$T/out" &&
	grep -q "rank 0 asked for PMI spawn (MPI_Comm_spawn), which ulpspawn does not serve" "$T/out" &&
	[ "$(grep -c 'app 0 next=' "$T/out")" = 2 ]; then
	ok "ulpspawn --pmi: a PMI spawn (mcmd=spawn blocks) is refused with a message naming it"
else
	no "ulpspawn --pmi: a PMI spawn (mcmd=spawn blocks) is refused with a message naming it"
fi

# Ranks of one task share its descriptor table: a dead rank's PMI end stays open there, no EOF
# comes, and the launcher must see the end from the rank's exit (it hung before).
if expect "pmi_guest die, shared task" 3 $S --pmi -n 3 -t 1 $B/pmi_guest die &&
	grep -q "rank 1 ended before MPI_Finalize" "$T/out"; then
	ok "ulpspawn --pmi: a rank that exits inside MPI in a task shared with other ranks ends the job"
else
	no "ulpspawn --pmi: a rank that exits inside MPI in a task shared with other ranks ends the job"
fi

# Debian's MPICH programs as ULPs: ch4:ucx starts a UCX thread per rank (ULP threads), talks PMI
# over PMI_FD and busy-polls shared memory. First one rank per PVAS task.
for n in 2 8; do
	if expect "mpiexec -n $n" 0 "$MPIEXEC" -n $n $B/mpi_check && cp "$T/out" "$T/ref" &&
		expect "ulpspawn --pmi -n $n" 0 $S --pmi -n $n -t $n -w 1 $B/mpi_check &&
		cmp -s "$T/out" "$T/ref" && ! grep -q CORRUPT "$T/out"; then
		ok "MPICH's mpi_check as $n ULP ranks (ulpspawn --pmi) prints what mpiexec's processes print"
	else
		diff "$T/ref" "$T/out" >>"$T/out" 2>&1
		no "MPICH's mpi_check as $n ULP ranks (ulpspawn --pmi) prints what mpiexec's processes print"
	fi
done
# Oversubscribed: 8 ranks on one worker of one task. MPICH's PMI reads park on the task's
# io_uring and its shared-memory polling is preempted (ULP_QUANTUM_US).
if expect "mpiexec -n 8" 0 "$MPIEXEC" -n 8 $B/mpi_check && cp "$T/out" "$T/ref" &&
	expect "ulpspawn --pmi -n 8 -t 1 -w 1" 0 $S --pmi -n 8 -t 1 -w 1 $B/mpi_check &&
	cmp -s "$T/out" "$T/ref"; then
	ok "8 MPICH ranks as ULPs on ONE worker of one task print what mpiexec's processes print"
else
	diff "$T/ref" "$T/out" >>"$T/out" 2>&1
	no "8 MPICH ranks as ULPs on ONE worker of one task print what mpiexec's processes print"
fi
if expect "ulpspawn MPI_Abort" 5 $S --pmi -n 4 -t 4 -w 1 $B/mpi_check abort 1 5 &&
	grep -q "rank 1 called MPI_Abort with exit code 5" "$T/out"; then
	ok "MPI_Abort(5) in a ULP rank ends the ulpspawn job with status 5, naming the rank"
else
	no "MPI_Abort(5) in a ULP rank ends the ulpspawn job with status 5, naming the rank"
fi
if expect "ulpspawn crash" 139 $S --pmi -n 4 -t 4 -w 1 $B/mpi_check crash 2 &&
	grep -q "rank 2" "$T/out"; then
	ok "a ULP rank that segfaults after MPI_Init ends the ulpspawn job (139), naming the rank"
else
	no "a ULP rank that segfaults after MPI_Init ends the ulpspawn job (139), naming the rank"
fi

# No --pmi: a program that links MPICH gets the PMI server all the same (before, each of the N
# ranks ran as a one-rank job, "hello from 1 ranks" N times, exit status 0).
if expect "mpiexec -n 2" 0 "$MPIEXEC" -n 2 $B/mpi_check && cp "$T/out" "$T/ref" &&
	expect "ulpspawn -n 2 (no --pmi)" 0 $S -n 2 -t 1 $B/mpi_check && cmp -s "$T/out" "$T/ref" &&
	expect "ulpexec -n 2" 0 $O/bin/ulpexec -n 2 $B/mpi_check && cmp -s "$T/out" "$T/ref"; then
	ok "an MPICH program under ulpspawn or ulpexec without --pmi is served PMI (prints what mpiexec's prints)"
else
	diff "$T/ref" "$T/out" >>"$T/out" 2>&1
	no "an MPICH program under ulpspawn or ulpexec without --pmi is served PMI (prints what mpiexec's prints)"
fi
if expect "ulpspawn --no-pmi" 0 $S --no-pmi -n 2 -t 1 $B/mpi_check &&
	[ "$(grep -c '^hello from 1 ranks' "$T/out")" = 2 ]; then
	ok "ulpspawn --no-pmi runs an MPICH program's copies without PMI (each a one-rank job)"
else
	no "ulpspawn --no-pmi runs an MPICH program's copies without PMI (each a one-rank job)"
fi
# An Open MPI program's ranks need PMIx: refused, not run as N one-rank jobs.
OMPI=$O/examples/mpi/mpi_prog.ompi
if [ -x "$OMPI" ]; then
	if expect "ulpspawn Open MPI" 126 $S -n 2 $OMPI 1 10 1 &&
		grep -q "links Open MPI (libmpi.so.40).*PMIx" "$T/out" && ! grep -q '1 ranks' "$T/out"; then
		ok "ulpspawn -n 2 of an Open MPI program is refused (126), naming the library and PMIx"
	else
		no "ulpspawn -n 2 of an Open MPI program is refused (126), naming the library and PMIx"
	fi
else
	skip "ulpspawn of an Open MPI program: $OMPI not built (no mpicc.openmpi)"
fi

finish mpi-pmi
