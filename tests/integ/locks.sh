#!/bin/sh
# Record locks (fcntl F_SETLK, F_SETLKW, F_GETLK; lockf) of ULPs are a process's: owned by the
# ULP and the file, whatever open file they go through (tests/integ/progs/locks.c). Each case
# runs as 2 ULPs of one task (ulpexec -n 2, one and two workers) and as 2 processes; the sorted
# outputs must be the same. Before 27 Nov: ULPs locking through one inherited open file both got
# the lock, two opens in one ULP conflicted, a close of another descriptor kept the lock, a fork
# child kept its parent ULP's lock, F_GETLK gave l_pid -1. dup2 onto and close_range of another
# descriptor of the file drop the locks too.
# Usage: tests/integ/locks.sh BUILD_DIR [RUNS]
O=${1:-build}
RUNS=${2:-1}
. tests/integ/lib.sh
P=$(cd "$O" && pwd)/tests/integ
X=${ULPEXEC:-$(cd "$O" && pwd)/bin/ulpexec}
export TEST_TIMEOUT=${TEST_TIMEOUT:-120}
D=$T/d

# fresh: an empty folder $D with the lock file
fresh() { rm -rf "$D" && mkdir "$D" && : >"$D/lk"; }

# ref MODE: the two ranks of `locks MODE` as processes, sharing descriptor 9 (the lock file);
# their sorted output in $T/ref.MODE
ref() {
	fresh
	(cd "$D" && { ULP_RANK=1 timeout 90 "$P/locks" "$1" >"$T/r1" 2>&1 &
		ULP_RANK=0 timeout 90 "$P/locks" "$1" >"$T/r0" 2>&1; wait; } 9<>lk)
	sort "$T/r0" "$T/r1" >"$T/ref.$1"
}

# same_as MODE HOW: 2 ULPs of `locks MODE` (ulpexec HOW) print what the processes did
same_as() {
	fresh
	(cd "$D" && timeout -k 10 90 "$X" $2 -n 2 "$P/$3" "$1" 9<>lk) >"$T/out" 2>&1
	sort "$T/out" >"$T/got"
	[ -s "$T/ref.$1" ] && cmp -s "$T/got" "$T/ref.$1" && return 0
	{ echo "# processes:"; cat "$T/ref.$1"; } >>"$T/out"
	return 1
}

for mode in shared twoopen closeone closers seekcur deadlock fork wait; do
	ref $mode
	n=0 bad=0
	while [ $n -lt "$RUNS" ]; do
		for prog in locks locks_dyn; do
			for how in "-w 1" "-w 2"; do
				same_as $mode "$how" $prog || { bad=1; break 3; }
			done
		done
		n=$((n + 1))
	done
	if [ $bad = 0 ]; then
		ok "locks $mode: 2 ULPs print what 2 processes print ($RUNS runs)"
	else
		no "locks $mode: 2 ULPs print what 2 processes print (run $((n + 1)): $prog $how)"
	fi
done

# Mutual exclusion under load: 4 ranks increment one counter 1000 times each under a write lock
# (F_SETLKW or lockf; let go by an unlock or a close) while a thread of each locks files of its
# own; an increment lost is a lock two ranks held at once. Through a new open each time, and
# through descriptor 9, inherited by all (before 27 Nov: increments lost).
for prog in "locks count 1000" "locks_dyn count 1000" "locks count 1000 9"; do
	for how in "-w 1" "-w 2"; do
		fresh
		name="$prog: 4 ULPs ($how) take turns on one counter, none lost"
		if (cd "$D" && timeout -k 10 90 "$X" $how -n 4 "$P/"$prog 9<>lk) >"$T/out" 2>&1 &&
			[ "$(cat "$D/lk")" = 00000000000000004000 ]; then
			ok "$name"
		else
			echo "counter: $(cat "$D/lk")" >>"$T/out"
			no "$name"
		fi
	done
done

# 70 ULPs of one task under a hard RLIMIT_NOFILE of 1024, which holds 56 private opens at 968 and
# above: the others go from 800 up (before, they were the shared open file's: increments lost).
fresh
name="locks count 100 9: 70 ULPs under ulimit -n 1024 take turns on one counter, none lost"
if (cd "$D" && ulimit -n 1024 && timeout -k 10 200 "$X" -w 2 -n 70 "$P/locks" count 100 9 9<>lk) \
	>"$T/out" 2>&1 && [ "$(cat "$D/lk")" = 00000000000000007000 ]; then
	ok "$name"
else
	echo "counter: $(cat "$D/lk")" >>"$T/out"
	no "$name"
fi

# The shell case: sh ranks that inherited descriptor 9 of the lock file lock through it.
fresh
if (cd "$D" && timeout 90 "$X" -w 1 -n 2 sh -c "exec $P/locks shared" 9<>lk) >"$T/out" 2>&1 &&
	sort "$T/out" | cmp -s - "$T/ref.shared"; then
	ok "ulpexec -n 2 sh -c 'locks shared' 9<>lk: the sh ranks' locks are their own"
else
	no "ulpexec -n 2 sh -c 'locks shared' 9<>lk: the sh ranks' locks are their own"
fi

# ulpspawn's ranks inheriting descriptor 9, in one task and in two (whose F_GETLK cannot name a
# holder in another task: l_pid -1, docs/syscalls.md; the rest is compared).
S=$(dirname "$X")/ulpspawn
for t in 1 2; do
	fresh
	if (cd "$D" && timeout 90 "$S" -t $t -n 2 "$P/locks" shared 9<>lk) >"$T/out" 2>&1 &&
		{ [ $t = 1 ] && sort "$T/out" | cmp -s - "$T/ref.shared" ||
			sort "$T/out" | sed 's/ another pid$/ pid of the holder/' |
			cmp -s - "$T/ref.shared"; }; then
		ok "ulpspawn -t $t -n 2 locks shared 9<>lk: each rank's locks are its own"
	else
		no "ulpspawn -t $t -n 2 locks shared 9<>lk: each rank's locks are its own"
	fi
done

# python3's fcntl.lockf (a PIE python only runs as a ULP).
PY=$(pie_python)
if [ -n "$PY" ]; then
	cat >"$T/lk.py" <<'EOF'
import fcntl, os, time
rank = int(os.environ.get("ULP_RANK", "0"))
f = open("lk", "r+")
def wait(name):
    for _ in range(6000):
        if os.path.exists(name):
            return
        time.sleep(0.01)
    raise SystemExit("no " + name)
if rank == 0:
    fcntl.lockf(f, fcntl.LOCK_EX)
    open("locked", "w").close()
    wait("tried")
else:
    wait("locked")
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("lockf: got")
    except OSError:
        print("lockf: busy")
    open("tried", "w").close()
    fcntl.lockf(f, fcntl.LOCK_EX)
    print("lockf after the holder's end: got")
EOF
	fresh
	if (cd "$D" && timeout 90 "$X" -n 2 "$PY" "$T/lk.py") >"$T/out" 2>&1 &&
		[ "$(cat "$T/out")" = "$(printf '%s\n' 'lockf: busy' "lockf after the holder's end: got")" ]; then
		ok "python3 fcntl.lockf in 2 ULPs: as 2 processes"
	else
		no "python3 fcntl.lockf in 2 ULPs: as 2 processes"
	fi
else
	skip "python3 fcntl.lockf: no position-independent python3"
fi

# flock(2): its locks belong to the open file (the kernel's were right between ULPs), but a wait
# for one held the worker: 2 ULPs on one worker, the holder parked in a sleep, waited for ever
# (found 28 Nov). 4 ULPs each take LOCK_EX around a 0.2 s sleep and a read-modify-write of a
# counter: on 1 and 2 workers the counter ends at 4, the holds never overlap, the job ends. Then
# LOCK_SH of 2 ULPs at once, LOCK_NB against a holder (EWOULDBLOCK), and a SIGALRM without
# SA_RESTART ending a wait with EINTR, as for 2 processes.
cat >"$T/fl.pl" <<'EOF'
use Fcntl qw(:flock SEEK_SET);
$| = 1;
open(my $f, "+<", "lk") or die "open: $!";
flock($f, LOCK_EX) or die "flock: $!";
sysseek($f, 0, SEEK_SET); sysread($f, my $n, 16); $n ||= 0;
print "in $ENV{ULP_RANK}\n";
select(undef, undef, undef, 0.2);
sysseek($f, 0, SEEK_SET); syswrite($f, sprintf("%-15d", $n + 1));
print "out $ENV{ULP_RANK}\n";
flock($f, LOCK_UN);
EOF
okf=0
rm -f "$T/out.fl"
for w in 1 2; do
	fresh
	if (cd "$D" && timeout 60 "$X" -w $w -n 4 perl "$T/fl.pl") >"$T/out" 2>&1 &&
		[ "$(tr -d ' ' <"$D/lk")" = 4 ] &&
		[ "$(awk '/^in/ { if (d) bad = 1; d = 1 } /^out/ { d = 0 } END { print bad + 0 }' \
			"$T/out")" = 0 ] && [ "$(grep -c '^out' "$T/out")" = 4 ]; then
		okf=$((okf + 1))
	else
		echo "# flock -w $w: counter $(cat "$D/lk")" >>"$T/out"
		cp "$T/out" "$T/out.fl"
	fi
done
[ -f "$T/out.fl" ] && cp "$T/out.fl" "$T/out"
if [ $okf = 2 ]; then
	ok "flock LOCK_EX across a sleep in 4 ULPs on 1 and 2 workers: one at a time, no endless wait"
else
	no "flock LOCK_EX across a sleep in 4 ULPs on 1 and 2 workers: one at a time, no endless wait"
fi
cat >"$T/fl2.pl" <<'EOF'
use Fcntl qw(:flock);
$| = 1;
my $r = $ENV{ULP_RANK};
sub waitfor {
	my $n = shift;
	for (1 .. 1000) { return if -e $n; select(undef, undef, undef, 0.01) }
	die "no $n";
}
sub mark { open(my $t, ">", shift) or die; close $t }
open(my $f, "<", "lk") or die;
open(my $g, "<", "lk") or die;
if ($r == 0) {
	flock($f, LOCK_SH) or die; mark("sh0"); waitfor("sh1");
	print "0: both shared\n"; waitfor("nb"); flock($f, LOCK_UN);
	flock($g, LOCK_EX) or die; mark("ex"); waitfor("intr"); close $g;
} else {
	waitfor("sh0"); flock($f, LOCK_SH) or die; mark("sh1");
	print "1: LOCK_EX|LOCK_NB: ",
	    (flock($g, LOCK_EX | LOCK_NB) ? "got" : ($!{EWOULDBLOCK} ? "EWOULDBLOCK" : "$!")), "\n";
	flock($f, LOCK_UN); mark("nb"); waitfor("ex");
	$SIG{ALRM} = sub { }; alarm 1;
	print "1: LOCK_EX while held, SIGALRM: ",
	    (flock($g, LOCK_EX) ? "got" : ($!{EINTR} ? "EINTR" : "$!")), "\n";
	mark("intr");
}
EOF
fresh
(cd "$D" && { ULP_RANK=1 timeout 60 perl "$T/fl2.pl" >"$T/r1" 2>&1 &
	ULP_RANK=0 timeout 60 perl "$T/fl2.pl" >"$T/r0" 2>&1; wait; })
sort "$T/r0" "$T/r1" >"$T/ref.fl2"
okf=0
for w in 1 2; do
	fresh
	(cd "$D" && timeout 60 "$X" -w $w -n 2 perl "$T/fl2.pl") >"$T/out" 2>&1
	sort "$T/out" | cmp -s - "$T/ref.fl2" && okf=$((okf + 1))
done
if [ $okf = 2 ] && [ "$(wc -l <"$T/ref.fl2")" = 3 ]; then
	ok "flock LOCK_SH shared, LOCK_NB EWOULDBLOCK, a wait ended by SIGALRM: as 2 processes"
else
	{ echo "# processes:"; cat "$T/ref.fl2"; } >>"$T/out"
	no "flock LOCK_SH shared, LOCK_NB EWOULDBLOCK, a wait ended by SIGALRM: as 2 processes"
fi

finish locks
