#!/bin/sh
# A ULP's process identity: getpid() is its own, unique on the machine (temp files t.$$ of 64
# ranks never collide), gettid() == getpid(), getppid() is the launcher and a fork child's is the
# ULP; kill(PID) from outside reaches that ULP alone (its placeholder process forwards it),
# SIGKILL to it ends that ULP alone, SIGSTOP stops only the placeholder; no zombie is left.
# The current directory and umask are per ULP too (chdir in one is not seen by the others), and
# so are /proc/self/cmdline and environ.
# Usage: tests/integ/ident.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
P=$O/tests/integ
X=$O/bin/ulpexec
S=$O/bin/ulpspawn
export TEST_TIMEOUT=300

# The process is the reference.
mkdir -p "$T/p"
if expect "as a process" 0 $P/ident ids "$T/p" && [ "$(lines FAIL)" = 0 ]; then
	checks=$(lines ': ok$')
	ok "as a process: $checks identity checks pass"
else
	checks=0
	no "as a process: the identity checks pass"
fi

for prog in ident ident_dyn; do
	for how in "$X -n 64 -w 1" "$X -n 64 -w 2" "$S -n 64 -t 4 -w 2"; do
		name="$prog, 64 ULPs ($how): own t.\$\$ file, gettid == getpid, fork child's getppid, /proc/PID, raise and kill(getpid()) local"
		rm -rf "$T/d" && mkdir "$T/d"
		if [ "$checks" -gt 0 ] && expect "$prog $how" 0 $how $P/$prog ids "$T/d" &&
			[ "$(lines ': ok$')" = $((checks * 64)) ] && [ "$(lines FAIL)" = 0 ] &&
			[ "$(ls "$T/d" | wc -l)" = 64 ] &&
			[ "$(cat "$T/d"/t.* | sort -u | wc -l)" = 64 ]; then
			ok "$name"
		else
			no "$name"
		fi
	done
done

# perl's $$ in 64 ranks: 64 distinct pids, none the launcher's, each rank's getppid the launcher.
rm -rf "$T/pl" && mkdir "$T/pl"
timeout 300 sh -c 'echo $$ >"$0"; exec "$@"' "$T/lp" $X -n 64 -w 2 /usr/bin/perl -e 'use Fcntl; sysopen(my $f, "'"$T/pl"'/t.$$",
	O_WRONLY|O_CREAT|O_EXCL) or die "t.$$: $!\n"; print $f "$ENV{ULP_RANK}\n"; close $f;
	print "pid $$ ppid ", getppid(), "\n"' >"$T/out" 2>&1 &
wait $!
st=$?
lp=$(cat "$T/lp")
if [ "$st" = 0 ] && [ "$(ls "$T/pl" | wc -l)" = 64 ] &&
	[ "$(cat "$T/pl"/t.* | sort -u | wc -l)" = 64 ] &&
	[ "$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/out" | sort -u | wc -l)" = 64 ] &&
	[ "$(lines "^pid $lp ")" = 0 ] && [ "$(lines " ppid $lp\$")" = 64 ]; then
	ok "perl t.\$\$ files in 64 ranks never collide; \$\$ is no other rank's nor the launcher's; getppid is the launcher"
else
	echo "# status $st, launcher $lp" >>"$T/out"
	no "perl t.\$\$ files in 64 ranks never collide; \$\$ is no other rank's nor the launcher's; getppid is the launcher"
fi

# Start `ident wait` in 4 ranks (args: launcher and its options), wait until each wrote its pid.
start_wait() {
	rm -rf "$T/w" && mkdir "$T/w"
	: >"$T/out" # before wait_line's grep: the job's shell truncates it only when it runs
	timeout -k 30 120 "$@" $P/ident wait "$T/w" >"$T/out" 2>&1 &
	jp=$!
	i=0
	while [ "$(ls "$T/w" | grep -c '^pid')" != 4 ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# Wait until $T/out has a line matching $1 (at most 60 s).
wait_line() {
	i=0
	while ! grep -q "$1" "$T/out" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
gone() { ! kill -0 "$1" 2>/dev/null && [ -z "$(ps -o stat= -p "$1")" ]; }

for how in "$X -n 4 -w 1" "$X -n 4 -w 2" "$S --keep-going -n 4 -t 1 -w 2"; do
	# kill -USR1 to rank 2's pid: rank 2's handler runs, from this shell; the others see none.
	start_wait $how
	p2=$(cat "$T/w/pid.2")
	kill -USR1 "$p2"
	wait_line "rank 2: got"
	touch "$T/w/done"
	wait $jp
	st=$?
	# the rank's process ends with its task, which may go on a moment after the launcher on a
	# loaded machine (30 s at most)
	i=0
	while ! gone "$p2" && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$st" = 0 ] && [ "$(lines "rank 2: got SIGUSR1 from $$\$")" = 1 ] &&
		[ "$(lines 'no signal$')" = 3 ] && gone "$p2"; then
		ok "kill -USR1 from a shell to one rank's pid ($how) runs that rank's handler only; its pid is gone after"
	else
		echo "# status $st" >>"$T/out"
		no "kill -USR1 from a shell to one rank's pid ($how) runs that rank's handler only; its pid is gone after"
	fi

	# SIGKILL to rank 1's pid ends rank 1 (killed by SIGKILL), the others go on; no zombie
	# (the launcher may name the killed rank only at the end: its pid going is what we wait for).
	start_wait $how
	p1=$(cat "$T/w/pid.1")
	kill -KILL "$p1"
	i=0
	while ! gone "$p1" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	dead=0
	gone "$p1" && dead=1
	touch "$T/w/done"
	wait $jp
	st=$?
	if [ "$st" = 137 ] && [ "$dead" = 1 ] && [ "$(lines 'no signal$')" = 3 ] &&
		[ "$(lines 'rank 1 .*killed by SIGKILL')" = 1 ]; then
		ok "kill -KILL to one rank's pid ($how) ends that rank alone (killed by SIGKILL, 137); no zombie"
	else
		echo "# status $st, gone while the job ran: $dead" >>"$T/out"
		no "kill -KILL to one rank's pid ($how) ends that rank alone (killed by SIGKILL, 137); no zombie"
	fi
done

# SIGSTOP stops the rank (below): a SIGUSR1 sent meanwhile arrives after SIGCONT.
start_wait $X -n 4 -w 1
p3=$(cat "$T/w/pid.3")
kill -STOP "$p3"
kill -USR1 "$p3"
sleep 1
early=$(lines "rank 3: got")
kill -CONT "$p3"
wait_line "rank 3: got"
touch "$T/w/done"
wait $jp
st=$?
if [ "$st" = 0 ] && [ "$early" = 0 ] && [ "$(lines "rank 3: got SIGUSR1 from $$\$")" = 1 ] &&
	[ "$(lines 'no signal$')" = 3 ]; then
	ok "kill -STOP to a rank's pid holds its signals until SIGCONT; the ULPs run on"
else
	echo "# status $st, delivered while stopped: $early" >>"$T/out"
	no "kill -STOP to a rank's pid holds its signals until SIGCONT; the ULPs run on"
fi

# kill -STOP / -TSTP of a rank's pid stops that rank (its counter stands still) and no other, as
# for a process, until kill -CONT; kill -9 of a stopped rank ends it. Before 27 Nov only the
# rank's placeholder stopped, and the rank ran on. The loop forks nothing: a fork waits for the
# stopped placeholder (2 s), which would stand the counter still by itself; lines are appended,
# and counted, as a file rewritten at each step reads empty now and then.
cat >"$T/count.sh" <<'EOF'
echo $$ >"$1/pid.$ULP_RANK"; i=0
while [ ! -e "$1/done" ]; do i=$((i + 1)); echo $i >>"$1/n.$ULP_RANK"; done
echo "rank $ULP_RANK ends"
EOF
for sig in STOP TSTP; do
	rm -rf "$T/c" && mkdir "$T/c"
	timeout -k 30 120 $X -n 2 -w 1 /bin/bash "$T/count.sh" "$T/c" >"$T/out" 2>&1 &
	jp=$!
	i=0
	while { [ ! -s "$T/c/n.0" ] || [ ! -s "$T/c/n.1" ]; } && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	p0=$(cat "$T/c/pid.0")
	kill -$sig "$p0"
	sleep 0.5 # the iteration in flight ends
	a=$(wc -l <"$T/c/n.0") o1=$(wc -l <"$T/c/n.1")
	sleep 1
	b=$(wc -l <"$T/c/n.0") o2=$(wc -l <"$T/c/n.1")
	kill -CONT "$p0"
	i=0
	while [ "$(wc -l <"$T/c/n.0")" = "$b" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	c=$(wc -l <"$T/c/n.0")
	touch "$T/c/done"
	wait $jp
	st=$?
	if [ "$st" = 0 ] && [ "$a" = "$b" ] && [ "$c" != "$b" ] && [ "$o2" != "$o1" ] &&
		[ "$(lines 'ends$')" = 2 ]; then
		ok "kill -$sig to a rank's pid stops that rank alone until kill -CONT"
	else
		echo "# status $st, stopped rank $a $b $c, the other $o1 $o2" >>"$T/out"
		no "kill -$sig to a rank's pid stops that rank alone until kill -CONT"
	fi
done
rm -rf "$T/c" && mkdir "$T/c"
timeout -k 30 120 $X -n 2 -w 1 /bin/bash "$T/count.sh" "$T/c" >"$T/out" 2>&1 &
jp=$!
i=0
while [ ! -s "$T/c/n.1" ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
p1=$(cat "$T/c/pid.1")
kill -STOP "$p1"
sleep 0.3
kill -KILL "$p1"
sleep 0.5
touch "$T/c/done"
wait $jp
st=$?
if [ "$st" = 137 ] && [ "$(lines 'rank 1 .*killed by SIGKILL')" = 1 ] &&
	[ "$(lines 'rank 0 ends')" = 1 ]; then
	ok "kill -KILL of a stopped rank ends it (137), the other ends as usual"
else
	echo "# status $st" >>"$T/out"
	no "kill -KILL of a stopped rank ends it (137), the other ends as usual"
fi

# /proc/self/cmdline and environ of a ULP are its own: cat of them as a ULP gives what cat gives
# as a process (cmdline), and what env prints as a ULP of the same job (environ).
one=$(/usr/bin/cat /proc/self/cmdline | od -c)
if [ "$one" = "$(printf '/usr/bin/cat\0/proc/self/cmdline\0' | od -c)" ] &&
	timeout 60 $X -n 2 /usr/bin/cat /proc/self/cmdline >"$T/raw" 2>&1 &&
	[ "$(od -c <"$T/raw")" = "$(printf '/usr/bin/cat\0/proc/self/cmdline\0/usr/bin/cat\0/proc/self/cmdline\0' | od -c)" ]; then
	ok "/proc/self/cmdline read by a ULP is its own argv, as for a process"
else
	od -c <"$T/raw" >"$T/out"
	no "/proc/self/cmdline read by a ULP is its own argv, as for a process"
fi
timeout 60 $X -n 1 /usr/bin/env | sort >"$T/want"
if timeout 60 $X -n 1 /usr/bin/cat /proc/self/environ >"$T/raw" 2>&1 &&
	tr '\0' '\n' <"$T/raw" | sort | cmp -s - "$T/want" && grep -q '^ULP_RANK=0$' "$T/want"; then
	ok "/proc/self/environ read by a ULP is its own environment (ULP_RANK included), as env prints it"
else
	tr '\0' '\n' <"$T/raw" >"$T/out"
	no "/proc/self/environ read by a ULP is its own environment (ULP_RANK included), as env prints it"
fi

# Per-ULP cwd and umask: rank 0 moves into a/ and sets umask 077 while ranks 1 and 2, on the same
# workers, read ./f and report their umask before and after; each sees its own. Also the same
# script as three processes, for the reference lines.
W=$T/cwd
mkdir -p "$W/a" "$W/sub"
echo top >"$W/f"
echo in-a >"$W/a/f"
echo in-sub >"$W/sub/f"
cat >"$T/cwd.sh" <<'EOS'
if [ "$ULP_RANK" = 0 ]; then
	cd a
	umask 077
	sleep 0.4
	echo "r0 $(/bin/pwd) $(cat f) $(umask) $(readlink /proc/self/cwd)"
	: >made && stat -c "r0 made %a" made
else
	sleep 0.2
	echo "r$ULP_RANK $(/bin/pwd) $(cat f) $(umask) $(readlink /proc/self/cwd)"
	sleep 0.4
	echo "r$ULP_RANK again $(/bin/pwd) $(cat f) $(umask)"
fi
EOS
(cd "$W" && for r in 0 1 2; do ULP_RANK=$r sh "$T/cwd.sh" & done; wait) | sort >"$T/want"
rm -f "$W/a/made"
for how in "$X -n 3 -w 1" "$X -n 3 -w 2" "$S -n 3 -t 1 -w 1"; do
	(cd "$W" && timeout 120 "$OLDPWD"/$how /bin/sh "$T/cwd.sh") 2>&1 | sort >"$T/out"
	rm -f "$W/a/made"
	if cmp -s "$T/want" "$T/out" && [ "$(wc -l <"$T/out")" = 6 ]; then
		ok "chdir and umask in one ULP are its own ($how): the others read ./f and create files as before"
	else
		diff "$T/want" "$T/out" >>"$T/out"
		no "chdir and umask in one ULP are its own ($how): the others read ./f and create files as before"
	fi
done

# A FIFO opened by a relative path waits on the task's ring, whose thread runs the open later:
# it opens the FIFO of the ULP's directory, not of whichever ULP the worker runs by then.
mkfifo "$W/a/fifo"
for w in 1 2; do
	(cd "$W" && timeout 120 "$OLDPWD/$S" -t 1 -w $w -n 1 /bin/sh -c 'cd a && cat fifo' : \
		-n 1 /bin/sh -c 'sleep 0.5; echo through-a >a/fifo') >"$T/out" 2>&1
	if [ "$(cat "$T/out")" = "through-a" ]; then
		ok "a FIFO opened by a relative path after chdir, parked, is the ULP's own ($w worker(s))"
	else
		no "a FIFO opened by a relative path after chdir, parked, is the ULP's own ($w worker(s))"
	fi
done

# git -C sub beside sha1sum: each hashes its own ./f, as processes do (the three hashes differ:
# one ULP in the wrong directory would repeat one).
(cd "$W" && /usr/bin/git -C sub hash-object f && sha1sum f && (cd sub && sha1sum f)) 2>&1 |
	sort >"$T/want"
for w in 1 2; do
	(cd "$W" && timeout 120 "$OLDPWD/$S" -t 1 -w $w -n 1 /usr/bin/git -C sub hash-object f : \
		-n 1 /usr/bin/sha1sum f : -n 1 /bin/sh -c 'cd sub && sha1sum f') 2>&1 | sort >"$T/out"
	if [ "$(sort -u "$T/want" | wc -l)" = 3 ] && cmp -s "$T/want" "$T/out"; then
		ok "git -C sub hash-object f beside sha1sum f in one task ($w worker(s)): each hashes its own file"
	else
		cat "$T/want" >>"$T/out"
		no "git -C sub hash-object f beside sha1sum f in one task ($w worker(s)): each hashes its own file"
	fi
done

finish ident
