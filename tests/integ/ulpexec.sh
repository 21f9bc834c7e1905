#!/bin/sh
# ulpexec as a user runs it: real programs as ULPs, compared with running them as processes.
# Usage: tests/integ/ulpexec.sh BUILD_DIR   (ULPEXEC: another ulpexec, e.g. an ASan build's)
B=${1:-build}
X="${ULPEXEC:-$B/bin/ulpexec}"
P="$B/tests/integ"
. "$(dirname "$0")/lib.sh"

# 1. static-pie and dynamic C guests: own globals, TLS, errno, heap, atexit, argv/env/auxv, status
for g in guest_check guest_check_dyn; do
	for w in 1 2; do
		if expect "$g" 0 "$X" -n 8 -w $w "$P/$g" 0 a1 a2 &&
			[ "$(lines ' ok pvid-set argc=4 a1 a2')" = 8 ] && [ "$(lines atexit)" = 8 ] &&
			! grep -q FAIL "$T/out"; then
			ok "$g: 8 ULPs on $w worker(s) are separate processes"
		else no "$g: 8 ULPs on $w worker(s) are separate processes"; fi
	done
done
if expect status 7 "$X" -n 3 "$P/guest_check" 7 && [ "$(lines 'exited with status 7')" = 3 ]; then
	ok "exit status of the ULPs becomes ulpexec's, each failure reported"
else no "exit status of the ULPs becomes ulpexec's, each failure reported"; fi
if expect mpmd 0 "$X" -n 2 "$P/guest_check" 0 x : -n 3 "$P/guest_check_dyn" 0 y &&
	[ "$(lines 'ok pvid-set argc=3 x')" = 2 ] && [ "$(lines 'ok pvid-set argc=3 y')" = 3 ] &&
	[ "$(grep -o 'rank [0-9]' "$T/out" | sort -u | wc -l)" = 5 ]; then
	ok "MPMD form runs both programs with ranks 0..4"
else no "MPMD form runs both programs with ranks 0..4"; fi

# 2. C++: constructors, destructors, iostream, exceptions
for g in guest_cxx guest_cxx_dyn; do
	if expect "$g" 0 "$X" -n 4 "$P/$g" && [ "$(lines 'constructed caught=1')" = 4 ] &&
		[ "$(lines destructor)" = 4 ]; then
		ok "$g: C++ runtime works in 4 ULPs"
	else no "$g: C++ runtime works in 4 ULPs"; fi
done

# 3. 256 ULPs of one program in one process, on 1 and 2 workers
for w in 1 2; do
	if expect many 0 "$X" -n 256 -w $w "$P/guest_check" 0 && [ "$(lines ' ok ')" = 256 ]; then
		ok "256 ULPs on $w worker(s)"
	else no "256 ULPs on $w worker(s)"; fi
done

# 4. Debian's own PIE binaries: same output as processes
head -c 3000000 /dev/urandom >"$T/data"
seq 1 50000 | awk '{print $1, $1 % 7}' >"$T/table"
want=$(sha256sum "$T/data")
if expect sha256sum 0 "$X" -n 64 /usr/bin/sha256sum "$T/data" &&
	[ "$(grep -c . "$T/out")" = 64 ] && [ "$(sort -u "$T/out")" = "$want" ]; then
	ok "sha256sum as 64 ULPs prints 64 lines identical to the process's"
else no "sha256sum as 64 ULPs prints 64 lines identical to the process's"; fi
prog='{ s[$2] += $1 } END { for (k in s) print k, s[k] }'
want=$(mawk "$prog" "$T/table" | sort)
if expect mawk 0 "$X" -n 8 -w 2 mawk "$prog" "$T/table" &&
	[ "$(sort "$T/out" | uniq -c | awk '$1 == 8' | wc -l)" = "$(echo "$want" | wc -l)" ] &&
	[ "$(sort -u "$T/out")" = "$want" ]; then
	ok "mawk as 8 ULPs gives the process's answer 8 times"
else no "mawk as 8 ULPs gives the process's answer 8 times"; fi

# The machine's auxv entries a ULP is started with are a process's (AT_HWCAP was glibc's own
# word, 2 on x86_64, not the CPU's bits); ld.so prints them (env execs true in place)
keys='AT_HWCAP:|AT_HWCAP2:|AT_PAGESZ:|AT_CLKTCK:|AT_PLATFORM:|AT_UID:|AT_EGID:|AT_SECURE:'
want=$(env LD_SHOW_AUXV=1 /bin/true | grep -E "^($keys)")
if expect auxv 0 "$X" /usr/bin/env LD_SHOW_AUXV=1 /bin/true && [ -n "$want" ] &&
	[ "$(grep -E "^($keys)" "$T/out")" = "$want" ]; then
	ok "a ULP's auxv gives the machine's values a process gets (AT_HWCAP, AT_PLATFORM...)"
else no "a ULP's auxv gives the machine's values a process gets (AT_HWCAP, AT_PLATFORM...)"; fi

# 5. refused programs: clear message naming the file and the reason, nothing started
printf 'not an elf at all' >"$T/garbage"; chmod +x "$T/garbage"
cp "$P/guest_check" "$T/noexec"; chmod -x "$T/noexec"
refuse() {
	if expect "$1" "$2" "$X" "$3" 0 && grep -qF -- "$3" "$T/out" && grep -qi -- "$4" "$T/out"; then
		ok "refused: $1"
	else no "refused: $1"; fi
}
# Without --no-fallback an ET_EXEC program runs as a process instead (tests/integ/fallback.sh).
if expect "ET_EXEC" 126 "$X" --no-fallback "$P/exec_nopie" 0 &&
	grep -qF -- "$P/exec_nopie" "$T/out" && grep -q -- "-fPIE -pie" "$T/out"; then
	ok "refused: ET_EXEC under --no-fallback says rebuild with -fPIE -pie"
else no "refused: ET_EXEC under --no-fallback says rebuild with -fPIE -pie"; fi
refuse "missing file" 127 "$T/missing" "no such file"
refuse "garbage file" 126 "$T/garbage" "ELF"
refuse "no execute permission" 126 "$T/noexec" "permission"
refuse "directory" 126 "$T" "directory\|regular"
if [ -x /usr/bin/qemu-aarch64-static ] || true; then
	if command -v aarch64-linux-gnu-gcc >/dev/null; then
		echo 'int main(void){return 0;}' >"$T/a.c"
		aarch64-linux-gnu-gcc -fPIE -pie -o "$T/arm" "$T/a.c" 2>/dev/null &&
			refuse "wrong machine" 126 "$T/arm" "machine"
	fi
fi

# 6. a crashing ULP, a stack overflow and an abort end alone; the others finish
if expect crash 139 "$X" -n 6 -w 2 "$P/crash" && [ "$(lines survived)" = 3 ] &&
	grep -q 'rank 0 .*killed by SIGSEGV (fault address 0x10' "$T/out" &&
	grep -q 'rank 1 .*killed by SIGSEGV' "$T/out" && grep -q 'rank 2 .*killed by SIGABRT' "$T/out"; then
	ok "faulting, overflowing and aborting ULPs end alone, reported with signal and address"
else no "faulting, overflowing and aborting ULPs end alone, reported with signal and address"; fi

# 7. guest API: ping-pong with pvas_ulp_switch; error outside ulpexec
if expect pingpong 0 "$X" -n 2 -w 1 "$P/pingpong" && [ "$(lines 'switched 1000')" -ge 1 ] &&
	[ "$(lines 'switched')" = 2 ]; then
	ok "pvas_ulp_switch ping-pong between two ULPs"
else no "pvas_ulp_switch ping-pong between two ULPs"; fi
if expect standalone 0 "$P/pingpong" && grep -q 'not a ULP: pvas_get_pvid=-95' "$T/out"; then
	ok "guest API outside ulpexec returns -ENOTSUP"
else no "guest API outside ulpexec returns -ENOTSUP"; fi

if expect share 0 "$X" -n 6 "$P/share" && [ "$(lines "read 'hello from rank 0'")" = 5 ] &&
	grep -q 'rank 0 counter=5' "$T/out"; then
	ok "an address exported by one ULP is read and written by the others"
else no "an address exported by one ULP is read and written by the others"; fi

# 8. a ULP's range syscalls reach only its own partition: MAP_FIXED, munmap, mremap, mprotect,
#    madvise, arch_prctl aimed at another ULP's partition, the launcher's code or heap, its control
#    block, or with lengths that wrap, fail with the kernel's errno; the launcher and the other ULPs
#    go on (rank 1 runs the same checks; guest_check beside them still passes)
if expect bad_range 0 "$X" -n 2 -w 1 "$P/bad_range" 4294967296 : -n 2 "$P/guest_check" 0 &&
	[ "$(lines 'bad ranges refused')" = 2 ] && [ "$(lines ' ok pvid-set')" = 2 ] &&
	! grep -q FAIL "$T/out"; then
	ok "range syscalls outside the own partition are refused; launcher and other ULPs unharmed"
else no "range syscalls outside the own partition are refused; launcher and other ULPs unharmed"; fi

# 9. every end is reported: a ULP that ends between pvas_ulp_wait's scan for ended ULPs and its
#    scan for running ones (ULP_WAIT_TEST=gap widens that window to 2 ms) is waited for, not
#    taken for none left (a CI run ended with one rank's SIGSEGV unreported, status 139)
okg=0
for w in 1 2; do
	expect gap_false 1 env ULP_WAIT_TEST=gap "$X" -w $w -n 32 /bin/false &&
		[ "$(lines 'exited with status 1')" = 32 ] && okg=$((okg + 1))
	# crash: rank 0 dereferences NULL, rank 1 overflows its stack
	expect gap_segv 139 env ULP_WAIT_TEST=gap "$X" -w $w -n 2 "$P/crash" : -n 2 /bin/false &&
		[ "$(lines 'killed by SIGSEGV')" = 2 ] && [ "$(lines 'exited with status 1')" = 2 ] &&
		okg=$((okg + 1))
done
if [ $okg = 4 ]; then
	ok "each of 32 ULPs' ends reported when ends fall between pvas_ulp_wait's scans"
else no "each of 32 ULPs' ends reported when ends fall between pvas_ulp_wait's scans ($okg of 4)"; fi

# 10. the launcher ends as the process would: a job of one ULP killed by a signal kills ulpexec by
#     that signal (a shell prints "Segmentation fault", timeout and strace pass it on; it exited
#     139 before), and so does a job ended by the SIGINT it was sent; a job of several ranks, or
#     one whose ULP handled the SIGINT, exits with a status. waitpid's own word, from perl.
ends() { perl -e 'my $p = fork; if (!$p) { open(STDERR, ">/dev/null"); exec @ARGV; exit 127 }
	if ($ENV{END_INT}) { select(undef, undef, undef, $ENV{END_INT}); kill INT => $p }
	waitpid($p, 0); printf "sig=%d code=%d\n", $? & 127, $? >> 8' -- "$@"; }
oke=0
[ "$(ends "$X" "$P/crash")" = "sig=11 code=0" ] && oke=$((oke + 1))
[ "$(ends "$X" -n 2 "$P/crash")" = "sig=0 code=139" ] && oke=$((oke + 1))
[ "$(ends "$X" sh -c 'kill -KILL $$')" = "sig=9 code=0" ] && oke=$((oke + 1))
[ "$(ends "$X" sh -c 'exit 3')" = "sig=0 code=3" ] && oke=$((oke + 1))
[ "$(END_INT=1 ends "$X" sleep 20)" = "sig=2 code=0" ] && oke=$((oke + 1))
[ "$(END_INT=1 ends "$X" sh -c 'trap "exit 0" INT; sleep 5 & wait')" = "sig=0 code=0" ] &&
	oke=$((oke + 1))
# a ULP killed by SIGPIPE (its reader gone) takes ulpexec with it, silently
[ "$(perl -e 'open(my $f, "-|", @ARGV) or die; my $l = <$f>; close $f;
	printf "%s sig=%d\n", $l eq "y\n" ? "y" : "?", $? & 127' -- "$X" yes 2>&1)" = "y sig=13" ] &&
	oke=$((oke + 1))
if [ $oke = 7 ]; then
	ok "a one-ULP job ends by its ULP's signal, a SIGINT-ended one by SIGINT; others by status"
else
	echo "only $oke of 7 ends as wanted" >"$T/out"
	no "a one-ULP job ends by its ULP's signal, a SIGINT-ended one by SIGINT; others by status"
fi

# 11. bad usage is an error, not ignored
if expect usage 2 "$X" -n 0 /bin/true && grep -q -- "-n" "$T/out" &&
	expect usage2 2 "$X" --bogus /bin/true && expect help 0 "$X" -h && grep -q usage "$T/out"; then
	ok "bad options are errors; -h explains usage"
else no "bad options are errors; -h explains usage"; fi

finish ulpexec
