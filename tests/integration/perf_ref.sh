#!/bin/sh
# perf_ref.sh — as accurate as perf: `perf record -F 999` and `perf report --no-children --sort
# sym` on the same workload give the same self shares as proftop, within 5 points.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
require_perf_events

if ! command -v perf >/dev/null 2>&1; then
	skip "all" "perf is not installed (Debian: linux-perf)"
	finish
fi
if ! (cd "$TMPD" && timeout 30 perf record -q -o probe.data -- true) >"$TMPD/probe.log" 2>&1; then
	skip "all" "perf record does not work here: $(head -n 1 "$TMPD/probe.log")"
	finish
fi

# perf_self FUNCTION — its overhead in perf's report, without the %.
perf_self()
{
	awk -v f="$1" '$2 == "[.]" && $3 == f { sub(/%$/, "", $1); print $1; hit = 1 }
		END { if (!hit) print "missing" }' "$TMPD/perf-report.txt"
}

(cd "$TMPD" && timeout 60 perf record -q -F 999 -g -o perf.data -- "$WL/split" 2) \
	>"$TMPD/perf-record.log" 2>&1
timeout 60 perf report -i "$TMPD/perf.data" --stdio --no-children --sort sym -g none \
	>"$TMPD/perf-report.txt" 2>"$TMPD/perf-report.err"
check "perf-report-has-burn_a" between "$(perf_self burn_a)" 1 100

run_proftop split -b -- "$WL/split" 2
check "exit-status-0" status $RC 0 "$ERR"
for fn in burn_a burn_b burn_c; do
	check "$fn-within-5-of-perf" approx "$(self_pct "$OUT" $fn)" "$(perf_self $fn)" 5
done
finish
