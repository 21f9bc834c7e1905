#!/bin/sh
# ulpspawn killed mid-job (SIGTERM, SIGINT, SIGKILL) leaves nothing behind: no process of the
# job, no /dev/shm entry and no SysV shared-memory segment the job made. Debian's MPICH (ch4:ucx)
# makes a /dev/shm file per node in MPI_Init and UCX makes /dev/shm files and SysV segments per
# rank; both remove the names once every rank has attached (they show as "(deleted)" in
# /proc/PID/maps), so the kernel frees them when the last process that maps them ends (tasks,
# and the ranks' placeholders in the same address space, die with ulpspawn: PR_SET_PDEATHSIG).
# A kill between a name's creation and its removal can leave it, as it can under mpiexec: the
# test stops the tasks, and kills while they are stopped at a point where every name they map
# or hold is removed (docs/mpi.md). The job's segments are read from its tasks' maps then, and
# must be gone once its processes are.
# Usage: tests/mpi/mpi_kill.sh BUILD_DIR
# Where it may (root), it runs in a mount and IPC namespace of its own with a /dev/shm of its
# own: a job of someone else's that leaves names or segments meanwhile is not counted as this
# job's (seen: a 256 KiB mpich_shar_tmp* file and a UCX file left at load 35 by another job).
isolate='mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"'
if [ -z "$MPI_KILL_ISOLATED" ] &&
	unshare -m -i --propagation private sh -c "$isolate" sh true 2>/dev/null; then
	MPI_KILL_ISOLATED=1 exec unshare -m -i --propagation private sh -c "$isolate" sh sh "$0" "$@"
fi
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
P=$O/examples/mpi/mpi_prog
[ -x "$P" ] || { echo "$P not built (needs mpicc.mpich: sh mk/deps.sh check)"; exit 1; }

# snap: the /dev/shm names now, one per line
snap() { ls /dev/shm; }
# leftovers BEFORE: /dev/shm names now that were not in BEFORE and that no process maps, still
# there after up to 60 s (another test's MPI job may hold one for a moment; a leftover stays)
leftovers() {
	i=0
	while :; do
		snap | sort | comm -13 "$1" - >"$T/new"
		if [ -s "$T/new" ]; then
			# names some live process maps belong to a running job, not to ours
			cat /proc/[0-9]*/maps 2>/dev/null |
				awk '$6 ~ /^\/dev\/shm\// { sub(/^\/dev\/shm\//, "", $6); print $6 }' |
				sort -u | comm -23 "$T/new" - >"$T/new2"
			mv "$T/new2" "$T/new"
		fi
		[ ! -s "$T/new" ] || [ $i -ge 600 ] && break
		i=$((i + 1))
		sleep 0.1
	done
	cat "$T/new"
}
# sysv_of PIDS...: the SysV segments that these processes created (cpid) and that still exist
sysv_of() {
	awk -v pids=" $* " 'NR > 1 && index(pids, " " $5 " ") { print "shmid " $2 }' /proc/sysvipc/shm
}
# states PIDS...: the state letter of every thread of these processes, one a line
states() {
	for p in "$@"; do
		cat /proc/$p/task/*/stat 2>/dev/null | sed 's/.*) \(.\).*/\1/'
	done
}
# gone PIDS...: every one ended, after up to 60 s. A zombie waiting for a reaper counts as ended
# (it holds no memory, no file and no segment), but only once every thread of it has: the
# leader of a thread group shows Z while its other threads (workers, io_uring's) still exit,
# and the last of them frees the address space and with it the job's segments.
gone() {
	g_i=0
	while states "$@" | grep -qv Z; do
		[ $g_i -ge 600 ] && return 1
		g_i=$((g_i + 1))
		sleep 0.1
	done
}
# settled PIDS...: stopped tasks whose shared memory a kill cannot leak: MPI_Init is done
# (MPICH's node file and UCX's two files per rank are mapped), every /dev/shm file they map or
# hold open is already unlinked ("(deleted)") and every SysV segment they made is marked for
# removal (IPC_RMID: SHM_DEST, 01000 in the octal perms). A name is left by a kill between its
# creation and its removal, as under mpiexec: MPICH makes more of them after the first.
settled() {
	st_files=$(for p in "$@"; do
		awk '$6 ~ /^\/dev\/shm\// { print $6, $7 }' /proc/$p/maps
		ls -l /proc/$p/fd | sed -n 's/.* -> \(\/dev\/shm\/\)/\1/p'
	done 2>/dev/null | sort -u)
	[ "$(echo "$st_files" | grep -c '^/dev/shm/ucx_shm_posix_.* (deleted)$')" -ge 8 ] &&
		echo "$st_files" | grep -q '^/dev/shm/mpich_shar_tmp.* (deleted)$' &&
		! echo "$st_files" | grep -qv '(deleted)$' &&
		! awk -v pids=" $* " 'NR > 1 && index(pids, " " $5 " ") &&
			substr($3, length($3) - 3, 1) % 2 == 0 { f = 1 } END { exit !f }' /proc/sysvipc/shm
}
# stop_settled PIDS...: stop the tasks; true, leaving them stopped, once they are settled;
# false (running again) when they are not
stop_settled() {
	kill -STOP "$@"
	ss_i=0
	while states "$@" | grep -qv '[Tt]' && [ $ss_i -lt 1000 ]; do
		ss_i=$((ss_i + 1))
		sleep 0.01
	done
	settled "$@" && return 0
	kill -CONT "$@"
	return 1
}

for sig in TERM INT KILL; do
	snap | sort >"$T/before"
	# a job that runs for minutes unless killed: 4 ranks over 2 tasks
	$S --pmi -n 4 -t 2 $P 10000000 2000 1 >"$T/out" 2>&1 &
	job=$!
	# handshake: both tasks are there and, stopped, settled (hang guard: 120 s); the kill
	# comes while they are stopped, so at that point
	i=0 tasks=
	while [ $i -lt 1200 ]; do
		tasks=$(pgrep -P $job | tr '\n' ' ')
		# shellcheck disable=SC2086
		[ "$(echo "$tasks" | wc -w)" = 2 ] && settled $tasks && stop_settled $tasks && break
		i=$((i + 1))
		sleep 0.1
	done
	# the segments the job maps: /dev/shm names and SysV ids (maps' inode column)
	# shellcheck disable=SC2086
	segs=$(cat $(for p in $tasks; do echo /proc/$p/maps; done) 2>/dev/null |
		awk '$6 ~ /^\/dev\/shm\// { print $6 } $6 ~ /^\/SYSV/ { print "shmid " $5 }' | sort -u)
	# the job's processes: its tasks and each rank's placeholder process (a child of its task,
	# in the same address space: the segments go with the last of them)
	# shellcheck disable=SC2086
	procs="$tasks$(for p in $tasks; do pgrep -P $p; done | tr '\n' ' ')"
	kill -$sig $job
	# the ranks act on a forwarded SIGTERM or SIGINT once running again; SIGKILL (the tasks'
	# PR_SET_PDEATHSIG) ends stopped ones, which then run no more of the program
	# shellcheck disable=SC2086
	[ $sig = KILL ] || kill -CONT $tasks 2>/dev/null
	wait $job
	rc=$?
	# shellcheck disable=SC2086
	if [ $i -ge 1200 ] || [ -z "$tasks" ] || [ -z "$segs" ]; then
		no "SIG$sig: the job was running MPI with shared memory before the kill (tasks '$tasks')"
		kill -KILL $job $tasks 2>/dev/null
		continue
	fi
	# shellcheck disable=SC2086
	gone $procs
	ended=$?
	left=$(leftovers "$T/before")
	# shellcheck disable=SC2086
	left="$left$(sysv_of $tasks)"
	still=
	for s in $(echo "$segs" | sed 's/^shmid /shmid:/'); do
		case $s in
		shmid:*) awk -v id="${s#shmid:}" 'NR > 1 && $2 == id { f = 1 } END { exit !f }' \
			/proc/sysvipc/shm && still="$still $s" ;;
		*) [ -e "$s" ] && still="$still $s" ;;
		esac
	done
	# shellcheck disable=SC2086
	if [ $ended = 0 ] && [ -z "$left" ] && [ -z "$still" ]; then
		ok "ulpspawn killed by SIG$sig mid-job (status $rc): no task, /dev/shm entry or SysV segment left ($(echo "$segs" | wc -l) were mapped${MPI_KILL_ISOLATED:+; own /dev/shm and IPC namespace})"
	else
		echo "# tasks: $tasks; processes: $procs (all ended within 60 s: $([ $ended = 0 ] && echo yes || echo no)); new entries: $left; job's segments still there: $still" >>"$T/out"
		no "ulpspawn killed by SIG$sig mid-job: no task, /dev/shm entry or SysV segment left"
		# shellcheck disable=SC2086
		kill -KILL $procs 2>/dev/null
	fi
done

finish mpi-kill
