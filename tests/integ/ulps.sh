#!/bin/sh
# ulps lists running jobs and the state of each rank: a job with a sleeping, a spinning, an
# exited ULP and a process rank shows each in its state; -w refreshes; a job killed with SIGKILL
# is never shown (its stale name is removed). Usage: tests/integ/ulps.sh BUILD_DIR
B=${1:-build}
S="$B/bin/ulpspawn"
X="$B/bin/ulpexec"
U="$B/bin/ulps"
. "$(dirname "$0")/lib.sh"

# A folder of our own: jobs of other tests running beside this one stay out of the lists.
export ULP_JOBS_DIR="$T/jobs"

# wait_for PATTERN [ULPS ARGS]: run ulps until its output matches (generous bound: a loaded
# machine may take seconds to start the ranks); the last list stays in $T/ulps.
wait_for() {
	w_pat=$1
	shift
	i=0
	while [ $i -lt 600 ]; do
		"$U" "$@" >"$T/ulps" 2>&1
		grep -q -- "$w_pat" "$T/ulps" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
row() { grep -E "^ +$1 " "$T/ulps"; }

if expect empty 0 "$U" && grep -qx "no PVAS jobs running" "$T/out"; then
	ok "no job: ulps says so"
else no "no job: ulps says so"; fi

# Rank 0 sleeps, rank 1 spins without a system call, rank 2 exits 0 at once, rank 3 exits 3,
# rank 4 is a process (python3 is not PIE) that sleeps. One task per rank, one worker each.
"$S" --stats -t 5 -w 1 -n 1 /bin/sleep 300 : -n 1 /bin/sh -c 'while :; do :; done' : \
	-n 1 /bin/true : -n 1 /bin/sh -c 'exit 3' : \
	-n 1 /usr/bin/python3 -c 'import time; time.sleep(300)' >"$T/job.out" 2>&1 &
job=$!
if wait_for "exited (status=3)" && wait_for "python3" && wait_for "blocked (.*nanosleep).*python3" &&
	wait_for "blocked (.*nanosleep).*/bin/sleep" &&
	grep -q "^JOB $job  ulpspawn, user backend, 5 ranks in 5 tasks" "$T/ulps" &&
	row 0 | grep -q "^ *0 *[0-9]\+ *[0-9]\+  blocked (\(clock_\)\?nanosleep) .*/bin/sleep$" &&
	row 1 | grep -q "running .*/bin/sh$" &&
	row 2 | grep -q "exited (status=0) .*/bin/true$" &&
	row 3 | grep -q "exited (status=3) .*/bin/sh$" &&
	row 4 | grep -q "^ *4 *proc *[0-9]\+  blocked (\(clock_\)\?nanosleep) .*/usr/bin/python3$"; then
	ok "sleeping, spinning, exited ULPs and a process rank each shown in their state"
else
	no "sleeping, spinning, exited ULPs and a process rank each shown in their state"
	sed 's/^/#   /' "$T/ulps"
fi
# The spinner's CPU time grows (accounting on with --stats) while the sleeper's stays ~0.
cpu1=$(row 1 | awk '{print $(NF-2)}')
sleep 1
"$U" "$job" >"$T/ulps" 2>&1
cpu2=$(row 1 | awk '{print $(NF-2)}')
if awk -v a="$cpu1" -v b="$cpu2" 'BEGIN { exit !(b > a) }' &&
	[ "$(grep -c '^JOB' "$T/ulps")" = 1 ]; then
	ok "ulps PID: the spinning ULP's CPU time grows ($cpu1 s -> $cpu2 s)"
else
	no "ulps PID: the spinning ULP's CPU time grows ($cpu1 s -> $cpu2 s)"
	sed "s/^/#   /" "$T/ulps"
fi
if expect watch 0 "$U" -w -d 0.2 -c 3 && [ "$(grep -c "^JOB $job " "$T/out")" = 3 ]; then
	ok "ulps -w refreshes the list"
else no "ulps -w refreshes the list"; fi

# SIGKILL: the launcher cannot clean up; its tasks die with it, and ulps never shows the job.
kill -9 $job
wait $job 2>/dev/null
if expect after-kill 0 "$U" && grep -qx "no PVAS jobs running" "$T/out" &&
	! ls "$ULP_JOBS_DIR" | grep -q .; then
	ok "a job killed with SIGKILL is not shown, and its stale name is gone"
else no "a job killed with SIGKILL is not shown, and its stale name is gone"; fi

# A job that ends normally removes its name itself.
if expect ended 0 "$X" -n 2 /bin/true && ! ls "$ULP_JOBS_DIR" | grep -q .; then
	ok "a job that ends removes its name"
else no "a job that ends removes its name"; fi

# A name left by a launcher that died (its PID is gone) is removed by the next launcher.
: >"$ULP_JOBS_DIR/2147483000"
if expect sweep 0 "$X" -n 1 /bin/true && ! [ -e "$ULP_JOBS_DIR/2147483000" ]; then
	ok "a new job removes the names of dead launchers"
else no "a new job removes the names of dead launchers"; fi

if expect bad-pid 2 "$U" x1 && grep -q "'x1' is not a PID" "$T/out"; then
	ok "ulps: a bad PID argument is refused"
else no "ulps: a bad PID argument is refused"; fi
finish ulps
