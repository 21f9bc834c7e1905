#!/bin/sh
# A ULP's own process group and session (setpgid, setsid, getpgrp, getpgid, getsid; kill and
# wait by group): the same answers as the same program run as a process, and one ULP leaving
# its group moves no other ULP of its task (`timeout` beside another rank: the user's report).
# Usage: tests/integ/pgrp.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
X=$O/bin/ulpexec
export TEST_TIMEOUT=120

# same NAME COMMAND...: COMMAND as a ULP prints what it prints as a process (and ends alike).
same() {
	s_name=$1
	shift
	timeout -k 10 60 "$@" >"$T/want" 2>&1
	s_want=$?
	if expect "$s_name" "$s_want" $X -n 1 "$@" && cmp -s "$T/want" "$T/out" &&
		[ -s "$T/want" ]; then
		ok "$s_name: as a ULP as a process"
	else
		{ echo "# as a process (status $s_want):"; sed 's/^/#   /' "$T/want"; } >>"$T/out"
		no "$s_name: as a ULP as a process"
	fi
}

same "perl setpgrp makes it its group's leader; getpgrp(0) agrees" /usr/bin/perl -e '$| = 1;
	print getpgrp() == $$ ? "leader\n" : "member\n"; setpgrp(0, 0) or die "setpgrp: $!\n";
	print getpgrp() == $$ ? "leader\n" : "member\n";
	print getpgrp(0) == $$ ? "getpgrp(0) ok\n" : "getpgrp(0) wrong\n"'

# python3: only a PIE one is a ULP (Debian's is not: it would run as a process; debian.sh).
PY=$(pie_python)
if [ -z "$PY" ]; then
	skip "python3: no position-independent python3 installed"
else
	same "python os.setsid: leader of a new session and group; a second setsid: EPERM" \
		"$PY" -c 'import os
print(os.getpgrp() == os.getpid(), os.getsid(0) == os.getpid())
os.setsid()
print(os.getpgrp() == os.getpid(), os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid())
for f in (os.setsid, lambda: os.setpgid(0, 0)):
    try:
        f()
    except PermissionError:
        print("EPERM")'
	same "python subprocess(start_new_session=True): the child leads its own session" \
		"$PY" -c 'import subprocess
o = subprocess.run(["sh", "-c", "echo $$ $(ps -o sid= -p $$) $(ps -o pgid= -p $$)"],
                   start_new_session=True, capture_output=True, text=True).stdout.split()
print(len(o) == 3 and o[0] == o[1] == o[2])'
fi

# ps reads the process's /proc/PID/stat: the ULP's pid, group and session agree there too.
same "setsid sh -c 'ps -o pid=,pgid=,sid= -p \$\$': pid = pgid = sid" /usr/bin/setsid \
	/bin/sh -c 'ps -o pid=,pgid=,sid= -p $$ | awk "{ print (\$1 == \$2 && \$2 == \$3) }"'

# kill(0) from a group's leader: its handler runs once, before kill returns; its child in the
# group is killed; wait for -pgid and 0 see the group's children.
same "perl in its own group: kill TERM => 0 runs its handler once and kills its child; waitpid by group" \
	/usr/bin/perl -e '$| = 1; setpgrp(0, 0) or die; $SIG{TERM} = sub { print "TERM\n" };
	my $e = fork // die; exit 3 if !$e;
	print "waitpid -pgid: ", waitpid(-$$, 0) == $e ? "the child" : "other", " ", $? >> 8, "\n";
	pipe(my $r, my $w) or die; my $c = fork // die;
	if (!$c) { $SIG{TERM} = "DEFAULT"; syswrite $w, "x"; sleep 30; exit 0 }
	sysread $r, my $x, 1; kill TERM => 0; print "after kill\n";
	print "waitpid 0: ", waitpid(0, 0) == $c ? "the child" : "other", " signal ", $? & 127, "\n";
	print "none left: ", waitpid(-1, 0), "\n"'

same "perl fork children start in its group; a child's own child in the child's group" \
	/usr/bin/perl -e '$| = 1; setpgrp(0, 0) or die; my $c = fork // die;
	if (!$c) {
		print "child in its parent group: ", getpgrp() == getppid() ? "yes" : "no", "\n";
		setpgrp(0, 0) or die; my $g = fork // die;
		if (!$g) {
			print "grandchild in its parent group: ",
				getpgrp() == getppid() ? "yes" : "no", "\n";
			exit 0;
		}
		waitpid($g, 0); exit 0;
	}
	waitpid($c, 0); print "done ", $?, "\n"'

same "bash set -m: a background job in its own group, kill -TERM -\$! ends it" /bin/bash -c \
	'set -m; sleep 10 & kill -TERM -$!; wait $!; echo "status $?"'

# An interactive bash on a terminal (script's pty) leads a group of its own and hands the
# terminal to each foreground job and back: the task's group must stay the terminal's foreground
# for the ULP's own reads (else EIO or SIGTTIN), and tcgetpgrp is its group.
if command -v script >/dev/null; then
	cat >"$T/tty.sh" <<'EOF'
sleep 0.2
read -t 1 x
echo "read status $?"
exec /usr/bin/perl -e 'use POSIX; open my $t, "<", "/dev/tty" or die "/dev/tty: $!\n";
	print "foreground is mine: ", POSIX::tcgetpgrp(fileno $t) == getpgrp() ? "yes" : "no", "\n"'
EOF
	timeout -k 10 60 script -qec "/bin/bash --norc --noprofile -i $T/tty.sh" /dev/null \
		</dev/null 2>&1 | tr -d '\r' | grep -v '^$' >"$T/want"
	timeout -k 10 60 script -qec "$X -n 1 /bin/bash --norc --noprofile -i $T/tty.sh" /dev/null \
		</dev/null 2>&1 | tr -d '\r' | grep -v '^$' >"$T/out"
	if cmp -s "$T/want" "$T/out" && grep -q '^foreground is mine: yes$' "$T/out" &&
		grep -q '^read status 1$' "$T/out"; then
		ok "interactive bash on a terminal: its jobs get the terminal and give it back; its reads work"
	else
		{ echo "# as a process:"; sed 's/^/#   /' "$T/want"; } >>"$T/out"
		no "interactive bash on a terminal: its jobs get the terminal and give it back; its reads work"
	fi
else
	skip "interactive bash on a terminal: no script(1)"
fi

# `timeout 1 sleep 5` (setpgid(0, 0), then kill of its group) as rank 0 beside rank 1 in the same
# task (-w 1): rank 1 stays in its launcher's group and runs to its end.
cat >"$T/timeout.sh" <<'EOF'
if [ "$ULP_RANK" = 0 ]; then
	timeout 1 sleep 5
	echo "timeout status $?"
else
	exec /usr/bin/perl -e '$| = 1; my $g = getpgrp(getppid());
		print "rank 1 in the launcher group: ", getpgrp() == $g ? "yes" : "no", "\n"; sleep 3;
		print "rank 1 still in it: ", getpgrp() == $g ? "yes" : "no", "\n"'
fi
EOF
if expect "timeout beside a rank" 0 $X -n 2 -w 1 /bin/sh "$T/timeout.sh" &&
	[ "$(lines '^timeout status 124$')" = 1 ] &&
	[ "$(lines '^rank 1 in the launcher group: yes$')" = 1 ] &&
	[ "$(lines '^rank 1 still in it: yes$')" = 1 ]; then
	ok "timeout 1 sleep 5 as a rank ends with 124; the task's other rank keeps its group and runs on"
else
	no "timeout 1 sleep 5 as a rank ends with 124; the task's other rank keeps its group and runs on"
fi

# kill -TERM -pgid from this shell: rank 0 leads a group (with children), rank 1 joins it, rank 2
# stays in the launcher's: ranks 0 and 1 and the children end, rank 2 runs on. getpgid of another
# rank's pid is that rank's group (its placeholder's is its own while it is in the launcher's).
cat >"$T/kill.sh" <<EOF
case \$ULP_RANK in
0) exec /usr/bin/perl -e '\$| = 1; setpgrp(0, 0) or die; open my \$f, ">", "$T/g.tmp" or die;
	print \$f "\$\$\n"; close \$f; rename "$T/g.tmp", "$T/g";
	system("sleep 60 & sleep 61; echo rank 0 child not killed"); print "rank 0 not killed\n"' ;;
1) exec /usr/bin/perl -e '\$| = 1; select(undef, undef, undef, 0.1) until -s "$T/g" && -s "$T/p2";
	open my \$p, "<", "$T/p2"; my \$p2 = <\$p>; chomp \$p2;
	print "rank 2 seen from rank 1 in the launcher group: ",
		getpgrp(\$p2) == getpgrp(getppid()) ? "yes" : "no", "\n";
	open my \$f, "<", "$T/g"; my \$g = <\$f>; chomp \$g; setpgrp(0, \$g) or die "setpgid: \$!\n";
	print "rank 1 joined: ", getpgrp() == \$g ? "yes" : "no", "\n";
	sleep 60; print "rank 1 not killed\n"' ;;
*) exec /usr/bin/perl -e '\$| = 1; open my \$f, ">", "$T/p2.tmp" or die; print \$f "\$\$\n";
	close \$f; rename "$T/p2.tmp", "$T/p2"; select(undef, undef, undef, 0.1) until -s "$T/g";
	open \$f, "<", "$T/g"; my \$g = <\$f>; chomp \$g;
	print "rank 0 seen from rank 2 leading its group: ", getpgrp(\$g) == \$g ? "yes" : "no", "\n";
	select(undef, undef, undef, 0.1) until -e "$T/done";
	print "rank 2 ran on, in the launcher group: ",
		getpgrp() == getpgrp(getppid()) ? "yes" : "no", "\n"' ;;
esac
EOF
: >"$T/out"
timeout -k 10 120 $X -n 3 -w 1 /bin/sh "$T/kill.sh" >"$T/out" 2>&1 &
jp=$!
i=0
while ! { grep -q "rank 1 joined" "$T/out" && grep -q "rank 0 seen" "$T/out"; } &&
	[ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
g=$(cat "$T/g" 2>/dev/null)
# wait until rank 0's children are in the group too (the job is slow under load)
i=0
while [ "$(ps -e -o pgid=,comm= | grep -c "^ *$g sleep")" -lt 2 ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
# live members of group $1 (a child of a ULP that ended stays a zombie until its task ends:
# docs/syscalls.md, "Fork children")
live() { ps -e -o pgid=,stat= | grep -v ' Z' | grep -cw "^ *$1"; }
members=$(live "$g")
[ -n "$g" ] && kill -TERM "-$g"
i=0
while [ -n "$g" ] && [ "$(live "$g")" != 0 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
left=$(live "$g")
touch "$T/done"
wait $jp
st=$?
if [ "$st" = 143 ] && [ "$members" = 5 ] && [ "$left" = 0 ] &&
	[ "$(lines '^rank 1 joined: yes$')" = 1 ] &&
	[ "$(lines '^rank 2 seen from rank 1 in the launcher group: yes$')" = 1 ] &&
	[ "$(lines '^rank 0 seen from rank 2 leading its group: yes$')" = 1 ] &&
	[ "$(lines 'rank [01] .*killed by SIGTERM')" = 2 ] && [ "$(lines 'not killed')" = 0 ] &&
	[ "$(lines '^rank 2 ran on, in the launcher group: yes$')" = 1 ]; then
	ok "kill -TERM -pgid from a shell ends the 2 ranks of that group and their children; the third runs on; getpgid of another rank"
else
	echo "# status $st, group $g: $members members before the kill, $left after" >>"$T/out"
	no "kill -TERM -pgid from a shell ends the 2 ranks of that group and their children; the third runs on; getpgid of another rank"
fi

# setsid from 100 perl ULPs on 2 workers: each leads its session, as 100 processes would. Each
# waits while its placeholder calls setsid; before 27 Nov a placeholder not run within 2 s (a
# loaded machine: 1 to 5 of the 100 beside two spinning processes) gave EAGAIN.
if expect "100 setsid" 0 $X -n 100 -w 2 /usr/bin/perl -e 'use POSIX; my $r = POSIX::setsid();
	print defined $r && $r == $$ ? "leads\n" : "setsid: $!\n"' && [ "$(lines '^leads$')" = 100 ]; then
	ok "setsid in 100 ULPs at once: each leads its own session"
else
	no "setsid in 100 ULPs at once: each leads its own session"
fi

finish integ-pgrp
