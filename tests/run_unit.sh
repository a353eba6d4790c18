#!/bin/sh
# run_unit.sh [BUILD_DIR | TEST_BINARY...] — run the cmocka unit-test binaries (default: every
# BUILD_DIR/tests/test_*, BUILD_DIR defaulting to build) and count their tests.
#
# Counts come from cmocka's own summary lines ("[  PASSED  ] N test(s)." and the FAILED/SKIPPED
# ones); a binary that exits nonzero without reporting a failed test (a crash, a sanitizer report,
# a timeout) counts as one more failure. With PROFTOP_RESULTS set (run_all.sh does) the counts go
# to that file and the caller prints the summary; alone, the last line is the summary and the exit
# status is nonzero if anything failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/results.sh"

log=$(mktemp) || exit 1
own=0
results=${PROFTOP_RESULTS:-}
if [ -z "$results" ]; then
	results=$(mktemp) || exit 1
	own=1
fi
trap 'rm -f "$log"; [ $own = 0 ] || rm -f "$results"' EXIT

if [ $# -eq 0 ]; then
	set -- build
fi
if [ $# -eq 1 ] && [ -d "$1" ]; then
	dir=$1
	set -- "$dir"/tests/test_*
fi

# cmocka prints to stdout unless told otherwise; its counts are what we parse.
export CMOCKA_MESSAGE_OUTPUT=stdout
unset CMOCKA_XML_FILE

ran=0
for bin in "$@"; do
	case $bin in *.d | *.o) continue ;; esac
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	ran=$((ran + 1))
	name=$(basename "$bin")
	timeout -k 5 "${PROFTOP_UNIT_TIMEOUT:-300}" "$bin" >"$log" 2>&1 </dev/null
	rc=$?
	eval "$(awk '
		/^\[  PASSED  \] [0-9]+ test\(s\)\./ { p += $4 }
		/^\[  FAILED  \] [0-9]+ test\(s\), listed below:/ { f += $4 }
		/^\[  SKIPPED \] [0-9]+ test\(s\), listed below:/ { s += $4 }
		END { printf "passed=%d failed=%d skipped=%d\n", p, f, s }' "$log")"
	note=""
	if [ $rc -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
		case $rc in
		124) note=" (timed out)" ;;
		*) note=" (exit status $rc)" ;;
		esac
	elif [ $rc -eq 0 ] && [ $((passed + failed + skipped)) -eq 0 ]; then
		passed=1 # not cmocka output: the binary counts as one test
	fi
	[ "$passed" -gt 0 ] && results_add "$results" pass "$passed" "unit/$name"
	[ "$failed" -gt 0 ] && results_add "$results" fail "$failed" "unit/$name"
	[ "$skipped" -gt 0 ] && results_add "$results" skip "$skipped" "unit/$name"
	if [ "$failed" -gt 0 ]; then
		echo "FAIL  unit/$name: $failed failed, $passed passed$note"
		tail -n 60 "$log" | sed 's/^/      | /'
	else
		sk=""
		[ "$skipped" -gt 0 ] && sk=", $skipped skipped"
		echo "ok    unit/$name: $passed passed$sk"
	fi
done
if [ $ran -eq 0 ]; then
	echo "skip  unit: no unit-test binaries (build them with make)"
	results_add "$results" skip 1 unit/none
fi

if [ $own = 1 ]; then
	results_summary "$results"
	[ "$(results_failed "$results")" -eq 0 ]
	exit
fi
exit 0
