#!/bin/sh
# Every program and library that runs libulp binds its shared-library calls at load time: a lazy
# binding runs ld.so's resolver, which reads TLS, and a first call from a PVAS task (fs = 0) or
# under a ULP's TLS crashed (the kmod backend's sha256sum case). Checked on the built files.
# Usage: tests/bindnow.sh BUILD_DIR
B=${1:-build}
rc=0
for f in "$B"/bin/ulpexec "$B"/bin/ulpspawn "$B"/tests/pvas/test_pvas_api "$B"/bench/ulp_yield \
	"$B"/examples/paper/ulpspawn_sample "$B"/libulp.so.0*; do
	[ -e "$f" ] || continue
	if readelf -d "$f" | grep -q 'BIND_NOW\|Flags:.*NOW'; then
		echo "ok - $f binds at load time"
	else
		echo "not ok - $f binds lazily (link it with -Wl,-z,now)"
		rc=1
	fi
done
exit $rc
