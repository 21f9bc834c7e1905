# Helpers of the integration drivers (sourced). After sourcing: $T is a scratch folder removed
# at exit; ok/no/skip count results; expect runs a command into $T/out; finish prints the
# closing line and gives the exit status.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
no() { fail=$((fail + 1)); echo "not ok - $1"; [ -f "$T/out" ] && sed 's/^/#   /' "$T/out" | tail -20; }
skip() { echo "ok - # SKIP $1"; }
# expect NAME EXPECTED_STATUS COMMAND...: run (bounded by TEST_TIMEOUT seconds), keep stdout and
# stderr in $T/out, check the exit status.
expect() {
	e_name=$1 e_want=$2
	shift 2
	# -k: ulpspawn takes a first SIGTERM as one to send on to the ranks; one that ignores it
	# must not hang the suite
	timeout -k 30 "${TEST_TIMEOUT:-300}" "$@" >"$T/out" 2>&1
	e_got=$?
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
