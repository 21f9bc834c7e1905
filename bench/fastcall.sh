#!/bin/sh
# Fast system calls (issue 15; docs/syscalls.md "Fast path"), BENCH lines with ratios measured in
# this one run. Repetition r runs every variant once, one after the other (bench/README.md: the
# machine may be shared); ratio = the median over repetitions of the per-repetition ratio, min_*
# the fastest repetition of each variant and min_ratio the ratio of those minima.
#   fastcall_yield  two ULPs of an unmodified program on one worker handing control over with
#                   libc's sched_yield: rewritten sites (fast, the default), trapped
#                   (ULP_FASTCALL=0), and the guest API pvas_yield; ns per round trip;
#                   ratio = sched_yield / pvas_yield
#   fastcall_read   1-byte reads from a pipe holding the bytes already: as a process (native), as
#                   a ULP (fast), trapped; ns per read; ratio = ULP / native
#   fastcall_close  close(-1) (EBADF: the emulation adds only the way in and out), the same three
# Usage: bench/fastcall.sh BUILD_DIR (env: FC_ITERS=100000, FC_RUNS=5). Never fails.
B=${1:-build}
G="$B/bench/fastcall_guest"
X="$B/bin/ulpexec"
N=${FC_ITERS:-100000}
RUNS=${FC_RUNS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ ! -x "$G" ] || [ ! -x "$X" ]; then
	echo "bench/fastcall: $G or ulpexec not built" >&2
	exit 0
fi

# one NAME CMD...: append the ns the command prints to $T/NAME ("fail" when it fails)
one() {
	o=$1
	shift
	"$@" >"$T/v" 2>/dev/null && grep -q '^[0-9.]*$' "$T/v" && cat "$T/v" >>"$T/$o" ||
		echo fail >>"$T/$o"
}
# stats A B: "min_A min_B min_ratio median_ratio" over the repetitions of A/B (or "" on a failure)
stats() {
	grep -q fail "$T/$1" "$T/$2" && return
	med=$(paste "$T/$1" "$T/$2" | awk '{ print $1 / $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	ma=$(sort -n "$T/$1" | head -1)
	mb=$(sort -n "$T/$2" | head -1)
	[ -n "$med" ] && echo "$ma $mb $(echo "$ma $mb" | awk '{ printf "%.2f", $1 / $2 }') $med"
}

r=0
while [ $r -lt "$RUNS" ]; do
	one yf env ULP_FASTCALL=1 "$X" -w 1 -n 2 "$G" yield "$N"
	one yp env ULP_FASTCALL=1 "$X" -w 1 -n 2 "$G" pvas "$N"
	one yt env ULP_FASTCALL=0 "$X" -w 1 -n 2 "$G" yield "$N"
	for w in read close; do
		one ${w}n "$G" $w "$N"
		one ${w}f env ULP_FASTCALL=1 "$X" -w 1 "$G" $w "$N"
		one ${w}t env ULP_FASTCALL=0 "$X" -w 1 "$G" $w "$N"
	done
	r=$((r + 1))
done

# line NAME FAST TRAP BASE BASE_KEY TARGET
line() {
	f=$(stats "$2" "$4")
	t=$(stats "$3" "$4")
	if [ -z "$f" ] || [ -z "$t" ]; then
		echo "bench/fastcall: a $1 run failed" >&2
		return
	fi
	set -- "$1" "$f" "$t" "$5" "$6"
	echo "$2 $3" | awk -v name="$1" -v base="$4" -v target="$5" -v n="$N" -v runs="$RUNS" '{
		printf "BENCH fastcall_%s iters=%s reps=%s min_fast_ns=%s min_trap_ns=%s min_%s_ns=%s", \
			name, n, runs, $1, $5, base, $2
		printf " ratio_fast=%s min_ratio_fast=%s ratio_trap=%s min_ratio_trap=%s", $4, $3, $8, $7
		if (target != "") printf " target_max=%s met=%s", target, ($4 <= target ? "yes" : "no")
		printf "\n" }'
}
line yield yf yt yp pvas_yield 1.5
line read readf readt readn native 1.3
line close closef closet closen native ""
