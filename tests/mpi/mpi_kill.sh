#!/bin/sh
# ulpspawn killed mid-job (SIGTERM, SIGINT, SIGKILL) leaves nothing behind: no process of the
# job, no /dev/shm entry and no SysV shared-memory segment the job made. Debian's MPICH (ch4:ucx)
# makes a /dev/shm file per node in MPI_Init and UCX makes /dev/shm files and SysV segments per
# rank; both remove the names once every rank has attached (they show as "(deleted)" in
# /proc/PID/maps), so the kernel frees them when the last task that maps them ends (tasks die
# with ulpspawn: PR_SET_PDEATHSIG). A kill inside MPI_Init, before the names are removed, can
# leave them, as it can under mpiexec: the test kills after that point (docs/mpi.md). The job's
# segments are read from its tasks' maps while it runs, then must be gone.
# Usage: tests/mpi/mpi_kill.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
S=$O/bin/ulpspawn
P=$O/examples/mpi/mpi_prog
[ -x "$P" ] || { echo "$P not built (needs mpicc.mpich: sh mk/deps.sh check)"; exit 1; }

# snap: the /dev/shm names now, one per line
snap() { ls /dev/shm; }
# leftovers BEFORE: /dev/shm names now that were not in BEFORE and that no process maps, still
# there after up to 10 s (another test's MPI job may hold one for a moment; a leftover stays)
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
		[ ! -s "$T/new" ] || [ $i -ge 100 ] && break
		i=$((i + 1))
		sleep 0.1
	done
	cat "$T/new"
}
# sysv_of PIDS...: the SysV segments that these processes created (cpid) and that still exist
sysv_of() {
	awk -v pids=" $* " 'NR > 1 && index(pids, " " $5 " ") { print "shmid " $2 }' /proc/sysvipc/shm
}
# gone PIDS...: every one ended (a zombie waiting for a reaper counts as ended: it holds no
# memory, no file and no segment), after up to 10 s
gone() {
	i=0
	for p in "$@"; do
		while [ -d /proc/$p ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ]; do
			[ $i -ge 100 ] && return 1
			i=$((i + 1))
			sleep 0.1
		done
	done
}

for sig in TERM INT KILL; do
	snap | sort >"$T/before"
	# a job that runs for minutes unless killed: 4 ranks over 2 tasks
	$S --pmi -n 4 -t 2 $P 10000000 2000 1 >"$T/out" 2>&1 &
	job=$!
	# handshake: MPI_Init done in every rank: MPICH's node file and UCX's two files per rank
	# are mapped, every one already unlinked ("(deleted)"), none by name only (hang guard: 120 s)
	i=0 tasks=
	while [ $i -lt 1200 ]; do
		tasks=$(pgrep -P $job | tr '\n' ' ')
		# shellcheck disable=SC2086
		maps=$(for p in $tasks; do cat /proc/$p/maps; done 2>/dev/null |
			awk '$6 ~ /^\/dev\/shm\// { print $6, $7 }' | sort -u)
		if [ "$(echo "$tasks" | wc -w)" = 2 ] &&
			[ "$(echo "$maps" | grep -c '^/dev/shm/ucx_shm_posix_.* (deleted)$')" -ge 8 ] &&
			echo "$maps" | grep -q '^/dev/shm/mpich_shar_tmp.* (deleted)$' &&
			! echo "$maps" | grep -qv '(deleted)$'; then
			break
		fi
		i=$((i + 1))
		sleep 0.1
	done
	# the segments the job maps: /dev/shm names and SysV ids (maps' inode column)
	# shellcheck disable=SC2086
	segs=$(cat $(for p in $tasks; do echo /proc/$p/maps; done) 2>/dev/null |
		awk '$6 ~ /^\/dev\/shm\// { print $6 } $6 ~ /^\/SYSV/ { print "shmid " $5 }' | sort -u)
	kill -$sig $job
	wait $job
	rc=$?
	# shellcheck disable=SC2086
	if [ $i -ge 1200 ] || [ -z "$tasks" ] || [ -z "$segs" ]; then
		no "SIG$sig: the job was running MPI with shared memory before the kill (tasks '$tasks')"
		kill -KILL $job $tasks 2>/dev/null
		continue
	fi
	# shellcheck disable=SC2086
	gone $tasks
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
		ok "ulpspawn killed by SIG$sig mid-job (status $rc): no task, /dev/shm entry or SysV segment left ($(echo "$segs" | wc -l) were mapped)"
	else
		echo "# tasks: $tasks (all ended within 10 s: $([ $ended = 0 ] && echo yes || echo no)); new entries: $left; job's segments still there: $still" >>"$T/out"
		no "ulpspawn killed by SIG$sig mid-job: no task, /dev/shm entry or SysV segment left"
		# shellcheck disable=SC2086
		kill -KILL $tasks 2>/dev/null
	fi
done

finish mpi-kill
