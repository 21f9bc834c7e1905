#!/bin/sh
# make lint: the include rules (README "Layout"). Data flows one way:
#   tools (ulpexec/, ulpspawn/) -> launch/ -> libulp/host -> libulp/kernel -> libulp/thread
#   -> libulp/sched -> libulp/arch (and libulp/*.h); loader/ sits below libulp/kernel.
# A file may include headers of its own folder, of include/ (the public API and uapi/), and of
# the layers below its own. The tools include only include/ and launch/; the guest library
# (libulp/guest/, linked into ULPs) only include/ and libulp/*.h. What each file includes is
# what the compiler says: `$CC -MM` of every source and header, all include folders on the
# path, so a header name resolves to the file it would resolve to in a build.
# Usage: mk/lint-layers.sh [CC]; exits 1 and names each offending file and header.
CC=${1:-${CC:-gcc}}
cd "$(dirname "$0")/.." || exit 2

# Rank of a folder: lower ranks are lower layers; a file may include a lower rank. The
# loader (6) sits between thread (4) and kernel (8): it may use the scheduler and threads,
# never the ULP layer. libulp/*.h (sys.h: raw syscalls over the arch) is 1. The arch's part of
# the syscall trap (libulp/arch/<arch>/sys_*) belongs to the kernel layer.
rank() {
	case "$1" in
	include/*) echo pub ;;
	libulp/arch/*/sys_*) echo 8 ;; # the syscall trap's architecture part: kernel layer
	libulp/arch/*) echo 0 ;;
	libulp/*/*) case "$1" in
		libulp/sched/*) echo 2 ;;
		libulp/thread/*) echo 4 ;;
		libulp/kernel/*) echo 8 ;;
		libulp/host/*) echo 10 ;;
		libulp/guest/*) echo guest ;;
		*) echo other ;;
		esac ;;
	libulp/*.h) echo 1 ;; # libulp/sys.h and the like: over arch, for every layer above it
	loader/*) echo 6 ;;
	launch/*) echo 12 ;;
	ulpexec/* | ulpspawn/* | ulps/*) echo tool ;;
	*) echo other ;;
	esac
}
folder() {
	case "$1" in
	libulp/arch/*/sys_*) echo libulp/kernel ;;
	libulp/arch/*) echo libulp/arch ;;
	libulp/*/*) echo "$1" | cut -d/ -f1-2 ;;
	libulp/*) echo libulp ;;
	*) echo "$1" | cut -d/ -f1 ;;
	esac
}

bad=0
files=$(git ls-files 'libulp/*.[ch]' 'loader/*.[ch]' 'launch/*.[ch]' 'ulpexec/*.[ch]' \
	'ulpspawn/*.[ch]' 'ulps/*.[ch]' 2>/dev/null)
for f in $files; do
	arch=x86_64
	case "$f" in libulp/arch/aarch64/* | libulp/arch/sparc64/*) arch=$(echo "$f" | cut -d/ -f3) ;; esac
	deps=$($CC -MM -x c -D_GNU_SOURCE -D__x86_64__ -Iinclude -Ilibulp -Ilibulp/sched -Ilibulp/arch \
		-Ilibulp/arch/$arch -Iloader -Ilibulp/kernel -Ilibulp/host -Ilaunch "$f" 2>&1) || {
		echo "lint-layers: $f: the compiler cannot list its includes:"
		echo "$deps" | sed 's/^/    /'
		bad=1
		continue
	}
	from=$(rank "$f")
	ffold=$(folder "$f")
	for d in $(echo "$deps" | sed 's/^[^:]*://; s/\\$//' | tr ' ' '\n' | sed -n '/./p'); do
		d=${d#./}
		[ "$d" = "$f" ] && continue
		to=$(rank "$d")
		dfold=$(folder "$d")
		[ "$dfold" = "$ffold" ] && continue
		[ "$to" = pub ] && continue
		ok=0
		case "$from" in
		tool) [ "$to" = 12 ] && ok=1 ;;
		guest) [ "$dfold" = libulp ] && ok=1 ;;
		[0-9]*) case "$to" in [0-9]*) [ "$to" -lt "$from" ] && ok=1 ;; esac ;;
		esac
		if [ $ok = 0 ]; then
			echo "lint-layers: $f includes $d: $ffold may not include $dfold"
			bad=1
		fi
	done
done
[ $bad = 1 ] && echo "lint-layers: the rules are at the top of $0"
[ $bad = 0 ] && echo "lint-layers: include rules hold ($(echo "$files" | wc -w) files)"
exit $bad
