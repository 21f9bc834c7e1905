#!/bin/sh
# make demo: an oversubscribed message-passing run (64 ranks of examples/mpi_like on this
# machine's cores, as ULPs over a PVAS task), then Debian's own programs as ULPs checked against
# the same programs run as processes, then a real MPI program (examples/mpi, Debian's MPICH) as
# ULP ranks beside the same binary under mpiexec.mpich, then the User-level Process paper's sample.
set -e
B=${1:-build}
S="$B/bin/ulpspawn"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=64
cores=$(nproc)
now() { date +%s.%N; }
secs() { awk "BEGIN{printf \"%.2f\", $2 - $1}"; }

echo "== $N ranks of examples/mpi_like/mpi_like_prog as ULPs on $cores cores (ulpspawn --stats)"
t0=$(now)
"$S" -n $N --stats "$B/examples/mpi_like/mpi_like_prog" >"$T/ml" 2>&1 || {
	cat "$T/ml"
	echo "demo: mpi_like_prog FAILED"
	exit 1
}
t1=$(now)
grep '^mpi_like_prog:' "$T/ml"
echo "per-rank table (first 6 of $N rows):"
grep -E '^(ulpspawn: backend|rank )' "$T/ml"
grep -E '^[0-9]+ ' "$T/ml" | head -6
awk '/^[0-9]+ / { sw += $4; cpu += $5; n++ } END { printf "all %d ranks: %d switches, %.1f ms CPU\n", n, sw, cpu }' "$T/ml"
echo "time: $(secs "$t0" "$t1") s for $N ranks in one process (MPICH's mpiexec needs minutes for"
echo "      the same 64 ranks on 2 cores: make bench, bench/mpi_like.sh, docs/benchmarks.md)"
echo

echo "== $N ranks of Debian's /usr/bin/sha256sum (an unmodified dynamic PIE) over 2 PVAS tasks"
head -c 8000000 /dev/urandom >"$T/data"
want=$(sha256sum "$T/data")
t0=$(now)
"$S" -n $N -t 2 /usr/bin/sha256sum "$T/data" >"$T/out"
t1=$(now)
if [ "$(grep -c . "$T/out")" = $N ] && [ "$(sort -u "$T/out")" = "$want" ]; then
	echo "result check: OK ($N identical lines, equal to the process's: ${want%% *})"
else
	echo "result check: FAILED"
	exit 1
fi
t2=$(now)
seq $N | xargs -P "$cores" -I{} sha256sum "$T/data" >/dev/null
t3=$(now)
echo "time: $(secs "$t0" "$t1") s as ULPs, $(secs "$t2" "$t3") s as $N processes ($cores at a time)"
echo

M=16
P="$B/examples/mpi/mpi_prog"
echo "== a real MPI program: $M ranks of examples/mpi/mpi_prog (Debian's MPICH, unmodified) as ULPs"
echo "   (ulpspawn --pmi, a PVAS task per core, $cores) beside the same binary under mpiexec.mpich"
t0=$(now)
"$S" --pmi -n $M "$P" 20 2000 2 >"$T/mu" 2>&1 || {
	cat "$T/mu"
	echo "demo: mpi_prog as ULPs FAILED"
	exit 1
}
t1=$(now)
mpiexec.mpich -n $M "$P" 20 2000 2 >"$T/mp" 2>&1 || {
	cat "$T/mp"
	echo "demo: mpi_prog under mpiexec.mpich FAILED"
	exit 1
}
t2=$(now)
echo "ULPs:      $(grep '^mpi_prog:' "$T/mu")"
echo "processes: $(grep '^mpi_prog:' "$T/mp")"
sum() { sed -n 's/.*ok checksum=\([^,]*\), allreduce ok.*/\1/p' "$1"; }
if [ -n "$(sum "$T/mu")" ] && [ "$(sum "$T/mu")" = "$(sum "$T/mp")" ]; then
	echo "result check: OK (same checksum, every check passed in both runs)"
else
	echo "result check: FAILED (checksums differ or a check failed)"
	exit 1
fi
echo "time: $(secs "$t0" "$t1") s as ULPs, $(secs "$t1" "$t2") s as $M processes (launch included;"
echo "      Debian's MPICH busy-polls and never yields: its processes spin until the kernel's"
echo "      tick, while ulpspawn's ranks yield when idle; docs/mpi.md and docs/benchmarks.md)"
echo

echo "== the User-level Process paper's sample (pvas_spawn, pvas_ulp_exec)"
"$B/examples/paper/ulpspawn_sample"
