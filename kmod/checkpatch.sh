#!/bin/sh
# checkpatch.pl --no-tree -f on the module and its uapi header. The script
# comes from Debian's linux-source-6.1 package (installed when missing),
# extracted at lint time into OUTDIR; it is not kept in this tree.
# Usage: kmod/checkpatch.sh [OUTDIR]   (default build-kmod)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-kmod}
pkg=linux-source-6.1
tarball=/usr/src/$pkg.tar.xz
if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
	if [ "$(id -u)" != 0 ]; then
		echo "checkpatch.sh: needs $pkg; run as root or: sudo apt-get install $pkg" >&2
		exit 1
	fi
	echo "checkpatch.sh: installing $pkg"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || apt-get update
	apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
fi
cp_dir=$out/checkpatch
script=$cp_dir/scripts/checkpatch.pl
if [ ! -e "$script" ] || [ "$tarball" -nt "$script" ]; then
	rm -rf "$cp_dir"
	mkdir -p "$cp_dir"
	tar -xJf "$tarball" -C "$cp_dir" --strip-components=1 \
		"$pkg/scripts/checkpatch.pl" "$pkg/scripts/spelling.txt" \
		"$pkg/scripts/const_structs.checkpatch"
	touch "$script"
fi
cd "$top"
perl "$script" --no-tree --quiet --show-types -f kmod/*.c kmod/*.h include/uapi/pvas_ioctl.h
echo "checkpatch.sh: kmod/ and include/uapi/pvas_ioctl.h are clean"
