# Sourced by the benchmark scripts that pin one CPU and interleave rounds (threads.sh, sig.sh,
# spinprobe.sh): the CPU (BENCH_CPU, default the last), the number of interleaved rounds
# (BENCH_REPS, default 5), and med, the median of the numbers on stdin (one a line; of an even
# count, the upper middle one).
cpu=${BENCH_CPU:-$(($(nproc) - 1))}
reps=${BENCH_REPS:-5}
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
