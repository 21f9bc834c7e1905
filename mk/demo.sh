#!/bin/sh
# make demo: 64 unmodified programs as user-level processes on this machine's cores, checked
# against the same program run as an ordinary process.
set -e
B=${1:-build}
X="$B/bin/ulpexec"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=64
cores=$(nproc)
head -c 8000000 /dev/urandom >"$T/data"
want=$(sha256sum "$T/data")
echo "== $N ranks of Debian's /usr/bin/sha256sum (an unmodified dynamic PIE) as ULPs on $cores cores"
start=$(date +%s.%N)
"$X" -n $N /usr/bin/sha256sum "$T/data" >"$T/out"
end=$(date +%s.%N)
lines=$(grep -c . "$T/out")
distinct=$(sort -u "$T/out")
if [ "$lines" = $N ] && [ "$distinct" = "$want" ]; then
	echo "result check: OK ($N identical lines, equal to the process's: ${want%% *})"
else
	echo "result check: FAILED ($lines lines; distinct: $distinct; wanted: $want)"
	exit 1
fi
echo "time: $(awk "BEGIN{print $end - $start}") s for $N ULPs in one process"
start=$(date +%s.%N)
seq $N | xargs -P "$cores" -I{} sha256sum "$T/data" >/dev/null
end=$(date +%s.%N)
echo "time: $(awk "BEGIN{print $end - $start}") s for $N ordinary processes ($cores at a time), for comparison"
echo
echo "== 4 ranks of a guest that prints its PVAS id, globals, TLS and heap (examples/ulp_hello.c)"
"$X" -n 4 "$B/examples/ulp_hello"
