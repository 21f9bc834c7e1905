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
# A rank that computes to its end without a switch (one per worker) shows its CPU time: before
# 27 Nov its last stint was not counted and it showed about 0 ms. crunch's 300,000,000 steps
# take 0.3 s or more of CPU here; at least 100 ms must show.
if expect "stats of ranks computing alone" 0 "$S" -n 2 -w 2 --stats "$B/tests/integ/crunch" \
	300000000 && [ "$(awk '/^[01] / && $5 >= 100 { n++ } END { print n + 0 }' "$T/out")" = 2 ]; then
	ok "--stats: ranks that computed to their end without a switch show their CPU time"
else
	no "--stats: ranks that computed to their end without a switch show their CPU time"
fi

if expect run 139 "$S" --keep-going -n 6 -t 3 "$P/crash" && [ "$(lines survived)" = 3 ] &&
	grep -q 'rank 0 .*killed by SIGSEGV' "$T/out" && grep -q 'rank 2 .*killed by SIGABRT' "$T/out"; then
	ok "--keep-going: crashing ranks are reported, the others finish"
else no "--keep-going: crashing ranks are reported, the others finish"; fi

# Job abort (the default): rank 1 segfaults while ranks 0, 2, 3 spin forever; the job ends at
# once with 139 and a message naming the rank and the signal, and no task is left.
if expect run 139 "$S" -n 4 -t 2 -w 1 "$P/probe" crashrank 1 &&
	grep -q 'rank 1 (.*killed by SIGSEGV.*ending the job' "$T/out" &&
	grep -q 'job aborted: rank 1 was killed by signal 11 (Segmentation fault); 3 other' "$T/out" &&
	[ "$(lines '^pid ')" -le 3 ]; then
	ok "a rank killed by a signal ends the job: status 128+signal, message names the rank"
else no "a rank killed by a signal ends the job: status 128+signal, message names the rank"; fi

# -l: every line carries its rank, whole lines only, even when ranks write in small pieces
# at the same time; stderr stays stderr.
"$S" -n 4 -l -w 1 "$P/probe" chatter 200 >"$T/tag.out" 2>"$T/tag.err"
rc=$?
bad=$(grep -cv '^\[[0-3]\] rank [0-3] line [0-9]* abcdefghijklmnopqrstuvwxyz$' "$T/tag.out")
mism=$(awk '{ r = substr($1, 2, 1); if (r != $3) n++ } END { print n + 0 }' "$T/tag.out")
if [ $rc = 0 ] && [ "$(grep -c . "$T/tag.out")" = 800 ] && [ "$bad" = 0 ] && [ "$mism" = 0 ] &&
	[ "$(grep -c '^\[[0-3]\] rank [0-3] to stderr$' "$T/tag.err")" = 4 ]; then
	ok "-l prefixes each whole line with its rank; lines never mix"
else
	{ echo "rc=$rc bad=$bad mismatched=$mism"; head -5 "$T/tag.out"; head -3 "$T/tag.err"; } >"$T/out"
	no "-l prefixes each whole line with its rank; lines never mix"
fi
if expect run 0 "$S" -n 2 --tag-output sh -c 'printf "no newline"' &&
	[ "$(sort "$T/out")" = "$(printf '[0] no newline\n[1] no newline')" ]; then
	ok "--tag-output passes on a last line without newline"
else no "--tag-output passes on a last line without newline"; fi
if expect run 2 "$S" -n 4 -t 2 -l /bin/true && grep -q 'own PVAS task' "$T/out"; then
	ok "-l with fewer tasks than ranks is refused with the reason"
else no "-l with fewer tasks than ranks is refused with the reason"; fi

# --output-filename DIR: DIR/R/stdout and DIR/R/stderr; nothing on ours
if expect run 0 "$S" -n 3 --output-filename "$T/o" sh -c 'echo "out $ULP_RANK"; echo "err $ULP_RANK" >&2' &&
	[ ! -s "$T/out" ] && [ "$(cat "$T/o/0/stdout" "$T/o/2/stdout")" = "$(printf 'out 0\nout 2')" ] &&
	[ "$(cat "$T/o/1/stderr")" = "err 1" ] && [ "$(cat "$T/o/1/stdout")" = "out 1" ]; then
	ok "--output-filename puts rank R's stdout and stderr in DIR/R/"
else no "--output-filename puts rank R's stdout and stderr in DIR/R/"; fi

# -genv, -x: set in every rank; a setting replaces the inherited value
if FOO=old BAR=bar expect run 0 "$S" -n 2 -genv FOO new -x BAR -x BAZ=baz sh -c 'echo "$FOO $BAR $BAZ"' &&
	[ "$(sort -u "$T/out")" = "new bar baz" ] && [ "$(grep -c . "$T/out")" = 2 ]; then
	ok "-genv NAME VALUE and -x NAME[=VALUE] set the ranks' environment"
else no "-genv NAME VALUE and -x NAME[=VALUE] set the ranks' environment"; fi
if expect run 2 env -u NOPE_X "$S" -x NOPE_X /bin/true && grep -q 'NOPE_X is not set' "$T/out" &&
	expect run 2 "$S" -n 1 -genv ONLY && grep -q 'NAME and VALUE' "$T/out"; then
	ok "-x of an unset name and -genv without a value are errors"
else no "-x of an unset name and -genv without a value are errors"; fi

# --wdir: the ranks run there; the program path given relative to our directory still works
mkdir -p "$T/wd"
cp /bin/pwd "$T/mypwd"
SA=$(cd "$(dirname "$S")" && pwd)/ulpspawn
if (cd "$T" && expect run 0 "$SA" -n 2 --wdir "$T/wd" ./mypwd) &&
	[ "$(sort -u "$T/out")" = "$T/wd" ] && expect run 2 "$S" --wdir "$T/nowhere" /bin/true &&
	grep -q 'nowhere' "$T/out"; then
	ok "--wdir DIR: ranks start in DIR; a missing DIR is an error"
else no "--wdir DIR: ranks start in DIR; a missing DIR is an error"; fi

if expect run 1 "$S" -n 5 -t 2 "$P/probe" exitrank 4 && grep -q 'rank 3 .*status 3' "$T/out" &&
	grep -q 'rank 1 .*status 1' "$T/out"; then
	ok "exit status is the first non-zero by rank"
else no "exit status is the first non-zero by rank"; fi

if expect run 0 "$S" -n 64 "$P/probe" switchall && expect run 0 "$S" -n 64 -w 1 "$P/probe" switchall; then
	ok "pvas_ulp_switch to ULPs that are ending never faults"
else no "pvas_ulp_switch to ULPs that are ending never faults"; fi

# Ending ulpspawn ends every task: no process is left behind (SIGTERM and SIGINT go on to the
# ranks, whose default action ends them; SIGKILL takes the tasks with it).
for sig in TERM INT KILL; do
	# an output file of its own: a task of the case before may still be writing into the old one
	rm -f "$T/out"
	: >"$T/out.$sig" # before the wait's first grep (lib.sh, term_ends)
	"$S" -n 4 -t 4 -w 1 "$P/probe" spin >"$T/out.$sig" 2>&1 &
	sp=$!
	i=0
	# every rank runs (60 s: four spinning tasks start slowly on a loaded machine)
	while [ "$(grep -c '^pid ' "$T/out.$sig")" -lt 4 ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	pids=$(sed -n 's/^pid //p' "$T/out.$sig" | sort -u)
	kill -$sig $sp
	wait $sp 2>/dev/null
	sp_rc=$?
	left=$(still_running $pids)
	case $sig in TERM) want=143 ;; INT) want=130 ;; *) want=137 ;; esac
	cp "$T/out.$sig" "$T/out"
	if [ "$(echo "$pids" | wc -w)" = 4 ] && [ $left = 0 ] && [ "$sp_rc" = $want ]; then
		ok "SIG$sig to ulpspawn leaves no task process behind (exit status $want)"
	else
		echo "tasks: $pids; still alive: $left; exit status $sp_rc" >>"$T/out"
		no "SIG$sig to ulpspawn leaves no task process behind (exit status $want)"
		for p in $pids; do kill -9 "$p" 2>/dev/null; done
	fi
done

# A rank that waits in a loop of pvas_yield makes no system call; with --quantum 0 nothing
# preempts it either: the SIGTERM sent on must still end it (it is acted on when the call
# returns). Before, such a job outlived the SIGTERM forever.
term_ends "--quantum 0: SIGTERM ends ranks that wait in pvas_yield" 3 '^pid ' \
	"$S" --quantum 0 -n 3 -t 1 -w 1 "$P/probe" yieldspin

if expect run 2 "$S" -n 2 -t 3 /bin/true && grep -q 'more tasks' "$T/out" &&
	expect run 2 "$S" --bind 9-2 -n 1 /bin/true && grep -q 'CPU list' "$T/out" &&
	expect run 0 "$S" -h && grep -q usage "$T/out"; then
	ok "bad options are errors; -h explains usage"
else no "bad options are errors; -h explains usage"; fi

# Each line once. Not in a set order: ULP 1 runs at once, but when it is preempted (its quantum
# ends on a loaded machine) or parks (its write), its creator runs again and starts ULP 2, which
# may print first (seen: 1 of 10 runs under load), as two child processes may.
if expect run 0 "$B/examples/paper/ulpspawn_sample" &&
	[ "$(sort "$T/out" | tr '\n' ' ')" = "I am user-level process 1. I am user-level process 2. " ]; then
	ok "the paper's sample prints its two lines, one from each ULP it made"
else no "the paper's sample prints its two lines, one from each ULP it made"; fi

finish ulpspawn
