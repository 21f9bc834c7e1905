#!/bin/sh
# Scaling with the host's cores, for hosts larger than the 2-vCPU development VM:
#   fib(34) with one thread per call on W = 1, 2, 4, ... workers, each against as many kernel
#   threads at once in the same run (bench/fib, BENCH_FIB_SCALE: fib_scale lines);
#   examples/mpi_like's program, 64 ranks as ULPs, in one PVAS task with W workers and in T tasks
#   of one worker (scale lines: the program's own time and the command's wall time).
# Usage: bench/scale.sh BUILD_DIR   (env: SCALE_WORKERS, default 1,2,4,... up to the CPU count;
#        SCALE_ML_ARGS="100 200000 1" = STEPS CELLS LAPS). Never fails: what cannot run is said.
B=${1:-build}
n=$(nproc)
if [ -z "$SCALE_WORKERS" ]; then
	SCALE_WORKERS=1
	w=2
	while [ $w -le "$n" ]; do SCALE_WORKERS="$SCALE_WORKERS,$w"; w=$((w * 2)); done
fi
args=${SCALE_ML_ARGS:-100 200000 1}
now() { date +%s.%N; }
echo "BENCH scale_env cpus=$n workers=$SCALE_WORKERS fsgsbase=$(grep -q -m1 -w fsgsbase /proc/cpuinfo && echo yes || echo no)"
BENCH_REPS=${BENCH_REPS:-3} BENCH_FIB_SCALE=$SCALE_WORKERS "$B/bench/fib" | grep '^BENCH fib_scale' ||
	echo "bench/scale: $B/bench/fib failed" >&2
P="$B/examples/mpi_like/mpi_like_prog"
[ -x "$P" ] || { echo "bench/scale: $P not built: no mpi_like lines" >&2; exit 0; }
run() { # LABEL ULPSPAWN_ARGS...
	label=$1
	shift
	t0=$(now)
	out=$(timeout 300 "$B/bin/ulpspawn" "$@" "$P" $args 2>&1 | tail -1)
	t1=$(now)
	prog=$(echo "$out" | sed -n 's/.*ok, \([0-9.]*\) s$/\1/p')
	[ -n "$prog" ] || { echo "bench/scale: $label: $out" >&2; return; }
	echo "BENCH scale mpi_like ranks=64 $label prog_s=$prog wall_s=$(echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}')"
}
for w in $(echo "$SCALE_WORKERS" | tr , ' '); do run "tasks=1 workers=$w" -n 64 -w "$w"; done
for t in $(echo "$SCALE_WORKERS" | tr , ' '); do
	[ "$t" -gt 1 ] && run "tasks=$t workers=1" -n 64 -t "$t" -w 1
done
exit 0
