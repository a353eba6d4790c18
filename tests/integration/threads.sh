#!/bin/sh
# threads.sh — every thread of a process is sampled: threads4's four workers get equal CPU, so
# each shows 25%.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/threads4"
require_perf_events

run_proftop threads4 -b -- "$WL/threads4" 2
f=$OUT
check "exit-status-0" status $RC 0 "$ERR"
for w in worker_one worker_two worker_three worker_four; do
	check "$w-25" approx "$(self_pct "$f" $w threads4)" 25 5
done
# Each worker burns 2 s x min(cores, 4) / 4 of CPU: 2 x min(cores, 4) x 999 samples in all, ± 15%.
busy=$((CORES < 4 ? CORES : 4))
check "samples-match-cpu-time" between "$(header_value "$f" samples)" \
	$((2 * busy * 999 * 85 / 100)) $((2 * busy * 999 * 115 / 100))
check "no-overflow" approx "$(header_value "$f" overflow)" 0 0
finish
