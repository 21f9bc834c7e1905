#!/bin/sh
# examples/mpi/mpi_prog (mpi_like_prog's workload written against MPI, built with Debian's
# mpicc.mpich) as ULP ranks under ulpspawn --pmi and as processes under mpiexec.mpich: every run
# passes its checks and prints the same checksum as mpi_like_prog (the mpi_like API over ULPs)
# for the same ranks and arguments, also under strace -f. Usage: tests/mpi/mpi_prog.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
P=$O/examples/mpi/mpi_prog
ML=$O/examples/mpi_like/mpi_like_prog
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
[ -x "$P" ] || { echo "$P not built (needs mpicc.mpich: sh mk/deps.sh check)"; exit 1; }
export TEST_TIMEOUT=300
args="20 2000 2"

# sum NAME: the checksum of $T/out's summary line when every check passed, else nothing
sum() {
	sed -n "s/^$1: .* ranks, ring ok (.* laps), halo .* cells ok checksum=\([0-9.e+-]*\), allreduce ok, .*/\1/p" "$T/out"
}

if expect "ulpspawn mpi_like_prog -n 4" 0 $S -n 4 $ML $args; then
	want4=$(sum mpi_like_prog)
else
	want4=
	no "mpi_like_prog on 4 ULP ranks (the reference checksum)"
fi
for n in 1 8; do
	# shellcheck disable=SC2086 # args are words
	if expect "ulpspawn mpi_like_prog -n $n" 0 $S -n $n $ML $args; then
		want=$(sum mpi_like_prog)
	else
		want=
		no "mpi_like_prog on $n ULP ranks (the reference checksum)"
	fi
	[ -n "$want" ] || continue
	# shellcheck disable=SC2086
	if expect "mpiexec -n $n" 0 "$MPIEXEC" -n $n $P $args && [ "$(sum mpi_prog)" = "$want" ]; then
		ok "mpi_prog under mpiexec.mpich -n $n: checks pass, checksum of mpi_like_prog ($want)"
	else
		no "mpi_prog under mpiexec.mpich -n $n: checks pass, checksum of mpi_like_prog ($want)"
	fi
	for t in 1 2; do
		[ $t -gt $n ] && continue
		# shellcheck disable=SC2086
		if expect "ulpspawn --pmi -n $n -t $t" 0 $S --pmi -n $n -t $t $P $args &&
			[ "$(sum mpi_prog)" = "$want" ]; then
			ok "mpi_prog as $n ULP ranks in $t task(s) (ulpspawn --pmi): checksum of mpi_like_prog"
		else
			no "mpi_prog as $n ULP ranks in $t task(s) (ulpspawn --pmi): checksum of mpi_like_prog"
		fi
	done
done
# 8 ranks on ONE worker: MPICH's polling preempted, PMI reads parked
# shellcheck disable=SC2086
if expect "ulpspawn --pmi -n 8 -t 1 -w 1" 0 $S --pmi -n 8 -t 1 -w 1 $P $args &&
	[ -n "$want" ] && [ "$(sum mpi_prog)" = "$want" ]; then
	ok "mpi_prog as 8 ULP ranks on one worker: checksum of mpi_like_prog"
else
	no "mpi_prog as 8 ULP ranks on one worker: checksum of mpi_like_prog"
fi
# Under strace -f (docs/syscalls.md, "Preemption"): each tick's handler takes longer than the
# spinners' turn there; before 27 Nov each tick interrupted the previous one's handler until a
# task died of SIGSEGV (fault address 0, pc 0), 1 run in 2 to 3. Each run must end as without it.
if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
	skip "mpi_prog under strace -f: no strace, or no ptrace here"
else
	good=0
	for i in 1 2 3 4; do
		# shellcheck disable=SC2086
		# the job's own exit status, not strace's (tests/integ/under_strace.sh)
		if expect "ulpspawn --pmi -n 8 under strace -f ($i)" 0 sh tests/integ/under_strace.sh \
			"$T/st" $S --pmi -n 8 $P $args && [ "$(cat "$T/st" 2>/dev/null)" = 0 ] &&
			[ -n "$want" ] && [ "$(sum mpi_prog)" = "$want" ]; then
			good=$((good + 1))
		else
			no "mpi_prog as 8 ULP ranks under strace -f, run $i: checksum of mpi_like_prog"
		fi
	done
	[ $good = 4 ] && ok "mpi_prog as 8 ULP ranks under strace -f: 4 of 4 runs, checksum of mpi_like_prog"
fi
# bad arguments: every rank refuses them before MPI_Init, the job says why
if expect "bad argument" 2 $S --pmi -n 2 $P 20 x && grep -q "usage: mpi_prog.*'x' is not" "$T/out"; then
	ok "mpi_prog with a bad argument: status 2 and a usage line"
else
	no "mpi_prog with a bad argument: status 2 and a usage line"
fi

# Yield when idle (libulp/guest/mpi_yield.c, preloaded by ulpspawn --pmi): 4 ranks on one worker
# load it (a stats line each), it yields, the result is the same; ULP_MPI_YIELD=0 leaves it out.
# yield_case NAME SUFFIX [VAR=VALUE...]: 4 ranks on one worker, with the environment given, have
# the checksum, print their stats lines ending in SUFFIX, and yielded.
yield_case() {
	y_name=$1 y_suffix=$2
	shift 2
	# shellcheck disable=SC2086
	if expect "$y_name" 0 env ULP_MPI_YIELD_STATS=1 "$@" $S --pmi -n 4 -t 1 -w 1 $P $args &&
		[ -n "$want4" ] && [ "$(sum mpi_prog)" = "$want4" ] &&
		[ "$(grep -c "^libulp-mpiyield: rank [0-3]: [0-9]* polls, [0-9]* yields$y_suffix\$" "$T/out")" = 4 ] &&
		[ "$(sed -n 's/^libulp-mpiyield: rank .*, \([0-9]*\) yields.*$/\1/p' "$T/out" |
			awk '{ y += $1 } END { print y + 0 }')" -gt 0 ]; then
		ok "$y_name"
	else
		no "$y_name"
	fi
}
yield_case "4 MPI ranks on one worker: each loads the yield library, waiting ranks yield, same checksum" ""
# MPI_THREAD_MULTIPLE (MPICH's default level set from the environment) with no thread of the
# program's own: nothing can wait for MPICH's lock, the ranks still yield
yield_case "MPI_THREAD_MULTIPLE without threads of the program's own: the ranks yield, same checksum" \
	" (MPI_THREAD_MULTIPLE, one thread)" MPIR_CVAR_DEFAULT_THREAD_LEVEL=MPI_THREAD_MULTIPLE
# shellcheck disable=SC2086
if expect "ULP_MPI_YIELD=0" 0 env ULP_MPI_YIELD=0 ULP_MPI_YIELD_STATS=1 $S --pmi -n 4 -t 1 -w 2 \
	$P $args && [ -n "$want4" ] && [ "$(sum mpi_prog)" = "$want4" ] &&
	! grep -q libulp-mpiyield "$T/out"; then
	ok "ULP_MPI_YIELD=0: no yield library in the ranks, same checksum"
else
	no "ULP_MPI_YIELD=0: no yield library in the ranks, same checksum"
fi
# The ranks' environment is the one asked for: the library, loaded (in the maps), takes itself out
# of LD_PRELOAD (cat and env are no MPI programs: they end before MPI_Finalize, status 1)
lm=$(ldconfig -p | sed -n 's/^[[:space:]]*libm\.so\.6 (.*x86-64.*) => //p' | head -1)
if expect "maps" 1 $S --pmi -n 1 /bin/cat /proc/self/maps && grep -q 'libulp-mpiyield\.so$' "$T/out" &&
	expect "env" 1 $S --pmi -n 1 /usr/bin/env && ! grep -q '^LD_PRELOAD=' "$T/out" &&
	expect "env, own LD_PRELOAD" 1 $S --pmi -n 1 -x LD_PRELOAD="$lm" /usr/bin/env &&
	[ "$(grep '^LD_PRELOAD=' "$T/out")" = "LD_PRELOAD=$lm" ]; then
	ok "the yield library, loaded, leaves LD_PRELOAD as the job set it (unset, or the user's $lm)"
else
	no "the yield library, loaded, leaves LD_PRELOAD as the job set it (unset, or the user's $lm)"
fi

# The topology, discovered once by ulpspawn (launch/topo.h), is what hwloc finds for a process: as
# many objects of each type as lstopo's keeping all (mpich's package depends on hwloc's tools); every rank of
# both tasks reads it. It is discovered while the ranks start: a rank's environment has no HWLOC_
# variable (nor the gate's) before MPI_Init and ulpspawn's after it, and hwloc loaded no plugin
# (under mpiexec it loads its 4). Without the yield library (ULP_MPI_YIELD=0) the variables are
# there from the start. ULP_MPI_TOPO=0, or the user's own HWLOC_XMLFILE, leave the ranks to theirs.
# kinds FILE: "TYPE COUNT" per object type of an hwloc XML topology, sorted
kinds() { grep -o '<object type="[A-Za-z0-9]*"' "$1" | sort | uniq -c | awk '{print $3, $1}'; }
MM=$O/tests/mpi/mpi_more
unset_all='HWLOC_XMLFILE=(unset) HWLOC_THISSYSTEM=(unset) HWLOC_PLUGINS_PATH=(unset) ULP_MPI_TOPO_GATE=(unset) ULP_MPI_TOPO_XML=(unset)'
given='HWLOC_XMLFILE=/proc/[0-9]*/fd/[0-9]* HWLOC_THISSYSTEM=1 HWLOC_PLUGINS_PATH=(unset) ULP_MPI_TOPO_GATE=(unset) ULP_MPI_TOPO_XML=(unset)'
LSTOPO=$(command -v lstopo-no-graphics || command -v lstopo)
if [ -z "$LSTOPO" ]; then
	no "the topology given to the ranks: lstopo missing (sh mk/deps.sh check installs mpich, which brings it)"
elif "$LSTOPO" --whole-io --filter all:all --of xml -f "$T/lstopo.xml" 2>/dev/null &&
	expect "topology" 0 $S --pmi -n 4 -t 2 $MM topo "$T/topo" &&
	[ "$(grep -c "^rank [0-3] before: $unset_all\$" "$T/out")" = 4 ] &&
	[ "$(grep -c "^rank [0-3] after: $given\$" "$T/out")" = 4 ] &&
	[ "$(grep -c '^rank [0-3] plugins 0$' "$T/out")" = 4 ] &&
	[ -n "$(kinds "$T/lstopo.xml" | grep PU)" ] &&
	[ "$(kinds "$T/topo.0")" = "$(kinds "$T/lstopo.xml")" ] &&
	cmp -s "$T/topo.0" "$T/topo.3" &&
	expect "topology, mpiexec" 0 "$MPIEXEC" -n 1 $MM topo "$T/topo.p" &&
	grep -q '^rank 0 plugins [1-9]' "$T/out" &&
	expect "topology, no yield library" 0 env ULP_MPI_YIELD=0 $S --pmi -n 2 $MM topo "$T/topo.n" &&
	[ "$(grep -c "^rank [01] before: $given\$" "$T/out")" = 2 ] &&
	cmp -s "$T/topo.0" "$T/topo.n.1" &&
	expect "no topology" 0 env ULP_MPI_TOPO=0 $S --pmi -n 1 $MM topo "$T/topo.x" &&
	[ "$(grep -c "^rank 0 [a-z]*: $unset_all\$" "$T/out")" = 2 ] &&
	expect "own topology" 1 env HWLOC_XMLFILE=/nonexistent $S --pmi -n 1 /usr/bin/env &&
	[ "$(grep '^HWLOC_' "$T/out")" = "HWLOC_XMLFILE=/nonexistent" ]; then
	ok "the topology given to the ranks (HWLOC_XMLFILE) is lstopo's, in both tasks, from MPI_Init on, no hwloc plugin loaded; ULP_MPI_TOPO=0 and a user's own leave it out"
else
	kinds "$T/lstopo.xml" >>"$T/out" 2>&1
	no "the topology given to the ranks (HWLOC_XMLFILE) is lstopo's, in both tasks, from MPI_Init on, no hwloc plugin loaded; ULP_MPI_TOPO=0 and a user's own leave it out"
fi

# The yield library's side of the hand-over (libulp/guest/mpi_yield.c), as processes under mpiexec:
# a gate that says '1' sets the variables at MPI_Init; '0' (hwloc failed in the launcher) and EOF
# (the launcher's helper died) set nothing; the gate's variables leave the environment either way.
printf 1 >"$T/gate1"
printf 0 >"$T/gate0"
gate_case() { # GATE: the "after" line of rank 0 of mpi_more topo with that gate
	# -genv: the rank's environment only (preloaded into mpiexec, the library would take the
	# variables out of mpiexec's)
	"$MPIEXEC" -genv LD_PRELOAD "$(cd "$O" && pwd)/libulp-mpiyield.so" -genv ULP_MPI_TOPO_GATE \
		"$1" -genv ULP_MPI_TOPO_XML "$T/lstopo.xml" -n 1 $MM topo "$T/topo.g" >"$T/out" 2>&1 &&
		sed -n 's/^rank 0 after: //p' "$T/out"
}
xml_given="HWLOC_XMLFILE=$T/lstopo.xml HWLOC_THISSYSTEM=1 HWLOC_PLUGINS_PATH=(unset) ULP_MPI_TOPO_GATE=(unset) ULP_MPI_TOPO_XML=(unset)"
if [ "$(gate_case "$T/gate1")" = "$xml_given" ] && grep -q '^rank 0 plugins 0$' "$T/out" &&
	[ "$(gate_case "$T/gate0")" = "$unset_all" ] &&
	[ "$(gate_case /dev/null)" = "$unset_all" ] &&
	[ "$(gate_case "$T/none")" = "$unset_all" ]; then
	ok "the yield library's topology gate: '1' points hwloc at the XML at MPI_Init (no plugin loaded), '0', EOF and no gate leave it out"
else
	no "the yield library's topology gate: '1' points hwloc at the XML at MPI_Init (no plugin loaded), '0', EOF and no gate leave it out"
fi

# MPI ranks map far more than the launcher's estimate from their ELF headers (the libraries MPICH
# and UCX load, and about 2 mappings per other rank), so a job it lets start may still run out of
# vm.max_map_count, one limit for the whole address space: the failing rank's end then comes with
# a note naming the limit and the command to raise it. As root only (one limit for the machine):
# lowered under a 16-rank job's need (about 5,000), then the same job with the machine's limit.
if [ "$(id -u)" != 0 ] || [ -n "${ULP_TEST_NO_SYSCTL:-}" ]; then
	skip "MPI ranks out of mappings: needs root to lower vm.max_map_count"
else
	limit=$(cat /proc/sys/vm/max_map_count)
	trap 'sysctl -qw vm.max_map_count=$limit; rm -rf "$T"' EXIT
	sysctl -qw vm.max_map_count=3000
	# how the rank fails depends on which mapping failed (ld.so, UCX, malloc): any failure
	timeout -k 30 300 $S --pmi -n 16 $P 2 100 1 >"$T/out" 2>&1
	st=$?
	sysctl -qw vm.max_map_count="$limit"
	echo "# exit status $st" >>"$T/out"
	if [ $st != 0 ] && [ $st != 124 ] && grep -q "near vm.max_map_count (3000)" "$T/out" &&
		grep -q "sysctl -w vm.max_map_count=[0-9]" "$T/out"; then
		ok "16 MPI ranks out of memory mappings: the job fails with a note naming vm.max_map_count"
	else
		no "16 MPI ranks out of memory mappings: the job fails with a note naming vm.max_map_count"
	fi
	if expect "machine's vm.max_map_count" 0 $S --pmi -n 16 $P 2 100 1 &&
		! grep -q "max_map_count" "$T/out" && [ "$(cat /proc/sys/vm/max_map_count)" = "$limit" ]; then
		ok "the same 16 MPI ranks run with the machine's vm.max_map_count ($limit), without the note"
	else
		no "the same 16 MPI ranks run with the machine's vm.max_map_count ($limit), without the note"
	fi
fi

finish mpi-prog
