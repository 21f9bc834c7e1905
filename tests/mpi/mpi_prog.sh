#!/bin/sh
# examples/mpi/mpi_prog (mpi_like_prog's workload written against MPI, built with Debian's
# mpicc.mpich) as ULP ranks under ulpspawn --pmi and as processes under mpiexec.mpich: every run
# passes its checks and prints the same checksum as mpi_like_prog (the mpi_like API over ULPs)
# for the same ranks and arguments. Usage: tests/mpi/mpi_prog.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
P=$O/examples/mpi/mpi_prog
ML=$O/examples/mpi_like/mpi_like_prog
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
[ -x "$P" ] || { echo "$P not built (needs mpicc.mpich: sh mk/deps.sh check)"; exit 1; }
export TEST_TIMEOUT=300
args="20 2000 2"

# sum NAME: the checksum of $T/out's summary line when every check passed, else nothing
sum() {
	sed -n "s/^$1: .* ranks, ring ok (.* laps), halo .* cells ok checksum=\([0-9.e+-]*\), allreduce ok, .*/\1/p" "$T/out"
}

for n in 1 8; do
	# shellcheck disable=SC2086 # args are words
	if expect "ulpspawn mpi_like_prog -n $n" 0 $S -n $n $ML $args; then
		want=$(sum mpi_like_prog)
	else
		want=
		no "mpi_like_prog on $n ULP ranks (the reference checksum)"
	fi
	[ -n "$want" ] || continue
	# shellcheck disable=SC2086
	if expect "mpiexec -n $n" 0 "$MPIEXEC" -n $n $P $args && [ "$(sum mpi_prog)" = "$want" ]; then
		ok "mpi_prog under mpiexec.mpich -n $n: checks pass, checksum of mpi_like_prog ($want)"
	else
		no "mpi_prog under mpiexec.mpich -n $n: checks pass, checksum of mpi_like_prog ($want)"
	fi
	for t in 1 2; do
		[ $t -gt $n ] && continue
		# shellcheck disable=SC2086
		if expect "ulpspawn --pmi -n $n -t $t" 0 $S --pmi -n $n -t $t $P $args &&
			[ "$(sum mpi_prog)" = "$want" ]; then
			ok "mpi_prog as $n ULP ranks in $t task(s) (ulpspawn --pmi): checksum of mpi_like_prog"
		else
			no "mpi_prog as $n ULP ranks in $t task(s) (ulpspawn --pmi): checksum of mpi_like_prog"
		fi
	done
done
# 8 ranks on ONE worker: MPICH's polling preempted, PMI reads parked
# shellcheck disable=SC2086
if expect "ulpspawn --pmi -n 8 -t 1 -w 1" 0 $S --pmi -n 8 -t 1 -w 1 $P $args &&
	[ -n "$want" ] && [ "$(sum mpi_prog)" = "$want" ]; then
	ok "mpi_prog as 8 ULP ranks on one worker: checksum of mpi_like_prog"
else
	no "mpi_prog as 8 ULP ranks on one worker: checksum of mpi_like_prog"
fi
# bad arguments: every rank refuses them before MPI_Init, the job says why
if expect "bad argument" 2 $S --pmi -n 2 $P 20 x && grep -q "usage: mpi_prog.*'x' is not" "$T/out"; then
	ok "mpi_prog with a bad argument: status 2 and a usage line"
else
	no "mpi_prog with a bad argument: status 2 and a usage line"
fi

finish mpi-prog
