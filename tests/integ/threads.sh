#!/bin/sh
# Threads inside ULPs, tested as a user would: threaded programs (our own, and Debian's xz, zstd,
# sort) run as ULPs and as processes must give the same results.
# Usage: tests/integ/threads.sh BUILD_DIR   (make check-integ gives it 900 s: ULP_TEST_TIMEOUT)
B=${1:-build}
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"

# same_as_process NAME ULPEXEC_ARGS -- PROG ARGS: the ok lines of each ULP equal the process's
# ok lines, and no FAIL anywhere.
oks() { grep '^ok ' | sort; }

# 1. pthreads (static-pie and dynamic PIE), on 1 and 2 workers, 4 ULPs at once
for g in threads threads_dyn; do
	"$P/$g" >"$T/proc" 2>&1
	want=$(oks <"$T/proc")
	n_ok=$(echo "$want" | grep -c .)
	for w in 1 2; do
		if [ "$n_ok" -ge 13 ] && ! grep -q FAIL "$T/proc" &&
			expect "$g" 0 "$X" -n 4 -w $w "$P/$g" && ! grep -q FAIL "$T/out" &&
			[ "$(lines '^all ok')" = 4 ] &&
			[ "$(oks <"$T/out" | uniq -c | awk '$1 != 4' | wc -l)" = 0 ] &&
			[ "$(oks <"$T/out" | uniq)" = "$want" ]; then
			ok "$g: pthreads in 4 ULPs on $w worker(s) pass the process's $n_ok checks"
		else no "$g: pthreads in 4 ULPs on $w worker(s) pass the process's $n_ok checks"; fi
	done
done

# pthread_cancel and pthread_kill run the program's (and glibc's) signal handlers, which are per
# ULP: one ULP per PVAS task, and three sharing one
for g in threads threads_dyn; do
	"$P/$g" signals >"$T/proc" 2>&1
	want=$(oks <"$T/proc")
	for t in 3 1; do
		if [ "$(echo "$want" | grep -c .)" = 5 ] && ! grep -q FAIL "$T/proc" &&
			expect "$g" 0 "$S" -n 3 -t $t -w 2 "$P/$g" signals && ! grep -q FAIL "$T/out" &&
			[ "$(lines '^all ok')" = 3 ] && [ "$(oks <"$T/out" | uniq)" = "$want" ]; then
			ok "$g, 3 ULPs in $t task(s): pthread_cancel (wait, sleep, async) and pthread_kill reach the right thread"
		else no "$g, 3 ULPs in $t task(s): pthread_cancel (wait, sleep, async) and pthread_kill reach the right thread"; fi
	done
done

# pthread_kill at a thread blocked in pause, read (with and without SA_RESTART, ignored, blocked)
# and nanosleep: such calls park on the task's ring, and the signal must end them there as the
# kernel would (pause never returned); the ok lines equal the process's
"$P/threads" killparked >"$T/proc" 2>&1
want=$(oks <"$T/proc")
for t in "1 1 1" "3 1 2"; do
	set -- $t
	if [ "$(echo "$want" | grep -c .)" = 6 ] && ! grep -q FAIL "$T/proc" &&
		expect killparked 0 "$S" -n $1 -t $2 -w $3 "$P/threads_dyn" killparked &&
		! grep -q FAIL "$T/out" && [ "$(lines '^all ok')" = $1 ] &&
		[ "$(oks <"$T/out" | uniq)" = "$want" ] &&
		[ "$(oks <"$T/out" | uniq -c | awk '$1 != '$1 | wc -l)" = 0 ]; then
		ok "$1 ULP(s) on $3 worker(s): pthread_kill ends pause, read, nanosleep of the thread as in a process"
	else no "$1 ULP(s) on $3 worker(s): pthread_kill ends pause, read, nanosleep of the thread as in a process"; fi
done

# pthread_kill aimed at threads that spend their time in trapped calls, while threads end and
# start: a kick that lands in the runtime waits for the trap's end (it ran the handler on top of
# the runtime's work: a hang in exit, once in ~300 runs of the case above), and every trapped
# call among the kicks returns the right result (gettid, getpid: while the kick was a SIGSYS, one
# pending at a trap merged with it and the call was lost, returning its own number; that lost
# glibc's asynchronous pthread_cancel above). Rounds of 300 kills and one thread exit: fewer
# where 3 ULPs share one task (each pthread_kill of a ULP thread is four trapped calls, ~9 us,
# against ~1.5 us in a process: docs/benchmarks.md)
for t in "3 30" "1 10"; do
	if expect killstorm 0 "$S" -n 3 -t ${t% *} -w 2 "$P/threads_dyn" killstorm ${t#* } &&
		! grep -q FAIL "$T/out" && [ "$(lines '^ok killstorm$')" = 3 ] &&
		[ "$(lines '^all ok')" = 3 ]; then
		ok "3 ULPs in ${t% *} task(s): pthread_kill at yielding threads, ${t#* } thread exits among them, handlers see only the program's code, trapped calls stay right"
	else no "3 ULPs in ${t% *} task(s): pthread_kill at yielding threads, ${t#* } thread exits among them, handlers see only the program's code, trapped calls stay right"; fi
done

# Threads that wait for each other with sched_yield (a token passed round three threads): the
# yield must give way to every ready thread of the worker, those queued behind an empty deque
# included (one worker: that yield spun alone, and the ring never moved on)
for n in 1 2; do
	if expect yieldring 0 "$X" -n $n -w 1 "$P/threads" yieldring 2000 &&
		! grep -q FAIL "$T/out" && [ "$(lines '^ok yieldring$')" = $n ]; then
		ok "$n ULP(s) on one worker: three threads pass a token with sched_yield"
	else no "$n ULP(s) on one worker: three threads pass a token with sched_yield"; fi
done

# 2. C++ std::thread / std::async / condition_variable
for g in threads_cxx threads_cxx_dyn; do
	"$P/$g" >"$T/proc" 2>&1
	want=$(oks <"$T/proc")
	if [ -n "$want" ] && ! grep -q FAIL "$T/proc" && expect "$g" 0 "$X" -n 2 -w 2 "$P/$g" &&
		! grep -q FAIL "$T/out" && [ "$(oks <"$T/out" | uniq)" = "$want" ] &&
		[ "$(lines '^all ok')" = 2 ]; then
		ok "$g: C++ threads in 2 ULPs give the process's results"
	else no "$g: C++ threads in 2 ULPs give the process's results"; fi
done

# 3. OpenMP, 4 threads: team size, reduction and barrier counts equal the process's
want=$("$P/threads_omp_dyn")
if echo "$want" | grep -q 'team=4' && expect omp 0 "$X" -n 3 -w 2 "$P/threads_omp_dyn" &&
	[ "$(lines .)" = 3 ] && [ "$(sort -u "$T/out")" = "$want" ]; then
	ok "OpenMP (4 threads) in 3 ULPs: same reduction as the process ($want)"
else no "OpenMP (4 threads) in 3 ULPs: same reduction as the process"; fi

# CPU clocks per thread: CLOCK_THREAD_CPUTIME_ID, pthread_getcpuclockid and RUSAGE_THREAD give
# each thread its own time (one computes 300 ms, one sleeps, main waits), as in the process.
if expect cpuclock 0 "$P/threads_dyn" cpuclock && [ "$(lines '^ok cpuclock')" = 3 ]; then
	for how in "$X -n 2 -w 1" "$X -n 2 -w 2" "$S -n 2 -t 1 -w 2"; do
		for g in threads threads_dyn; do
			if expect cpuclock 0 $how "$P/$g" cpuclock &&
				[ "$(lines '^ok cpuclock')" = 6 ] && [ "$(lines FAIL)" = 0 ]; then
				ok "$g: each thread's CPU clock is its own ($how), as in the process"
			else no "$g: each thread's CPU clock is its own ($how), as in the process"; fi
		done
	done
else no "CPU clocks per thread as a process"; fi

# 4. how a threaded ULP ends
if expect mainexit 0 "$X" -w 2 "$P/threads_dyn" mainexit && [ "$(lines 'ok mainexit')" = 1 ]; then
	ok "main thread's pthread_exit: the ULP lives until its last thread ends"
else no "main thread's pthread_exit: the ULP lives until its last thread ends"; fi
if expect exitgroup 7 "$X" -n 2 -w 2 "$P/threads" exitgroup &&
	[ "$(lines 'exited with status 7')" = 2 ]; then
	ok "exit() in one thread ends the ULP's blocked and spinning threads, status 7"
else no "exit() in one thread ends the ULP's blocked and spinning threads, status 7"; fi
r=0 okr=0
while [ $r -lt 5 ]; do
	expect mainreturn 3 "$X" -n 4 -w 2 "$P/threads_dyn" mainreturn &&
		[ "$(lines 'exited with status 3')" = 4 ] && okr=$((okr + 1))
	r=$((r + 1))
done
if [ $okr = 5 ]; then
	ok "main returns while 6 threads wait on a condvar: the ULP ends with its status (5 runs)"
else no "main returns while 6 threads wait on a condvar: the ULP ends with its status ($okr of 5 runs)"; fi
for w in 1 2; do
	if expect segv 139 "$X" -w $w -n 2 "$P/threads_dyn" segv : -n 3 "$P/threads_dyn" many 8 &&
		[ "$(lines 'killed by SIGSEGV')" = 2 ] && [ "$(lines '^ok many')" = 3 ]; then
		ok "a segfaulting thread ends its ULP only ($w worker(s))"
	else no "a segfaulting thread ends its ULP only ($w worker(s))"; fi
done

# Threads parked on the ring (read, epoll_wait, poll with no timeout) are in no futex queue, and
# threads that spin with no system call never trap: a fault or exit() in main ends them too (an
# MPI rank's UCX thread in epoll_wait kept a crashed rank from ending: check-mpi hung).
for w in 1 2; do
	for how in segv exit; do
		st=5 end='exited with status 5'
		[ $how = segv ] && st=139 end='killed by SIGSEGV'
		if expect parked $st "$X" -w $w -n 2 "$P/threads_dyn" parked $how &&
			[ "$(lines "$end")" = 2 ] && [ "$(lines '^ok parked')" = 2 ] && ! grep -q FAIL "$T/out"; then
			ok "$how in main ends threads parked in read/epoll_wait/poll and spinning without syscalls ($w worker(s))"
		else no "$how in main ends threads parked in read/epoll_wait/poll and spinning without syscalls ($w worker(s))"; fi
	done
done

# 5. 64 ULPs x 8 threads on 2 workers, in 1 and 2 PVAS tasks
for t in 1 2; do
	if expect many 0 "$S" -n 64 -t $t -w 2 "$P/threads_dyn" many 8 &&
		[ "$(lines '^ok many')" = 64 ]; then
		ok "64 ULPs x 8 threads on 2 workers, $t task(s)"
	else no "64 ULPs x 8 threads on 2 workers, $t task(s)"; fi
done

# 6. the futex operations one by one (bitsets, requeue, wake-op, timeouts; PI: ENOSYS in a ULP)
"$P/futex_ops_dyn" >"$T/proc" 2>&1
want=$(oks <"$T/proc")
for w in 1 2; do
	if [ "$(echo "$want" | grep -c .)" = 12 ] && expect futex_ops 0 "$X" -n 2 -w $w "$P/futex_ops_dyn" &&
		! grep -q FAIL "$T/out" && [ "$(oks <"$T/out" | uniq)" = "$want" ] &&
		[ "$(lines '^all ok')" = 2 ]; then
		ok "futex operations in 2 ULPs on $w worker(s) behave as in the process"
	else no "futex operations in 2 ULPs on $w worker(s) behave as in the process"; fi
done

# 7. a shared futex between a ULP and a process, each way round
: >"$T/fw"
: >"$T/w" # before the grep for "ready": the job's shell truncates it only when it runs
"$X" "$P/futex_shared_dyn" wait "$T/fw" >"$T/w" 2>&1 &
pid=$!
# (the wake may come before the wait: the word is set first; 60 s bounds: hang guards only)
i=0
while ! grep -q ready "$T/w" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
"$P/futex_shared_dyn" wake "$T/fw" >/dev/null
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill $pid 2>/dev/null
if wait $pid && grep -q 'got 1' "$T/w"; then
	ok "a ULP waiting on a shared futex is woken by another process"
else no "a ULP waiting on a shared futex is woken by another process"; fi
: >"$T/fw"
: >"$T/w"
"$P/futex_shared_dyn" wait "$T/fw" >"$T/w" 2>&1 &
pid=$!
# the wake must find the process in the kernel's futex wait (x86_64's futex is call 202)
i=0
while ! { read -r nr _ <"/proc/$pid/syscall"; } 2>/dev/null || [ "$nr" != 202 ]; do
	[ $i -lt 600 ] || break
	sleep 0.1
	i=$((i + 1))
done
if expect wake 0 "$X" "$P/futex_shared_dyn" wake "$T/fw" && grep -q 'woke 1' "$T/out" &&
	wait $pid && grep -q 'got 1' "$T/w"; then
	ok "a ULP's shared futex wake reaches a process waiting in the kernel"
else
	kill $pid 2>/dev/null
	no "a ULP's shared futex wake reaches a process waiting in the kernel"
fi

# 7b. a ULP and its fork child hand two process-shared semaphores to and fro: the child waits
# and posts in the kernel, the ULP's waits are the runtime's (woken by its look at the word)
if expect semfork 0 "$X" "$P/futex_shared_dyn" semfork 2000 && grep -q '^semfork ok 2000$' "$T/out"; then
	ok "a ULP and its fork child pass 2000 tokens through process-shared semaphores"
else no "a ULP and its fork child pass 2000 tokens through process-shared semaphores"; fi

# 8. Debian's threaded programs: the same bytes as processes
head -c 1000000 /dev/urandom | od -A n -t x1 >"$T/data"
if command -v xz >/dev/null; then
	xz -T2 -1 --block-size=128KiB -c "$T/data" >"$T/p.xz"
	if expect xz 0 "$X" -w 2 "$(command -v xz)" -T2 -1 --block-size=128KiB -c "$T/data" &&
		cmp -s "$T/out" "$T/p.xz" &&
		expect unxz 0 "$X" -w 2 "$(command -v xz)" -T2 -dc "$T/p.xz" && cmp -s "$T/out" "$T/data"; then
		ok "xz -T2 as a ULP: same compressed bytes as the process, round trip exact"
	else no "xz -T2 as a ULP: same compressed bytes as the process, round trip exact"; fi
else skip "xz not installed (mk/deps.sh check)"; fi
if command -v zstd >/dev/null; then
	zstd -q -T2 -B1MiB -c "$T/data" >"$T/p.zst"
	if expect zstd 0 "$X" -w 2 "$(command -v zstd)" -q -T2 -B1MiB -c "$T/data" &&
		cmp -s "$T/out" "$T/p.zst" &&
		expect unzstd 0 "$X" -w 2 "$(command -v zstd)" -q -T2 -dc "$T/p.zst" &&
		cmp -s "$T/out" "$T/data"; then
		ok "zstd -T2 as a ULP: same compressed bytes as the process, round trip exact"
	else no "zstd -T2 as a ULP: same compressed bytes as the process, round trip exact"; fi
else skip "zstd not installed (mk/deps.sh check)"; fi
sort --parallel=2 -S 2M "$T/data" >"$T/p.sort"
if expect sort 0 "$X" -w 2 "$(command -v sort)" --parallel=2 -S 2M "$T/data" &&
	cmp -s "$T/out" "$T/p.sort" && [ -s "$T/p.sort" ]; then
	ok "sort --parallel=2 as a ULP: same bytes as the process"
else no "sort --parallel=2 as a ULP: same bytes as the process"; fi

finish threads
