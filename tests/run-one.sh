#!/bin/sh
# Run one test command, keep its output, record pass/fail for tests/summary.sh.
# Usage: tests/run-one.sh RESULTS_DIR NAME COMMAND [ARGS...]
# ULP_TEST_TIMEOUT (seconds, default 300) bounds a hung test. With `make check T=PATTERNS` (ULP_T)
# a test whose name no pattern matches is not run and leaves no result.
results=$1 name=$2
shift 2
sh "$(dirname "$0")/wants.sh" "$name" || exit 0
mkdir -p "$results"
log="$results/$name.log"
if timeout -k 5 "${ULP_TEST_TIMEOUT:-300}" "$@" >"$log" 2>&1; then
	echo "PASS: $name"
	: >"$results/$name.pass"
	rm -f "$results/$name.fail"
else
	rc=$?
	echo "FAIL: $name (exit $rc); last lines of $log:"
	tail -n 25 "$log" | sed 's/^/    /'
	: >"$results/$name.fail"
	rm -f "$results/$name.pass"
fi
exit 0
