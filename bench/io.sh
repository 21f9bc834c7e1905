#!/bin/sh
# Blocking calls of ULPs (issue 13), BENCH lines with the ratios measured in this one run:
#   io_pingpong     FIFO ping-pong between two ULPs on one worker (ulpexec -w 1) against two
#                   processes pinned to one CPU: microseconds per round trip, speedup = proc/ulp
#   io_tcp_pingpong the same over loopback TCP (iotest tcp server/client): microseconds per
#                   round trip, speedup = proc/ulp
#   io_pipe_threads the same between two threads of one program over two pipes (iotest
#                   pipethreads): as a ULP (ulpexec -w 1) against the process pinned to one CPU
#   io_trap_read    a read that never blocks (1 byte of /dev/zero) as a ULP and as a process:
#                   the trap's share of every ULP read or write
#   io_sha256       sha256sum of a big file as a ULP and as a process (best of 3): ratio ulp/proc
#   io_spin_beside  63 ranks of mpi_like_prog on 2 workers (one PVAS task), alone and beside a
#                   ULP that spins 1 s without a system call: the 63's time inside the program
# Usage: bench/io.sh BUILD_DIR (env: IO_BENCH_MSGS=100000, IO_BENCH_MB=128). Never fails.
# The ULP times include ulpexec's start (about 6 ms on the VM): 100,000 round trips (since 28
# Nov; 20,000 before) keep it under 3% of the FIFO figure.
B=${1:-build}
P="$B/tests/integ/iotest"
ML="$B/examples/mpi_like/mpi_like_prog"
N=${IO_BENCH_MSGS:-100000}
MB=${IO_BENCH_MB:-128}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
# span T0 T1 SCALE: (T1 - T0) * SCALE
span() { echo "$1 $2 $3" | awk '{ printf "%.3f", ($2 - $1) * $3 }'; }
# pingpong NAME LINES PATTERN WHAT U0 U1 P0 P1 [EXTRA]: when $T/out holds LINES lines matching
# PATTERN, the BENCH line of $N round trips, the ULPs' from U0 to U1, the processes' from P0 to
# P1 (us per round trip, speedup = processes' / ULPs'), then EXTRA; else WHAT failed, on stderr.
pingpong() {
	if [ "$(grep -c "$3" "$T/out")" = "$2" ]; then
		echo "$5 $6 $7 $8 $N" | awk -v name="$1" -v extra="${9:+ $9}" '{
			u = ($2 - $1) * 1000000 / $5; p = ($4 - $3) * 1000000 / $5
			printf "BENCH %s msgs=%d ulp_us=%.2f proc_us=%.2f speedup=%.2f%s\n",
				name, $5, u, p, p / u, extra }'
	else
		echo "bench/io: $4 failed:" >&2
		tail -5 "$T/out" >&2
	fi
}

if [ ! -x "$P" ] || [ ! -x "$B/bin/ulpexec" ]; then
	echo "bench/io: $P or ulpexec not built" >&2
	exit 0
fi
mkfifo "$T/a" "$T/b"
t0=$(now)
"$B/bin/ulpexec" -w 1 "$P" fifo ping "$T/a" "$T/b" "$N" : "$P" fifo pong "$T/a" "$T/b" "$N" >"$T/out" 2>&1
t1=$(now)
taskset -c 0 "$P" fifo pong "$T/a" "$T/b" "$N" >/dev/null 2>&1 &
taskset -c 0 "$P" fifo ping "$T/a" "$T/b" "$N" >>"$T/out" 2>&1
wait
t2=$(now)
pingpong io_pingpong 3 "fifo ok $N" ping-pong "$t0" "$t1" "$t1" "$t2" target_min=2

# The same over loopback TCP (iotest tcp: the server writes its port into a file for the
# client). The processes' time starts once their server listens; the ULPs' includes the launch.
t0=$(now)
"$B/bin/ulpexec" -w 1 "$P" tcp server "$T/port.u" "$N" : "$P" tcp client "$T/port.u" "$N" \
	>"$T/out" 2>&1
tu=$(now)
taskset -c 0 "$P" tcp server "$T/port.p" "$N" >>"$T/out" 2>&1 &
i=0
while [ ! -s "$T/port.p" ] && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done
t1=$(now)
taskset -c 0 "$P" tcp client "$T/port.p" "$N" >>"$T/out" 2>&1
wait
t2=$(now)
pingpong io_tcp_pingpong 4 "tcp ok $N" "TCP ping-pong" "$t0" "$tu" "$t1" "$t2"

t0=$(now)
"$B/bin/ulpexec" -w 1 "$P" pipethreads "$N" >"$T/out" 2>&1
t1=$(now)
taskset -c 0 "$P" pipethreads "$N" >>"$T/out" 2>&1
t2=$(now)
pingpong io_pipe_threads 4 "pipethreads ok $N" "pipe ping-pong of two threads" "$t0" "$t1" "$t1" "$t2"

u=$("$B/bin/ulpexec" -w 1 "$P" reads 200000 | sed -n 's/^reads \([0-9.]*\) us.*/\1/p')
p=$("$P" reads 200000 | sed -n 's/^reads \([0-9.]*\) us.*/\1/p')
[ -n "$u" ] && [ -n "$p" ] && echo "BENCH io_trap_read ulp_us=$u proc_us=$p" \
	"trap_us=$(echo "$u $p" | awk '{printf "%.2f", $1 - $2}')"

head -c $((MB * 1048576)) /dev/urandom >"$T/big"
want=$(sha256sum <"$T/big" | cut -c1-64)
best_u=999999 best_p=999999
for r in 1 2 3; do
	t0=$(now)
	got=$("$B/bin/ulpexec" -w 1 /usr/bin/sha256sum "$T/big" | cut -c1-64)
	t1=$(now)
	sha256sum "$T/big" >/dev/null
	t2=$(now)
	if [ "$got" != "$want" ]; then
		echo "bench/io: sha256sum as a ULP gave a wrong sum" >&2
		best_u=
		break
	fi
	best_u=$(echo "$best_u $(span "$t0" "$t1" 1)" | awk '{print ($2 < $1) ? $2 : $1}')
	best_p=$(echo "$best_p $(span "$t1" "$t2" 1)" | awk '{print ($2 < $1) ? $2 : $1}')
done
[ -n "$best_u" ] && echo "BENCH io_sha256 mb=$MB ulp_s=$best_u proc_s=$best_p" \
	"ratio=$(echo "$best_u $best_p" | awk '{printf "%.3f", $1 / $2}') target_max=1.05"

# mpi_like_prog's summary line ends with its time inside the program: ", X s"
prog_s() { sed -n 's/^mpi_like_prog:.*, \([0-9.]*\) s$/\1/p' "$T/out"; }
if [ -x "$ML" ] && [ -x "$B/bin/ulpspawn" ]; then
	args="20 20000 1"
	# shellcheck disable=SC2086 # args are words
	"$B/bin/ulpspawn" -t 1 -w 2 -n 63 "$ML" $args >"$T/out" 2>&1
	alone=$(prog_s)
	# shellcheck disable=SC2086
	ML_SIZE=63 "$B/bin/ulpspawn" -t 1 -w 2 -n 63 "$ML" $args : -n 1 "$P" spin 1 >"$T/out" 2>&1
	beside=$(prog_s)
	if [ -n "$alone" ] && [ -n "$beside" ] && grep -q 'spin done' "$T/out"; then
		echo "BENCH io_spin_beside ranks=63 alone_s=$alone beside_spinner_s=$beside" \
			"ratio=$(echo "$beside $alone" | awk '{printf "%.2f", $1 / $2}')"
	else
		echo "bench/io: mpi_like_prog beside a spinner failed:" >&2
		tail -5 "$T/out" >&2
	fi
else
	echo "bench/io: $ML not built: no io_spin_beside line" >&2
fi
exit 0
