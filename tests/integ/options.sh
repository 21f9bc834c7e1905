#!/bin/sh
# Option checks of ulpexec and ulpspawn: bad values are refused up front with a message that says
# what is allowed, and nothing starts. Usage: tests/integ/options.sh BUILD_DIR
B=${1:-build}
X="$B/bin/ulpexec"
S="$B/bin/ulpspawn"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"

# Partition sizes below the smallest layout that loads a program used to pass the option check,
# then every program was refused with "bad request ... not a page-aligned range".
for tool in "$X" "$S"; do
	name=${tool##*/}
	bad=""
	for size in 16m 32m 64m 1m 4k; do
		expect "$name $size" 2 "$tool" --partition-size $size /bin/echo STARTED &&
			grep -q "'$size' is too small.*the smallest is 128m" "$T/out" &&
			! grep -q STARTED "$T/out" || bad="$bad $size"
	done
	if [ -z "$bad" ]; then
		ok "$name: partition sizes below 128m are refused up front naming the smallest"
	else no "$name: partition sizes below 128m are refused up front naming the smallest ($bad)"; fi

	# The smallest size runs static-pie and dynamic programs correctly.
	if expect "$name 128m" 0 "$tool" --partition-size 128m -n 2 "$P/guest_cxx" : \
		-n 2 "$P/guest_cxx_dyn" && [ "$(lines 'constructed caught=1')" = 4 ] &&
		expect "$name 128m sha" 0 "$tool" --partition-size 128m -n 3 /usr/bin/sha256sum "$0" &&
		[ "$(sort -u "$T/out")" = "$(sha256sum "$0")" ]; then
		ok "$name: --partition-size 128m runs static-pie and dynamic programs"
	else no "$name: --partition-size 128m runs static-pie and dynamic programs"; fi

	# A partition too small for what the program maps: the rank fails as its program says
	# (perl: "Out of memory!"), the launcher says why (the mapping its partition had no room
	# for) and what to do, once; a larger partition runs it as the process does.
	big='my $x = "a" x $ARGV[0]; print length($x), "\n"'
	if expect "$name full" 1 "$tool" -n 2 --partition-size 256m /usr/bin/perl -e "$big" 300000000 &&
		[ "$(lines 'exited with status 1; its partition had no room for an mmap of 2[0-9][0-9] MiB$')" = 2 ] &&
		[ "$(lines 'a partition of 256 MiB .*--partition-size 512m or more')" = 1 ] &&
		expect "$name roomy" 0 "$tool" -n 2 --partition-size 1g /usr/bin/perl -e "$big" 300000000 &&
		[ "$(lines '^300000000$')" = 2 ] && ! grep -q partition "$T/out"; then
		ok "$name: a partition too small for a program's mapping: the rank's end and the launcher say so"
	else no "$name: a partition too small for a program's mapping: the rank's end and the launcher say so"; fi

	# 8589934592g is 2^63 and 17179869184g 2^64: a shift without a check wraps around.
	bad=""
	for size in 8589934592g 17179869184g 18446744073709551616 99999999999999999999m 128t; do
		expect "$name $size" 2 "$tool" --partition-size $size /bin/echo STARTED &&
			grep -q "'$size' is larger than the 64t address space" "$T/out" &&
			! grep -q STARTED "$T/out" || bad="$bad $size"
	done
	for size in 3g x -4g 4q; do
		expect "$name $size" 2 "$tool" --partition-size $size /bin/true &&
			grep -q "'$size' is not a power of two" "$T/out" || bad="$bad $size"
	done
	if [ -z "$bad" ]; then
		ok "$name: partition sizes that overflow or are not powers of two are refused"
	else no "$name: partition sizes that overflow or are not powers of two are refused ($bad)"; fi

	# One exit status for a missing program, as a shell: 127, and no rank of the job starts.
	if expect "$name missing" 127 "$tool" -n 2 no-such-program-here &&
		grep -q "no-such-program-here: command not found" "$T/out" &&
		expect "$name missing path" 127 "$tool" "$T/missing" &&
		grep -q "$T/missing: No such file or directory" "$T/out" &&
		expect "$name missing mpmd" 127 "$tool" -n 2 /bin/echo STARTED : -n 1 "$T/missing" &&
		! grep -q STARTED "$T/out"; then
		ok "$name: a missing program exits 127 before any rank starts"
	else no "$name: a missing program exits 127 before any rank starts"; fi
done

# --quantum: 0 or microseconds from 50 to 10000000, checked before anything starts (20 crashed
# ULPs: ticks faster than their handler); ULP_QUANTUM_US the same in the runtime.
if expect quantum-bad 2 "$X" --quantum x /bin/echo STARTED && [ "$(lines STARTED)" = 0 ] &&
	grep -q "ulpexec: --quantum: 'x' is not a number of microseconds" "$T/out" &&
	expect quantum-small 2 "$X" --quantum 20 /bin/echo STARTED && [ "$(lines STARTED)" = 0 ] &&
	grep -q "ulpexec: --quantum: 20 is below 50 microseconds" "$T/out" &&
	! ULP_QUANTUM_US=20 "$X" /bin/echo STARTED >"$T/out" 2>&1 && [ "$(lines STARTED)" = 0 ] &&
	grep -q "ULP_QUANTUM_US=20: below 50 microseconds" "$T/out" &&
	expect quantum-big 2 "$S" --quantum 10000001 -n 1 /bin/echo STARTED &&
	[ "$(lines STARTED)" = 0 ] && expect quantum-ok 0 "$S" --quantum 500 -n 2 /bin/echo STARTED &&
	[ "$(lines STARTED)" = 2 ]; then
	ok "--quantum (and ULP_QUANTUM_US) out of range, below 50 us or not a number is refused before anything starts"
else no "--quantum (and ULP_QUANTUM_US) out of range, below 50 us or not a number is refused before anything starts"; fi

# --bind names CPUs that must be online; the message lists the online ones.
online=$(cat /sys/devices/system/cpu/online)
last=$(echo "$online" | tr ',-' '\n\n' | sort -n | tail -1)
off=$((last + 1))
if expect bind 2 "$S" --bind "$off" -n 1 /bin/echo STARTED &&
	grep -q "CPU $off is not online (online CPUs: $online)" "$T/out" && ! grep -q STARTED "$T/out" &&
	expect bind-range 2 "$S" --bind "0-$off" -n 1 /bin/true &&
	grep -q "CPU $off is not online" "$T/out" &&
	expect bind-ok 0 "$S" --bind "0-$last" -n 2 /bin/echo STARTED && [ "$(lines STARTED)" = 2 ]; then
	ok "--bind with a CPU that is not online is refused naming the online CPUs"
else no "--bind with a CPU that is not online is refused naming the online CPUs"; fi

# The default number of workers is the CPUs the launcher may run on (its affinity mask, as nproc
# counts them), not every online CPU: under `taskset -c 0` a task has one worker thread (threads
# named ulpspawn/ulpexec; the ring's io-wq threads have other names).
# The count is taken once two looks 0.2 s apart agree, within 60 s: a job of `sleep 2` with 2 s
# of looks could end before a loaded machine had started its task, or be seen with one worker
# of two started.
workers_of() { # TOOL CPUS: worker threads of the task of `TOOL sleep 60` run under taskset
	taskset -c "$2" "$1" -n 1 /bin/sleep 60 >/dev/null 2>&1 &
	w_job=$! w_n= w_was= w_i=0
	while [ $w_i -lt 300 ]; do
		sleep 0.2
		w_i=$((w_i + 1))
		w_t=$(pgrep -P $w_job | head -1)
		[ -n "$w_t" ] || continue
		w_n=$(cat /proc/"$w_t"/task/*/comm 2>/dev/null | grep -c "^${1##*/}")
		[ "$w_n" -gt 0 ] && [ "$w_n" = "$w_was" ] && break
		w_was=$w_n
	done
	kill $w_job
	wait $w_job
	echo "${w_n:-0}"
}
if [ "$(nproc --all)" -ge 2 ]; then
	bad=
	for tool in "$X" "$S"; do
		[ "$(workers_of "$tool" 0)" = 1 ] || bad="$bad ${tool##*/}:0"
		[ "$(workers_of "$tool" 0,1)" = 2 ] || bad="$bad ${tool##*/}:0,1"
	done
	if [ -z "$bad" ]; then
		ok "default workers: one per CPU of the affinity mask (taskset -c 0: 1; -c 0,1: 2)"
	else no "default workers: one per CPU of the affinity mask (taskset -c 0: 1; -c 0,1: 2):$bad"; fi
else
	skip "default workers follow the affinity mask: one CPU only"
fi

finish options
