#!/bin/sh
# Real-time signals to a ULP are queued, each with its own siginfo, as for a process
# (tests/integ/progs/rtqueue.c; libulp/kernel/sigqueue.c): 300 sigqueue with values to a ULP's
# pid while it blocks them, from a process outside and from another ULP (same task, another
# task), then handlers (SIGRTMIN+2's first, as the kernel nests them) or sigtimedwait one by one
# (SIGRTMIN+1's first), each number in the order sent with its value, code, pid and uid; sigqueue,
# raise and kill to itself; pthread_kill to a thread; EAGAIN at RLIMIT_SIGPENDING; a child's SIGCHLD carries its CPU times
# (si_utime, si_stime). Each ULP's output must be the one the same program printed as a process.
# Before 27 Nov 300 arrived as 36 to 90, and si_utime/si_stime were 0. RTQ_RUNS: rounds.
# Usage: tests/integ/rtqueue.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
P=$O/tests/integ
X=$O/bin/ulpexec
S=$O/bin/ulpspawn
export TEST_TIMEOUT=120
RUNS=${RTQ_RUNS:-3}
N=300

# same NAME: $T/out is $T/ref (what the process printed), but the launcher's own lines
same() {
	grep -v '^ulpexec:\|^ulpspawn:\|^# queued' "$T/out" >"$T/cmp"
	if cmp -s "$T/ref" "$T/cmp" && [ "$(grep -c FAIL "$T/ref")" = 0 ]; then
		ok "$1"
	else
		echo "# as a process:" >>"$T/out"
		sed 's/^/#   /' "$T/ref" >>"$T/out"
		no "$1"
	fi
}

# received MODE HOW...: MODE's receiver run by HOW, signals from a process outside
received() {
	r_mode=$1
	shift
	rm -f "$T/pid"
	# shellcheck disable=SC2068 # HOW is words
	(timeout -k 10 "$TEST_TIMEOUT" $@ $P/$prog "$r_mode" "$T/pid" $N >"$T/out" 2>&1) &
	r_job=$!
	timeout -k 10 "$TEST_TIMEOUT" $P/$prog send "$T/pid" $N
	r_sent=$?
	wait $r_job
	r_got=$?
	[ "$r_sent" = 0 ] && [ "$r_got" = 0 ]
}

for prog in rtqueue rtqueue_dyn; do
	for mode in recv wait; do
		rm -f "$T/pid"
		($P/$prog $mode "$T/pid" $N >"$T/ref" 2>&1) &
		job=$!
		timeout -k 10 "$TEST_TIMEOUT" $P/$prog send "$T/pid" $N
		wait $job
		round=1
		while [ $round -le "$RUNS" ]; do
			received $mode "$X -n 1"
			same "$prog $mode, round $round: $N sigqueue from a process outside to a ULP's pid"
			rm -f "$T/pid"
			expect "$prog $mode from a ULP" 0 $X -n 1 $P/$prog $mode "$T/pid" $N : -n 1 $P/$prog send "$T/pid" $N
			same "$prog $mode, round $round: $N sigqueue from another ULP of the task"
			rm -f "$T/pid"
			expect "$prog $mode from another task" 0 $S -n 2 -t 2 -w 1 sh -c \
				"if [ \$ULP_RANK = 0 ]; then exec $P/$prog $mode $T/pid $N; else exec $P/$prog send $T/pid $N; fi"
			same "$prog $mode, round $round: $N sigqueue from a ULP of another task"
			round=$((round + 1))
		done
	done
	for mode in "self $N" "bound 64" "thread 100" "chld 200"; do
		# shellcheck disable=SC2086 # mode is words
		$P/$prog $mode 2>&1 | grep -v '^# queued' >"$T/ref"
		checks=$(grep -c ': ok$' "$T/ref")
		# a process shares RLIMIT_SIGPENDING with every process of its user; a ULP has it
		# for itself: exactly its bound queued
		exact=$(echo "$mode" | sed -n 's/^bound \([0-9]*\)$/# queued \1 before EAGAIN/p')
		round=1
		while [ $round -le "$RUNS" ]; do
			# shellcheck disable=SC2086
			expect "$prog $mode" 0 $X -n 1 $P/$prog $mode
			same "$prog $mode, round $round: as a process"
			# shellcheck disable=SC2086
			if expect "$prog $mode, 4 ULPs" 0 $X -n 4 -w 2 $P/$prog $mode &&
				[ "$(lines ': ok$')" = $((checks * 4)) ] && [ "$(lines FAIL)" = 0 ] &&
				{ [ -z "$exact" ] || [ "$(lines "^$exact\$")" = 4 ]; }; then
				ok "$prog $mode, round $round: 4 ULPs of one task, each its own queue"
			else
				no "$prog $mode, round $round: 4 ULPs of one task, each its own queue"
			fi
			round=$((round + 1))
		done
	done
done
finish integ-rtqueue
