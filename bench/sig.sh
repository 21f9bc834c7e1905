#!/bin/sh
# Signals a program sends itself, with a handler (bench/sig_guest.c), as a process and as a ULP
# (ulpexec -w 1), both pinned with taskset to BENCH_CPU (default: the last), BENCH_REPS
# interleaved runs (default 5) of 20,000 signals of each kind. One BENCH line: the medians, ns
# per signal, standard (SIGUSR1) and real-time (SIGRTMIN+1, queued per ULP: docs/syscalls.md
# "Signals"), and ratio = ULP / process.
# Usage: bench/sig.sh BUILD_DIR. Never fails.
B=${1:-build}
. "$(dirname "$0")/lib.sh" # cpu, reps, med
G="$B/bench/sig_guest"
X="$B/bin/ulpexec"
T=$(mktemp)
trap 'rm -f "$T"' EXIT
if [ ! -x "$G" ] || [ ! -x "$X" ]; then
	echo "bench/sig: $G or ulpexec not built" >&2
	exit 0
fi
run() { taskset -c "$cpu" "$@" 20000 2>/dev/null || echo "nan nan"; }
r=0
while [ $r -lt "$reps" ]; do # interleaved: the machine's load hits both alike
	echo "$(run "$G") $(run "$X" -w 1 "$G")" >>"$T"
	r=$((r + 1))
done
ps=$(awk '{print $1}' "$T" | med) pr=$(awk '{print $2}' "$T" | med)
us=$(awk '{print $3}' "$T" | med) ur=$(awk '{print $4}' "$T" | med)
awk -v ps="$ps" -v pr="$pr" -v us="$us" -v ur="$ur" -v r="$reps" 'BEGIN {
	printf "BENCH sig_self cpu_pinned=1 reps=%d process_std_ns=%s ulp_std_ns=%s process_rt_ns=%s ulp_rt_ns=%s ratio_std=%.2f ratio_rt=%.2f\n",
		r, ps, us, pr, ur, (ps > 0 ? us / ps : 0), (pr > 0 ? ur / pr : 0) }'
