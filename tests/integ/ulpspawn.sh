#!/bin/sh
# ulpspawn as a user runs it. Usage: tests/integ/ulpspawn.sh BUILD_DIR
B=${1:-build}
S="$B/bin/ulpspawn"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"

head -c 2000000 /dev/urandom >"$T/data"
want=$(sha256sum "$T/data")
for t in 1 2 4; do
	if expect run 0 "$S" -n 64 -t $t /usr/bin/sha256sum "$T/data" && [ "$(grep -c . "$T/out")" = 64 ] &&
		[ "$(sort -u "$T/out")" = "$want" ]; then
		ok "64 ranks of sha256sum over $t task(s) match the process's output"
	else no "64 ranks of sha256sum over $t task(s) match the process's output"; fi
done

if expect run 0 "$S" -n 6 -t 3 -w 1 "$P/guest_check" 0 : -n 2 "$P/guest_check_dyn" 0 &&
	[ "$(lines ' ok pvid-set')" = 8 ]; then
	ok "MPMD over 3 tasks: each rank is a process of its own"
else no "MPMD over 3 tasks: each rank is a process of its own"; fi

if expect run 0 "$S" -n 4 -t 2 --stats "$P/probe" exit 0 && [ "$(grep -c '^[0-3] ' "$T/out")" = 4 ] &&
	grep -q 'switches' "$T/out"; then
	ok "--stats prints a row per rank"
else no "--stats prints a row per rank"; fi

if expect run 139 "$S" -n 6 -t 3 "$P/crash" && [ "$(lines survived)" = 3 ] &&
	grep -q 'rank 0 .*killed by SIGSEGV' "$T/out" && grep -q 'rank 2 .*killed by SIGABRT' "$T/out"; then
	ok "crashing ranks are reported, the others finish"
else no "crashing ranks are reported, the others finish"; fi

if expect run 1 "$S" -n 5 -t 2 "$P/probe" exitrank 4 && grep -q 'rank 3 .*status 3' "$T/out" &&
	grep -q 'rank 1 .*status 1' "$T/out"; then
	ok "exit status is the first non-zero by rank"
else no "exit status is the first non-zero by rank"; fi

if expect run 0 "$S" -n 64 "$P/probe" switchall && expect run 0 "$S" -n 64 -w 1 "$P/probe" switchall; then
	ok "pvas_ulp_switch to ULPs that are ending never faults"
else no "pvas_ulp_switch to ULPs that are ending never faults"; fi

# Ending ulpspawn ends every task: no process is left behind.
for sig in TERM INT KILL; do
	"$S" -n 4 -t 4 -w 1 "$P/probe" spin >"$T/out" 2>&1 &
	sp=$!
	i=0
	while [ "$(lines '^pid ')" -lt 4 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	pids=$(sed -n 's/^pid //p' "$T/out" | sort -u)
	kill -$sig $sp
	wait $sp 2>/dev/null
	sleep 0.5
	left=0
	# a zombie is dead (it waits for a reaper that may not come: PID 1 of a container)
	for p in $pids; do
		st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && left=$((left + 1))
	done
	if [ "$(echo "$pids" | wc -w)" = 4 ] && [ $left = 0 ]; then
		ok "SIG$sig to ulpspawn leaves no task process behind"
	else
		echo "tasks: $pids; still alive: $left" >>"$T/out"
		no "SIG$sig to ulpspawn leaves no task process behind"
		for p in $pids; do kill -9 "$p" 2>/dev/null; done
	fi
done

if expect run 2 "$S" -n 2 -t 3 /bin/true && grep -q 'more tasks' "$T/out" &&
	expect run 2 "$S" --bind 9-2 -n 1 /bin/true && grep -q 'CPU list' "$T/out" &&
	expect run 0 "$S" -h && grep -q usage "$T/out"; then
	ok "bad options are errors; -h explains usage"
else no "bad options are errors; -h explains usage"; fi

if expect run 0 "$B/examples/paper/ulpspawn_sample" && grep -q 'I am user-level process 1.' "$T/out" &&
	[ "$(sed -n 2p "$T/out")" = "I am user-level process 2." ]; then
	ok "the paper's sample prints its two lines in order"
else no "the paper's sample prints its two lines in order"; fi

finish ulpspawn
