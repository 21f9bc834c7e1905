#!/bin/sh
# What users' MPICH programs do beyond mpi_check (tests/mpi/mpi_more.c), as ULP ranks under
# ulpspawn --pmi, compared with mpiexec.mpich running the same binary: MPI-IO, one-sided windows,
# MPI_THREAD_MULTIPLE, communicators and datatypes, MPI in a plugin, tagged output (-l), stdin,
# the ranks' environment and directory, ranks that leave early, spawn.
# Usage: tests/mpi/mpi_more.sh BUILD_DIR
O=${1:-build}
. tests/integ/lib.sh
B=$(cd "$O" && pwd) # absolute: some runs start in another directory
P=$B/tests/mpi/mpi_more
S=$B/bin/ulpspawn
MPIEXEC=$(command -v mpiexec.mpich)
[ -n "$MPIEXEC" ] || { echo "mpiexec.mpich missing: sh mk/deps.sh check installs it"; exit 1; }
export TEST_TIMEOUT=120

# same NAME REF_CMD -- ULP_CMD...: both exit 0, print the same, and every part found 0 wrong.
same() {
	s_name=$1
	shift
	if expect "$s_name (mpiexec)" 0 "$MPIEXEC" "$@" && cp "$T/out" "$T/ref" &&
		[ "$(grep -c ': 0 wrong$' "$T/ref")" -ge 1 ] && ! grep -q ': [1-9][0-9]* wrong' "$T/ref"; then
		:
	else
		no "$s_name: mpiexec.mpich's run passes its own checks"
		return
	fi
	for u in "-t 1" "-t 2 -w 1"; do
		# shellcheck disable=SC2086 # $u: options
		if expect "$s_name ($u)" 0 "$S" --pmi $u "$@" && cmp -s "$T/out" "$T/ref"; then
			ok "$s_name: ULP ranks ($u) print what mpiexec's processes print"
		else
			diff "$T/ref" "$T/out" >"$T/diff" 2>&1
			cat "$T/diff" >>"$T/out"
			no "$s_name: ULP ranks ($u) print what mpiexec's processes print"
		fi
	done
}

same "MPI-IO: collective, view, shared pointer, atomic" -n 4 "$P" io "$T"
if [ -n "$(find "$T" -maxdepth 1 -name "*mpi_more.io*")" ]; then
	no "MPI-IO: DELETE_ON_CLOSE leaves no file"
else
	ok "MPI-IO: DELETE_ON_CLOSE leaves no file"
fi
same "one-sided: shared windows, fence and lock epochs" -n 4 "$P" win
same "MPI_THREAD_MULTIPLE: 2 threads per rank" -n 4 "$P" thread
# ...where a rank whose program started threads yields at its threads' unlocks, never inside
# MPICH's lock (libulp/guest/mpi_yield.c): a yield there kept the other thread from it, and 5 jobs
# in about 150 hung for good before 28 Nov (the two ranks of a pair, each polling with one thread
# while the other waited for the lock); with no yields at all each rank polled ~50 million times
if expect "thread, yield stats" 0 env ULP_MPI_YIELD_STATS=1 "$S" --pmi -n 4 "$P" thread &&
	[ "$(grep -c '^libulp-mpiyield: rank [0-3]: [0-9]* polls, [1-9][0-9]* yields (MPI_THREAD_MULTIPLE, then threads: yields at unlocks)$' "$T/out")" = 4 ]; then
	ok "MPI_THREAD_MULTIPLE: a rank with threads yields at its unlocks, not inside MPICH's lock"
else
	no "MPI_THREAD_MULTIPLE: a rank with threads yields at its unlocks, not inside MPICH's lock"
fi
# 8 ranks of 5 threads: each spun for whole quanta before 27 Nov (the FUTEX_WAKEs of MPICH's lock
# hid them from the spinner detection): 18-35 s, once past this guard; about 5 s on 27 Nov, 0.2 s
# since the yields at unlocks (28 Nov)
if expect "mpiexec -n 8 thread" 0 "$MPIEXEC" -n 8 "$P" thread && cp "$T/out" "$T/ref" &&
	expect "ulpspawn -n 8 thread" 0 "$S" -n 8 "$P" thread && cmp -s "$T/out" "$T/ref"; then
	ok "MPI_THREAD_MULTIPLE: 8 ranks of 5 threads as ULPs print what mpiexec's print"
else
	no "MPI_THREAD_MULTIPLE: 8 ranks of 5 threads as ULPs print what mpiexec's print"
fi
same "split/dup, Ialltoallv, Cancel, datatypes, Mprobe" -n 3 "$P" comm
# a rank that is a shell exec'ing the MPI program, as job scripts do: its PMI_FD must survive the
# execve (a rank alone in its task drops its close-on-exec descriptors, as a process would; the
# PMI end was one until 28 Nov, and with -t 2 every such rank's MPI_Init failed)
same "a shell rank exec'ing the MPI program" -n 2 /bin/sh -c "exec $P comm"
# MPI in a plugin that a program without MPI loads with RTLD_LOCAL (tests/mpi/mpi_plugin.c): the
# yield library finds MPICH outside the global scope, and learns its thread level
PL=$B/tests/mpi/mpi_plugin_main
if expect "plugin (mpiexec)" 0 "$MPIEXEC" -n 3 "$PL" "$B/tests/mpi/mpi_plugin.so" &&
	cp "$T/out" "$T/ref" && grep -q '^plugin: 3 ranks, MPI_THREAD_MULTIPLE, allreduce ok$' "$T/ref" &&
	expect "plugin" 0 env ULP_MPI_YIELD_STATS=1 "$S" --pmi -n 3 "$PL" "$B/tests/mpi/mpi_plugin.so" &&
	grep -v '^libulp-mpiyield: ' "$T/out" | cmp -s - "$T/ref" &&
	[ "$(grep -c '^libulp-mpiyield: rank [0-2]: [0-9]* polls, [0-9]* yields (MPI_THREAD_MULTIPLE, one thread)$' "$T/out")" = 3 ]; then
	ok "MPI in a plugin loaded with RTLD_LOCAL: as under mpiexec; the yield library knows its level"
else
	no "MPI in a plugin loaded with RTLD_LOCAL: as under mpiexec; the yield library knows its level"
fi

# -l and --output-filename give each rank a task of its own, whose descriptors are its PMI end
# and its output pipes: before 27 Nov the PMI end was closed there, and MPI_Init failed.
if expect "mpiexec -l" 0 "$MPIEXEC" -l -n 2 "$P" comm && cp "$T/out" "$T/ref" &&
	expect "ulpspawn -l" 0 "$S" --pmi -l -n 2 "$P" comm && cmp -s "$T/out" "$T/ref" &&
	grep -q '^\[0\] comm ialltoallv: 0 wrong$' "$T/out"; then
	ok "ulpspawn --pmi -l tags the ranks' lines as mpiexec -l does"
else
	diff "$T/ref" "$T/out" >"$T/diff" 2>&1
	cat "$T/diff" >>"$T/out"
	no "ulpspawn --pmi -l tags the ranks' lines as mpiexec -l does"
fi
if expect "ulpspawn --output-filename" 0 "$S" --pmi --output-filename "$T/of" -n 2 "$P" comm &&
	[ "$(grep -c ': 0 wrong$' "$T/of/0/stdout")" = 6 ] && [ ! -s "$T/of/1/stdout" ]; then
	ok "ulpspawn --pmi --output-filename: rank 0's lines in its file"
else
	no "ulpspawn --pmi --output-filename: rank 0's lines in its file"
fi

# stdin is rank 0's. mpiexec's other ranks get a pipe nobody writes (a read there never returns);
# ulpspawn's get /dev/null (Open MPI's choice): before 27 Nov they shared the job's stdin, and
# whichever rank read first took rank 0's input.
echo x | expect "mpiexec stdin" 0 "$MPIEXEC" -n 1 "$P" stdin && cp "$T/out" "$T/ref"
for u in "-t 1" "-t 3" "-t 1 -w 1"; do
	# shellcheck disable=SC2086 # $u: options
	if echo x | expect "ulpspawn stdin $u" 0 "$S" --pmi -n 3 $u "$P" stdin &&
		[ "$(head -1 "$T/out")" = "$(cat "$T/ref")" ] &&
		[ "$(grep -c "^rank [12] read 0 bytes ''$" "$T/out")" = 2 ] &&
		[ "$(wc -l <"$T/out")" = 3 ]; then
		ok "stdin goes to rank 0 only ($u); the other ranks read EOF"
	else
		no "stdin goes to rank 0 only ($u); the other ranks read EOF"
	fi
done

# The ranks' environment and directory: -genv, MPIR_CVAR_* from the launcher's, -wdir.
if (cd / && MPIR_CVAR_ASYNC_PROGRESS=0 expect "mpiexec env" 0 "$MPIEXEC" -n 2 -genv FOO bar \
	-wdir "$T" "$P" env FOO MPIR_CVAR_ASYNC_PROGRESS PMI_RANK) && cp "$T/out" "$T/ref" &&
	(cd / && MPIR_CVAR_ASYNC_PROGRESS=0 expect "ulpspawn env" 0 "$S" --pmi -n 2 \
		-genv FOO bar --wdir "$T" "$P" env FOO MPIR_CVAR_ASYNC_PROGRESS PMI_RANK) &&
	cmp -s "$T/out" "$T/ref" && grep -q "^rank 1 cwd $T FOO=bar MPIR_CVAR_ASYNC_PROGRESS=0 PMI_RANK=1$" "$T/out"; then
	ok "-genv, MPIR_CVAR_* and -wdir reach the ranks as under mpiexec"
else
	diff "$T/ref" "$T/out" >"$T/diff" 2>&1
	cat "$T/diff" >>"$T/out"
	no "-genv, MPIR_CVAR_* and -wdir reach the ranks as under mpiexec"
fi

# Ranks that leave while the others wait in MPI_Recv. mpiexec's status for the first two is
# racy (exit(3): 3 or 9; a return from main: 0 or 9, seen here); ulpspawn's is the rank's.
if expect "exit(3)" 3 "$S" --pmi -n 3 "$P" exit 1 3 && grep -q "rank 1 ended before MPI_Finalize" "$T/out"; then
	ok "a rank that calls exit(3) without MPI_Finalize ends the job with status 3, named"
else
	no "a rank that calls exit(3) without MPI_Finalize ends the job with status 3, named"
fi
if expect "return" 1 "$S" --pmi -n 3 "$P" return 1 && grep -q "rank 1 ended before MPI_Finalize" "$T/out"; then
	ok "a rank that returns from main without MPI_Finalize ends the job (1), named"
else
	no "a rank that returns from main without MPI_Finalize ends the job (1), named"
fi
if expect "mpiexec abort" 7 "$MPIEXEC" -n 3 "$P" abort 1 7 &&
	expect "ulpspawn abort" 7 "$S" --pmi -n 3 "$P" abort 1 7 &&
	grep -q "application called MPI_Abort(MPI_COMM_WORLD, 7) - process 1" "$T/out" &&
	grep -q "rank 1 called MPI_Abort with exit code 7" "$T/out"; then
	ok "MPI_Abort(7) from rank 1 while the others block in MPI_Recv: status 7, as mpiexec"
else
	no "MPI_Abort(7) from rank 1 while the others block in MPI_Recv: status 7, as mpiexec"
fi

# After MPI_Finalize a rank is on its own: one that returns 5 while the others are still at work
# makes the job's status 5 under both launchers.
st=$(timeout 60 "$MPIEXEC" -n 3 "$P" finalize 1 5 >/dev/null 2>&1; echo $?)
if [ "$st" = 5 ] && expect "finalize then 5" 5 "$S" -n 3 "$P" finalize 1 5 &&
	grep -q "rank 1 .*exited with status 5" "$T/out" && ! grep -q "before MPI_Finalize" "$T/out"; then
	ok "a rank that returns 5 after MPI_Finalize, before the others end: status 5, as mpiexec"
else
	no "a rank that returns 5 after MPI_Finalize, before the others end: status 5, as mpiexec ($st)"
fi

# Debian's MPICH (ch4:ucx) cannot spawn or open a port under any launcher: UCX has no dynamic
# processes, and MPICH says so before it asks its PMI server. Same status, same message.
for m in spawn port; do
	st=$(timeout 60 "$MPIEXEC" -n 2 "$P" $m >/dev/null 2>&1; echo $?)
	want=$([ $m = spawn ] && echo "MPI_Comm_spawn(" || echo "MPI_Open_port(")
	if [ "$st" != 0 ] && expect "ulpspawn $m" "$st" "$S" --pmi -n 2 "$P" $m &&
		grep -qF "$want" "$T/out" && grep -q "called MPI_Abort" "$T/out"; then
		ok "$m: fails as under mpiexec (status $st), MPICH's message names the call"
	else
		no "$m: fails as under mpiexec (status $st), MPICH's message names the call"
	fi
done

finish mpi-more
