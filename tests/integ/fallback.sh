#!/bin/sh
# Non-PIE programs (ET_EXEC: Debian's python3, gcc, node...) cannot be loaded into a partition
# (nor can ASan's, case 0);
# ulpexec and ulpspawn run their ranks as ordinary processes in the job, beside the PIE ranks,
# with the same rank environment, output handling, exit-status and abort rules, after one
# warning line; --no-fallback refuses them instead. Usage: tests/integ/fallback.sh BUILD_DIR
B=${1:-build}
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"
# Each case takes seconds; one still running after 90 (on a loaded machine) hung: lib.sh prints
# what its processes do then, well before the group's limit (run-one.sh) would end it silently.
TEST_TIMEOUT=90

# 0. A program built with AddressSanitizer or ThreadSanitizer (their shadow memory is a fixed
#    range that the partitions overlap: as a ULP it stopped at once, "Shadow memory range
#    interleaves with an existing memory mapping", status 1) runs as a process after one warning
#    line, as the launcher's program and from a ULP's exec; its reports are the process's;
#    --no-fallback refuses it (126). A UBSan program (no shadow) stays a ULP.
printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
	'int main(int c, char **v) { char *p = malloc(10); p[0] = 1; printf("san ok %d\n", p[0]);' \
	'if (c > 1) p[10] = 2; free(p); return 0; }' >"$T/san.c"
if gcc -fsanitize=address -g -o "$T/asan" "$T/san.c" 2>/dev/null &&
	gcc -fsanitize=undefined -o "$T/ubsan" "$T/san.c" 2>/dev/null; then
	bad=
	expect asan 0 "$X" -n 2 "$T/asan" && [ "$(lines '^san ok 1$')" = 2 ] &&
		[ "$(lines 'warning: .*/asan is built with AddressSanitizer, whose shadow memory')" = 1 ] &&
		grep -q 'ranks 0-1 run as ordinary processes' "$T/out" || bad="$bad launcher"
	expect asan-bad 1 "$X" "$T/asan" x && grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$T/out" ||
		bad="$bad overflow"
	expect asan-exec 0 "$X" /bin/sh -c "exec '$T/asan'" && [ "$(lines '^san ok 1$')" = 1 ] &&
		grep -q 'asan: built with AddressSanitizer, .*: it runs as a child process of the ULP' "$T/out" ||
		bad="$bad exec"
	expect asan-refused 126 "$X" --no-fallback "$T/asan" &&
		grep -q 'AddressSanitizer.*--no-fallback: nor run as an ordinary process' "$T/out" ||
		bad="$bad no-fallback"
	expect ubsan 0 "$X" "$T/ubsan" && [ "$(lines '^san ok 1$')" = 1 ] && ! grep -q warning "$T/out" ||
		bad="$bad ubsan"
	# gcc's -static-libasan: the runtime's names only in the symbol table
	if gcc -fsanitize=address -static-libasan -o "$T/sasan" "$T/san.c" 2>/dev/null; then
		expect sasan 0 "$X" "$T/sasan" && [ "$(lines '^san ok 1$')" = 1 ] &&
			grep -q 'sasan is built with AddressSanitizer' "$T/out" || bad="$bad static"
	fi
	# clang links its ASan runtime statically by default (and exports its symbols)
	if command -v clang >/dev/null && clang -fsanitize=address -o "$T/casan" "$T/san.c" 2>/dev/null; then
		expect casan 0 "$X" "$T/casan" && [ "$(lines '^san ok 1$')" = 1 ] &&
			grep -q 'casan is built with AddressSanitizer' "$T/out" || bad="$bad clang"
	fi
	if [ -z "$bad" ]; then
		ok "AddressSanitizer programs run as processes (launcher, exec), their reports kept; UBSan ones as ULPs"
	else no "AddressSanitizer programs run as processes (launcher, exec), their reports kept; UBSan ones as ULPs:$bad"; fi
else
	skip "sanitizer programs: gcc -fsanitize=address or undefined cannot build here"
fi

PY=/usr/bin/python3
if ! [ -x $PY ] || ! readelf -h $PY 2>/dev/null | grep -q 'Type:.*EXEC'; then
	skip "fallback: no non-PIE python3 on this machine"
	finish fallback
	exit
fi
env_py='import os; e = os.environ; print("py", e["ULP_RANK"], e["ULP_SIZE"], e.get("ULP_TASK", "-"), "own-pid" if os.getpid() != os.getppid() else "same")'

# 1. MPMD: 2 python3 ranks as processes beside 3 static-pie and dynamic ULP ranks, labelled.
if expect mpmd 0 "$S" -l -n 2 $PY -c "$env_py" : -n 2 "$P/guest_check" 0 : \
	-n 1 "$P/guest_check_dyn" 0 &&
	grep -qx '\[0\] py 0 5 0 own-pid' "$T/out" && grep -qx '\[1\] py 1 5 1 own-pid' "$T/out" &&
	[ "$(lines '^\[[234]\] rank [234] ok pvid-set')" = 3 ] &&
	[ "$(lines 'warning: /usr/bin/python3 is not a position-independent executable (ET_EXEC)')" = 1 ] &&
	grep -q 'ranks 0-1 run as ordinary processes (--no-fallback refuses instead)' "$T/out" &&
	[ "$(lines warning)" = 1 ]; then
	ok "ulpspawn -l: python3 ranks run as processes beside PIE ULP ranks, one warning line"
else no "ulpspawn -l: python3 ranks run as processes beside PIE ULP ranks, one warning line"; fi

# 2. Same output as the program run alone (a process rank's stdout is the job's). The line is
#    one write: print() makes four when PYTHONUNBUFFERED is set (CI's environment sets it), and
#    three ranks' pieces then interleave in the shared file, as they would under mpiexec.
prog='import hashlib, sys; sys.stdout.write("%s %d\n" % (hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest(), sum(range(100000))))'
want=$($PY -c "$prog" "$0")
if expect same 0 "$X" -n 3 $PY -c "$prog" "$0" : -n 2 /usr/bin/sha256sum "$0" &&
	[ "$(grep -c "^$want\$" "$T/out")" = 3 ] &&
	[ "$(grep -c "  $0\$" "$T/out")" = 2 ]; then
	ok "ulpexec: python3 ranks print what python3 prints alone, beside sha256sum ULPs"
else no "ulpexec: python3 ranks print what python3 prints alone, beside sha256sum ULPs"; fi

# 3. Exit status: the first non-zero by rank, each failed rank reported.
if expect status 3 "$X" -n 1 "$P/guest_check" 0 : -n 2 $PY -c 'import sys; sys.exit(3)' &&
	[ "$(lines 'rank [12] (/usr/bin/python3, process [0-9]*): exited with status 3')" = 2 ]; then
	ok "a process rank's exit status counts like a ULP's"
else no "a process rank's exit status counts like a ULP's"; fi

# 4. Job abort: a process rank killed by a signal ends the job (ULP ranks that would sleep a
#    minute are killed); with --keep-going they finish.
if expect abort 134 "$S" -n 2 /bin/sleep 60 : -n 1 $PY -c 'import os; os.abort()' &&
	grep -q 'rank 2 (/usr/bin/python3, process [0-9]*) killed by SIGABRT: ending the job' \
		"$T/out" && grep -q 'job aborted: rank 2 was killed by signal 6' "$T/out"; then
	ok "a process rank killed by a signal aborts the job (128+signal)"
else no "a process rank killed by a signal aborts the job (128+signal)"; fi
if expect keep 134 "$S" --keep-going -n 2 "$P/guest_check" 0 : -n 1 $PY -c 'import os; os.abort()' &&
	[ "$(lines 'ok pvid-set')" = 2 ]; then
	ok "--keep-going: the ULP ranks finish beside a killed process rank"
else no "--keep-going: the ULP ranks finish beside a killed process rank"; fi
# ... and a ULP rank killed by a signal ends process ranks too.
if expect abort-ulp 139 "$S" -n 1 "$P/crash" : -n 1 $PY -c 'import time; time.sleep(60)'; then
	ok "a ULP rank killed by a signal ends the process ranks too"
else no "a ULP rank killed by a signal ends the process ranks too"; fi

# 5. --no-fallback: refused before any rank starts, naming the program and the reason.
for tool in "$X" "$S"; do
	if expect nofb 126 "$tool" --no-fallback -n 1 /bin/echo STARTED : -n 1 $PY -c 'print(1)' &&
		grep -q "${tool##*/}: /usr/bin/python3: not a position-independent executable (ET_EXEC); rebuild with -fPIE -pie" "$T/out" &&
		! grep -q STARTED "$T/out"; then
		ok "${tool##*/} --no-fallback: a non-PIE program is refused (126), nothing starts"
	else no "${tool##*/} --no-fallback: a non-PIE program is refused (126), nothing starts"; fi
done

# 6. --output-filename and -genv reach a process rank as they reach a ULP rank.
if expect outdir 0 "$S" --output-filename "$T/o" -genv FOO bar -n 1 $PY \
	-c 'import os, sys; print(os.environ["FOO"]); print("err", file=sys.stderr)' : \
	-n 1 /bin/sh -c 'echo $FOO' &&
	[ "$(cat "$T/o/0/stdout")" = bar ] && [ "$(cat "$T/o/0/stderr")" = err ] &&
	[ "$(cat "$T/o/1/stdout")" = bar ]; then
	ok "--output-filename and -genv apply to process ranks"
else no "--output-filename and -genv apply to process ranks"; fi

# 7. --pmi: process ranks get their PMI connection (PMI_FD kept open across exec) and are served
#    beside ULP ranks; one ending before finalize ends the job.
if expect pmi 0 "$S" --pmi -t 2 -n 2 "$B/tests/mpi/pmi_guest" : -n 2 "$P/pmi_guest_nopie" &&
	grep -qx "rank 0 app 0 next=v1" "$T/out" && grep -qx "rank 1 app 0 next=v4" "$T/out" &&
	grep -qx "rank 2 app 1 next=v9" "$T/out" && grep -qx "rank 3 app 1 next=v0" "$T/out"; then
	ok "--pmi: non-PIE PMI clients as process ranks beside ULP ranks"
else no "--pmi: non-PIE PMI clients as process ranks beside ULP ranks"; fi
if expect pmi-die 3 "$S" --pmi -n 1 "$B/tests/mpi/pmi_guest" : -n 2 "$P/pmi_guest_nopie" die &&
	grep -q "rank 1 ended before MPI_Finalize" "$T/out"; then
	ok "--pmi: a process rank ending before finalize ends the job"
else no "--pmi: a process rank ending before finalize ends the job"; fi

# 8. A launcher killed with SIGKILL takes its process ranks along, as it takes its PVAS tasks.
rm -f "$T/pid"
$PY -c 'pass' # warm the page cache: the handshake below then comes quickly
PIDF="$T/pid" "$S" -n 1 $PY -c 'import os, time; open(os.environ["PIDF"] + ".tmp", "w").write(str(os.getpid())); os.rename(os.environ["PIDF"] + ".tmp", os.environ["PIDF"]); time.sleep(120)' \
	: -n 1 /bin/sleep 120 >/dev/null 2>&1 &
launcher=$!
i=0
while ! [ -s "$T/pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$T/pid" 2>/dev/null)
kill -9 $launcher 2>/dev/null
wait $launcher 2>/dev/null
i=0
while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
	ok "a process rank dies with its launcher (SIGKILL)"
else
	no "a process rank dies with its launcher (SIGKILL)"
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
fi
# 9. execve of a non-PIE program from a ULP: the program runs as the ULP's child process, and the
#    ULP waits for it parked on its task's ring, not in a blocking wait4 that held its worker. On
#    one worker, python3 writes 1 MB to a FIFO that another ULP of the task reads: the reader must
#    run meanwhile (before, the job never ended), in both rank orders.
rm -f "$T/fifo" && mkfifo "$T/fifo"
wr="exec $PY -c 'open(\"$T/fifo\", \"w\").write(\"x\" * 1000000)'"
bad=
if ! expect exec-wr 0 "$S" -t 1 -w 1 -n 1 /bin/sh -c "$wr" : -n 1 /usr/bin/wc -c "$T/fifo" ||
	[ "$(lines "^1000000 $T/fifo\$")" != 1 ]; then bad="$bad writer-first"; fi
if ! expect exec-rw 0 "$S" -t 1 -w 1 -n 1 /usr/bin/wc -c "$T/fifo" : -n 1 /bin/sh -c "$wr" ||
	[ "$(lines "^1000000 $T/fifo\$")" != 1 ]; then bad="$bad reader-first"; fi
if [ -z "$bad" ]; then
	ok "a ULP that execs non-PIE python3 does not hold its worker: its 1 MB into a FIFO reaches another ULP of the worker"
else no "a ULP that execs non-PIE python3 does not hold its worker: its 1 MB into a FIFO reaches another ULP of the worker:$bad"; fi

# 10. Signals sent to the ULP's PID while the non-PIE program it exec'd runs are the program's:
#    SIGTERM ends python3 (its default action), and the ULP with it, "killed by SIGTERM".
rm -f "$T/pid"
: >"$T/out.sig"
timeout -k 30 120 "$S" -n 1 /bin/sh -c "echo \$\$ >$T/pid.tmp; mv $T/pid.tmp $T/pid; exec $PY -c 'import time; print(\"sleeping\", flush=True); time.sleep(60)'" >"$T/out.sig" 2>&1 &
job=$!
hang_watch exec-sig "$TEST_TIMEOUT" $job
i=0
while ! grep -q sleeping "$T/out.sig" && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM "$(cat "$T/pid" 2>/dev/null)" 2>/dev/null
wait $job
st=$?
hang_unwatch
if [ $st = 143 ] && grep -q 'rank 0 .*killed by SIGTERM' "$T/out.sig"; then
	ok "kill -TERM of a ULP's PID reaches the non-PIE program it exec'd (status 143, killed by SIGTERM)"
else
	echo "# status $st${i:+, waited $i tenths of a second for its first line}" >>"$T/out.sig"
	[ -e "$T/hung" ] && echo "# exec-sig: hung: still running after $TEST_TIMEOUT s" >>"$T/out.sig"
	cp "$T/out.sig" "$T/out"
	no "kill -TERM of a ULP's PID reaches the non-PIE program it exec'd (status 143, killed by SIGTERM)"
fi

# 11. A signal that reaches the worker while the ULP looks whether its program has ended (a
#     zero-timeout poll of the child's pidfd, failed with EINTR: strace injects it into the first
#     100 polls of each thread) is asked again. Before 27 Nov it was taken for the program's end,
#     and the ULP went on to a blocking wait4 that held its worker: case 9's FIFO reader never ran
#     (integ-fallback hung now and then under load: the preemption tick).
if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
	skip "a ULP's look at its non-PIE program's end interrupted by a signal: no strace, or no ptrace here"
else
	inject="strace -f -qq -o /dev/null -e trace=poll -e inject=poll:error=EINTR:when=1..100"
	bad=
	if ! expect eintr-wr 0 $inject "$S" -t 1 -w 1 -n 1 /bin/sh -c "$wr" : -n 1 /usr/bin/wc -c "$T/fifo" ||
		[ "$(lines "^1000000 $T/fifo\$")" != 1 ]; then bad="$bad writer-first"; fi
	if ! expect eintr-rw 0 $inject "$S" -t 1 -w 1 -n 1 /usr/bin/wc -c "$T/fifo" : -n 1 /bin/sh -c "$wr" ||
		[ "$(lines "^1000000 $T/fifo\$")" != 1 ]; then bad="$bad reader-first"; fi
	# and with no pidfd to wait on (pidfd_open fails: EMFILE), it looks every 100 ms (it
	# blocked in wait4 before)
	if ! expect nopidfd 0 strace -f -qq -o /dev/null -e trace=pidfd_open \
		-e inject=pidfd_open:error=EMFILE "$S" -t 1 -w 1 -n 1 /usr/bin/wc -c "$T/fifo" : \
		-n 1 /bin/sh -c "$wr" || [ "$(lines "^1000000 $T/fifo\$")" != 1 ]; then
		bad="$bad no-pidfd"
	fi
	if [ -z "$bad" ]; then
		ok "a ULP whose look at its non-PIE program's end is interrupted (EINTR), or has no pidfd, still does not hold its worker"
	else no "a ULP whose look at its non-PIE program's end is interrupted (EINTR), or has no pidfd, still does not hold its worker:$bad"; fi
fi

finish fallback
