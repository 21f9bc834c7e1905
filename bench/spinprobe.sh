#!/bin/sh
# Waiting threads passed over by their loops' probes (docs/syscalls.md, "Spin loops that yield"):
# 32 ranks of tests/integ/spinwait at 50 barriers on one worker (ulpexec -n 32 -w 1), pinned with
# taskset to BENCH_CPU (default: the last), rank 0 calling sched_yield 200 times before it arrives
# at each barrier while the 31 others wait in a rewritten loop: with probes each of its yields
# finds the waiters' flags unchanged without switching to them; without (ULP_SPINPROBE=0) the
# worker switches through every waiting rank at each yield. BENCH_REPS interleaved pairs (default
# 5). One BENCH line: the medians in ms and ratio = with probes / without.
# Usage: bench/spinprobe.sh BUILD_DIR. Never fails.
B=${1:-build}
. "$(dirname "$0")/lib.sh" # cpu, reps, med
P="$B/tests/integ/spinwait"
X="$B/bin/ulpexec"
T=$(mktemp) F=$(mktemp)
trap 'rm -f "$T" "$F"' EXIT
if [ ! -x "$P" ] || [ ! -x "$X" ]; then
	echo "bench/spinprobe: $P or ulpexec not built" >&2
	exit 0
fi
# ms of one run, or nan when it failed
run() {
	rm -f "$F"
	t0=$(date +%s%N)
	if env ULP_SPINPROBE="$1" SPINWAIT_BARRIER=32 SPINWAIT_LATE_YIELDS=200 \
		taskset -c "$cpu" timeout 120 "$X" -n 32 -w 1 "$P" "$F" 50 >/dev/null 2>&1; then
		echo $((($(date +%s%N) - t0) / 1000000))
	else
		echo nan
	fi
}
r=0
while [ $r -lt "$reps" ]; do # interleaved: the machine's load hits both alike
	echo "$(run 1) $(run 0)" >>"$T"
	r=$((r + 1))
done
on=$(awk '{print $1}' "$T" | med) off=$(awk '{print $2}' "$T" | med)
awk -v on="$on" -v off="$off" -v r="$reps" 'BEGIN {
	printf "BENCH spin_probe ranks=32 barriers=50 yields=200 cpu_pinned=1 reps=%d probes_ms=%s no_probes_ms=%s ratio=%.2f\n",
		r, on, off, (off > 0 ? on / off : 0) }'
