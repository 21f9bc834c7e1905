#!/bin/sh
# make deb: the Debian packages (debian/) built with dpkg-buildpackage -us -uc -b from a clean copy
# of the sources (HEAD plus uncommitted changes to tracked files), then lintian, which fails on
# errors. Result: OUT/*.deb and OUT/lintian.txt. Usage: mk/deb.sh OUT
set -e
out=$1
rm -rf "$out"
mkdir -p "$out/src/libulp"
rev=$(git stash create)
git archive "${rev:-HEAD}" | tar -x -C "$out/src/libulp"
(cd "$out/src/libulp" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log"
	echo "deb: dpkg-buildpackage failed (log: $out/build.log)"
	exit 1
}
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
rm -rf "$out/src"
lintian --fail-on error --info "$out"/*.changes >"$out/lintian.txt" 2>&1 || {
	cat "$out/lintian.txt"
	echo "deb: lintian found errors"
	exit 1
}
echo "deb: $(cd "$out" && ls *.deb | tr '\n' ' ')"
echo "deb: lintian: $(grep -c '^E:' "$out/lintian.txt") errors, $(grep -c '^W:' "$out/lintian.txt") warnings ($out/lintian.txt)"
