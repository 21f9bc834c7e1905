#!/bin/sh
# Reproductions of the seed papers' figures: run them, write one .dat per experiment and a
# summary under RESULTS, then draw the plots (bench/plot.sh). Called by `make run-bench-figs`
# (part of `make bench`) once everything is built:
#
#   sh bench/run-figs.sh O RESULTS [STEP...]
#
# O is the build folder (binaries in O/bench, O/bin, O/examples; the ucontext variant of the
# thread benchmarks in O/ucontext/bench); RESULTS is where the data go (docs/results). STEPs:
# fig7 fig6 oversub spawn (default: all). A step whose programs are missing says so and is
# skipped; nothing here fails the build. Knobs (environment): FIG7_* (bench/fig7.c),
# FIG6_REPS (3), OVERSUB_REPS (3), OVERSUB_RANKS ("2 4 ... 256"), OVERSUB_ARGS (mpi_like_prog
# arguments, see oversub below), SPAWN_RANKS ("16 32 64 128 256"), SPAWN_REPS (3).
set -u
O=${1:?usage: run-figs.sh O RESULTS [STEP...]}
R=${2:?usage: run-figs.sh O RESULTS [STEP...]}
shift 2
steps=${*:-fig7 fig6 oversub spawn}
mkdir -p "$R"
ncpu=$(getconf _NPROCESSORS_ONLN)
last=$((ncpu - 1))
t_all=$(date +%s)

say() { echo "run-figs: $*" >&2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# BENCH lines -> value of key $2 in lines matching the awk pattern $1 (first match)
val() { awk -v pat="$1" -v key="$2" '$0 ~ pat { for (i = 1; i <= NF; i++) { n = index($i, "=");
	if (n && substr($i, 1, n - 1) == key) { print substr($i, n + 1); exit } } }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit }
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# "step seconds" lines for the summary
timing() { echo "$1 $(($(date +%s) - $2))" >> "$R/.times"; }
: > "$R/.times"

# ---- Fig. 7 of the User-level Process paper: switch time among P on one CPU ----
fig7() {
	t0=$(date +%s)
	if [ ! -x "$O/bench/fig7" ] || [ ! -x "$O/bench/fig7_guest" ]; then
		say "fig7: $O/bench/fig7 not built (x86_64 only); skipped"; return
	fi
	echo "== bench/fig7"
	"$O/bench/fig7" | tee "$R/fig7.out"
	awk 'BEGIN { print "# P  procs_ns  threads_ns  ult_ns  ulp_arch_prctl_ns  ulp_wrfsbase_ns" \
			"  switches_each(slow variants)  (bench/fig7.c, medians)" }
	/^BENCH fig7 / { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		p = f["P"]; ns[p, f["impl"]] = f["ns"]; if (!(p in seen)) { seen[p] = 1; ps[++n] = p }
		if (f["impl"] == "procs") each[p] = f["switches_each"] }
	END { for (i = 1; i <= n; i++) { p = ps[i]; w = ns[p, "ulp_wrfsbase"]
		if (w == "") w = ns[p, "ulp_wrfsbase_unsafe"]; if (w == "") w = "nan"
		print p, ns[p, "procs"], ns[p, "threads"], ns[p, "ult"], ns[p, "ulp_arch_prctl"], w,
			each[p] } }' "$R/fig7.out" > "$R/fig7.dat"
	timing fig7 "$t0"
}

# ---- MassiveThreads-style: fib(30) one thread per call, create+join: asm vs ucontext ----
fig6() {
	t0=$(date +%s)
	reps=${FIG6_REPS:-3}
	: > "$R/fig6.out"
	for v in asm ucontext; do
		d=$O/bench
		[ $v = ucontext ] && d=$O/ucontext/bench
		for b in fib create; do
			if [ ! -x "$d/$b" ]; then
				say "fig6: $d/$b not built; skipped"; continue
			fi
			echo "== bench/$b ($v switch)"
			BENCH_REPS=$reps "$d/$b" | sed "s/^BENCH \([a-z_]*\) /BENCH \1 switch=$v /" |
				tee -a "$R/fig6.out"
		done
	done
	{
		echo "# workers  asm_ms  ucontext_ms  asm_ns_per_thread  ucontext_ns_per_thread" \
			"(fib(30), 1346268 threads; bench/fib.c, medians of $reps)"
		for w in 1 2; do
			a=$(val "^BENCH fib switch=asm .*impl=ult workers=$w " ms < "$R/fig6.out")
			u=$(val "^BENCH fib switch=ucontext .*impl=ult workers=$w " ms < "$R/fig6.out")
			p=$(val "^BENCH fib switch=asm .*impl=plain" ms < "$R/fig6.out")
			pu=$(val "^BENCH fib switch=ucontext .*impl=plain" ms < "$R/fig6.out")
			echo "$w ${a:-nan} ${u:-nan}" | awk -v p="${p:-0}" -v pu="${pu:-0}" \
				'{ printf "%s %s %s %.1f %.1f\n", $1, $2, $3,
					($2 - p) * 1e6 / 1346268, ($3 - pu) * 1e6 / 1346268 }'
		done
	} > "$R/fig6_fib.dat"
	{
		echo "# impl  ns_per_create_join(creator=ult)  ns(creator=main)  fcontext_switch_ns" \
			"(bench/create.c, medians)"
		for v in asm ucontext; do
			c=$(val "^BENCH create_join switch=$v creator=ult" ns < "$R/fig6.out")
			m=$(val "^BENCH create_join switch=$v creator=main" ns < "$R/fig6.out")
			f=$(val "^BENCH create_env switch=$v " fcontext_switch_ns < "$R/fig6.out")
			echo "$v ${c:-nan} ${m:-nan} ${f:-nan}"
		done
	} > "$R/fig6_create.dat"
	timing fig6 "$t0"
}

# ---- Oversubscription: mpi_like_prog, R ranks on the machine's CPUs ----
# Strong scaling: the same total work for every R (OVERSUB_CELLS cells in all, split over the
# ranks), so that a flat line would mean oversubscription costs nothing. Launchers as a user
# would call them, default settings. Bounded time: a launcher's run slower than
# OVERSUB_FAST_MS (3000) is not repeated; once a run fails, or takes over half of OVERSUB_CAP_MS
# (25000; the next R, twice the ranks, would likely exceed it), that launcher is not run for
# larger R (the .dat says nan there, oversub.out says capped=yes).
oversub_run() { # launcher ranks args... -> prints "wall_ms prog_s" or "nan nan"
	l=$1 n=$2
	shift 2
	case $l in
	ulpspawn) set -- "$O/bin/ulpspawn" -n "$n" "$O/examples/mpi_like/mpi_like_prog" "$@" ;;
	mpich) set -- mpiexec.mpich -n "$n" "$O/examples/mpi_like/mpi_like_prog.mpi" "$@" ;;
	openmpi) set -- mpirun.openmpi --oversubscribe --allow-run-as-root -n "$n" \
		"$O/bench/ompi/mpi_like_prog.mpi" "$@" ;;
	esac
	s=$(now_ms)
	if timeout "${OVERSUB_TIMEOUT:-90}" "$@" > "$R/.oversub.log" 2>&1; then
		# rank 0's summary line ends with the program's own time: "..., 0.107 s"
		echo "$(($(now_ms) - s)) $(awk '/^mpi_like_prog: / { v = $(NF - 1) } END { print v ? v : "nan" }' \
			"$R/.oversub.log")"
	else
		say "oversub: $l -n $n failed or timed out: $(tail -n 2 "$R/.oversub.log" | tr '\n' ' ')"
		echo "nan nan"
	fi
}

oversub() {
	t0=$(date +%s)
	ml=$O/examples/mpi_like
	reps=${OVERSUB_REPS:-3}
	ranks=${OVERSUB_RANKS:-2 4 8 16 32 64 128 256}
	total=${OVERSUB_CELLS:-1048576}
	nsteps=${OVERSUB_STEPS:-100}
	laps=${OVERSUB_LAPS:-5}
	fast=${OVERSUB_FAST_MS:-3000}
	cap=${OVERSUB_CAP_MS:-25000}
	launchers=""
	if [ -x "$ml/mpi_like_prog" ] && [ -x "$O/bin/ulpspawn" ]; then
		launchers="ulpspawn"
	else
		say "oversub: $ml/mpi_like_prog or $O/bin/ulpspawn missing: ulpspawn skipped"
	fi
	if [ -x "$ml/mpi_like_prog.mpi" ] && command -v mpiexec.mpich >/dev/null; then
		launchers="$launchers mpich"
	else
		say "oversub: $ml/mpi_like_prog.mpi or mpiexec.mpich missing: MPICH skipped"
	fi
	if [ -x "$O/bench/ompi/mpi_like_prog.mpi" ] && command -v mpirun.openmpi >/dev/null; then
		launchers="$launchers openmpi"
	else
		say "oversub: $O/bench/ompi/mpi_like_prog.mpi or mpirun.openmpi missing: Open MPI skipped"
	fi
	if [ -z "$launchers" ]; then
		say "oversub: nothing to run (examples/mpi_like not built?); skipped"; return
	fi
	: > "$R/oversub.out"
	echo "== oversubscription: mpi_like_prog, $total cells in all, $nsteps steps, $laps laps, on $ncpu CPUs"
	capped=""
	for n in $ranks; do
		args="$nsteps $((total / n)) $laps"
		for l in $launchers; do
			case " $capped " in *" $l "*)
				echo "BENCH oversub launcher=$l ranks=$n rep=0 ms=nan prog_s=nan capped=yes" |
					tee -a "$R/oversub.out"
				continue ;;
			esac
			r=1
			while [ "$r" -le "$reps" ]; do
				set -- $(oversub_run "$l" "$n" $args)
				echo "BENCH oversub launcher=$l ranks=$n rep=$r ms=$1 prog_s=$2 cells_per_rank=$((total / n)) steps=$nsteps laps=$laps" |
					tee -a "$R/oversub.out"
				if [ "$1" = nan ] || [ $(($1 * 2)) -gt "$cap" ]; then
					capped="$capped $l"; break
				fi
				[ "$1" -gt "$fast" ] && break
				r=$((r + 1))
			done
		done
	done
	rm -f "$R/.oversub.log"
	{
		echo "# ranks  ulpspawn_ms  mpich_ms  openmpi_ms  ulpspawn_prog_s  mpich_prog_s  openmpi_prog_s" \
			"(mpi_like_prog $nsteps steps, $total cells in all, $laps laps, on $ncpu CPUs;" \
			"wall time of the launcher command, median of up to $reps; prog_s: the program's own" \
			"time, rank 0; nan: not run)"
		for n in $ranks; do
			line=$n
			for k in ms prog_s; do
				for l in ulpspawn mpich openmpi; do
					m=$(awk -v l="launcher=$l" -v n="ranks=$n" -v k="$k=" \
						'$3 == l && $4 == n { for (i = 6; i <= NF; i++) if (index($i, k) == 1) {
						v = substr($i, length(k) + 1); if (v != "nan") print v } }' \
						"$R/oversub.out" | median)
					line="$line $m"
				done
			done
			echo "$line"
		done
	} > "$R/oversub.dat"
	timing oversub "$t0"
}

# ---- Spawn time and memory per ULP vs process, for R programs ----
spawn() {
	t0=$(date +%s)
	if [ ! -x "$O/bench/ulp_spawn" ] || [ ! -x "$O/bench/ulp_mem" ]; then
		say "spawn: $O/bench/ulp_spawn or ulp_mem not built (x86_64 only); skipped"; return
	fi
	: > "$R/spawn.out"
	for n in ${SPAWN_RANKS:-16 32 64 128 256}; do
		echo "== bench/ulp_spawn, bench/ulp_mem: N=$n"
		BENCH_REPS=${SPAWN_REPS:-3} BENCH_SPAWN_N=$n "$O/bench/ulp_spawn" | sed "s/^BENCH \([a-z_]*\) /BENCH \1 n=$n /" |
			tee -a "$R/spawn.out"
		BENCH_REPS=${SPAWN_REPS:-3} BENCH_MEM_N=$n "$O/bench/ulp_mem" | sed "s/^BENCH \([a-z_]*\) /BENCH \1 n=$n /" |
			tee -a "$R/spawn.out"
	done
	{
		echo "# N  ulp_us_each  ulpexec_us_each  posix_spawn_us_each  (glibc guest)" \
			"ulp_nolibc  ulpexec_nolibc  posix_spawn_nolibc  (bench/ulp_spawn.c, medians)"
		for n in ${SPAWN_RANKS:-16 32 64 128 256}; do
			line=$n
			for g in glibc nolibc; do
				for i in ulp ulpexec posix_spawn; do
					v=$(val "^BENCH ulp_spawn n=$n impl=$i guest=$g " us_each < "$R/spawn.out")
					line="$line ${v:-nan}"
				done
			done
			echo "$line"
		done
	} > "$R/spawn.dat"
	{
		echo "# N  ulp_rss  proc_rss  ulp_uss  proc_uss  ulp_pte  proc_pte  ulp_kernel  proc_kernel" \
			"(kB per program; bench/ulp_mem.c, medians)"
		for n in ${SPAWN_RANKS:-16 32 64 128 256}; do
			line=$n
			for k in rss uss pte kernel; do
				for i in ulp process; do
					v=$(val "^BENCH ulp_mem n=$n impl=$i" "${k}_kb" < "$R/spawn.out")
					line="$line ${v:-nan}"
				done
			done
			echo "$line"
		done
	} > "$R/mem.dat"
	timing spawn "$t0"
}

for s in $steps; do
	case $s in
	fig7|fig6|oversub|spawn) $s ;;
	*) say "unknown step '$s'" ;;
	esac
done

# ---- summary.md: set-up, the tables with their ratios, the time each step took ----
table() { # file awk-program: a markdown table from a .dat file
	[ -s "$1" ] || { echo "(no data: $(basename "$1") missing)"; echo; return; }
	awk "$2" "$1"
	echo
}

summary() {
	echo "# make bench: results"
	echo
	echo "Written by bench/run-figs.sh on $(date -u '+%Y-%m-%d %H:%M UTC'); plots and the docs: docs/benchmarks.md."
	echo
	echo "| set-up | |"
	echo "|---|---|"
	echo "| CPU | $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $ncpu online CPUs |"
	echo "| kernel | $(uname -srm) |"
	echo "| virtualization | $(dmesg 2>/dev/null | grep -m1 -o 'Hypervisor detected: .*' || echo 'no hypervisor in dmesg'); page-table isolation: $(grep -o 'pti=[a-z]*' /proc/cmdline || echo default) |"
	echo "| compiler | $(gcc --version | head -n 1) |"
	echo "| C library | $(ldd --version | head -n 1) |"
	echo "| MPICH | $(mpiexec.mpich --version 2>/dev/null | awk '/Version:/ { print $2; exit }') |"
	echo "| Open MPI | $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 { print $NF }') |"
	echo "| TLS write | $(val '^BENCH fig7_env' tls_method < "$R/fig7.out" 2>/dev/null) (cpuinfo flag fsgsbase: $(grep -q -w fsgsbase /proc/cpuinfo && echo present || echo absent)) |"
	echo "| pinning | fig7, create: one CPU (BENCH_CPU, default the last: $last); fib, spawn, oversub: none |"
	echo
	echo "## Fig. 7: ns per switch among P on one CPU (bench/fig7.c)"
	echo
	table "$R/fig7.dat" 'BEGIN { print "| P | switches each | processes | threads | ULPs (arch_prctl) | ULPs (wrfsbase) | ULTs | processes / ULPs | threads / ULPs | ULPs / ULTs |"
		print "|---|---|---|---|---|---|---|---|---|---|" }
		!/^#/ { printf "| %s | %s | %.0f | %.0f | %.0f | %s | %.1f | %.2f | %.2f | %.0f |\n", $1, $7, $2, $3, $5,
			$6 == "nan" ? "-" : sprintf("%.0f", $6), $4, $2 / $5, $3 / $5, $5 / $4 }'
	if [ -s "$R/fig7.out" ]; then
		echo "What a kernel entry costs here (fig7_cost lines, measured first in the same run):"
		echo
		echo "| operation | ns |"
		echo "|---|---|"
		awk '/^BENCH fig7_cost / { sub("op=", "", $3); sub("ns=", "", $4); print "| " $3 " | " $4 " |" }' \
			"$R/fig7.out"
		echo
	fi
	echo "## fib(30) and create+join: assembly switch vs ucontext (bench/fib.c, bench/create.c)"
	echo
	table "$R/fig6_fib.dat" 'BEGIN { print "| workers | asm ms | ucontext ms | ucontext / asm | asm ns/thread | ucontext ns/thread |"
		print "|---|---|---|---|---|---|" }
		!/^#/ { printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", $1, $2, $3, $3 / $2, $4, $5 }'
	if [ -s "$R/fig6.out" ]; then
		for v in asm ucontext; do
			echo "- $v: 2 workers / 1 worker speedup" \
				"$(val "^BENCH fib switch=$v .*workers=2 " speedup_vs_1w < "$R/fig6.out");" \
				"what two CPUs gave plain fib at the time (fib_machine):" \
				"$(val "^BENCH fib_machine switch=$v " speedup < "$R/fig6.out")"
		done
		echo
	fi
	table "$R/fig6_create.dat" 'BEGIN { print "| switch | create+join ns (ult creator) | (main creator) | fcontext switch ns |"
		print "|---|---|---|---|" }
		!/^#/ { printf "| %s | %.1f | %.1f | %.1f |\n", $1, $2, $3, $4 }'
	echo "## Oversubscription: mpi_like_prog, wall ms per run (run-figs.sh oversub)"
	echo
	table "$R/oversub.dat" 'BEGIN { print "| ranks | ulpspawn | MPICH | Open MPI | MPICH / ulpspawn | Open MPI / ulpspawn | program s: ulpspawn / MPICH / Open MPI |"
		print "|---|---|---|---|---|---|---|" }
		function r(a, b) { return a == "nan" || b == "nan" ? "-" : sprintf("%.1f", a / b) }
		!/^#/ { printf "| %s | %s | %s | %s | %s | %s | %s / %s / %s |\n", $1, $2, $3, $4, r($3, $2), r($4, $2), $5, $6, $7 }'
	echo "## Spawn: us per program, start and reap N (bench/ulp_spawn.c)"
	echo
	table "$R/spawn.dat" 'BEGIN { print "| N | ULPs | ulpexec | posix_spawn | posix_spawn / ULPs | no libc: ULPs | posix_spawn | ratio |"
		print "|---|---|---|---|---|---|---|---|" }
		!/^#/ { printf "| %s | %.0f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", $1, $2, $3, $4, $4 / $2, $5, $7, $7 / $5 }'
	echo "## Memory: kB per idle program (bench/ulp_mem.c)"
	echo
	table "$R/mem.dat" 'BEGIN { print "| N | ULP RSS | process RSS | RSS ratio | ULP USS + PTE + kernel | process | ratio |"
		print "|---|---|---|---|---|---|---|" }
		!/^#/ { u = $4 + $6 + $8; p = $5 + $7 + $9
			printf "| %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", $1, $2, $3, $2 / $3, u, p, u / p }'
	echo "## Other benchmarks of this make bench ($O/bench/*.out)"
	echo
	echo '```'
	for f in switch create fib ulp_yield ulp_spawn ulp_mem; do
		[ -s "$O/bench/$f.out" ] && grep '^BENCH ' "$O/bench/$f.out"
	done
	echo '```'
	echo
	echo "## Time taken (s)"
	echo
	echo "| step | s |"
	echo "|---|---|"
	awk '{ print "| " $1 " | " $2 " |" }' "$R/.times"
	echo "| run-figs.sh in all | $1 |"
}

sh "$(dirname "$0")/plot.sh" "$R" || say "plots not drawn"
summary "$(($(date +%s) - t_all))" > "$R/summary.md"
rm -f "$R/.times"
