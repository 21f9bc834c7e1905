#!/bin/sh
# Run one test command, keep its output, record pass/fail for tests/summary.sh.
# Usage: tests/run-one.sh RESULTS_DIR NAME COMMAND [ARGS...]
# ULP_TEST_TIMEOUT (seconds, default 300) bounds a hung test, whose log then says where it hung.
# With `make check T=PATTERNS` (ULP_T) a test whose name no pattern matches is not run and leaves
# no result.
results=$1 name=$2
shift 2
sh "$(dirname "$0")/wants.sh" "$name" || exit 0
mkdir -p "$results"
log="$results/$name.log"
limit=${ULP_TEST_TIMEOUT:-300}
at=$((limit > 60 ? limit - 20 : limit * 2 / 3))
# 20 s before the limit (at two thirds of a short one), what the test's processes do goes into its
# log (tests/hangdump.sh, within 3/4 of the time left): the case that hung and where it waits.
# The log is opened for appending, so that the test's own writes do not overwrite the dump.
: >"$log"
(
	trap 'kill $s 2>/dev/null; exit 0' TERM
	sleep $at &
	s=$!
	wait $s
	HANGDUMP_SECONDS=$(((limit - at) * 3 / 4)) \
		sh "$(cd "$(dirname "$0")" && pwd)/hangdump.sh" $$ "$name: still running after $at s of $limit" >>"$log" 2>&1
) &
watch=$!
timeout -k 5 "$limit" "$@" >>"$log" 2>&1
rc=$?
kill $watch 2>/dev/null
wait $watch 2>/dev/null
if [ $rc = 0 ]; then
	echo "PASS: $name"
	: >"$results/$name.pass"
	rm -f "$results/$name.fail"
else
	echo "FAIL: $name (exit $rc); last lines of $log:"
	# a hang: from its first dump on (lib.sh's or the one above), which says where it waits
	if grep -q '^# hang: ' "$log"; then
		sed -n '/^# hang: /,$p' "$log" | head -n 300
	else
		tail -n 25 "$log"
	fi | sed 's/^/    /'
	: >"$results/$name.fail"
	rm -f "$results/$name.pass"
fi
exit 0
