#!/bin/sh
# Wait loops that yield (docs/syscalls.md, "Spin loops that yield"): two ranks on ONE worker
# play ping-pong through flags in a shared file, each busy-waiting with no call (progs/spinwait.c).
# Their loops are rewritten to yield (the launcher's count, ULP_SPINYIELD_STATS=1, says how many),
# the sums passed are right and the same as with ULP_SPINYIELD=0, ULP_FASTCALL=0 and as two
# processes; with a second thread per rank too; loops of short instructions only (several under
# the jmp) while a rank has one thread; a signal handler runs in ranks waiting in rewritten
# loops; ranks that spin forever in a rewritten loop end on SIGTERM; 16 ranks waiting at barriers
# on one worker are passed over by their loops' probes (no switch while their flag is unchanged),
# with every sum right, the same with ULP_SPINPROBE=0 and as processes, and end on SIGTERM; the
# programs on disk are unchanged. Usage: spinyield.sh BUILD_DIR
B=${1:-build}
. "$(dirname "$0")/lib.sh"
ROUNDS=2000
sums() { sha256sum "$B/tests/integ/spinwait" "$B/tests/integ/spinwait_dyn"; }
sums >"$T/before"
# the ranks' lines, in rank order
ranks() { grep '^rank ' "$T/out" | sort; }
# the launcher's counts: loops rewritten, of them with a probe, waits passed over by a probe
stat_line() { grep '^libulp: [0-9]* spin loops rewritten' "$T/out" | tail -1; }
rewritten() { stat_line | sed -n 's/^libulp: \([0-9]*\) spin loops rewritten.*/\1/p'; }
probed() { stat_line | sed -n 's/.*rewritten (\([0-9]*\) with a probe).*/\1/p'; }
passed() { stat_line | sed -n 's/.*, \([0-9]*\) waits passed over.*/\1/p'; }
# barrier lines every rank must print (spinwait's SPINWAIT_BARRIER=N)
barrier_lines() {
	r=0
	while [ $r -lt "$1" ]; do
		echo "rank $r: $2 barriers of $1, 0 wrong sums (right)"
		r=$((r + 1))
	done | sort
}

for prog in spinwait spinwait_dyn; do
	P=$B/tests/integ/$prog
	rm -f "$T/flags"
	"$P" "$T/flags" $ROUNDS 1 >"$T/r1" 2>&1 &
	r1=$!
	timeout 300 "$P" "$T/flags" $ROUNDS 0 >"$T/r0" 2>&1
	r0=$?
	wait $r1
	cat "$T/r0" "$T/r1" | sort >"$T/proc"
	if [ $r0 = 0 ] && [ "$(grep -c '(right)$' "$T/proc")" = 2 ]; then
		ok "$prog: $ROUNDS rounds as two processes"
	else
		cp "$T/proc" "$T/out"
		no "$prog: $ROUNDS rounds as two processes"
		continue
	fi
	for th in 0 1; do
		for how in "ulpexec -n 2 -w 1" "ulpspawn -n 2 -t 1 -w 1"; do
			set -- $how
			L=$B/bin/$1
			shift
			name="$prog ($how, second thread: $th)"
			rm -f "$T/flags"
			if expect "$name" 0 env SPINWAIT_THREAD=$th ULP_SPINYIELD_STATS=1 "$L" "$@" "$P" "$T/flags" $ROUNDS &&
				ranks | cmp -s - "$T/proc" && [ "$(rewritten)" -ge 1 ]; then
				ok "$name: $(rewritten) wait loops rewritten, the process's sums"
			else
				no "$name: wait loops rewritten, the process's sums"
			fi
		done
	done
	# waits through a pointer in a register: no instruction of 5 bytes, the jmp covers several;
	# rewritten while each rank has one thread, left spinning with a second one
	for th in 0 1; do
		rm -f "$T/flags"
		if expect "$prog short $th" 0 env SPINWAIT_SHORT=1 SPINWAIT_THREAD=$th ULP_SPINYIELD_STATS=1 \
			"$B/bin/ulpexec" -n 2 -w 1 "$P" "$T/flags" $ROUNDS && ranks | cmp -s - "$T/proc" &&
			if [ $th = 0 ]; then [ "$(rewritten)" -ge 1 ]; else [ "$(rewritten)" = 0 ]; fi; then
			ok "$prog: loops of short instructions, second thread: $th: $(rewritten) rewritten, the process's sums"
		else
			no "$prog: loops of short instructions, second thread: $th: rewritten only without, the process's sums"
		fi
	done
	for off in ULP_SPINYIELD=0 ULP_FASTCALL=0; do
		rm -f "$T/flags"
		if expect "$prog $off" 0 env $off ULP_SPINYIELD_STATS=1 "$B/bin/ulpexec" -n 2 -w 1 "$P" "$T/flags" $ROUNDS &&
			ranks | cmp -s - "$T/proc" && [ "$(rewritten)" = 0 ]; then
			ok "$prog: $off rewrites no loop, the process's sums"
		else
			no "$prog: $off rewrites no loop, the process's sums"
		fi
	done
	# a signal handler runs in a thread waiting in a rewritten loop (delivered from the loop's
	# trampoline with one thread, by the tick with two) and ends the wait
	for th in 0 1; do
		rm -f "$T/flags" "$T/out.sig"
		: >"$T/out.sig"
		env SPINWAIT_SIGNAL=1 SPINWAIT_THREAD=$th ULP_SPINYIELD_STATS=1 timeout -k 30 120 \
			"$B/bin/ulpspawn" -n 2 -t 1 -w 1 "$P" "$T/flags" $ROUNDS >"$T/out.sig" 2>&1 &
		sp=$!
		i=0
		while [ "$(grep -c 'waiting for SIGUSR1' "$T/out.sig")" != 2 ] && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -USR1 "$(pgrep -P $sp)" # ulpspawn, under timeout, sends it on to every rank
		wait $sp
		st=$?
		cp "$T/out.sig" "$T/out"
		if [ $st = 0 ] && [ "$(lines 'woken by SIGUSR1')" = 2 ] && [ "$(rewritten)" -ge 1 ]; then
			ok "$prog: SIGUSR1's handler runs in ranks waiting in rewritten loops (second thread: $th)"
		else
			echo "exit status $st" >>"$T/out"
			no "$prog: SIGUSR1's handler runs in ranks waiting in rewritten loops (second thread: $th)"
		fi
	done
	rm -f "$T/flags"
	term_ends "$prog: ranks spinning for ever in rewritten loops end on SIGTERM" 2 '^rank ' \
		env SPINWAIT_FOREVER=1 SPINWAIT_THREAD=1 "$B/bin/ulpspawn" -n 2 -t 1 -w 1 "$P" "$T/flags" $ROUNDS

	# Barriers: many ranks waiting on one worker while rank 0 sleeps before it arrives. The
	# waiting ranks' loops get probes, which pass them over while their flag is unchanged,
	# without a switch; the sums stay right (none is let through early), as with the probes
	# off and as processes.
	rm -f "$T/flags"
	barrier_lines 4 50 >"$T/want4"
	i=0
	while [ $i -lt 4 ]; do
		SPINWAIT_BARRIER=4 timeout 300 "$P" "$T/flags" 50 $i >"$T/b$i" 2>&1 &
		i=$((i + 1))
	done
	wait
	if cat "$T/b0" "$T/b1" "$T/b2" "$T/b3" | sort | cmp -s - "$T/want4"; then
		ok "$prog: 50 barriers of 4 processes, every sum right"
	else
		cat "$T/b0" "$T/b1" "$T/b2" "$T/b3" >"$T/out"
		no "$prog: 50 barriers of 4 processes, every sum right"
	fi
	barrier_lines 16 100 >"$T/want16"
	for th in 0 1; do
		for how in "ulpexec -n 16 -w 1" "ulpspawn -n 16 -t 1 -w 1"; do
			set -- $how
			L=$B/bin/$1
			shift
			name="$prog barriers ($how, second thread: $th)"
			rm -f "$T/flags"
			if expect "$name" 0 env SPINWAIT_BARRIER=16 SPINWAIT_LATE_US=2000 SPINWAIT_THREAD=$th \
				ULP_SPINYIELD_STATS=1 "$L" "$@" "$P" "$T/flags" 100 &&
				ranks | cmp -s - "$T/want16" && [ "$(probed)" -ge 1 ] && [ "$(passed)" -ge 1 ]; then
				ok "$name: every sum right, $(probed) loops with a probe, $(passed) waits passed over"
			else
				no "$name: every sum right, loops with a probe, waits passed over"
			fi
		done
	done
	rm -f "$T/flags"
	if expect "$prog barriers ULP_SPINPROBE=0" 0 env ULP_SPINPROBE=0 SPINWAIT_BARRIER=16 \
		SPINWAIT_LATE_US=2000 ULP_SPINYIELD_STATS=1 "$B/bin/ulpexec" -n 16 -w 1 "$P" "$T/flags" 100 &&
		ranks | cmp -s - "$T/want16" && [ "$(rewritten)" -ge 1 ] && [ "$(probed)" = 0 ] &&
		[ "$(passed)" = 0 ]; then
		ok "$prog: barriers with ULP_SPINPROBE=0: loops rewritten without probes, every sum right"
	else
		no "$prog: barriers with ULP_SPINPROBE=0: loops rewritten without probes, every sum right"
	fi
	# ranks passed over by probes still end: SIGTERM reaches each waiting one (its ULP dying
	# makes its probe answer "run it")
	rm -f "$T/flags"
	term_ends "$prog: 16 ranks waiting for ever at a barrier end on SIGTERM" 16 '^rank ' \
		env SPINWAIT_FOREVER=1 SPINWAIT_BARRIER=16 SPINWAIT_THREAD=1 "$B/bin/ulpspawn" -n 16 -t 1 -w 1 \
		"$P" "$T/flags" 20
done

sums >"$T/after"
if cmp -s "$T/before" "$T/after"; then
	ok "the programs on disk are byte-identical after the runs"
else
	no "the programs on disk are byte-identical after the runs"
fi
finish integ-spinyield
