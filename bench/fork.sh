#!/bin/sh
# fork + execve("/bin/true") + waitpid rounds (bench/fork_guest.c), us per round: as a process,
# as a ULP alone (ulpspawn -n 1), and as a ULP beside 63 bystander ULPs that sleep (the same
# program), with the fork child holding the forking ULP's partition only (the default:
# libulp/kernel/fork_copy.c) and with every partition copied (ULP_FORK_COPY_ALL=1). BENCH_REPS
# interleaved runs (default 5) of FORK_ROUNDS rounds (default 150); one BENCH line of medians
# and the ratios against the process and of the two ways beside the bystanders. Not pinned: the
# child, the placeholder and the workers need both CPUs.
# Usage: bench/fork.sh BUILD_DIR. Never fails.
B=${1:-build}
. "$(dirname "$0")/lib.sh" # reps, med
G="$B/bench/fork_guest"
S="$B/bin/ulpspawn"
n=${FORK_ROUNDS:-150}
T=$(mktemp)
trap 'rm -f "$T"' EXIT
if [ ! -x "$G" ] || [ ! -x "$S" ]; then
	echo "bench/fork: $G or ulpspawn not built" >&2
	exit 0
fi
# The forking rank starts after a moment, once the bystanders are loaded.
beside() {
	env "$@" "$S" -n 1 sh -c "sleep 0.5; exec $G $n" : -n 63 "$G" sleep 3 2>/dev/null |
		grep -v '^$' | head -1
}
one() { v=$("$@" 2>/dev/null | tail -1); echo "${v:-nan}"; }
r=0
while [ $r -lt "$reps" ]; do
	echo "$(one "$G" "$n") $(one "$S" -n 1 "$G" "$n") $(one beside X=1) \
$(one beside ULP_FORK_COPY_ALL=1)" >>"$T"
	r=$((r + 1))
done
p=$(awk '{print $1}' "$T" | med) a=$(awk '{print $2}' "$T" | med)
b=$(awk '{print $3}' "$T" | med) c=$(awk '{print $4}' "$T" | med)
awk -v p="$p" -v a="$a" -v b="$b" -v c="$c" -v r="$reps" -v n="$n" 'BEGIN {
	printf "BENCH fork_exec_wait reps=%d rounds=%d process_us=%s ulp_alone_us=%s ulp_beside63_us=%s ulp_beside63_copyall_us=%s alone_ratio=%.2f beside63_ratio=%.2f copyall_over_own=%.2f\n",
		r, n, p, a, b, c, (p > 0 ? a / p : 0), (p > 0 ? b / p : 0), (b > 0 ? c / b : 0) }'
