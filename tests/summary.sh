#!/bin/sh
# Print the closing line of `make check` and fail when any test failed.
results=$1
pass=$(ls "$results"/*.pass 2>/dev/null | wc -l)
fail=$(ls "$results"/*.fail 2>/dev/null | wc -l)
if [ "$fail" -gt 0 ]; then
	echo "failed tests:"
	for f in "$results"/*.fail; do echo "  $(basename "$f" .fail) (log: ${f%.fail}.log)"; done
fi
echo "check: $pass passed, $fail failed"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
