#!/bin/sh
# vm.max_map_count: a job whose ranks cannot all get their memory mappings is refused before any
# rank starts, with a message naming the limit and the command to raise it; and, as root only
# (the limit is one for the whole machine), 1,000 and 10,000 static-pie ULPs in one job with the
# limit raised for the run and put back after. Usage: tests/integ/maps.sh BUILD_DIR
B=${1:-build}
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"

limit=$(cat /proc/sys/vm/max_map_count)
# A static-pie ULP takes 10 mappings (control block, stack guard, stack, 5 program segments, heap,
# the rest of its partition): limit/8 ranks cannot fit, and stay below the 16384 partitions.
n=$((limit / 8))
if [ $n -gt 16000 ]; then
	skip "vm.max_map_count is $limit: a job too large for it does not fit the address space either"
else
	for tool in "$X" "$S"; do
		if expect "${tool##*/} $n" 1 "$tool" -n $n "$P/guest_check" 0 &&
			grep -q "vm.max_map_count ($limit)" "$T/out" &&
			grep -q "sysctl -w vm.max_map_count=[0-9]" "$T/out" && ! grep -q ' ok ' "$T/out"; then
			ok "${tool##*/}: $n ranks over vm.max_map_count are refused before any starts"
		else no "${tool##*/}: $n ranks over vm.max_map_count are refused before any starts"; fi
	done
	# MPMD: the sum over the programs counts (each alone would fit).
	if expect mpmd 1 "$X" -n $((n / 2)) "$P/probe" exit 0 : -n $((n / 2 + 1)) "$P/probe" exit 0 &&
		grep -q "vm.max_map_count" "$T/out"; then
		ok "the mappings of all the programs of an MPMD job are counted together"
	else no "the mappings of all the programs of an MPMD job are counted together"; fi
fi

# Jobs well inside the limit are not refused.
if expect fits 0 "$X" -n 500 "$P/probe" exit 0 && expect fits-dyn 0 "$S" -n 200 -t 2 /bin/true; then
	ok "jobs inside vm.max_map_count start"
else no "jobs inside vm.max_map_count start"; fi

if [ "$(id -u)" != 0 ] || [ -n "${ULP_TEST_NO_SYSCTL:-}" ]; then
	skip "10,000 ULPs: needs root to raise vm.max_map_count (one limit for the whole machine)"
	finish maps
	exit
fi
trap 'sysctl -qw vm.max_map_count=$limit; rm -rf "$T"' EXIT
for want in 1000 10000; do
	# 10 mappings per ULP and room for the launcher
	need=$((want * 12 + 4096))
	[ "$(cat /proc/sys/vm/max_map_count)" -ge $need ] || sysctl -qw vm.max_map_count=$need
	t0=$(date +%s.%N)
	if expect "ulpexec $want" 0 /usr/bin/time -f 'maxrss %M' "$X" -n $want "$P/probe" exit 0 &&
		! grep -qv '^maxrss' "$T/out"; then
		t1=$(date +%s.%N)
		kb=$(sed -n 's/^maxrss //p' "$T/out")
		echo "# $want static-pie ULPs in one ulpexec: $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s," \
			"peak RSS $((kb / 1024)) MiB, $((kb / want)) KiB per ULP (vm.max_map_count raised to" \
			"$(cat /proc/sys/vm/max_map_count) for the run)"
		ok "$want static-pie ULPs in one job all exit 0"
	else no "$want static-pie ULPs in one job all exit 0"; fi
	sysctl -qw vm.max_map_count=$limit
done
# Back to the machine's limit.
if [ "$(cat /proc/sys/vm/max_map_count)" = "$limit" ]; then
	ok "vm.max_map_count is back to $limit"
else no "vm.max_map_count is back to $limit"; fi
finish maps
