#!/bin/sh
# Install the Debian packages the build and tests need, only those that are missing.
# Usage: mk/deps.sh [build|check|demo|bench|kmod|fresh|deb]...   (no argument: build)
# `make check-fresh` (tests/fresh/run.sh) proves on a fresh Debian 12 that these lists are complete.
set -e
want="build-essential pkg-config libelf-dev"
for what in "${@:-build}"; do
	case "$what" in
	build) ;;
	check) want="$want libcmocka-dev g++ gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
		gcc-sparc64-linux-gnu libc6-dev-sparc64-cross qemu-user-static libboost-context-dev \
		mpich libmpich-dev netpipe-mpich2 cppcheck clang-format time xz-utils zstd procps git sqlite3 openssl strace gdb" ;;
	demo) want="$want libcmocka-dev mpich libmpich-dev" ;; # make all builds the unit tests too
	bench) want="$want libboost-context-dev g++ mpich libmpich-dev openmpi-bin libopenmpi-dev gnuplot-nox valgrind" ;;
	kmod) want="$want linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio kmod" ;;
	fresh) want="$want debootstrap git" ;;
	deb) want="$want debhelper dh-dkms dpkg-dev fakeroot lintian" ;;
	*) echo "deps.sh: unknown group '$what'" >&2; exit 2 ;;
	esac
done
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing; run as root or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || apt-get update
apt-get install -y -qq --no-install-recommends $missing >/dev/null
