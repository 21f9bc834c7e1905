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

# A ULP thread alone in its task (no other ULP or thread, none parked) has nothing its worker's
# tick could switch to or reap for, nor have two ULPs on two workers, one each: the tick comes
# every 10 ms instead of every quantum (1 ms; docs/syscalls.md, "Preemption"). Counted here as
# strace sees the tick's signals (SI_TIMER), against the job's wall time: at most 1000 a second
# per worker before, about 100 now; the bounds leave room for the ticks of the start, when the
# launcher's reference keeps the ULPs from being alone. Two ranks on one worker must still be
# ticked at the quantum (about 1000 a second, each switched out at every second tick): more
# than 3 times as often as the one alone (a ratio, as a loaded machine lowers both rates: a
# thread that does not run takes no tick). Every job must end with the process's lines.
# The pairs run a quarter of the steps each, the one on one worker without the spinners' turns
# of 200 us (each tick a round trip to the tracer: 2 x 100,000,000 steps took 71 s with them).
ALONE_STEPS=${ALONE_STEPS:-1000000000}
PAIR_STEPS=$((ALONE_STEPS / 4))
"$P" "$ALONE_STEPS" >"$T/want1" 2>&1
"$P" "$PAIR_STEPS" >"$T/want2" 2>&1
"$P" "$PAIR_STEPS" >>"$T/want2" 2>&1
# ticks_per_s NAME STEPS LAUNCHER...: runs crunch STEPS under strace; the tick's signals per
# second of wall time in $rate
ticks_per_s() {
	tn=$1 steps=$2
	shift 2
	t0=$(date +%s%N)
	expect "$tn" 0 strace -f -qq -e trace=none -o "$T/tr" "$@" "$P" "$steps" || return 1
	t1=$(date +%s%N)
	n=$(grep -c 'si_code=SI_TIMER' "$T/tr")
	rate=$((n * 1000000000 / (t1 - t0 + 1)))
	echo "# $tn: $n ticks in $(((t1 - t0) / 1000000)) ms: $rate a second"
}
alone=
if ticks_per_s "one ULP computing alone" "$ALONE_STEPS" "$B/bin/ulpexec" -w 2 &&
	cmp -s "$T/out" "$T/want1" && [ "$rate" -lt 400 ]; then
	alone=$rate
	ok "a ULP computing alone in its task is ticked seldom ($rate ticks a second)"
else
	no "a ULP computing alone in its task is ticked seldom (${rate:-?} ticks a second, wanted < 400)"
fi
# Two on two workers, one each: every live task runs, the ticks of both together stay seldom.
if ticks_per_s "two ULPs computing on two workers" "$PAIR_STEPS" "$B/bin/ulpexec" -n 2 -w 2 &&
	sort "$T/out" | cmp -s - "$T/want2" && [ "$rate" -lt 500 ]; then
	ok "two ULPs computing on two workers are ticked seldom ($rate ticks a second)"
else
	no "two ULPs computing on two workers are ticked seldom (${rate:-?} a second, wanted < 500)"
fi
if ticks_per_s "two ULPs computing on one worker" "$PAIR_STEPS" env ULP_SPIN_QUANTUM_US=0 \
	"$B/bin/ulpexec" -n 2 -w 1 &&
	sort "$T/out" | cmp -s - "$T/want2" && [ -n "$alone" ] && [ "$rate" -gt $((alone * 3)) ]; then
	ok "two ULPs computing on one worker are ticked at the quantum ($rate a second)"
else
	no "two ULPs computing on one worker are ticked at the quantum (${rate:-?} a second, wanted > 3 x ${alone:-?})"
fi
finish traced
