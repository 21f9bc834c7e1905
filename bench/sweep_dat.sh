#!/bin/sh
# The BENCH mpi_sweep lines of bench/mpi_sweep.sh (stdin) as the table bench/plot.sh draws
# (mpi_sweep.dat, stdout): one row per rank count, wall and program times of each launcher in
# seconds, nan where a variant did not run, failed or passed the cap. Lines of another
# benchmark, and of other core counts than the first line's, are skipped.
# A second header line, "# host: ...", names the machine that measured (plot.sh puts it in the
# title): this one's processor unless SWEEP_DAT_HOST says otherwise (data measured elsewhere).
# Usage: bench/sweep_dat.sh < mpi_sweep.out > mpi_sweep.dat   (env: SWEEP_DAT_NOTE, a header note)
host=${SWEEP_DAT_HOST:-$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')}
awk -v note="${SWEEP_DAT_NOTE:-}" -v host="$host" '
function val(k,    i, kv) {
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == k && kv[2] ~ /^[0-9.]+$/)
			return kv[2]
	}
	return "nan"
}
BEGIN {
	n = split("ulp ulpnoyield mpich mpichyield ompi", v, " ")
	printf "# ranks"
	for (i = 1; i <= n; i++)
		printf "  %s_s", v[i]
	for (i = 1; i <= n; i++)
		printf "  %s_prog_s", v[i]
	printf " (bench/mpi_sweep.sh: wall time of the launcher command; prog_s: the program'"'"'s own time;"
	printf " nan: not run, failed or over the cap)%s\n", note == "" ? "" : " " note
}
$1 == "BENCH" && $2 == "mpi_sweep" {
	c = val("cores")
	if (cores == "") {
		cores = c
		printf "# host: %s, R ranks on %s CPUs\n", host, cores
	}
	if (c != cores)
		next
	printf "%s", val("ranks")
	for (i = 1; i <= n; i++)
		printf " %s", val(v[i] "_s")
	for (i = 1; i <= n; i++)
		printf " %s", val(v[i] "_prog_s")
	printf "\n"
}'
