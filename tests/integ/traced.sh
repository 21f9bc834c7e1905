#!/bin/sh
# A job under strace -f (docs/syscalls.md, "Preemption"): ranks that only compute are preempted
# by their worker's tick, and under a tracer each tick's handler takes longer than the spinners'
# turn (every signal and system call stops for strace). Before 27 Nov each tick then interrupted
# the previous one's handler until the stack overflowed and the kernel killed the task with
# SIGSEGV (fault address 0, pc 0), in 6 of 6 runs of this job. Each run under strace must end
# as the run without it does, with the same lines as the program run as a process.
# Usage: traced.sh BUILD_DIR
B=${1:-build}
. "$(dirname "$0")/lib.sh"
P=$B/tests/integ/crunch
STEPS=${TRACED_STEPS:-50000000}
RUNS=${TRACED_RUNS:-4}
export TEST_TIMEOUT=300

if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
	skip "jobs under strace -f: no strace, or no ptrace here"
	finish traced
	exit
fi
"$P" "$STEPS" >"$T/proc" 2>&1 || { cat "$T/proc"; echo "crunch failed as a process"; exit 1; }
for i in 1 2 3 4 5 6 7 8; do cat "$T/proc"; done >"$T/want"

# ranks RUN_NAME COMMAND...: the job's lines, sorted, are the process's 8 times
ranks() {
	r_name=$1
	shift
	expect "$r_name" 0 "$@" && sort "$T/out" | cmp -s - "$T/want"
}

for how in "ulpexec -n 8 -w 2" "ulpspawn -n 8 -t 2 -w 2"; do
	# shellcheck disable=SC2086 # the launcher and its options are words
	set -- $how
	L=$B/bin/$1
	shift
	if ranks "$how" "$L" "$@" "$P" "$STEPS"; then
		ok "$how crunch: the process's lines"
	else
		no "$how crunch: the process's lines"
		continue
	fi
	good=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		# the job's own exit status, not strace's (under_strace.sh)
		expect "$how under strace ($i)" 0 sh "$(dirname "$0")/under_strace.sh" "$T/st" \
			"$L" "$@" "$P" "$STEPS"
		if [ "$(cat "$T/st" 2>/dev/null)" = 0 ] &&
			grep -v '^strace: ' "$T/out" | sort | cmp -s - "$T/want"; then
			good=$((good + 1))
		else
			no "$how crunch under strace -f, run $i of $RUNS: the lines of the run without it"
		fi
	done
	[ $good = "$RUNS" ] && ok "$how crunch under strace -f: $RUNS of $RUNS runs end as without it"
done
finish traced
