#!/bin/sh
# Does `make check T=PATTERNS` want a test? PATTERNS: comma-separated shell globs matched against
# test names (the names in build/test-results/, e.g. integ-ulpexec, asan-loader-run, pvas-api).
#   tests/wants.sh NAME          exit 0 when a pattern matches the test NAME (or T is unset)
#   tests/wants.sh -p PREFIX     exit 0 when a pattern may match a name starting with PREFIX:
#                                lets a target that builds a whole tree (check-asan, check-cross)
#                                skip that build when no test of it is wanted
# T comes from the environment as ULP_T (the Makefile exports it).
[ -z "$ULP_T" ] && exit 0
prefix=
if [ "$1" = -p ]; then
	prefix=1
	shift
fi
name=$1
IFS=,
for pat in $ULP_T; do
	[ -z "$pat" ] && continue
	if [ -z "$prefix" ]; then
		# shellcheck disable=SC2254
		case "$name" in $pat) exit 0 ;; esac
	else
		lit=${pat%%[*?[]*} # the pattern's literal head
		case "$lit" in "$name"*) exit 0 ;; esac
		case "$name" in "$lit"*) exit 0 ;; esac
	fi
done
exit 1
