#!/bin/sh
# Blocking calls of ULPs park the ULP, not the worker; ULPs that never yield are preempted.
# Usage: tests/integ/io.sh BUILD_DIR [RUNS]. No test asserts a time: each compares the order in
# which ULPs finish, or that a job ends at all (every run is bounded by `timeout`).
B=${1:-build}
RUNS=${2:-20}
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
P="$B/tests/integ/iotest"
. "$(dirname "$0")/lib.sh"
# A hung case ends at this bound; it is not a timing check (256 ULPs under load took ~60 s once)
TEST_TIMEOUT=180

mkfifo "$T/a" "$T/b"
# TCP pairs: the server listens on a port the kernel picks and writes it into a file of its own
# for the client (a fixed port was now and then another connection's local port: EADDRINUSE)
port=0

# launcher configurations: one process with 1 or 2 workers; 1 or 2 PVAS tasks
run_pair() { # CONFIG PROG1-ARGS -- PROG2-ARGS (as one string each)
	case $1 in
	w1) expect pair 0 "$X" -w 1 $P $2 : $P $3 ;;
	w2) expect pair 0 "$X" -w 2 $P $2 : $P $3 ;;
	t1) expect pair 0 "$S" -t 1 -w 1 -n 1 $P $2 : -n 1 $P $3 ;;
	t2) expect pair 0 "$S" -t 2 -w 1 -n 1 $P $2 : -n 1 $P $3 ;;
	esac
}

for cfg in w1 w2 t1 t2; do
	good=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		run_pair $cfg "fifo ping $T/a $T/b 200" "fifo pong $T/a $T/b 200" &&
			[ "$(lines 'fifo ok 200')" = 2 ] && good=$((good + 1))
		i=$((i + 1))
	done
	if [ $good = "$RUNS" ]; then ok "FIFO pair ($cfg): $RUNS runs, none hung"
	else no "FIFO pair ($cfg): $good of $RUNS runs finished"; fi
	good=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		port=$((port + 1))
		run_pair $cfg "tcp server $T/port.$port 200" "tcp client $T/port.$port 200" &&
			[ "$(lines 'tcp ok 200')" = 2 ] && good=$((good + 1))
		i=$((i + 1))
	done
	if [ $good = "$RUNS" ]; then ok "TCP server and client ($cfg): $RUNS runs, none hung"
	else no "TCP server and client ($cfg): $good of $RUNS runs finished"; fi
done

# Two ULPs of one worker in a FIFO or TCP ping-pong hand over without the ring: a read that
# finds nothing lets the ready partner run first and tries again (io_calls.c, yield_before_park),
# so the 2000 round trips arm (nearly) no poll; each did before (one io_uring_enter per read).
# And a read whose last one was answered so lets the partner run before it tries (turn_first):
# no look at O_NONBLOCK then, which is asked only of a read that finds nothing (one fcntl per
# read before, 4000). A FIFO's bytes go from the writer into the waiting reader's buffer with no
# write of its own (fifo_pass.c: one FIONREAD; 4000 writes before). strace counts the calls (a
# count, not a time).
if command -v strace >/dev/null && strace -f -qq -o /dev/null true 2>/dev/null; then
	for pair in fifo tcp; do
		port=$((port + 1))
		if [ $pair = fifo ]; then a1="fifo ping $T/a $T/b 2000" a2="fifo pong $T/a $T/b 2000"
		else a1="tcp server $T/port.$port 2000" a2="tcp client $T/port.$port 2000"; fi
		# shellcheck disable=SC2086 # the programs' arguments: words
		if expect "$pair ring" 0 strace -f -qq -c -e trace=io_uring_enter,fcntl,write -o "$T/st" \
			"$X" -w 1 $P $a1 : $P $a2 && [ "$(lines "$pair ok 2000")" = 2 ]; then
			n=$(awk '$NF == "io_uring_enter" { print $4 }' "$T/st")
			f=$(awk '$NF == "fcntl" { print $4 }' "$T/st")
			w=$(awk '$NF == "write" { print $4 }' "$T/st")
			[ $pair = tcp ] && w=0 # TCP's go through the kernel (pwritev2)
			c="${n:-0} ring entries, ${f:-0} fcntl, ${w:-0} write in 2000 round trips"
			if [ "${n:-0}" -lt 200 ] && [ "${f:-0}" -lt 200 ] && [ "${w:-0}" -lt 200 ]; then
				ok "a $pair ping-pong of two ULPs on one worker: $c"
			else no "a $pair ping-pong of two ULPs on one worker: $c"; fi
		else no "a $pair ping-pong of two ULPs on one worker under strace"; fi
	done
	# The same between two threads of a ULP over two pipes (which take RWF_NOWAIT: their reads
	# make the same offer in their turn, and a write looks for one first)
	if expect "pipe ring" 0 strace -f -qq -c -e trace=io_uring_enter,fcntl,write,pwritev2 \
		-o "$T/st" "$X" -w 1 $P pipethreads 2000 && [ "$(lines "pipethreads ok 2000")" = 2 ]; then
		n=$(awk '$NF == "io_uring_enter" { print $4 }' "$T/st")
		f=$(awk '$NF == "fcntl" { print $4 }' "$T/st")
		w=$(awk '$NF == "write" || $NF == "pwritev2" { w += $4 } END { print w + 0 }' "$T/st")
		c="${n:-0} ring entries, ${f:-0} fcntl, ${w:-0} write or pwritev2 in 2000 round trips"
		if [ "${n:-0}" -lt 200 ] && [ "${f:-0}" -lt 200 ] && [ "${w:-0}" -lt 200 ]; then
			ok "a pipe ping-pong of two threads of a ULP: $c"
		else no "a pipe ping-pong of two threads of a ULP: $c"; fi
	else no "a pipe ping-pong of two threads of a ULP under strace"; fi
else skip "ring entries of a ping-pong: no working strace"; fi

# A FIFO's bytes passed between ULPs (fifo_pass.c) are what the kernel would give: a read into a
# PROT_NONE page says EFAULT and loses nothing, a write from one says EFAULT and writes nothing
# (the pass's copy faults: the fault handler ends the copy, not the ULP); and with writers of
# one FIFO among ULPs and a process, or of one pipe among threads of a ULP and its fork child,
# each writer's records arrive whole and in order.
for wk in 1 2; do
	if expect fifofault 0 "$X" -w $wk $P fifofault r "$T/a" "$T/b" : $P fifofault w "$T/a" "$T/b" &&
		[ "$(lines '^fifofault ok')" = 2 ]; then
		ok "FIFO bytes between ULPs: EFAULT of a bad buffer on either side, nothing lost (-w $wk)"
	else no "FIFO bytes between ULPs: EFAULT of a bad buffer on either side, nothing lost (-w $wk)"; fi
	$P fifomix w "$T/a" 3 20000 >"$T/mixw" 2>&1 &
	mixw=$!
	if expect fifomix 0 "$X" -w $wk $P fifomix r "$T/a" 20000 3 : $P fifomix w "$T/a" 1 20000 : \
		$P fifomix w "$T/a" 2 20000 && [ "$(lines '^fifomix read 60000$')" = 1 ] &&
		wait $mixw && grep -q '^fifomix wrote 20000$' "$T/mixw"; then
		ok "one FIFO, two ULP writers and a process, one ULP reader: records whole, in order (-w $wk)"
	else
		cat "$T/mixw" >>"$T/out"
		no "one FIFO, two ULP writers and a process, one ULP reader: records whole, in order (-w $wk)"
	fi
	kill $mixw 2>/dev/null
	wait $mixw 2>/dev/null
	if expect pipemix 0 "$X" -w $wk $P pipemix 20000 && [ "$(lines '^pipemix read 60000$')" = 1 ]; then
		ok "one pipe, two threads of a ULP and its fork child writing, its main thread reading: records whole, in order (-w $wk)"
	else no "one pipe, two threads of a ULP and its fork child writing, its main thread reading: records whole, in order (-w $wk)"; fi
done

# What a pass learnt of a descriptor (its FIFO) goes when the number's record changes: after 128
# changes, whose 7-bit generation comes back to the same word, the FIFO now at that number is
# learnt anew (a write of B reached A's reader, "aaaab", when it was kept).
if expect fifowrap 0 "$X" -w 1 $P fifowrap ra "$T/a" : $P fifowrap rb "$T/b" : \
	$P fifowrap w "$T/a" "$T/b" && [ "$(lines '^fifowrap ok')" = 3 ]; then
	ok "a FIFO pass after the writer's descriptor number came back to the same record word"
else no "a FIFO pass after the writer's descriptor number came back to the same record word"; fi

# A blocking write of more than a FIFO holds returns only once all is written, as a process's
# does (it returned 65536 of 1,000,000 before), and does not block the worker that also runs the
# reader: also with no preemption tick (ULP_QUANTUM_US=0), and with read and write on the path
# of drivers without RWF_NOWAIT, which pipes and sockets are on Linux 6.1 (ULP_IO_RWF_NOWAIT=0).
bulk_pair() { # NAME ENV... : each pair once, both ends ULPs of one worker
	b_name=$1
	shift
	port=$((port + 1))
	if expect "$b_name" 0 env "$@" "$X" -w 1 $P bulk w "$T/a" 1000000 : $P bulk r "$T/a" 1000000 &&
		[ "$(lines '^bulk ok')" = 2 ] &&
		expect "$b_name" 0 env "$@" "$X" -w 1 $P tcpbulk server "$T/port.$port" 16000000 : \
			$P tcpbulk client "$T/port.$port" 16000000 && [ "$(lines '^tcpbulk ok')" = 2 ]; then
		ok "one write() of 1 MB to a FIFO, 16 MB to TCP, whole; reader on the same worker ($b_name)"
	else no "one write() of 1 MB to a FIFO, 16 MB to TCP, whole; reader on the same worker ($b_name)"; fi
}
if { $P bulk r "$T/a" 1000000 & $P bulk w "$T/a" 1000000; wait; } >"$T/out" 2>&1 &&
	[ "$(lines '^bulk ok')" = 2 ]; then
	ok "the bulk FIFO writer and reader pass as processes"
else no "the bulk FIFO writer and reader pass as processes"; fi
bulk_pair default ULP_QUANTUM_US=1000
bulk_pair "no preemption" ULP_QUANTUM_US=0
bulk_pair "no RWF_NOWAIT" ULP_IO_RWF_NOWAIT=0
bulk_pair "no RWF_NOWAIT, no preemption" ULP_IO_RWF_NOWAIT=0 ULP_QUANTUM_US=0
# Reads the ring does (ULP_IO_RING_RW=2, the default from Linux 6.6), or polls and the call made
# natively once ready (0), or the ring only for files that take RWF_NOWAIT (1: older kernels,
# where pipes and sockets refuse it, ULP_IO_RWF_NOWAIT=0 standing in for that)
bulk_pair "reads by polls" ULP_IO_RING_RW=0
bulk_pair "6.1's path" ULP_IO_RING_RW=1 ULP_IO_RWF_NOWAIT=0
for e in ULP_IO_RWF_NOWAIT=1 ULP_IO_RWF_NOWAIT=0 ULP_IO_RING_RW=0 "ULP_IO_RING_RW=1 ULP_IO_RWF_NOWAIT=0"; do
	if expect fifo 0 env $e "$X" -w 1 $P fifo ping "$T/a" "$T/b" 200 : $P fifo pong "$T/a" "$T/b" 200 &&
		[ "$(lines 'fifo ok 200')" = 2 ] && port=$((port + 1)) &&
		expect tcp 0 env $e "$X" -w 1 $P tcp server "$T/port.$port" 200 : \
			$P tcp client "$T/port.$port" 200 &&
		[ "$(lines 'tcp ok 200')" = 2 ] && expect timeouts 0 env $e "$X" -w 1 $P timeouts &&
		[ "$(lines '^timeouts ok')" = 1 ]; then
		ok "FIFO and TCP pairs, timeouts and O_NONBLOCK ($e, -w 1)"
	else no "FIFO and TCP pairs, timeouts and O_NONBLOCK ($e, -w 1)"; fi
done

# Three readers of one FIFO, ULPs of one worker (or two), and a writer of 20000 records: each
# record reaches exactly one reader, none is lost or read twice (the ring does each read whole,
# ULP_IO_RING_RW=2; the poll path reads again after the wake-up, 0). The writer writes once the
# three have opened: a reader whose open came after the writer's close waited for ever (CI, 27
# Nov, 1 run: its open, queued to io-wq, ran only then; docs/syscalls.md, "Calls that park").
for e in "ULP_IO_RING_RW=2 -w 1" "ULP_IO_RING_RW=2 -w 2" "ULP_IO_RING_RW=0 -w 1"; do
	ev=${e%% *} wk=${e#* }
	rm -f "$T"/a.r*
	# shellcheck disable=SC2086 # -w N: words
	if expect fifomany 0 env $ev "$X" $wk $P fifomany r "$T/a" : $P fifomany r "$T/a" : \
		$P fifomany r "$T/a" : $P fifomany w "$T/a" 20000 3 &&
		[ "$(lines '^fifomany wrote 20000$')" = 1 ] && [ "$(lines '^fifomany read ')" = 3 ] &&
		[ "$(awk '/^fifomany read/ { n += $3; s += $4 } END { print n, s }' "$T/out")" = \
			"20000 200010000" ]; then
		ok "three readers of one FIFO share 20000 records, none lost or read twice ($e)"
	else no "three readers of one FIFO share 20000 records, none lost or read twice ($e)"; fi
done

# A regular file read out of the page cache, through an O_NONBLOCK descriptor (RWF_NOWAIT's
# EAGAIN for a page on disk reached the ULP before), blocking and by pread (the ring reads it
# while the ULP is parked, ULP_IO_RING_RW=2; natively with 0): the bytes a process reads.
head -c 16000000 /dev/urandom >"$T/cold"
$P coldread "$T/cold" >"$T/cold.want" 2>&1
if [ "$(grep -c '^coldread ok 16000000 bytes' "$T/cold.want")" = 3 ]; then
	ok "the cold-file reader passes as a process"
else no "the cold-file reader passes as a process"; fi
for e in ULP_IO_RING_RW=2 ULP_IO_RING_RW=0; do
	if expect coldread 0 env $e "$X" -w 1 $P coldread "$T/cold" && cmp -s "$T/out" "$T/cold.want"; then
		ok "reads of a regular file out of the page cache give a process's bytes ($e)"
	else no "reads of a regular file out of the page cache give a process's bytes ($e)"; fi
done
rm -f "$T/cold" "$T/cold.want"

# hs: an empty folder $T/hs for the handshake files of a computation and its neighbour (iotest)
hs() { rm -rf "$T/hs" && mkdir "$T/hs"; }
# A ULP blocked in a sleep does not hold up another one's computation on the same worker: without
# preemption, the computation (started once the sleeper is about to block) can only run while the
# sleeper is parked, and the sleeper sleeps again until it is done. No timing: the computation
# may take longer than one sleep on a loaded machine (it took over 3 s at load 12; the test
# wanted it done within the first sleep then).
for how in sleep nanosleep select poll epoll epoll2; do
	hs
	if expect "$how" 0 env ULP_QUANTUM_US=0 "$X" -w 1 $P $how 500 "$T/hs" : $P compute 20 "$T/hs" &&
		[ "$(sed -n 1p "$T/out")" = "compute done" ] && [ "$(sed -n 2p "$T/out")" = "$how done" ]; then
		ok "$how of one ULP does not delay another's computation (-w 1)"
	else no "$how of one ULP does not delay another's computation (-w 1)"; fi
done

# cat reads a slow producer through a pipe while another ULP computes, without preemption: the
# computation starts once cat has written line1 (so cat waits in read for line2), and the
# producer sends its last line only once the computation is done (60 s at most). "compute done"
# comes before line6 only if cat's wait left the worker to the computation; cat's output is
# whole and in order.
hs
if expect cat 0 env ULP_QUANTUM_US=0 sh -c "{ echo line1; i=0
	while ! grep -q line1 \"$T/out\" && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
	touch \"$T/hs/spinning\"; for i in 2 3 4 5; do sleep 0.5; echo line\$i; done; i=0
	while [ ! -e \"$T/hs/computed\" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
	echo line6; } | \"$X\" -w 1 /bin/cat : $P compute 10 \"$T/hs\"" &&
	[ "$(sed -n 7p "$T/out")" = line6 ] &&
	[ "$(grep -v 'compute done' "$T/out" | tr '\n' ' ')" = "line1 line2 line3 line4 line5 line6 " ]; then
	ok "cat reading a slow producer; a computing ULP beside it finishes before the producer"
else no "cat reading a slow producer; a computing ULP beside it finishes before the producer"; fi

# Preemption: a ULP spinning without a system call beside a short computation on one worker. The
# computation first sleeps until the spinner has started (a file handshake, so the order does not
# depend on which ULP the launcher loads or starts first); only preemption can then let it run
# before the spin ends, and once it is done the spinner stops early. With ULP_QUANTUM_US=0 the
# spinner keeps its worker for its whole time and ends first.
hs
if expect spin 0 "$X" -w 1 $P compute 5 "$T/hs" : $P spin 30 "$T/hs" &&
	[ "$(sed -n 1p "$T/out")" = "compute done" ] && [ "$(sed -n 2p "$T/out")" = "spin done" ]; then
	ok "a spinning ULP is preempted: the short one finishes first, the job ends (ulpexec -w 1)"
else no "a spinning ULP is preempted: the short one finishes first, the job ends (ulpexec -w 1)"; fi
hs
if expect spin 0 "$S" -t 1 -w 1 -n 1 $P spin 30 "$T/hs" : -n 1 $P compute 5 "$T/hs" &&
	[ "$(sed -n 1p "$T/out")" = "compute done" ] && [ "$(sed -n 2p "$T/out")" = "spin done" ]; then
	ok "a spinning ULP is preempted: the short one finishes first, the job ends (ulpspawn -t 1 -w 1)"
else no "a spinning ULP is preempted: the short one finishes first, the job ends (ulpspawn -t 1 -w 1)"; fi
hs
if expect spin 0 env ULP_QUANTUM_US=0 "$X" -w 1 $P compute 5 "$T/hs" : $P spin 2 "$T/hs" &&
	[ "$(sed -n 1p "$T/out")" = "spin done" ] && [ "$(sed -n 2p "$T/out")" = "compute done" ]; then
	ok "ULP_QUANTUM_US=0 turns preemption off (the spinner keeps its worker)"
else no "ULP_QUANTUM_US=0 turns preemption off (the spinner keeps its worker)"; fi
hs
if expect spin 0 "$S" --quantum 0 -t 1 -w 1 -n 1 $P spin 2 "$T/hs" : -n 1 $P compute 5 "$T/hs" &&
	[ "$(sed -n 1p "$T/out")" = "spin done" ] && [ "$(sed -n 2p "$T/out")" = "compute done" ]; then
	ok "ulpspawn --quantum 0 turns preemption off (the spinner keeps its worker)"
else no "ulpspawn --quantum 0 turns preemption off (the spinner keeps its worker)"; fi

if expect barrier 0 "$X" -w 1 -n 6 $P spinbarrier && [ "$(lines 'spinbarrier ok')" = 6 ] &&
	expect barrier 0 "$S" -t 1 -w 2 -n 8 $P spinbarrier && [ "$(lines 'spinbarrier ok')" = 8 ]; then
	ok "more ranks spinning at a barrier than workers finish (the TiNy Threads case)"
else no "more ranks spinning at a barrier than workers finish (the TiNy Threads case)"; fi

# Spinners (preempted twice in a row without a system call, as MPICH's waiting ranks) get a short
# turn (ULP_SPIN_QUANTUM_US, preempt.c): ranks spinning at a barrier still all get there, with the
# detection off and with its shortest turn (50 us); the preempted spinner still lets the
# short computation finish first.
if expect barrier 0 env ULP_SPIN_QUANTUM_US=0 "$X" -w 1 -n 6 $P spinbarrier &&
	[ "$(lines 'spinbarrier ok')" = 6 ] &&
	expect barrier 0 env ULP_SPIN_QUANTUM_US=50 "$S" -t 1 -w 2 -n 8 $P spinbarrier &&
	[ "$(lines 'spinbarrier ok')" = 8 ] && hs &&
	expect spin 0 env ULP_SPIN_QUANTUM_US=50 "$X" -w 1 $P compute 5 "$T/hs" : $P spin 30 "$T/hs" &&
	[ "$(sed -n 1p "$T/out")" = "compute done" ] && [ "$(sed -n 2p "$T/out")" = "spin done" ]; then
	ok "spinner detection: spinners at a barrier finish and a spinner still yields to a computation (ULP_SPIN_QUANTUM_US 0, 50)"
else no "spinner detection: spinners at a barrier finish and a spinner still yields to a computation (ULP_SPIN_QUANTUM_US 0, 50)"; fi
if expect badspin 1 env ULP_SPIN_QUANTUM_US=soon "$X" -n 1 /bin/true &&
	grep -q 'ULP_SPIN_QUANTUM_US=soon: not a number of microseconds' "$T/out" &&
	expect badspin 1 env ULP_SPIN_QUANTUM_US=20 "$X" -n 1 /bin/true &&
	grep -q 'ULP_SPIN_QUANTUM_US=20: below 50 microseconds' "$T/out"; then
	ok "ULP_SPIN_QUANTUM_US that is no number or below 50: a clear error, nothing runs"
else no "ULP_SPIN_QUANTUM_US that is no number or below 50: a clear error, nothing runs"; fi

# 256 ULPs pass a token around a ring of FIFOs, each blocking in open, read and write.
mkdir "$T/ring"
i=0
while [ $i -lt 256 ]; do mkfifo "$T/ring/$i"; i=$((i + 1)); done
if expect ring 0 "$X" -w 2 -n 256 $P ring "$T/ring" 256 10 && [ "$(lines 'ring ok 256')" = 1 ]; then
	ok "256 ULPs in a blocking FIFO ring on 2 workers"
else no "256 ULPs in a blocking FIFO ring on 2 workers"; fi
if expect ring 0 "$S" -t 2 -w 1 -n 256 $P ring "$T/ring" 256 10 && [ "$(lines 'ring ok 256')" = 1 ]; then
	ok "256 ULPs in a blocking FIFO ring over 2 PVAS tasks"
else no "256 ULPs in a blocking FIFO ring over 2 PVAS tasks"; fi

# EINTR and timeouts, the same as a process gets them.
for l in "$X -w 1" "$X -w 2" "$S -t 1 -w 2 -n 1"; do
	if expect eintr 0 $l $P eintr && [ "$(lines '^eintr ok')" = 10 ]; then
		ok "EINTR of read/pause/nanosleep/poll/select/wait4, SA_RESTART read and wait4 (${l%% *} ${l#* })"
	else no "EINTR of read/pause/nanosleep/poll/select/wait4, SA_RESTART read and wait4 (${l%% *} ${l#* })"; fi
	if expect timeouts 0 $l $P timeouts && [ "$(lines '^timeouts ok')" = 1 ]; then
		ok "poll/select/epoll_wait/epoll_pwait2/SO_RCVTIMEO/SO_SNDTIMEO time out; O_NONBLOCK gives EAGAIN (${l%% *})"
	else no "poll/select/epoll_wait/epoll_pwait2/SO_RCVTIMEO/SO_SNDTIMEO time out; O_NONBLOCK gives EAGAIN (${l%% *})"; fi
done
if $P eintr >"$T/out" 2>&1 && [ "$(lines '^eintr ok')" = 10 ]; then
	ok "the EINTR program passes as a process too"
else no "the EINTR program passes as a process too"; fi

# O_NONBLOCK of stdin and stdout (a pipe shared with other processes) never changes.
head -c 300000 /dev/urandom >"$T/data"
if expect nonblock 0 sh -c "cat \"$T/data\" | \"$X\" -w 1 $P nonblock | cat >\"$T/copy\"" &&
	grep -q 'nonblock ok' "$T/out" && cmp -s "$T/data" "$T/copy"; then
	ok "O_NONBLOCK of stdin/stdout pipes unchanged, data copied intact"
else no "O_NONBLOCK of stdin/stdout pipes unchanged, data copied intact"; fi

# SysV message queues and semaphores and POSIX message queues between 2 ULPs: their waits park
# (sys_ipc.c). Before 28 Nov each waited in the kernel and held the worker: on one worker the
# receiver's msgrcv waited until the preemption tick ended it with an EINTR that no process sees
# (the kernel never restarts msgrcv or semop). Each case as 2 processes and as 2 ULPs on 1 and 2
# workers and in 2 tasks: the same sorted lines, 2,000 round trips each way, no EINTR.
BA=$(cd "$B" && pwd)
IW="$BA/tests/integ/ipcwait"
ipcref() { # NAME ARGS...: the 2 ranks as processes in a fresh $T/ipc; sorted lines in $T/ipc.NAME
	n=$1
	shift
	rm -rf "$T/ipc" && mkdir "$T/ipc"
	(cd "$T/ipc" && { ULP_RANK=1 timeout 60 "$IW" "$@" >"$T/i1" 2>&1 &
		ULP_RANK=0 timeout 60 "$IW" "$@" >"$T/i0" 2>&1; wait; })
	sort "$T/i0" "$T/i1" >"$T/ipc.$n"
}
for c in "msg 2000" "sem 2000" "mq ulpiw$$ 2000" rmid "intr ulpiw$$"; do
	n=${c%% *}
	ipcref "$n" $c
	good=0
	for l in "$BA/bin/ulpexec -w 1 -n 2" "$BA/bin/ulpexec -w 2 -n 2" "$BA/bin/ulpspawn -t 2 -w 1 -n 2"; do
		rm -rf "$T/ipc" && mkdir "$T/ipc"
		(cd "$T/ipc" && timeout -k 10 120 $l "$IW" $c) >"$T/out" 2>&1
		sort "$T/out" | cmp -s - "$T/ipc.$n" && good=$((good + 1))
	done
	# the processes' lines are right: both ranks' round trips, or intr's 4 lines, none early
	if [ $n = intr ]; then
		refok=$([ "$(grep -c 'handler ran 1$' "$T/ipc.$n")" = 4 ] && echo 1)
	elif [ $n = rmid ]; then
		refok=$([ "$(grep -c 'removed: -1 Identifier removed$' "$T/ipc.$n")" = 2 ] && echo 1)
	else
		refok=$([ "$(grep -c '2000 round trips, 0 wrong' "$T/ipc.$n")" = 2 ] && echo 1)
	fi
	if [ $good = 3 ] && [ "$refok" = 1 ] && ! grep -q 'early\|got what' "$T/ipc.$n"; then
		ok "ipcwait $n: 2 ULPs (1 and 2 workers, 2 tasks) as 2 processes"
	else
		{ echo "# processes:"; cat "$T/ipc.$n"; } >>"$T/out"
		no "ipcwait $n: 2 ULPs (1 and 2 workers, 2 tasks) as 2 processes ($good of 3)"
	fi
done

finish io
