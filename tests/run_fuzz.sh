#!/bin/sh
# run_fuzz.sh SECONDS TARGET... — run each libFuzzer binary for SECONDS (-max_total_time).
#
# A target's seed corpus is tests/fuzz/corpus/NAME, its dictionary tests/fuzz/NAME.dict and its
# LeakSanitizer suppressions tests/fuzz/NAME.lsan, when present. New inputs go to a scratch corpus beside the binary (WORKDIR/corpus/NAME), never into
# the repository; crashing inputs go to WORKDIR/artifacts/NAME/. Exit status is nonzero if any
# target crashed, leaked, timed out on an input or could not run.
#
# Under run_all.sh (PROFTOP_RESULTS set) each target also counts as one test in the summary.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/results.sh"
record() { [ -n "${PROFTOP_RESULTS:-}" ] && results_add "$PROFTOP_RESULTS" "$1" 1 "fuzz/$2"; true; }

if [ $# -lt 2 ] || ! [ "$1" -gt 0 ] 2>/dev/null; then
	echo "usage: run_fuzz.sh SECONDS TARGET..." >&2
	exit 2
fi
secs=$1
shift

failed=0 total=0
for bin in "$@"; do
	name=$(basename "$bin")
	total=$((total + 1))
	if ! [ -x "$bin" ]; then
		echo "FAIL  fuzz/$name: $bin is not an executable (build it with make fuzz)"
		record fail "$name"
		failed=$((failed + 1))
		continue
	fi
	work=$(dirname "$bin")
	mkdir -p "$work/corpus/$name" "$work/artifacts/$name" || exit 1
	set -- -max_total_time="$secs" -timeout=25 -print_final_stats=1 \
	    -artifact_prefix="$work/artifacts/$name/"
	[ -f "$here/fuzz/$name.dict" ] && set -- "$@" -dict="$here/fuzz/$name.dict"
	set -- "$@" "$work/corpus/$name"
	[ -d "$here/fuzz/corpus/$name" ] && set -- "$@" "$here/fuzz/corpus/$name"
	log=$work/$name.log
	start=$work/artifacts/.$name.start # artifacts newer than this are from this run
	touch "$start"
	# A target's tests/fuzz/NAME.lsan lists leaks of a library it drives that are not ours.
	supp=
	[ -f "$here/fuzz/$name.lsan" ] && supp="suppressions=$here/fuzz/$name.lsan"
	LSAN_OPTIONS="${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}$supp" \
	    timeout -k 10 $((secs + 120)) "$bin" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "ok    fuzz/$name: ${runs:-?} runs in ${secs}s"
		record pass "$name"
		continue
	fi
	failed=$((failed + 1))
	record fail "$name"
	echo "FAIL  fuzz/$name: exit status $rc (log: $log)"
	grep -E 'ERROR: |SUMMARY: |Test unit written to' "$log" | head -n 10 | sed 's/^/      | /'
	find "$work/artifacts/$name" -type f ! -name ".*" -newer "$start" | while read -r a; do
		echo "      reproduce: $bin $a"
	done
done

[ -n "${PROFTOP_RESULTS:-}" ] || echo "$((total - failed)) passed, $failed failed"
[ $failed -eq 0 ]
