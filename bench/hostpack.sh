#!/bin/bash
# Pack what the benchmarks need to run on another x86-64 Linux host that has no MPI and no
# Debian (docs/benchmarks.md's "quiet host" runs): a minimal root of this machine's Debian 12
# files (shell and coreutils, MPICH's and Open MPI's launchers and libraries, UCX, hwloc, PMIx
# and their plugins, every shared library they need) and this build's programs under /src.
#   bench/hostpack.sh BUILD_DIR OUT_DIR        -> OUT_DIR/root.tar.xz (about 55 MB)
#   bench/hostpack.sh --build BUILD_DIR OUT_DIR -> OUT_DIR/build.tar.xz (a newer build alone)
# On the host, as root: unpack root.tar.xz into R (then build.tar.xz over it, replacing R/src),
# mount proc, /dev and /sys into R, and `chroot R bash -c 'cd /src; export
# OMPI_MCA_plm_rsh_agent=/bin/false; taskset -c 0,1 sh bench/mpi_sweep.sh build'` (Open MPI wants
# an rsh agent that exists, even on one node).
set -eu
only_build=0
[ "${1:-}" = --build ] && { only_build=1; shift; }
B=$(cd "${1:?usage: hostpack.sh [--build] BUILD_DIR OUT_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "${2:?usage: hostpack.sh [--build] BUILD_DIR OUT_DIR}"
OUT=$(cd "$2" && pwd)
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT

# /src: the scripts and the build's programs the benchmarks run
mkdir -p "$R/src/build/tests/integ"
cp -a "$top/bench" "$top/tests" "$R/src/"
(cd "$B" && cp -a bin libulp-mpiyield.so libulp.so* examples bench "$R/src/build/" &&
	cp -a tests/integ/iotest "$R/src/build/tests/integ/")
if [ $only_build = 1 ]; then
	tar -C "$R" -cf - src | xz -T2 -3 >"$OUT/build.tar.xz"
	exit 0
fi

mkdir -p "$R/usr/lib" "$R/usr/bin" "$R/usr/sbin" "$R/lib64" "$R/etc" "$R/proc" "$R/sys" \
	"$R/dev" "$R/root" "$R/tmp"
chmod 1777 "$R/tmp"
ln -s usr/lib "$R/lib"
ln -s usr/bin "$R/bin"
ln -s usr/sbin "$R/sbin"
copy() { # PATH: the file (and what a link names) at the same place in the root
	[ -e "$1" ] || return 0
	mkdir -p "$R$(dirname "$1")"
	cp -a "$1" "$R$1"
	r=$(readlink -f "$1")
	[ -e "$R$r" ] || { mkdir -p "$R$(dirname "$r")" && cp -a "$r" "$R$r"; }
}
for b in sh dash bash env date timeout mktemp ls grep mawk awk sed cat tail head realpath \
	taskset id rm sleep sort printf tr wc cut mkfifo sha256sum dd seq nproc uname xargs time \
	mkdir cp tee true false echo basename dirname stat ps kill expr test uptime pgrep chmod \
	mpiexec.hydra mpiexec.mpich hydra_pmi_proxy orterun orted mpirun.openmpi NPmpich2; do
	copy "/usr/bin/$b"
done
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
	/usr/lib/x86_64-linux-gnu/ucx /usr/lib/x86_64-linux-gnu/hwloc \
	/usr/lib/x86_64-linux-gnu/libfabric /etc/openmpi /usr/share/openmpi /usr/share/pmix \
	/usr/share/hwloc /etc/alternatives; do
	[ -e "$d" ] && mkdir -p "$R$(dirname "$d")" && cp -a "$d" "$R$d"
done
# the shared libraries of every program and plugin in the root, until nothing is missing
for _ in 1 2 3; do
	find "$R" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
		xargs -0 -r file -N -F ' ' | awk '/ ELF /{print $1}' |
		xargs -r -n 1 ldd 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' |
		sort -u | while read -r lib; do
		[ -e "$R$lib" ] || copy "$lib"
	done
done
cp -a /lib64/ld-linux-x86-64.so.2 "$R/lib64/"
cp /etc/passwd /etc/group /etc/nsswitch.conf "$R/etc/"
echo "127.0.0.1 localhost" >"$R/etc/hosts"
tar -C "$R" -cf - . | xz -T2 -6 >"$OUT/root.tar.xz"
