#!/bin/sh
# Build pvas.ko against Debian's kernel headers, boot the matching Debian
# kernel in qemu (TCG: no KVM here) with an initramfs holding busybox, the
# module and the test programs, and run tests/kmod/vmtest_*.c inside.
# Passes when the guest reports success through isa-debug-exit and its
# kernel log has no splat (BUG, WARNING, Oops, KASAN, refcount, GPF, slab
# corruption found by slub_debug, lockups, hung tasks).
#
# Usage: tests/kmod/run.sh [OUTDIR]      (default build-kmod/)
# Env:   KVER (default: newest kernel with both image and headers),
#        VMTEST_SCALE (divide loop counts), VMTEST_ONLY (comma-separated
#        test names), VM_TIMEOUT (seconds, default 700),
#        VMTEST_EXTRA (more test programs or scripts, space-separated: copied
#        to /t/extra/ with their shared libraries and run in the guest after
#        the module tests, with /dev/pvas loaded; each must exit 0),
#        VMTEST_EXTRA_DATA (files the extra tests use: copied to /t/data/
#        with their shared libraries, not run).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$top/build-kmod}" && cd "${1:-$top/build-kmod}" && pwd)
cd "$top"
sh mk/deps.sh kmod

if [ -z "${KVER:-}" ]; then
	for v in $(ls -1 /lib/modules | sort -V); do
		[ -e "/lib/modules/$v/build/Makefile" ] && [ -e "/boot/vmlinuz-$v" ] && KVER=$v
	done
fi
[ -n "${KVER:-}" ] || { echo "run.sh: no kernel with both image and headers" >&2; exit 1; }
echo "run.sh: kernel $KVER"

# The module, built from a DKMS-style copy so kmod/ stays clean.
rm -rf "$out/mod"
make -s -C kmod dkms-src DKMS_DIR="$out/mod"
# The outer make's jobserver (make -j2 check) does not reach this make, which then says
# "warning: jobserver unavailable": a warning of make's own, not of the module's code.
env -u MAKEFLAGS -u MFLAGS make -s -C "$out/mod" KDIR="/lib/modules/$KVER/build" >"$out/mod-build.log" 2>&1 ||
	{ cat "$out/mod-build.log"; exit 1; }
if grep -E 'warning:|error:' "$out/mod-build.log"; then
	echo "run.sh: the module build is not clean" >&2
	exit 1
fi
ko=$out/mod/pvas.ko
ref=$(find "/lib/modules/$KVER/kernel" -name '*.ko*' | head -n 1)
want=$(modinfo -F vermagic "$ref")
got=$(modinfo -F vermagic "$ko")
if [ "$want" != "$got" ]; then
	echo "run.sh: vermagic '$got' does not match the kernel's '$want'" >&2
	exit 1
fi
echo "run.sh: vermagic ok ($got)"

# Test programs.
root=$out/initramfs
rm -rf "$root"
mkdir -p "$root/bin" "$root/t" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cflags="-O2 -g -Wall -Wextra -Werror -Wno-unused-parameter"
gcc $cflags -static -Iinclude/uapi -o "$root/t/pvas_vmtest" tests/kmod/vmtest_util.c \
	tests/kmod/vmtest_basic.c tests/kmod/vmtest_load.c tests/kmod/vmtest_elf.c \
	tests/kmod/vmtest_stress.c
gcc $cflags -static-pie -o "$root/t/hello_spie" tests/kmod/hello.c
gcc $cflags -fPIE -pie -o "$root/t/hello_dyn" tests/kmod/hello.c
gcc $cflags -static -no-pie -o "$root/t/hello_exec" tests/kmod/hello.c
gcc $cflags -static -o "$root/t/vmexit" tests/kmod/vmexit.c
# Shared libraries (and interpreter) of a dynamic program, at the same paths.
copy_libs() {
	for lib in $(ldd "$1" 2>/dev/null |
		sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
copy_libs "$root/t/hello_dyn"
for x in ${VMTEST_EXTRA_DATA:-}; do
	mkdir -p "$root/t/data"
	cp -L "$x" "$root/t/data/"
	copy_libs "$x"
done
for x in ${VMTEST_EXTRA:-}; do
	mkdir -p "$root/t/extra"
	cp -L "$x" "$root/t/extra/"
	copy_libs "$x"
done
cp /bin/busybox "$root/bin/busybox"
cp "$ko" "$root/pvas.ko"
cp tests/kmod/init.sh "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out/initramfs.gz"

log=$out/vm.log
echo "run.sh: booting (log: $log)"
start=$(date +%s)
set +e
timeout -k 5 "${VM_TIMEOUT:-700}" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1G \
	-nographic -no-reboot -kernel "/boot/vmlinuz-$KVER" -initrd "$out/initramfs.gz" \
	-append "console=ttyS0 panic=-1 quiet slub_debug=FZPU vmtest_scale=${VMTEST_SCALE:-1} vmtest_only=${VMTEST_ONLY:-}" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null >"$log" 2>&1
rc=$?
set -e
tr -d '\r' <"$log" >"$log.txt"
grep -E '^(PASS|FAIL): |^vmtest: |^pvas-vm: |^fuzz: |^race: |^cycles: |^kills: |^load-kill: |^load-release: |^elf-fuzz: ' "$log.txt" || true
echo "run.sh: VM ran $(($(date +%s) - start)) s, qemu exit $rc"

status=0
# slub_debug (poisoning, red zones, sanity checks) reports as "BUG <cache> (...)".
if grep -nE 'BUG:|BUG [^ ]+ \(|WARNING:|Oops|KASAN|refcount_t|general protection|Call Trace|soft lockup|blocked for more than' "$log.txt"; then
	echo "run.sh: kernel splat in the guest log" >&2
	status=1
fi
# isa-debug-exit: qemu exits (16 << 1) | 1 = 33 when the guest passed.
if [ "$rc" != 33 ] || ! grep -q '^pvas-vm: PASS' "$log.txt"; then
	# The cases that failed, each with the lines before it (ulp_backend.sh prints a failed case's
	# output before its "not ok"), without the guest's dmesg, so that a short excerpt of this log
	# (tests/run-one.sh keeps its last 25 lines) shows them; the log's tail when none is named.
	failed=$(grep -n -B8 -E '^(FAIL: |not ok )' "$log.txt" | grep -v -E '^[0-9]+-\[ *[0-9.]+\] ' | tail -n 24)
	if [ -n "$failed" ]; then
		echo "run.sh: guest did not pass (qemu exit $rc); its failed cases (lines of $log.txt):" >&2
		echo "$failed" >&2
	else
		echo "run.sh: guest did not pass (qemu exit $rc); last lines of $log.txt:" >&2
		tail -n 40 "$log.txt" >&2
	fi
	status=1
fi
[ "$status" = 0 ] && echo "run.sh: kmod VM tests passed"
exit $status
