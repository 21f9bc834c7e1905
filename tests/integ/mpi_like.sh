#!/bin/sh
# examples/mpi_like: mpi_like_prog and ml_stress as ULPs (ulpexec, and ulpspawn once it exists)
# and as MPI processes (MPICH, when installed); the checksums must agree bit for bit.
# Usage: tests/integ/mpi_like.sh BUILD_DIR
B=${1:-build}
E="$B/examples/mpi_like"
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
MPIEXEC=${ML_MPIEXEC:-$(command -v mpiexec.mpich)}
. "$(dirname "$0")/lib.sh"
# summary N: the one summary line of an N-rank run with default arguments is in $T/out, all ok;
# prints its checksum.
summary() {
	grep -c '^mpi_like_prog:' "$T/out" | grep -qx 1 &&
		grep -q "^mpi_like_prog: $1 ranks, ring ok (.*), halo .* ok checksum=[-0-9.e+]*, allreduce ok, " "$T/out" &&
		sed -n 's/^mpi_like_prog: .*checksum=\([^,]*\),.*/\1/p' "$T/out"
}

for p in mpi_like_prog ml_stress; do
	[ -x "$E/$p" ] || { echo "not ok - $E/$p is not built (make O=$B all)"; exit 1; }
done

# 1. mpi_like_prog under ulpexec: 1, 2, 7 and 64 ranks on 1 and 2 workers; same answer on both
for n in 1 2 7 64; do
	sums=""
	for w in 1 2; do
		if expect "prog-$n-$w" 0 "$X" -n $n -w $w "$E/mpi_like_prog" && c=$(summary $n); then
			ok "mpi_like_prog: $n ranks on $w worker(s): ring, halo, allreduce ok (checksum $c)"
			sums="$sums $c"
		else no "mpi_like_prog: $n ranks on $w worker(s)"; fi
	done
	[ "$n" = 64 ] && ref64=${sums# }
	set -- $sums
	if [ $# = 2 ] && [ "$1" = "$2" ]; then
		ok "mpi_like_prog: $n ranks, identical checksum on 1 and 2 workers"
	else no "mpi_like_prog: $n ranks, identical checksum on 1 and 2 workers (got:$sums)"; fi
done
ref64=${ref64%% *}

# 2. the mailboxes under load: out-of-order tags, rendezvous, full rings, every pair of ranks
for n in 1 5 64; do
	for w in 1 2; do
		if expect "stress-$n-$w" 0 "$X" -n $n -w $w "$E/ml_stress" &&
			grep -q "^ml_stress: $n ranks, 60 messages per pair and direction: ok" "$T/out"; then
			ok "ml_stress: $n ranks on $w worker(s)"
		else no "ml_stress: $n ranks on $w worker(s)"; fi
	done
done

# 3. errors: not a ULP, bad arguments, a failing check is the exit status
if expect standalone 2 "$E/mpi_like_prog" && grep -q 'not running as a ULP' "$T/out"; then
	ok "mpi_like_prog as a plain process says it needs ulpexec/ulpspawn"
else no "mpi_like_prog as a plain process says it needs ulpexec/ulpspawn"; fi
if expect badarg 2 "$X" -n 2 "$E/mpi_like_prog" 10 x && grep -q 'usage: mpi_like_prog' "$T/out"; then
	ok "bad arguments: usage message, status 2"
else no "bad arguments: usage message, status 2"; fi

# 4. MPICH: same program, same checksum (8 ranks: MPICH oversubscribed is slow)
if [ -x "$E/mpi_like_prog.mpi" ] && [ -n "$MPIEXEC" ]; then
	args="100 2000 4"
	if expect ulp8 0 "$X" -n 8 "$E/mpi_like_prog" $args && u=$(summary 8) &&
		expect mpi8 0 "$MPIEXEC" -n 8 "$E/mpi_like_prog.mpi" $args && m=$(summary 8); then
		if [ "$u" = "$m" ]; then
			ok "mpiexec -n 8: same checksum as 8 ULPs ($m)"
		else no "mpiexec -n 8: checksum $m, 8 ULPs: $u"; fi
	else no "mpiexec -n 8 and ulpexec -n 8 of mpi_like_prog $args"; fi
	if expect mpi1 0 "$MPIEXEC" -n 1 "$E/mpi_like_prog.mpi" 40 2000 2 && summary 1 >/dev/null; then
		ok "mpiexec -n 1: sends to itself do not wait"
	else no "mpiexec -n 1: sends to itself do not wait"; fi
	if [ -x "$E/ml_stress.mpi" ] && expect mpistress 0 "$MPIEXEC" -n 4 "$E/ml_stress.mpi" &&
		grep -q '^ml_stress: 4 ranks, .*: ok' "$T/out"; then
		ok "ml_stress over MPICH, 4 ranks (same semantics)"
	else no "ml_stress over MPICH, 4 ranks (same semantics)"; fi
else
	skip "MPICH not installed or mpi_like_prog.mpi not built (make deps.sh demo installs mpich libmpich-dev)"
fi

# 5. ulpspawn: ranks spread over 1, 2 and 4 PVAS tasks give the ulpexec answer
if [ -x "$S" ]; then
	for t in 1 2 4; do
		if expect "spawn-$t" 0 "$S" -n 64 -t $t "$E/mpi_like_prog" && c=$(summary 64) &&
			[ "$c" = "$ref64" ]; then
			ok "ulpspawn -n 64 -t $t: same checksum as ulpexec ($c)"
		else no "ulpspawn -n 64 -t $t: same checksum as ulpexec ($ref64)"; fi
		if expect "spawn-stress-$t" 0 "$S" -n 64 -t $t "$E/ml_stress" &&
			grep -q '^ml_stress: 64 ranks, .*: ok' "$T/out"; then
			ok "ml_stress: 64 ranks over $t PVAS task(s)"
		else no "ml_stress: 64 ranks over $t PVAS task(s)"; fi
	done
else
	skip "$S does not exist yet: ulpspawn runs not tested"
fi

finish mpi_like
