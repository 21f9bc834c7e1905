#!/bin/sh
# The real-MPI oversubscription sweep (issues 13/16): examples/mpi/mpi_prog with R = 2..256 ranks
# on this machine's cores, as ULP ranks (ulpspawn --pmi's default: a PVAS task of one worker per
# core since 28 Nov, one task of a worker per core before; its ranks yield when idle,
# libulp-mpiyield.so) and the same without that library (ulpnoyield,
# ULP_MPI_YIELD=0: a rank that busy-polls keeps the worker until the tick, spinner detection's
# 200 us turn) against the same program as processes: Debian's MPICH (mpiexec.mpich, default
# settings: it busy-polls and never yields), the same with libulp-mpiyield.so preloaded
# (mpichyield: the processes yield as the ULP ranks do, with sched_yield) and Open MPI
# (mpirun.openmpi --oversubscribe --mca mpi_yield_when_idle 1; mpi_prog.ompi, the same source
# built with mpicc.openmpi). For each R the variants run one after the other (same minute of this
# shared machine), each bounded by a cap; a variant past the cap is reported "over_cap" and not run
# at larger R. One BENCH line per R:
#   ulp_s, ulpnoyield_s, mpich_s, mpichyield_s, ompi_s   wall-clock time of the whole command
#                                 (launch and MPI_Init included)
#   *_prog_s                      time inside the program (first barrier to last), its summary line
#   X_vs_ulp, X_prog_vs_ulp       X's time / the ULP ranks' time, wall and program (> 1: ULPs faster)
# and every run's checksum must be the same (else the line says checksum=MISMATCH).
# Usage: bench/mpi_sweep.sh BUILD_DIR   (env: SWEEP_RANKS="2 4 8 16 32 64 128 256",
#        SWEEP_ARGS="20 2000 2" = STEPS CELLS LAPS of mpi_prog, SWEEP_CAP=120 seconds per run,
#        SWEEP_ULP_OPTS="" more ulpspawn options for the ULP columns, e.g. "-t 1": one PVAS task)
# Never fails: a variant that cannot run is reported on stderr and left out.
B=${1:-build}
P="$B/examples/mpi/mpi_prog"
ranks=${SWEEP_RANKS:-2 4 8 16 32 64 128 256}
args=${SWEEP_ARGS:-20 2000 2}
cap=${SWEEP_CAP:-120}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
# The ULP ranks share one address space, hence one vm.max_map_count: an MPICH rank maps about
# 270 + 2 per other rank (docs/mpi.md), 67,000 for 128 ranks, over Debian's 65,530. As root the
# limit is raised for the sweep and put back after (it does not change the processes' runs).
maxr=0
for r in $ranks; do [ "$r" -gt $maxr ] && maxr=$r; done
need=$((300 * maxr + 2 * maxr * maxr + 4096))
limit=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)
if [ "$limit" -lt $need ]; then
	if [ "$(id -u)" = 0 ] && sysctl -qw vm.max_map_count=$need 2>/dev/null; then
		trap 'sysctl -qw vm.max_map_count=$limit; rm -rf "$T"' EXIT
		echo "bench/mpi_sweep: vm.max_map_count raised from $limit to $need for the sweep" >&2
	else
		echo "bench/mpi_sweep: vm.max_map_count $limit is below the $need that $maxr ULP ranks" \
			"need: the largest ULP runs will fail (raise it as root)" >&2
	fi
fi

variants=
if [ -x "$B/bin/ulpspawn" ] && [ -x "$P" ]; then
	variants="ulp ulpnoyield"
else
	echo "bench/mpi_sweep: $B/bin/ulpspawn or $P not built" >&2
fi
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] && [ -x "$P" ] && variants="$variants mpich" &&
	[ -f "$B/libulp-mpiyield.so" ] && variants="$variants mpichyield"
[ -n "$MPIEXEC" ] && [ -x "$P" ] ||
	echo "bench/mpi_sweep: mpiexec.mpich or $P missing: no MPICH column" >&2
OMPIRUN=$(command -v mpirun.openmpi)
if [ -n "$OMPIRUN" ] && [ -x "$P.ompi" ]; then
	variants="$variants ompi"
else
	echo "bench/mpi_sweep: Open MPI (mpirun.openmpi) or $P.ompi missing: no Open MPI column" \
		"(mk/deps.sh bench installs openmpi-bin and libopenmpi-dev)" >&2
fi
# Open MPI refuses to run as root unless told
root=
[ "$(id -u)" = 0 ] && root=--allow-run-as-root

# run VARIANT R: one capped run; sets wall, prog, sum (empty when it failed or passed the cap)
run() {
	# shellcheck disable=SC2086 # SWEEP_ULP_OPTS: options are words
	case $1 in
	ulp) set -- "$B/bin/ulpspawn" --pmi ${SWEEP_ULP_OPTS:-} -n "$2" "$P" ;;
	ulpnoyield) set -- env ULP_MPI_YIELD=0 "$B/bin/ulpspawn" --pmi ${SWEEP_ULP_OPTS:-} -n "$2" "$P" ;;
	mpich) set -- "$MPIEXEC" -n "$2" "$P" ;;
	mpichyield) set -- "$MPIEXEC" -n "$2" -env LD_PRELOAD "$(realpath "$B/libulp-mpiyield.so")" "$P" ;;
	ompi) set -- "$OMPIRUN" $root --oversubscribe --mca mpi_yield_when_idle 1 -n "$2" "$P.ompi" ;;
	esac
	ls /dev/shm >"$T/shm"
	t0=$(now)
	# shellcheck disable=SC2086 # args are words
	timeout -k 5 "$cap" "$@" $args >"$T/out" 2>&1
	rc=$?
	t1=$(now)
	wall= prog= sum=
	line=$(grep '^mpi_prog:' "$T/out")
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		# Open MPI's ranks killed by the cap leave their shared-memory files (vader_segment.*)
		ls /dev/shm | grep '^vader_segment\.' | grep -vxF -f "$T/shm" |
			while read -r f; do rm -f "/dev/shm/$f"; done
		return
	fi
	if [ $rc != 0 ] || ! echo "$line" | grep -q 'ring ok.*halo.* ok checksum=.*allreduce ok'; then
		echo "bench/mpi_sweep: $* $args: exit status $rc:" >&2
		tail -5 "$T/out" >&2
		rc=fail
		return
	fi
	wall=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
	prog=$(echo "$line" | sed 's/.*, \([0-9.]*\) s$/\1/')
	sum=$(echo "$line" | sed 's/.*checksum=\([^,]*\),.*/\1/')
}

over=" "
for r in $ranks; do
	out="BENCH mpi_sweep ranks=$r cores=$(nproc) cap_s=$cap ulp_opts=\"${SWEEP_ULP_OPTS:-}\"" sums=
	for v in $variants; do
		case $over in
		*" $v "*)
			out="$out ${v}_s=over_cap"
			continue
			;;
		esac
		run $v "$r"
		if [ -n "$wall" ]; then
			out="$out ${v}_s=$wall ${v}_prog_s=$prog"
			eval "${v}_wall=$wall ${v}_prog=$prog"
			sums="$sums $sum"
		elif [ "$rc" = fail ]; then
			out="$out ${v}_s=failed"
			eval "${v}_wall="
		else
			out="$out ${v}_s=over_cap"
			over="$over$v "
			eval "${v}_wall="
		fi
	done
	for v in mpich mpichyield ompi ulpnoyield; do
		eval "w=\${${v}_wall:-} p=\${${v}_prog:-}"
		if [ -n "$w" ] && [ -n "${ulp_wall:-}" ]; then
			out="$out ${v}_vs_ulp=$(echo "$w $ulp_wall" | awk '{ printf "%.2f", $1 / $2 }')"
			out="$out ${v}_prog_vs_ulp=$(echo "$p $ulp_prog" |
				awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }')"
		fi
	done
	n=$(echo "$sums" | tr ' ' '\n' | grep -c .)
	if [ "$n" -gt 0 ]; then
		u=$(echo "$sums" | tr ' ' '\n' | grep . | sort -u | wc -l)
		[ "$u" = 1 ] && out="$out checksum=$(echo $sums | cut -d' ' -f1)" ||
			out="$out checksum=MISMATCH($sums)"
	fi
	echo "$out"
	ulp_wall= ulpnoyield_wall= mpich_wall= mpichyield_wall= ompi_wall=
done
exit 0
