#!/bin/bash
# make check-fresh: the README's commands on a fresh Debian 12 (bookworm), as root in a chroot.
#
# A minimal Debian 12 (debootstrap --variant=minbase, from the mirror this machine's apt uses) is
# kept in a cache OUTSIDE the clone ($FRESH_CACHE/bookworm, default /var/cache/libulp-fresh), built
# once and reused while intact. Each run puts a throw-away overlay on top of it, so the cached tree
# stays as debootstrap left it: every package the build and tests need must come from mk/deps.sh,
# and a package missing there fails this test. The source copied in is the repository's HEAD plus
# uncommitted changes to tracked files (git stash create; nothing else of the working tree).
#
# Steps, each its own pass/fail line:
#   demo   apt-get install make (a minimal Debian has none; the README says so), then `make demo`
#   check  `make check` restricted to its quick part: units and integration (no kmod VM, no cross,
#          no ASan; no 10,000-ULP run, which make check does on the host: ULP_TEST_NO_SYSCTL); a
#          test skipped because a program is "not installed" fails the step
#   debs   only when FRESH_DEBS names a folder of .deb files (make deb): install them with apt and
#          use them (ulpexec, ulpspawn, man page, a program built with pkg-config against libulp.so
#          and against libulp.a)
# FRESH_STEPS picks steps (default "demo check debs"). The chroot runs in its own mount and PID
# namespaces: its mounts (/proc, /dev, /sys, the overlay) never appear on the host and vanish with
# the namespace, however the run ends; no process it started outlives it.
#
# Needs root (debootstrap, mount, chroot) and the network (the Debian mirror).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=bookworm
CACHE=${FRESH_CACHE:-/var/cache/libulp-fresh}
BASE=$CACHE/$SUITE
STEPS=${FRESH_STEPS:-demo check debs}
DEBS=${FRESH_DEBS:-}
STEP_TIMEOUT=${FRESH_STEP_TIMEOUT:-1500}
# One test's limit (tests/run-one.sh): the chroot's first build competes with the package installs.
TEST_TIMEOUT=${ULP_TEST_TIMEOUT:-900}
say() { echo "check-fresh: $*"; }

# --- inside the namespaces: mount, chroot, run the steps -------------------------------------
if [ "${1:-}" = --inside ]; then
	W=$2
	R=$W/root
	mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$W/upper,workdir=$W/work" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /dev "$R/dev"
	mount --rbind /sys "$R/sys"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	mkdir -p "$CACHE/archives/partial" "$R/var/cache/apt/archives"
	# Downloaded .debs are kept between runs (installing them is still deps.sh's job).
	mount --bind "$CACHE/archives" "$R/var/cache/apt/archives"
	if [ -n "$DEBS" ]; then
		mkdir -p "$R/debs"
		mount --bind "$DEBS" "$R/debs"
	fi
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	cp "$W/sources.list" "$R/etc/apt/sources.list"
	git -C "$SRC" archive --prefix=libulp/ "$(cat "$W/rev")" | tar -x -C "$R/root"
	in_root() {
		chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
	}
	run_step() { # NAME SCRIPT: the script runs in /root/libulp under bash -e
		local name=$1 t0 rc=0
		t0=$(date +%s)
		say "== step $name"
		timeout -k 10 "$STEP_TIMEOUT" chroot "$R" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C \
			DEBIAN_FRONTEND=noninteractive ULP_TEST_TIMEOUT="$TEST_TIMEOUT" ULP_TEST_NO_SYSCTL=1 \
			/bin/bash -ec "cd /root/libulp; $2" || rc=$?
		if [ $rc = 0 ]; then
			say "PASS: $name ($(($(date +%s) - t0)) s)"
		else
			say "FAIL: $name (exit $rc, $(($(date +%s) - t0)) s)"
			echo "$name" >>"$W/failed"
		fi
	}
	in_root /usr/bin/dpkg-query -W -f='${Package} ${Version}\n' base-files | sed 's/^/check-fresh: fresh root: /'
	for s in $STEPS; do
		case $s in
		demo) run_step demo '
			apt-get update -qq
			apt-get install -y -qq --no-install-recommends make >/dev/null
			make demo' ;;
		check) run_step check '
			make check CHECK_TARGETS="check-units check-integ"
			if grep -l "# SKIP.*not installed" build/test-results/*.log 2>/dev/null; then
				echo "a test was skipped for a program mk/deps.sh did not install:"
				grep -h "# SKIP.*not installed" build/test-results/*.log
				exit 1
			fi' ;;
		debs)
			[ -n "$DEBS" ] || { say "step debs: FRESH_DEBS not set, not run"; continue; }
			run_step debs "$(cat "$SRC/tests/fresh/debs.sh")" ;;
		*) say "unknown step '$s'"; echo "$s" >>"$W/failed" ;;
		esac
	done
	[ ! -s "$W/failed" ]
	exit
fi

# --- outside: the cached base, a scratch folder, the namespaces -----------------------------
[ "$(id -u)" = 0 ] || { say "needs root (debootstrap, mount, chroot)"; exit 1; }
for c in debootstrap unshare git; do
	command -v $c >/dev/null || { say "$c missing: sh mk/deps.sh check (as root)"; exit 1; }
done

# "URI SUITE" for each Debian source apt uses here (deb822 .sources files and one-line .list).
apt_sources() {
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) s = s " " $i }
				/^$/ { for (n = split(s, a, " "); n > 0; n--) print u, a[n]; u = s = "" }
				END { for (n = split(s, a, " "); n > 0; n--) print u, a[n] }' "$f"
		done
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) \([^ ]*\) .*/\2 \3/p'
	} | grep -E " $SUITE(-updates|-security)?\$" | sort -u || true
}
MIRROR=$(apt_sources | awk -v s=$SUITE '$2 == s && !m { m = $1 } END { print m }')
MIRROR=${MIRROR:-http://deb.debian.org/debian}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one run at a time uses or rebuilds the cache

# Intact: debootstrap finished (its marker is written last), from this mirror, and the tree's
# package manager runs and knows its essential packages.
intact() {
	[ "$(cat "$BASE/.libulp-fresh" 2>/dev/null)" = "$SUITE minbase $MIRROR" ] &&
		chroot "$BASE" /usr/bin/dpkg-query -W -f='${Status}\n' base-files libc6 apt dpkg 2>/dev/null |
		grep -c '^install ok installed$' | grep -qx 4
}
if intact; then
	say "reusing $BASE (debootstrap of $SUITE from $MIRROR)"
else
	say "building $BASE: debootstrap --variant=minbase $SUITE from $MIRROR"
	rm -rf "$BASE" "$BASE.new"
	t0=$(date +%s)
	debootstrap --variant=minbase "$SUITE" "$BASE.new" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
		tail -20 "$CACHE/debootstrap.log"
		say "debootstrap failed (log: $CACHE/debootstrap.log)"
		exit 1
	}
	rm -rf "$BASE.new/var/cache/apt/archives/"*.deb
	echo "$SUITE minbase $MIRROR" >"$BASE.new/.libulp-fresh"
	mv "$BASE.new" "$BASE"
	say "debootstrap took $(($(date +%s) - t0)) s"
	intact || { say "$BASE is not usable after debootstrap"; exit 1; }
fi

W=$(mktemp -d /var/tmp/libulp-fresh.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/upper" "$W/work" "$W/root"
rev=$(git -C "$SRC" stash create)
echo "${rev:-HEAD}" >"$W/rev"
say "source: $(git -C "$SRC" rev-parse --short HEAD)${rev:+ plus uncommitted changes}"
apt_sources | awk '{ print "deb " $1 " " $2 " main" }' >"$W/sources.list"
[ -s "$W/sources.list" ] || echo "deb $MIRROR $SUITE main" >"$W/sources.list"
if [ -n "$DEBS" ]; then
	FRESH_DEBS=$(cd "$DEBS" && pwd)
	export FRESH_DEBS
fi
t0=$(date +%s)
rc=0
# unshare --fork ignores SIGTERM and SIGINT (they are its child's to handle, and the child is the
# namespace's init, which ignores them): pass them on as SIGKILL, which --kill-child turns into
# the end of every process in the namespace.
unshare --mount --pid --fork --kill-child "$0" --inside "$W" &
ns=$!
trap 'kill -KILL $ns 2>/dev/null' TERM INT
wait $ns || rc=$?
wait $ns 2>/dev/null || true # a signal ended the first wait: now the namespace is gone
say "$([ $rc = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - t0)) s"
exit $rc
