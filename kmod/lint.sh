#!/bin/sh
# Lint of the kernel module:
#  - checkpatch.pl --no-tree -f on kmod/ and its uapi headers. The script comes
#    from Debian's linux-source-6.1 package (installed when missing),
#    extracted at lint time into OUTDIR; it is not kept in this tree.
#  - a W=1 build checked by sparse (C=2): no warning allowed.
# Usage: kmod/lint.sh [OUTDIR]   (default build-kmod)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build-kmod}" && cd "${1:-$top/build-kmod}" && pwd)
pkg=linux-source-6.1
tarball=/usr/src/$pkg.tar.xz
sh "$top/mk/deps.sh" kmod
for p in "$pkg" sparse; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
	if [ "$(id -u)" != 0 ]; then
		echo "lint.sh: needs $p; run as root or: sudo apt-get install $p" >&2
		exit 1
	fi
	echo "lint.sh: installing $p"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || apt-get update
	apt-get install -y -qq --no-install-recommends "$p" >/dev/null
done
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
perl "$script" --no-tree --quiet --show-types -f kmod/*.c kmod/*.h include/uapi/pvas_ioctl.h \
	include/uapi/pvas_auxv.h
echo "lint.sh: checkpatch: kmod/ and include/uapi/pvas_{ioctl,auxv}.h are clean"

src=$out/lint-mod
rm -rf "$src"
make -s -C kmod dkms-src DKMS_DIR="$src"
if make -C "$src" check-build >"$src.log" 2>&1 && ! grep -E 'warning:|error:' "$src.log"; then
	echo "lint.sh: sparse and W=1: clean"
else
	cat "$src.log"
	echo "lint.sh: sparse or W=1 build found problems" >&2
	exit 1
fi
