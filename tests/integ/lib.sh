# Helpers of the integration drivers (sourced). After sourcing: $T is a scratch folder removed
# at exit; ok/no/skip count results; expect runs a command into $T/out; finish prints the
# closing line and gives the exit status.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
no() { fail=$((fail + 1)); echo "not ok - $1"; [ -f "$T/out" ] && sed 's/^/#   /' "$T/out" | tail -20; }
skip() { echo "ok - # SKIP $1"; }
HANGDUMP="$(cd "$(dirname "$0")/.." && pwd)/hangdump.sh"
# hang_watch NAME SECONDS [PID]: from now on, past SECONDS, print (into the log) what every process
# of this test does (tests/hangdump.sh: which case hung, and where), then send SIGTERM to PID, or
# to the timeout that runs this test's command in the foreground (expect); hang_unwatch ends the
# watch. A hang then says which case and why before the group's own limit (run-one.sh) ends it.
hang_watch() {
	hw_name=$1 hw_sec=$2 hw_pid=${3:-}
	rm -f "$T/hung"
	(
		trap 'kill $hw_s 2>/dev/null; exit 0' TERM
		sleep "$hw_sec" &
		hw_s=$!
		wait $hw_s
		: >"$T/hung"
		sh "$HANGDUMP" $$ "$hw_name: still running after $hw_sec s"
		if [ -z "$hw_pid" ]; then
			for hw_p in $(ps -o pid= --ppid $$); do
				[ "$(cat /proc/$hw_p/comm 2>/dev/null)" = timeout ] && hw_pid="$hw_pid $hw_p"
			done
		fi
		kill -TERM $hw_pid 2>/dev/null
	) &
	hw_w=$!
}
hang_unwatch() {
	kill $hw_w 2>/dev/null
	wait $hw_w 2>/dev/null
	return 0
}
# expect NAME EXPECTED_STATUS COMMAND...: run (bounded by TEST_TIMEOUT seconds; past them, what
# it does is printed: hang_watch), keep stdout and stderr in $T/out, check the exit status.
expect() {
	e_name=$1 e_want=$2
	shift 2
	hang_watch "$e_name" "${TEST_TIMEOUT:-300}"
	# -k: ulpspawn takes a first SIGTERM as one to send on to the ranks; one that ignores it
	# must not hang the suite. The timeout's own limit is a backstop behind the watch's.
	timeout -k 30 "$((${TEST_TIMEOUT:-300} + 30))" "$@" >"$T/out" 2>&1
	e_got=$?
	hang_unwatch
	[ -e "$T/hung" ] && echo "# $e_name: hung: still running after ${TEST_TIMEOUT:-300} s" >>"$T/out"
	[ "$e_got" = "$e_want" ] && return 0
	echo "# $e_name: exit status $e_got, wanted $e_want" >>"$T/out"
	return 1
}
# lines PATTERN: how many lines of $T/out match
lines() { grep -c "$1" "$T/out"; }
# finish NAME: "NAME: N passed, N failed"; fails when any failed
finish() {
	echo "$1: $pass passed, $fail failed"
	[ "$fail" = 0 ]
}
# term_ends NAME N PATTERN COMMAND...: start COMMAND (output in $T/out.term), wait until N lines
# match PATTERN (at most 60 s), send it one SIGTERM: it must end within 30 s with status 143
# and N ranks "killed by SIGTERM" (kept in $T/out).
term_ends() {
	te_name=$1 te_n=$2 te_pat=$3
	shift 3
	rm -f "$T/out"
	# made here: until the job's shell opens it, grep would find no file, and the wait below
	# would end at once and send the SIGTERM before the launcher runs (4 runs in 60)
	: >"$T/out.term"
	"$@" >"$T/out.term" 2>&1 &
	te_pid=$!
	te_i=0
	while [ "$(grep -c "$te_pat" "$T/out.term")" -lt "$te_n" ] && [ $te_i -lt 600 ]; do
		sleep 0.1
		te_i=$((te_i + 1))
	done
	kill -TERM $te_pid
	te_i=0
	while kill -0 $te_pid 2>/dev/null && [ $te_i -lt 300 ]; do
		sleep 0.1
		te_i=$((te_i + 1))
	done
	if kill -0 $te_pid 2>/dev/null; then
		kill -9 $te_pid
		wait $te_pid 2>/dev/null
		cp "$T/out.term" "$T/out"
		no "$te_name (still running 30 s after SIGTERM)"
		return
	fi
	wait $te_pid
	te_rc=$?
	cp "$T/out.term" "$T/out"
	if [ $te_rc = 143 ] && [ "$(lines 'killed by SIGTERM')" = "$te_n" ]; then
		ok "$te_name"
	else
		echo "exit status $te_rc" >>"$T/out"
		no "$te_name"
	fi
}
# still_running PID...: how many of the PIDs run (a zombie is dead: it waits for a reaper that may
# not come, PID 1 of a container) once they had 30 s to end. A task whose launcher ended takes
# its time to go on a loaded machine: a check after a fixed 0.5 s could find it still there.
still_running() {
	sr_i=0
	while :; do
		sr_n=0
		for sr_p in "$@"; do
			sr_st=$(sed 's/.*) //; s/ .*//' "/proc/$sr_p/stat" 2>/dev/null)
			[ -n "$sr_st" ] && [ "$sr_st" != Z ] && sr_n=$((sr_n + 1))
		done
		{ [ $sr_n = 0 ] || [ $sr_i -ge 300 ]; } && break
		sleep 0.1
		sr_i=$((sr_i + 1))
	done
	echo $sr_n
}
# pie_python: the path of a position-independent python3 (only such a one runs as a ULP;
# Debian's does not: it would run as a process), or nothing.
pie_python() {
	for pp in "$(command -v python3)" $(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) \
		/root/.pyenv/versions/*/bin/python3; do
		if [ -x "$pp" ] && readelf -h "$pp" 2>/dev/null | grep -q 'Type:.*DYN'; then
			echo "$pp"
			return
		fi
	done
}
