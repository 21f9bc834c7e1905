#!/bin/sh
# Draw the PNG plots of docs/benchmarks.md from the .dat files bench/run-figs.sh wrote:
#
#   sh bench/plot.sh RESULTS        (make plots: redraw without measuring again)
#
# One gnuplot run per plot, only for the .dat files that exist: a missing experiment leaves its
# plot out, the others are still drawn. Needs gnuplot (Debian gnuplot-nox: mk/deps.sh bench).
set -u
R=${1:?usage: plot.sh RESULTS}
if ! command -v gnuplot >/dev/null; then
	echo "plot.sh: gnuplot not installed (apt-get install gnuplot-nox); no plots" >&2
	exit 1
fi
host="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(getconf _NPROCESSORS_ONLN) CPUs"

common="set terminal pngcairo size 960,680 font 'DejaVu Sans,12' noenhanced
set grid
set key below box width 1 spacing 1.1
set bmargin 9
set style data linespoints
set pointsize 1.2
set datafile missing 'nan'
set offsets 0, 0, graph 0.08, 0"

draw() { # name: gnuplot script on stdin
	if [ ! -s "$R/$1.dat" ]; then
		echo "plot.sh: $R/$1.dat missing; $1.png not drawn" >&2
		return
	fi
	{ echo "$common"; echo "set output '$R/$1.png'"; cat; } | gnuplot ||
		echo "plot.sh: gnuplot failed on $1" >&2
}

draw fig7 <<EOF
set title "Context switch among P on one pinned CPU (User-level Process paper, Fig. 7)\n$host"
set logscale x 2
set logscale y 10
set xlabel 'P: processes / threads / ULTs / ULPs on one CPU'
set ylabel 'time per switch [ns] (log)'
set xrange [1.5:1400]
set yrange [10:200000]
plot '$R/fig7.dat' u 1:2 t 'kernel processes (sched_yield)' lw 2 pt 5 lc rgb '#b2182b', \
     '' u 1:3 t 'kernel threads (sched_yield)' lw 2 pt 7 lc rgb '#ef8a62', \
     '' u 1:5 t 'ULPs, TLS by arch_prctl (pvas_yield)' lw 2 pt 9 lc rgb '#2166ac', \
     '' u 1:6 t 'ULPs, TLS by wrfsbase' lw 2 pt 11 lc rgb '#762a83', \
     '' u 1:4 t 'ULTs (ulp_thread_yield)' lw 2 pt 13 lc rgb '#1b7837'
EOF

draw fig6_fib <<EOF
set title "fib(30), one thread per call: assembly switch vs glibc swapcontext\n$host"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 10
set yrange [10:*]
set ylabel 'time of fib(30) [ms] (log)'
set xlabel 'workers'
plot '$R/fig6_fib.dat' u 2:xtic(1) t 'libulp (switch.S)', \
     '' u 3 t 'libulp, ULP_SWITCH=ucontext'
EOF

draw fig6_create <<EOF
set title "Thread create + join, one worker: assembly switch vs glibc swapcontext\n$host"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 10
set yrange [10:*]
set ylabel 'ns per create + join (log)'
plot '$R/fig6_create.dat' u 2:xtic(1) t 'created by a ulp thread (work-first)', \
     '' u 3 t 'created by the ulp_init thread (help-first)'
EOF

draw oversub <<EOF
set title "mpi_like_prog, fixed total work, R ranks on $(getconf _NPROCESSORS_ONLN) CPUs\n$host"
set logscale x 2
set logscale y 10
set xrange [1.5:320]
set xlabel 'ranks R'
set ylabel 'wall time per run [ms] (log)'
plot '$R/oversub.dat' u 1:2 t 'ulpspawn (ULPs): launcher command' lw 2 pt 7 lc rgb '#2166ac', \
     '' u 1:3 t 'MPICH mpiexec' lw 2 pt 5 lc rgb '#b2182b', \
     '' u 1:4 t 'Open MPI mpirun --oversubscribe' lw 2 pt 9 lc rgb '#e08214', \
     '' u 1:(\$5*1000) t 'ulpspawn: program time (rank 0)' lw 1 dt 2 pt 6 lc rgb '#2166ac', \
     '' u 1:(\$6*1000) t 'MPICH: program time' lw 1 dt 2 pt 4 lc rgb '#b2182b', \
     '' u 1:(\$7*1000) t 'Open MPI: program time' lw 1 dt 2 pt 8 lc rgb '#e08214'
EOF

# the real-MPI sweep (bench/mpi_sweep.sh, sweep_dat.sh): its .dat names the host that measured it
shost=$(sed -n 's/^# host: //p' "$R/mpi_sweep.dat" 2>/dev/null)
draw mpi_sweep <<EOF
set title "Real MPI: mpi_prog (Debian's MPICH, Open MPI), fixed work per rank\n$shost"
set logscale x 2
set logscale y 10
set xrange [1.5:320]
set xlabel 'ranks R'
set ylabel 'wall time of the launcher command [s] (log)'
plot '$R/mpi_sweep.dat' u 1:2 t 'ulpspawn --pmi (ULP ranks, MPICH)' lw 2 pt 7 lc rgb '#2166ac', \\
     '' u 1:3 t 'ulpspawn, ULP_MPI_YIELD=0' lw 1 dt 2 pt 6 lc rgb '#2166ac', \\
     '' u 1:4 t 'mpiexec.mpich (default settings)' lw 2 pt 5 lc rgb '#b2182b', \\
     '' u 1:5 t 'mpiexec.mpich, libulp-mpiyield preloaded' lw 1 dt 2 pt 4 lc rgb '#b2182b', \\
     '' u 1:6 t 'Open MPI --oversubscribe, mpi_yield_when_idle 1' lw 2 pt 9 lc rgb '#e08214'
EOF

draw spawn <<EOF
set title "Start and reap N programs: ULPs vs processes (posix_spawn)\n$host"
set logscale x 2
set xrange [12:320]
set yrange [0:*]
set xlabel 'N programs'
set ylabel 'wall time per program [us]'
plot '$R/spawn.dat' u 1:4 t 'posix_spawn, glibc program' lw 2 pt 5 lc 1, \
     '' u 1:2 t 'ULPs (harness), glibc program' lw 2 pt 7 lc 2, \
     '' u 1:3 t 'ulpexec, glibc program' lw 2 pt 9 lc 3, \
     '' u 1:7 t 'posix_spawn, no libc' lw 2 dt 2 pt 4 lc 1, \
     '' u 1:5 t 'ULPs (harness), no libc' lw 2 dt 2 pt 6 lc 2
EOF

draw mem <<EOF
set title "Memory per idle program: ULP vs process\n$host"
set logscale x 2
set xrange [12:320]
set yrange [0:*]
set xlabel 'N programs alive'
set ylabel 'kB per program'
plot '$R/mem.dat' u 1:3 t 'process RSS' lw 2 pt 5 lc 1, \
     '' u 1:2 t 'ULP RSS' lw 2 pt 7 lc 2, \
     '' u 1:(\$5+\$7+\$9) t 'process own pages + page tables + kernel' lw 2 dt 2 pt 4 lc 1, \
     '' u 1:(\$4+\$6+\$8) t 'ULP own pages + page tables + kernel' lw 2 dt 2 pt 6 lc 2
EOF
exit 0
