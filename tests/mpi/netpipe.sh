#!/bin/sh
# Debian's NPmpich2 (package netpipe-mpich2: NetPIPE built against Debian's MPICH, a PIE nobody
# here wrote) as 2 ULP ranks under ulpspawn --pmi, one per task and both in one task: its
# integrity mode (-i: every message's contents checked) passes for every size, and a short
# timed run (-u 65536) reports a positive rate for every size up to 64 KiB, as under mpiexec.
# Usage: tests/mpi/netpipe.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
NP=$(command -v NPmpich2)
[ -n "$NP" ] || { echo "NPmpich2 missing: sh mk/deps.sh check installs netpipe-mpich2"; exit 1; }
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
export TEST_TIMEOUT=300

# NPmpich2 writes its table to -o FILE: "bytes rate_mbps seconds" per size
# table_ok FILE: at least 40 sizes, the last 65536 + perturbation, every rate and time positive
table_ok() {
	awk 'NF == 3 && $2 > 0 && $3 > 0 { n++; last = $1 } NF != 3 || $2 <= 0 || $3 <= 0 { bad++ }
		END { exit !(n >= 40 && !bad && last >= 65536 && last <= 65539) }' "$1"
}

if expect "mpiexec NPmpich2 -i" 0 "$MPIEXEC" -n 2 "$NP" -u 65536 -n 20 -i -o "$T/np.ref"; then
	ref_lines=$(grep -c 'Integrity check passed' "$T/out")
else
	ref_lines=
	no "NPmpich2 -i under mpiexec.mpich (the reference)"
fi
for t in 2 1; do
	[ -n "$ref_lines" ] || break
	if expect "ulpspawn NPmpich2 -i -t $t" 0 $S --pmi -n 2 -t $t "$NP" -u 65536 -n 20 -i \
		-o "$T/np.i" && [ "$(grep -c 'Integrity check passed' "$T/out")" = "$ref_lines" ] &&
		[ "$ref_lines" -ge 20 ] && ! grep -qi 'fail' "$T/out"; then
		ok "NPmpich2 -i as 2 ULP ranks in $t task(s): all $ref_lines integrity checks pass"
	else
		no "NPmpich2 -i as 2 ULP ranks in $t task(s): all integrity checks pass"
	fi
	rm -f "$T/np.out"
	if expect "ulpspawn NPmpich2 -t $t" 0 $S --pmi -n 2 -t $t "$NP" -u 65536 -n 20 \
		-o "$T/np.out" && table_ok "$T/np.out"; then
		ok "NPmpich2 -u 65536 as 2 ULP ranks in $t task(s): a positive rate for every size"
	else
		cat "$T/np.out" >>"$T/out" 2>/dev/null
		no "NPmpich2 -u 65536 as 2 ULP ranks in $t task(s): a positive rate for every size"
	fi
done

finish mpi-netpipe
