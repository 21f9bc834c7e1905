#!/bin/sh
# Instruction counts per operation: runs the benchmarks under valgrind's callgrind and prints
# BENCH lines with Ir (instructions executed) and locked instructions (callgrind's "Ge": global
# bus events, i.e. lock-prefixed and implicitly locked instructions such as xchg) per operation.
# Unlike times, these do not depend on what else runs on the machine.
#
#   sh bench/ir.sh O [switch|create|fib]...     (make bench runs it after each benchmark)
#
# Each count is the difference of two runs of the same variant (BENCH_IR=name:iters, bench.c)
# with different iteration counts, divided by the difference of the counts: start-up, runtime
# initialisation and warm-up cancel out exactly.
O=${1:?usage: bench/ir.sh O [switch|create|fib]...}
shift
[ $# -gt 0 ] || set -- switch create fib
if ! command -v valgrind >/dev/null 2>&1; then
	echo "bench/ir.sh: valgrind is not installed (mk/deps.sh bench installs it); Ir counts skipped" >&2
	exit 0
fi
tmp=$(mktemp -d) || exit 0
trap 'rm -rf "$tmp"' EXIT

# count BIN NAME ITERS: "Ir Ge" of one run
count() {
	if ! BENCH_IR="$2:$3" valgrind --tool=callgrind --collect-bus=yes \
		--callgrind-out-file="$tmp/cg" "$1" >"$tmp/out" 2>"$tmp/err"; then
		echo "bench/ir.sh: $1 BENCH_IR=$2:$3 under callgrind failed:" >&2
		tail -n 5 "$tmp/err" >&2
		return 1
	fi
	awk '/^totals:/ { print $2, $3 + 0 }' "$tmp/cg"
}

# per_op BIN NAME N1 N2 [OPS1 OPS2]: "Ir Ge" per operation, where a run of Ni iterations does
# OPSi operations (default: Ni)
per_op() {
	a=$(count "$1" "$2" "$3") && b=$(count "$1" "$2" "$4") || return 1
	echo "$a $b" | awk -v o1="${5:-$3}" -v o2="${6:-$4}" \
		'{ printf "%.1f %.2f\n", ($3 - $1) / (o2 - o1), ($4 - $2) / (o2 - o1) }'
}

met() { # met VALUE LIMIT: yes when VALUE <= LIMIT
	awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l) ? "yes" : "no" }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'
}

fctx=""
fcontext_rt() { # the baseline, counted once, into $fctx
	[ -n "$fctx" ] || fctx=$(per_op "$O/bench/switch" fcontext 20000 40000) || fctx="0 0"
}

for b in "$@"; do
	bin=$O/bench/$b
	if [ ! -x "$bin" ]; then
		echo "bench/ir.sh: $bin not built; skipped" >&2
		continue
	fi
	case $b in
	switch)
		fcontext_rt
		set -- $fctx
		f_ir=$1
		echo "BENCH ir_switch impl=fcontext op=roundtrip ir=$1 locked=$2"
		r=$(per_op "$bin" ulp_arch_switch 20000 40000) && set -- $r &&
			echo "BENCH ir_switch impl=ulp_arch_switch op=roundtrip ir=$1 locked=$2" \
				"ir_vs_fcontext=$(ratio "$1" "$f_ir")"
		r=$(per_op "$bin" ult_yield 20000 40000) && set -- $r &&
			echo "BENCH ir_switch impl=ult_yield op=roundtrip ir=$1 locked=$2" \
				"ir_vs_fcontext=$(ratio "$1" "$f_ir") target_max_ir=250" \
				"target_max_locked=2 met=$(met "$1" 250)/$(met "$2" 2)"
		;;
	create)
		fcontext_rt
		set -- $fctx
		f_ir=$1
		for v in ult main; do
			r=$(per_op "$bin" $v 10000 20000) && set -- $r &&
				echo "BENCH ir_create_join creator=$v ir=$1 locked=$2" \
					"ir_vs_fcontext_rt=$(ratio "$1" "$f_ir") target_max_ir=300" \
					"met=$(met "$1" 300)"
		done
		;;
	fib)
		# fib(n) makes fib(n+1) - 1 threads; the plain function's own instructions are
		# taken out with the same difference.
		n1=18 n2=22
		t1=$(awk -v n=$((n1 + 1)) 'BEGIN { a = 0; b = 1; for (i = 0; i < n; i++) { c = a + b; a = b; b = c } print a - 1 }')
		t2=$(awk -v n=$((n2 + 1)) 'BEGIN { a = 0; b = 1; for (i = 0; i < n; i++) { c = a + b; a = b; b = c } print a - 1 }')
		u=$(per_op "$bin" ult $n1 $n2 "$t1" "$t2") && p=$(per_op "$bin" plain $n1 $n2 "$t1" "$t2") &&
			echo "$u $p" | awk '{ printf "BENCH ir_fib workers=1 ir_per_thread=%.1f locked_per_thread=%.2f plain_ir_per_thread=%.1f target_max_ir=300 met=%s\n", $1 - $3, $2 - $4, $3, ($1 - $3 <= 300) ? "yes" : "no" }'
		;;
	*)
		echo "bench/ir.sh: no instruction counts for '$b'" >&2
		;;
	esac
done
exit 0
