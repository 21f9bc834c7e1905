#!/bin/sh
# mpi_like_prog with 64 ranks on this machine's cores: as ULPs (ulpexec, and ulpspawn when built)
# against MPICH processes (mpiexec -n 64, oversubscribed), same arguments, interleaved: repetition
# r runs every variant once, one after the other. Prints one BENCH line with the medians:
#   ulp_s, ulpspawn_s, mpich_s   wall-clock time of the whole command (launch included)
#   *_prog_s                     time inside the program (from the barrier after ml_init to
#                                the last barrier), as its summary line reports it
#   speedup = mpich_s / ulp_s, speedup_ulpspawn = mpich_s / ulpspawn_s; target_min=5
# Usage: bench/mpi_like.sh BUILD_DIR   (env: ML_BENCH_RANKS=64, ML_BENCH_REPS=3,
#        ML_BENCH_ARGS="20 20000 1" = STEPS CELLS LAPS; MPICH needs minutes for the defaults of
#        mpi_like_prog, hence the shorter run; ML_MPIEXEC overrides mpiexec.mpich)
# Never fails: a variant that cannot run is reported on stderr and left out.
B=${1:-build}
E="$B/examples/mpi_like"
n=${ML_BENCH_RANKS:-64}
reps=${ML_BENCH_REPS:-3}
args=${ML_BENCH_ARGS:-20 20000 1}
MPIEXEC=${ML_MPIEXEC:-$(command -v mpiexec.mpich)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

variants="ulp"
[ -x "$B/bin/ulpspawn" ] && variants="$variants ulpspawn" ||
	echo "bench/mpi_like: $B/bin/ulpspawn not built: no ulpspawn column" >&2
if [ -x "$E/mpi_like_prog.mpi" ] && [ -n "$MPIEXEC" ]; then
	variants="$variants mpich"
else
	echo "bench/mpi_like: MPICH or $E/mpi_like_prog.mpi missing (make bench installs it)" >&2
fi

now() { date +%s.%N; }
# run VARIANT: one timed run; appends "wall prog checksum" to $T/VARIANT
run() {
	cur=$1
	case $1 in
	ulp) set -- "$B/bin/ulpexec" -n "$n" "$E/mpi_like_prog" ;;
	ulpspawn) set -- "$B/bin/ulpspawn" -n "$n" "$E/mpi_like_prog" ;;
	mpich) set -- "$MPIEXEC" -n "$n" "$E/mpi_like_prog.mpi" ;;
	esac
	t0=$(now)
	# shellcheck disable=SC2086 # args are words
	timeout 900 "$@" $args >"$T/out" 2>&1
	rc=$?
	t1=$(now)
	line=$(grep '^mpi_like_prog:' "$T/out")
	if [ $rc != 0 ] || ! echo "$line" | grep -q 'ring ok.*halo.* ok checksum=.*allreduce ok'; then
		echo "bench/mpi_like: $* $args: exit status $rc:" >&2
		tail -5 "$T/out" >&2
		return
	fi
	prog=$(echo "$line" | sed 's/.*, \([0-9.]*\) s$/\1/')
	sum=$(echo "$line" | sed 's/.*checksum=\([^,]*\),.*/\1/')
	echo "$t0 $t1 $prog $sum" | awk '{ printf "%.3f %s %s\n", $2 - $1, $3, $4 }' >>"$T/$cur"
}

echo "bench/mpi_like: $n ranks, mpi_like_prog $args, $reps repetitions of: $variants" >&2
for r in $(seq 1 "$reps"); do
	for v in $variants; do
		run "$v"
	done
done

# median COLUMN FILE
median() {
	[ -s "$2" ] || { echo nan; return; }
	cut -d' ' -f"$1" "$2" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f", a / b; else print "nan" }'; }

ulp=$(median 1 "$T/ulp")
ulpspawn=$(median 1 "$T/ulpspawn")
mpich=$(median 1 "$T/mpich")
sums=$(cat "$T"/ulp "$T"/ulpspawn "$T"/mpich 2>/dev/null | cut -d' ' -f3 | sort -u | wc -l)
met=$(awk -v s="$(ratio "$mpich" "$ulp")" 'BEGIN { print (s != "nan" && s >= 5) ? "yes" : "no" }')
echo "BENCH mpi_like ranks=$n args=$(echo "$args" | tr ' ' ,) ulp_s=$ulp ulpspawn_s=$ulpspawn" \
	"mpich_s=$mpich speedup=$(ratio "$mpich" "$ulp") speedup_ulpspawn=$(ratio "$mpich" "$ulpspawn")" \
	"ulp_prog_s=$(median 2 "$T/ulp") ulpspawn_prog_s=$(median 2 "$T/ulpspawn")" \
	"mpich_prog_s=$(median 2 "$T/mpich") prog_speedup=$(ratio "$(median 2 "$T/mpich")" "$(median 2 "$T/ulp")")" \
	"same_checksum=$([ "$sums" = 1 ] && echo yes || echo no) target_min=5 met=$met"
