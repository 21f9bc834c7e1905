#!/bin/sh
# Fast system calls (docs/syscalls.md, "Fast path"): rewritten sites give what trapping sites and a
# process give; ULP_FASTCALL=0 rewrites nothing; files on disk stay as they were; a program that
# compares its text with its file still runs. Usage: fastcall.sh BUILD_DIR
B=${1:-build}
. "$(dirname "$0")/lib.sh"
LIBC=$(ldd "$B/tests/integ/fastcall_dyn" | awk '/libc.so/ {print $3}')
sums() { sha256sum "$LIBC" "$B/tests/integ/fastcall" "$B/tests/integ/fastcall_dyn"; }
sums >"$T/before"
# The lines that must not depend on where the call went.
results() { grep -v 'rewritten\|original\|not-found\|text differs' "$1"; }

for prog in fastcall fastcall_dyn; do
	P=$B/tests/integ/$prog
	if expect "$prog process" 0 "$P"; then
		results "$T/out" >"$T/proc"
		ok "$prog: runs as a process"
	else
		no "$prog: runs as a process"
		continue
	fi
	if expect "$prog off" 0 env ULP_FASTCALL=0 "$B/bin/ulpexec" "$P" &&
		results "$T/out" | cmp -s - "$T/proc" && [ "$(lines original)" = 5 ] &&
		[ "$(lines 'text differs from file in 0 places')" = 1 ]; then
		ok "$prog: ULP_FASTCALL=0 rewrites no site and gives the process's results"
	else
		no "$prog: ULP_FASTCALL=0 rewrites no site and gives the process's results"
	fi
	if expect "$prog on" 0 env ULP_FASTCALL=1 "$B/bin/ulpexec" "$P" && cp "$T/out" "$T/on" &&
		results "$T/out" | cmp -s - "$T/proc" && [ "$(lines rewritten)" = 5 ] &&
		[ "$(lines 'registers kept')" = 1 ]; then
		ok "$prog: rewritten sites (libc write, read, sched_yield, own asm) give what unrewritten ones and the process give, registers kept"
	else
		no "$prog: rewritten sites (libc write, read, sched_yield, own asm) give what unrewritten ones and the process give, registers kept"
	fi
	# Vector registers (zmm0-31 and k1-7, or ymm, or xmm), x87 and MXCSR, in use and in their
	# initial state, across rewritten read and sched_yield sites: two ULPs on one worker (the
	# yield runs the other, which loads its own values), with the fast path and without
	for f in 1 0; do
		if expect "$prog vector $f" 0 env ULP_FASTCALL=$f "$B/bin/ulpexec" -n 2 -w 1 "$P" &&
			[ "$(lines 'vector, x87 and MXCSR state kept')" = 2 ] &&
			[ "$(lines 'initial x87 and SSE state kept')" = 2 ] &&
			[ "$(lines "vector read site: $([ $f = 1 ] && echo rewritten || echo original)")" = 2 ]; then
			ok "$prog: vector, x87 and MXCSR state survive read and sched_yield (ULP_FASTCALL=$f, 2 ULPs on one worker)"
		else
			no "$prog: vector, x87 and MXCSR state survive read and sched_yield (ULP_FASTCALL=$f, 2 ULPs on one worker)"
		fi
	done
	# The program's own text seen through memory changed at the rewritten sites only: one 5-byte
	# jmp each.
	n=$(sed -n 's/^text differs from file in \([0-9]*\) places, 0 of them not a jmp$/\1/p' "$T/on")
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		ok "$prog: a program comparing its own text with its file still runs (memory differs at $n places, each a jmp)"
	else
		no "$prog: a program comparing its own text with its file still runs ($(grep 'text differs' "$T/on"))"
	fi
	if expect "$prog 4 ranks" 0 env ULP_FASTCALL=1 "$B/bin/ulpexec" -n 4 "$P" &&
		[ "$(lines 'registers kept')" = 4 ] && [ "$(lines 'libc write: rewritten')" = 4 ]; then
		ok "$prog: 4 ULPs each rewrite their own copy"
	else
		no "$prog: 4 ULPs each rewrite their own copy"
	fi
done

# A ULP with two threads: libc's cancellable sites, first used then, are rewritten too; calls,
# a signal ending a parked write (its handler runs before the write returns, on the program's
# code) and a cancellation there give what the process gives.
for prog in fastcall_mt fastcall_mt_dyn; do
	P=$B/tests/integ/$prog
	expect "$prog process" 0 "$P" && grep -v '^sites' "$T/out" >"$T/proc"
	for f in 0 1; do
		sites="original original"
		[ $f = 1 ] && sites="rewritten rewritten"
		# read's second (cancellable) site needs the 2-byte jmp into padding (static libc's
		# and Debian's libc.so.6 have padding in reach)
		if expect "$prog $f" 0 env ULP_FASTCALL=$f "$B/bin/ulpexec" "$P" &&
			grep -v '^sites' "$T/out" | cmp -s - "$T/proc" &&
			grep -q 'calls: 2000 rounds, 0 wrong' "$T/proc" &&
			grep -q '20 of 20 gave EINTR after the handler ran, 0 handled outside' "$T/proc" &&
			grep -q '5 of 5 cancelled' "$T/proc" &&
			grep -q '^reads alone: 4 of 4$' "$T/proc" &&
			grep -q '^reads with a thread: 2000 of 2000$' "$T/proc" &&
			[ "$(lines "^sites of write: $sites\$")" = 1 ] &&
			[ "$(lines "^sites of read: $sites\$")" = 1 ]; then
			ok "$prog: two threads, ULP_FASTCALL=$f: calls, reads, a signal and a cancel in a parked write give the process's results (write's and read's sites: $sites)"
		else
			no "$prog: two threads, ULP_FASTCALL=$f: calls, reads, a signal and a cancel in a parked write give the process's results"
		fi
	done
done

sums >"$T/after"
if cmp -s "$T/before" "$T/after"; then
	ok "libc and the programs on disk are byte-identical after the runs"
else
	no "libc and the programs on disk are byte-identical after the runs"
fi
finish integ-fastcall
