#!/bin/sh
# Threads inside a ULP vs the same program as a process (bench/threads_guest.c), and vs libulp's
# own ulp_thread_create+join (bench/create). Prints BENCH lines (bench/README.md). One CPU: the
# process and ulpexec's single worker are pinned with taskset to BENCH_CPU (default: the last).
# killstorm (pthread_kill at threads looping on sched_yield) also runs unpinned on 2 workers;
# semfork: process-shared semaphores between the program and its fork child.
# Usage: bench/threads.sh BUILD_DIR
B=${1:-build}
. "$(dirname "$0")/lib.sh" # cpu, reps, med
G="$B/bench/threads_guest"
X="$B/bin/ulpexec"

run() { taskset -c "$cpu" "$@" 2>/dev/null || echo "nan nan"; }
free_run() { "$@" 2>/dev/null || echo "nan nan"; }

for what in create pingpong semfork; do
	n=$(case $what in create) echo 3000 ;; pingpong) echo 20000 ;; *) echo 5500 ;; esac)
	: >"$B/bench/threads_$what.dat"
	r=0
	while [ $r -lt "$reps" ]; do # interleaved: the machine's load hits both alike
		p=$(run "$G" $what $n)
		u=$(run "$X" -w 1 "$G" $what $n)
		echo "$p $u" >>"$B/bench/threads_$what.dat"
		r=$((r + 1))
	done
done
ult=$(BENCH_REPS=5 BENCH_CPU=$cpu "$B/bench/create" 2>/dev/null |
	sed -n 's/^BENCH create_join creator=ult .* ns=\([0-9.]*\).*/\1/p')
ult=${ult:-nan}

c=$B/bench/threads_create.dat
pn=$(awk '{print $1}' "$c" | med) un=$(awk '{print $3}' "$c" | med)
pmin=$(awk '{print $2}' "$c" | sort -n | head -1) umin=$(awk '{print $4}' "$c" | sort -n | head -1)
awk -v p="$pn" -v u="$un" -v pm="$pmin" -v um="$umin" -v t="$ult" -v r="$reps" 'BEGIN {
	rp = p / u; rt = u / t
	printf "BENCH threads_create_join cpu_pinned=1 reps=%d process_ns=%.0f ulp_ns=%.0f min_process_ns=%.0f min_ulp_ns=%.0f ult_ns=%.1f ratio_process_over_ulp=%.2f target_min=10 met=%s ratio_ulp_over_ult=%.1f target_max=3 met_ult=%s\n",
		r, p, u, pm, um, t, rp, (rp >= 10 ? "yes" : "no"), rt, (rt <= 3 ? "yes" : "no") }'
c=$B/bench/threads_pingpong.dat
pn=$(awk '{print $1}' "$c" | med) un=$(awk '{print $3}' "$c" | med)
pmin=$(awk '{print $2}' "$c" | sort -n | head -1) umin=$(awk '{print $4}' "$c" | sort -n | head -1)
awk -v p="$pn" -v u="$un" -v pm="$pmin" -v um="$umin" -v r="$reps" 'BEGIN {
	rp = p / u
	printf "BENCH threads_futex_pingpong cpu_pinned=1 reps=%d round_trip_process_ns=%.0f round_trip_ulp_ns=%.0f min_process_ns=%.0f min_ulp_ns=%.0f ratio_process_over_ulp=%.2f target_min=5 met=%s\n",
		r, p, u, pm, um, rp, (rp >= 5 ? "yes" : "no") }'

# semfork: a program and its fork child hand two process-shared semaphores to and fro (the ULP's
# child is a process: its wakes reach the ULP's wait through the runtime's look at the word)
c=$B/bench/threads_semfork.dat
pn=$(awk '{print $1}' "$c" | med) un=$(awk '{print $3}' "$c" | med)
pmin=$(awk '{print $2}' "$c" | sort -n | head -1) umin=$(awk '{print $4}' "$c" | sort -n | head -1)
awk -v p="$pn" -v u="$un" -v pm="$pmin" -v um="$umin" -v r="$reps" 'BEGIN {
	printf "BENCH threads_semfork cpu_pinned=1 reps=%d round_trip_process_ns=%.0f round_trip_ulp_ns=%.0f min_process_ns=%.0f min_ulp_ns=%.0f ratio_process_over_ulp=%.2f\n",
		r, p, u, pm, um, p / u }'

# killstorm: pinned, one worker; then unpinned, ulpexec with 2 workers
n=6600
: >"$B/bench/threads_killstorm.dat"
: >"$B/bench/threads_killstorm2.dat"
r=0
while [ $r -lt "$reps" ]; do
	echo "$(run "$G" killstorm $n) $(run "$X" -w 1 "$G" killstorm $n)" >>"$B/bench/threads_killstorm.dat"
	echo "$(free_run "$G" killstorm $n) $(free_run "$X" -w 2 "$G" killstorm $n)" \
		>>"$B/bench/threads_killstorm2.dat"
	r=$((r + 1))
done
for c in 1 2; do
	f=$B/bench/threads_killstorm$([ $c = 2 ] && echo 2).dat
	pn=$(awk '{print $1}' "$f" | med) un=$(awk '{print $3}' "$f" | med)
	pmin=$(awk '{print $2}' "$f" | sort -n | head -1) umin=$(awk '{print $4}' "$f" | sort -n | head -1)
	awk -v p="$pn" -v u="$un" -v pm="$pmin" -v um="$umin" -v r="$reps" -v w=$c 'BEGIN {
		printf "BENCH threads_killstorm workers=%d cpu_pinned=%d reps=%d kill_process_ns=%.0f kill_ulp_ns=%.0f min_process_ns=%.0f min_ulp_ns=%.0f ratio_ulp_over_process=%.2f\n",
			w, (w == 1), r, p, u, pm, um, u / p }'
done
