#!/bin/sh
# What a hung test's processes are doing, for its log: PID and every process under it, each thread
# with its state, kernel wait channel, system call (number, name, first arguments) and kernel stack
# where readable; each process's pending, blocked and caught signals and descriptors, its
# io_urings' heads, tails and armed polls (a parked call's request) and whom its pidfds name; each
# ulpexec/ulpspawn job's ranks as `ulps` (beside the launcher's binary) lists them (state, blocked
# in which call); then, within HANGDUMP_SECONDS (default 15) of its start, each process's
# user-space stacks, every thread (gdb; processes with a running thread first; not shells;
# skipped, said so, when gdb is absent or the time is spent), and for ulpspawn and ulpexec what
# their runtime knows (tests/ulpstate.py: each ULP thread's state and futex wait, each worker's
# queues). Lines start with "# ".
# Usage: tests/hangdump.sh PID [WHY]
root=$1
start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
echo "# hang: ${2:-process $root still running}; $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
# PID and its descendants, parents first; not this script, nor the watch that runs it (lib.sh)
pids=$(ps -e -o pid=,ppid= | awk -v root="$root" -v me=$$ -v watch=$PPID '
	$1 != me && $1 != watch { kid[$2] = kid[$2] " " $1 }
	END {
		q[1] = root; n = 1
		for (i = 1; i <= n; i++) {
			printf "%s ", q[i]
			m = split(kid[q[i]], k, " ")
			for (j = 1; j <= m; j++) q[++n] = k[j]
		}
	}')
[ -n "$pids" ] || { echo "# (no such process)"; exit 0; }
ps -L -o pid,lwp,ppid,pgid,stat,wchan:30,time,comm -p "$(echo $pids | tr ' ' ,)" | sed 's/^/#   /'
# a few x86_64 numbers by name; the others stay numbers
sysname() {
	case $1 in
	0) echo read ;; 1) echo write ;; 7) echo poll ;; 23) echo select ;; 34) echo pause ;;
	35) echo nanosleep ;; 61) echo wait4 ;; 202) echo futex ;; 230) echo clock_nanosleep ;;
	232) echo epoll_wait ;; 247) echo waitid ;; 257) echo openat ;; 270) echo pselect6 ;;
	271) echo ppoll ;; 426) echo io_uring_enter ;; *) echo "$1" ;;
	esac
}
last_fds='' last_pid=''
for p in $pids; do
	[ -d "/proc/$p" ] || continue
	echo "# pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-150)"
	echo "#   $(grep -E '^(SigPnd|ShdPnd|SigBlk|SigCgt)' "/proc/$p/status" 2>/dev/null | tr -s '\t\n' '  ')"
	fds=$(for f in /proc/$p/fd/*; do [ -e "$f" ] && printf '%s>%s ' "${f##*/}" "$(readlink "$f")"; done 2>/dev/null | cut -c1-400)
	# a placeholder shares its task's table: said once
	if [ "$fds" = "$last_fds" ]; then
		echo "#   fds: those of pid $last_pid"
		fds_of=
	else
		echo "#   fds: $fds"
		last_fds=$fds last_pid=$p fds_of=$p
	fi
	# the rings' heads and tails and armed polls (a parked call's request), whom pidfds name
	for f in ${fds_of:+/proc/$p/fd/*}; do
		case $(readlink "$f" 2>/dev/null) in
		*io_uring*) echo "#   ring ${f##*/}: $(grep -E '^(SqHead|SqTail|CqHead|CqTail|SQEs|CQEs)' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null | tr -s '\t\n' '  ')"
			sed -n '/^PollList/,/^CqOverflowList/p' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null | head -12 | sed 's/^/#     /' ;;
		*pidfd*) echo "#   pidfd ${f##*/}: $(grep '^Pid' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null | tr -s '\t\n' '  ')" ;;
		esac
	done
	for t in /proc/$p/task/*; do
		[ -r "$t/syscall" ] || continue
		set -- $(cat "$t/syscall" 2>/dev/null)
		case ${1:-} in
		running | -1 | "") sc=${1:-?} ;;
		*) sc="$(sysname "$1")($2, $3, $4)" ;;
		esac
		st=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)
		stack=$(sed 's/^\[<[0-9a-f]*>\] //; s/+0x.*//' "$t/stack" 2>/dev/null | head -6 | tr '\n' '<')
		echo "#   task ${t##*/} $st $sc${stack:+ kernel: $stack}"
	done
done
# the ranks of each job, as ulps shows them (a launcher's PVAS tasks have its name too: one call)
u='' launchers=''
for p in $pids; do
	case $(cat "/proc/$p/comm" 2>/dev/null) in
	ulpspawn | ulpexec)
		e=$(readlink "/proc/$p/exe") && [ -f "${e%/*}/ulps" ] && u=${e%/*}/ulps
		launchers="$launchers $p"
		;;
	esac
done
[ -n "$launchers" ] && [ -n "$u" ] && timeout 10 "$u" $launchers 2>&1 | sed 's/^/#   /'
# User-space stacks: where a thread that spins (state R, no system call) is, the kernel's view
# cannot tell. gdb stops a process while it reads it, and a process can have hundreds of threads:
# a few seconds and 80 lines each, spinning processes first, all within HANGDUMP_SECONDS, so the
# dump ends before the test's limit (run-one.sh dumps 20 s before it, lib.sh 30 s).
if ! command -v gdb >/dev/null 2>&1; then
	echo "# user stacks: skipped (no gdb)"
	exit 0
fi
running() { grep -l '^State:.R' $(for p in "$@"; do echo "/proc/$p/task/*/status"; done) 2>/dev/null |
	sed 's|/proc/\([0-9]*\)/.*|\1|' | uniq; }
spin=$(running $pids)
for p in $spin $(echo " $pids " | tr ' ' '\n' | grep -vxF "$(echo $spin | tr ' ' '\n')"); do
	# a shell's or timeout's place the kernel's view above already tells
	case $(cat "/proc/$p/comm" 2>/dev/null) in
	'' | sh | dash | bash | timeout | sleep) continue ;;
	esac
	left=$((start + ${HANGDUMP_SECONDS:-15} - $(date +%s)))
	if [ $left -lt 2 ]; then
		echo "# user stacks of pid $p and after: skipped (HANGDUMP_SECONDS spent)"
		break
	fi
	echo "# user stacks of pid $p ($(cat /proc/$p/comm 2>/dev/null)):"
	# the job's runtime, from the first launcher or PVAS task (they share its address space):
	# its ULP threads and workers (ulpstate.py), before the stacks
	set --
	case $(cat "/proc/$p/comm" 2>/dev/null) in
	ulpspawn | ulpexec) [ -n "${state_done:-}" ] || set -- -ex "source $here/ulpstate.py" ;;
	esac
	[ $# = 0 ] || state_done=1
	timeout -k 1 $((left < 6 ? left : 6)) gdb -nx -batch -p "$p" -iex 'set debuginfod enabled off' \
		"$@" -ex 'set print frame-arguments none' -ex 'thread apply all bt 12' </dev/null 2>&1 |
		awk '/^#ulp / { print; next } /^(Thread |#)/ && n++ < 80' | sed 's/^/#   /'
done
exit 0
