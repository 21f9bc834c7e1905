#!/bin/sh
# Signals are per ULP: handlers, ignore, masks, pending sets, sigaltstack, siglongjmp, alarm and
# timers, each ULP's to itself (tests/integ/progs/sigs.c checks itself and runs the same as a
# process); a default-fatal signal (SIGPIPE) ends only the ULP that caused it; signals from
# outside reach every ULP of the task, and ulpspawn forwards SIGUSR1, SIGTERM and SIGINT to every
# rank (a second SIGINT/SIGTERM ends the job). Also the fd
# and seccomp calls that would reach the other ULPs (close_range, seccomp).
# Usage: tests/integ/signals.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
P=$O/tests/integ
X=$O/bin/ulpexec
S=$O/bin/ulpspawn
export TEST_TIMEOUT=120

# The process is the reference: every check of the program passes there.
if expect "as a process" 0 $P/sigs all && [ "$(lines FAIL)" = 0 ]; then
	checks=$(lines ': ok$')
	ok "as a process: $checks signal checks pass"
else
	checks=0
	no "as a process: the signal checks pass"
fi

# per_ulp PROG ARG CHECKS WHAT HOW...: PROG ARG run by each launcher command line HOW passes, with
# CHECKS lines ending in ": ok" per ULP (what the same program printed as a process) and no FAIL
per_ulp() {
	pu_prog=$1 pu_arg=$2 pu_checks=$3 pu_what=$4
	shift 4
	for how in "$@"; do
		n=$(echo "$how" | sed 's/.*-n \([0-9]*\).*/\1/')
		# shellcheck disable=SC2086 # how is words
		if [ "$pu_checks" -gt 0 ] && expect "$pu_prog $how" 0 $how $P/$pu_prog $pu_arg &&
			[ "$(lines ': ok$')" = $((pu_checks * n)) ] && [ "$(lines FAIL)" = 0 ]; then
			ok "$pu_prog, $n ULPs ($how): $pu_what"
		else
			no "$pu_prog, $n ULPs ($how): $pu_what"
		fi
	done
}

for prog in sigs sigs_dyn; do
	per_ulp $prog all "$checks" "handler, ignore, block+unblock, SA_RESETHAND, sigqueue, sigaltstack, sigwait, SIGSEGV handler, alarm, EINTR, sigsuspend, the masks of pselect/ppoll/epoll_pwait, timer_create, siglongjmp out of SIGALRM" \
		"$X -n 2 -w 1" "$X -n 4 -w 2" "$S -n 4 -t 2 -w 1"
done

# signalfd reads the ULP's own signals (script(1) waits for SIGCHLD and SIGTERM on one: as a ULP
# it waited for ever before 27 Nov), and a SIGCHLD reaches each ULP whose child ended, also when
# children of several ULPs of one task end at once (the kernel keeps one pending for the task:
# 1 to 3 of 8 ULPs lost theirs before).
if expect "sigfd as a process" 0 $P/sigfd sigfd && [ "$(lines FAIL)" = 0 ]; then
	sfd_checks=$(lines ': ok$')
else
	sfd_checks=0
	no "signalfd as a process"
fi
for prog in sigfd sigfd_dyn; do
	per_ulp $prog sigfd "$sfd_checks" "signalfd reads, polls and epolls its ULP's signals and children's ends, as a process" \
		"$X -n 1" "$X -n 4 -w 1" "$X -n 4 -w 2" "$S -n 4 -t 2 -w 1"
done
for how in "$X -n 8 -w 1" "$X -n 8 -w 2" "$S -n 8 -t 2 -w 1"; do
	if expect "chld $how" 0 $how $P/sigfd chld 1 &&
		[ "$(lines ': ok$')" = 16 ] && [ "$(lines FAIL)" = 0 ]; then
		ok "8 ULPs' children end at once ($how): each ULP has its SIGCHLD"
	else
		no "8 ULPs' children end at once ($how): each ULP has its SIGCHLD"
	fi
done

# Two ranks' alarms and timers at once: each fires once, to its own handler (the timer's value
# names the rank).
if expect "alarm in two ranks" 0 $X -n 2 -w 1 $P/sigs only alarm timer sleep &&
	[ "$(lines 'alarm: own handler, once: ok')" = 2 ] &&
	[ "$(lines 'timer_create: own handler, own value: ok')" = 2 ] && [ "$(lines FAIL)" = 0 ]; then
	ok "alarm, setitimer and timer_create in two ranks on one worker: each to its own handler"
else no "alarm, setitimer and timer_create in two ranks on one worker: each to its own handler"; fi

# SIGPIPE ends the writer only; the others finish; the status is the process's (141).
expect "sigpipe process" 141 $P/sigs pipe 0
pstatus=$?
if [ "$pstatus" = 0 ] && expect "sigpipe" 141 $X -n 3 -w 1 $P/sigs pipe 1 &&
	[ "$(lines 'finished$')" = 2 ] && [ "$(lines survived)" = 0 ] &&
	grep -q 'rank 1 .*killed by SIGPIPE' "$T/out"; then
	ok "SIGPIPE in one of three ranks ends that rank alone (killed by SIGPIPE, status 141 as a process)"
else no "SIGPIPE in one of three ranks ends that rank alone (killed by SIGPIPE, status 141 as a process)"; fi

# A pipeline's reader that stops early (head -1): the writers die of SIGPIPE, the status is
# 141 as a shell's $? for a process, and stderr stays quiet, as a shell's does (it printed
# "killed by SIGPIPE" per rank). A rank's own broken pipe (above) is still reported.
{
	timeout 60 $X -n 2 -w 1 seq 1000000 2>"$T/err"
	echo $? >"$T/st"
} | head -n 1 >"$T/h"
if [ "$(cat "$T/st")" = 141 ] && [ "$(cat "$T/h")" = 1 ] && [ ! -s "$T/err" ]; then
	ok "ulpexec -n 2 seq | head -1: status 141, nothing on stderr (as a shell's pipeline)"
else
	no "ulpexec -n 2 seq | head -1: status 141, nothing on stderr (as a shell's pipeline)"
	sed 's/^/#   /' "$T/err"
	echo "#   status $(cat "$T/st")"
fi

# Wait until $T/out has $1 lines "waiting" (the ranks are in pause()).
# The jobs below start in the background with their output in $T/out, which the shell truncates
# only once the job's process runs: each is started after `: >"$T/out"`, or wait_waiting may count
# the previous job's "waiting" lines and signal a launcher that does not exist yet (pgrep found
# none, and the job ran to its timeout: seen once in CI).
wait_waiting() {
	i=0
	while [ "$(lines waiting)" != "$1" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# kill -TERM at the task: each ULP takes its default action, reported per rank.
: >"$T/out"
timeout 60 $X -n 3 -w 1 $P/sigs term >"$T/out" 2>&1 &
tp=$!
wait_waiting 3
task=$(pgrep -P "$(pgrep -P $tp)")
kill -TERM $task
wait $tp
st=$?
if [ "$st" = 143 ] && [ "$(lines 'killed by SIGTERM')" = 3 ]; then
	ok "SIGTERM sent to a task from outside ends each of its ULPs (killed by SIGTERM)"
else
	echo "# status $st" >>"$T/out"
	no "SIGTERM sent to a task from outside ends each of its ULPs (killed by SIGTERM)"
fi

# ulpspawn forwards SIGUSR1 to every rank; each runs its own handler and exits 0.
: >"$T/out"
timeout 60 $S -n 4 -t 2 $P/sigs usr1 >"$T/out" 2>&1 &
tp=$!
wait_waiting 4
kill -USR1 "$(pgrep -P $tp)"
wait $tp
st=$?
if [ "$st" = 0 ] && [ "$(lines 'got SIGUSR1$')" = 4 ]; then
	ok "ulpspawn forwards SIGUSR1 to every rank of every task; each runs its own handler"
else
	echo "# status $st" >>"$T/out"
	no "ulpspawn forwards SIGUSR1 to every rank of every task; each runs its own handler"
fi

# ulpspawn forwards SIGTERM and SIGINT to every rank too, as mpiexec does (once every rank runs).
# sig_job NAME SIG LAUNCHER... : start the job on `sigs`, send SIG once every rank waits (the
# count of "waiting" lines is the last word before the mode), leave the status in $st.
sig_job() {
	sj_sig=$1 sj_n=$2
	shift 2
	: >"$T/out"
	timeout -k 30 120 "$@" >"$T/out" 2>&1 &
	tp=$!
	wait_waiting "$sj_n"
	kill -"$sj_sig" "$(pgrep -P $tp)"
	wait $tp
	st=$?
}
MPIEXEC=$(command -v mpiexec.mpich)
signum() { case $1 in INT) echo 2 ;; TERM) echo 15 ;; esac; }
for sig in TERM INT; do
	# every rank has a handler: it runs once in each, its output is kept, the job ends with
	# the ranks' status (3), as under mpiexec
	sig_job $sig 4 $S -n 4 -t 2 -w 1 $P/sigs onterm 3
	ulp_st=$st
	grep "handler ran" "$T/out" | sort >"$T/ran"
	want=$(for r in 0 1 2 3; do echo "rank $r: handler ran for SIG$sig, 1 time(s)"; done)
	if [ $ulp_st = 3 ] && [ "$(cat "$T/ran")" = "$want" ] && [ "$(lines 'killed by')" = 0 ]; then
		ok "SIG$sig to ulpspawn: each of 4 ranks (2 tasks) runs its handler once, output kept, status 3"
	else
		echo "# status $ulp_st" >>"$T/out"
		no "SIG$sig to ulpspawn: each of 4 ranks (2 tasks) runs its handler once, output kept, status 3"
	fi
	if [ -n "$MPIEXEC" ]; then
		sig_job $sig 4 "$MPIEXEC" -n 4 $P/sigs onterm 3
		if [ $st = $ulp_st ] && [ "$(grep "handler ran" "$T/out" | sort)" = "$want" ]; then
			ok "SIG$sig with handlers: mpiexec.mpich's 4 processes print and exit as ulpspawn's ranks"
		else
			echo "# mpiexec status $st, ulpspawn's $ulp_st" >>"$T/out"
			no "SIG$sig with handlers: mpiexec.mpich's 4 processes print and exit as ulpspawn's ranks"
		fi
	fi
	# the default action ends each rank, reported per rank; status 128+signal (mpiexec.mpich
	# exits with the bare signal number)
	n=$(signum $sig)
	sig_job $sig 3 $S -n 3 -t 2 -w 1 $P/sigs term
	if [ $st = $((128 + n)) ] && [ "$(lines "^ulpspawn: rank [0-2] .*: killed by SIG$sig$")" = 3 ] &&
		[ "$(lines 'ending the job')" = 0 ]; then
		ok "SIG$sig to ulpspawn: 3 ranks with the default action are each reported killed by SIG$sig, status $st"
	else
		echo "# status $st" >>"$T/out"
		no "SIG$sig to ulpspawn: 3 ranks with the default action are each reported killed by SIG$sig, status 128+$n"
	fi
done

# A rank that dies of the forwarded signal does not end the others: they run their handlers.
# The status is the first non-zero one by rank (rank 0's 3).
sig_job TERM 3 $S -n 3 -t 1 -w 1 $P/sigs onterm 3 1
if [ $st = 3 ] && [ "$(lines 'handler ran for SIGTERM, 1 time')" = 2 ] &&
	grep -q '^ulpspawn: rank 1 .*: killed by SIGTERM$' "$T/out"; then
	ok "SIGTERM: rank 1 (default action) is killed, ranks 0 and 2 of its task run their handlers; status 3"
else
	echo "# status $st" >>"$T/out"
	no "SIGTERM: rank 1 (default action) is killed, ranks 0 and 2 of its task run their handlers; status 3"
fi

# The same SIGTERM from one sender twice at once is one request: `timeout` sends it to its child
# and then to its whole process group, the launcher again, which ended the job before (ranks
# with a handler killed). Under timeout, and by hand (two kills from one shell): each rank runs
# its handler, nothing "ends the job". timeout sends the SIGTERM it gets the same way as its own
# at the end of its time, and it is sent once both ranks wait: a `timeout 3` of its own came
# while a loaded machine was still starting the ranks (the job is ended then, as it should be).
: >"$T/out"
timeout -k 30 -s TERM 120 $S -n 2 -t 1 -w 1 $P/sigs onterm 3 >"$T/out" 2>&1 &
tp=$!
wait_waiting 2
kill -TERM $tp
wait $tp
st=$?
if [ $st = 3 ] && [ "$(lines '^rank [01]: handler ran for SIGTERM')" = 2 ] &&
	[ "$(lines 'ending the job')" = 0 ] && [ "$(lines 'killed by')" = 0 ]; then
	ok "timeout's SIGTERM (to ulpspawn and its group): each rank runs its handler, the job is not ended"
else
	echo "# status $st (wanted the job's, 3)" >>"$T/out"
	no "timeout's SIGTERM (to ulpspawn and its group): each rank runs its handler, the job is not ended"
fi
: >"$T/out"
timeout -k 30 120 $S -n 2 -t 1 -w 1 $P/sigs onterm 3 >"$T/out" 2>&1 &
tp=$!
wait_waiting 2
sp=$(pgrep -P $tp)
# The second once the launcher has taken the first (at once they merge in the pending set, as
# they did in most runs under timeout), and soon after it: one perl sends both, polling the
# launcher's line every 2 ms (60 s at most). Two kills from this shell around a `sleep 0.02` can
# be over the launcher's 100 ms apart on a loaded machine (a fork and exec of sleep between
# them), and the second is then a second request that ends the job.
perl -e 'my ($sp, $f) = @ARGV; kill TERM => $sp; for (1 .. 30000) {
	open(my $o, "<", $f) or last; last if grep { /SIGTERM sent on/ } <$o>;
	select(undef, undef, undef, 0.002) } kill TERM => $sp' "$sp" "$T/out"
wait $tp
st=$?
if [ $st = 3 ] && [ "$(lines '^rank [01]: handler ran for SIGTERM')" = 2 ] &&
	[ "$(lines 'ending the job')" = 0 ]; then
	ok "SIGTERM twice from one sender, the second just after the launcher took the first: one request, handlers run, status 3"
else
	echo "# status $st" >>"$T/out"
	no "SIGTERM twice from one sender, the second just after the launcher took the first: one request, handlers run, status 3"
fi

# Ranks that ignore it: the job goes on; a second SIGINT or SIGTERM ends it (status 128+the
# second signal) and leaves no task behind.
for second in INT TERM; do
	: >"$T/out"
	timeout -k 30 120 $S -n 3 -t 2 -w 1 $P/sigs ignore >"$T/out" 2>&1 &
	tp=$!
	wait_waiting 3
	sp=$(pgrep -P $tp)
	i=0 tasks=
	while [ "$(echo "$tasks" | wc -w)" != 2 ] && [ $i -lt 50 ]; do
		tasks=$(pgrep -P "$sp" | tr '\n' ' ')
		i=$((i + 1))
		[ "$(echo "$tasks" | wc -w)" = 2 ] || sleep 0.1
	done
	kill -INT "$sp"
	sleep 1
	alive=0
	kill -0 "$sp" 2>/dev/null && alive=1
	kill -$second "$sp"
	wait $tp
	st=$?
	left=
	[ "$(still_running $tasks)" = 0 ] || for p in $tasks; do
		[ -d /proc/$p ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] && left="$left $p"
	done
	if [ $alive = 1 ] && [ $st = $((128 + $(signum $second))) ] && [ "$(echo "$tasks" | wc -w)" = 2 ] && [ -z "$left" ] &&
		grep -q "SIG$second again: ending the job" "$T/out"; then
		ok "ranks ignore SIGINT: the job goes on; a second signal (SIG$second) ends it, no task left (status $st)"
	else
		echo "# alive after the first: $alive; status $st; tasks '$tasks' left '$left'" >>"$T/out"
		no "ranks ignore SIGINT: the job goes on; a second signal (SIG$second) ends it, no task left"
	fi
done

# close_range in one ULP (closefrom) closes its own 0-2 for it alone; the others' stdout works.
mkdir -p "$T/cr" "$T/crp"
if expect "closerange process" 0 $P/fds closerange "$T/crp" &&
	[ "$(cat "$T/crp/r0")" = "closed for rank 0" ] &&
	expect "closerange" 0 $X -n 3 -w 1 $P/fds closerange "$T/cr" &&
	[ "$(cat "$T/cr/r0")" = "closed for rank 0" ] && [ "$(lines 'stdout works$')" = 2 ]; then
	ok "close_range in one ULP closes 0-2 for it alone (EBADF as a process); the others' stdout works"
else no "close_range in one ULP closes 0-2 for it alone (EBADF as a process); the others' stdout works"; fi

# dash redirects a builtin with close(1); dup2(2, 1): fd 1 is open again for that ULP.
if expect "dash redirect" 0 $X -n 2 /usr/bin/sh -c 'echo out; echo err >&2; echo back' &&
	[ "$(lines '^out$')" = 2 ] && [ "$(lines '^err$')" = 2 ] && [ "$(lines '^back$')" = 2 ]; then
	ok "close(1) then dup2(2, 1) in a ULP (dash's redirection of a builtin) writes as in a process"
else no "close(1) then dup2(2, 1) in a ULP (dash's redirection of a builtin) writes as in a process"; fi

# seccomp is refused (EINVAL, as a kernel without it): no filter outlives its ULP on the worker.
if expect "seccomp" 0 $X -n 2 -w 1 $P/fds seccomp && [ "$(lines 'seccomp: refused$')" = 2 ]; then
	ok "seccomp(SET_MODE_FILTER) and prctl(PR_SET_SECCOMP) refused with EINVAL; the next ULP on the worker runs"
else no "seccomp(SET_MODE_FILTER) and prctl(PR_SET_SECCOMP) refused with EINVAL; the next ULP on the worker runs"; fi

# getrusage/times per ULP: a ULP that waits (parked in a FIFO open) beside one that computes
# reports about no CPU time; the computing one reports its own.
mkfifo "$T/fifo"
cat "$T/fifo" >/dev/null &
catpid=$!
if expect "cpu process" 0 $P/fds cpu "$T/fifo" && [ "$(lines 'busy: ok')" = 1 ]; then
	for w in 1 2; do
		if expect "cpu -w $w" 0 $X -n 3 -w $w $P/fds cpu "$T/fifo" &&
			[ "$(lines 'busy: ok')" = 1 ] && [ "$(lines 'idle: ok')" = 2 ]; then
			ok "getrusage, times, clock() and CLOCK_PROCESS_CPUTIME_ID per ULP on $w worker(s): a waiting ULP beside a computing one reports ~0 CPU"
		else no "getrusage, times, clock() and CLOCK_PROCESS_CPUTIME_ID per ULP on $w worker(s): a waiting ULP beside a computing one reports ~0 CPU"; fi
	done
else no "getrusage and times as a process"; fi
kill $catpid 2>/dev/null

# /proc/self/exe names the ULP's program, as for a process (it named the launcher).
want=$(/usr/bin/readlink /proc/self/exe)
if expect "readlink exe" 0 $X -n 2 /usr/bin/readlink /proc/self/exe &&
	[ "$(lines "^$want\$")" = 2 ]; then
	ok "readlink /proc/self/exe in a ULP names its program, as in a process"
else no "readlink /proc/self/exe in a ULP names its program, as in a process"; fi

# A child of a ULP signals its parent by $PPID (the kernel's parent of the child: the task). As
# processes only that parent gets it; until 27 Nov every ULP of the task did, and the other rank,
# with bash's default action for SIGUSR1, ended too.
cat >"$T/ppid.sh" <<'EOF'
if [ "$ULP_RANK" = 0 ]; then /usr/bin/sh -c 'kill -USR1 $PPID'; sleep 0.5; echo "rank 0 after"
else sleep 1; echo "rank 1 alive"; fi
EOF
(ULP_RANK=0 /bin/bash "$T/ppid.sh" & ULP_RANK=1 /bin/bash "$T/ppid.sh" & wait) >"$T/ref" 2>&1
for w in 1 2; do
	if expect "kill \$PPID" 138 $X -n 2 -w $w /bin/bash "$T/ppid.sh" &&
		[ "$(lines 'rank 1 alive')" = 1 ] && [ "$(lines 'rank 0 after')" = 0 ] &&
		grep -q 'rank 0 .*killed by SIGUSR1' "$T/out" &&
		[ "$(grep -c 'rank 1 alive' "$T/ref")" = 1 ] && [ "$(grep -c 'rank 0 after' "$T/ref")" = 0 ]; then
		ok "kill -USR1 \$PPID in a ULP's child reaches that ULP only, as a process's parent (-w $w)"
	else no "kill -USR1 \$PPID in a ULP's child reaches that ULP only, as a process's parent (-w $w)"; fi
done

# A timer's signal interrupts a ULP busy in its own code at once, as the kernel interrupts a
# process, also with no preemption tick (--quantum 0), and on a worker of its own with two
# workers: before 28 Nov it waited for the next tick, or with --quantum 0 for the ULP's next
# system call (a perl loop without one never saw its alarm and ran into its 20 s bound).
busy='$SIG{ALRM} = sub { print "alarm\n"; exit 0 }; alarm 1; my ($t, $x) = (time, 0);
while (time - $t < 20) { $x++ for 1..20000 } print "no alarm\n"; exit 1'
good=0
for how in "-w 1 --quantum 0" "-w 2 --quantum 0" "-w 1"; do
	# shellcheck disable=SC2086 # $how: options
	expect "busy alarm $how" 0 $X $how -n 1 /usr/bin/perl -e "$busy" &&
		[ "$(lines '^alarm$')" = 1 ] && good=$((good + 1))
done
if [ $good = 3 ]; then
	ok "SIGALRM interrupts a ULP's busy loop, with and without the preemption tick"
else no "SIGALRM interrupts a ULP's busy loop, with and without the preemption tick ($good of 3)"; fi

finish signals
