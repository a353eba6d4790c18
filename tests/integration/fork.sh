#!/bin/sh
# fork.sh — children a command forks are followed, and their rows merge with the parent's by
# function: forker's parent and its two children split the CPU 50/50 between parent_work and
# child_work.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/forker"
require_perf_events

run_proftop forker -b -- "$WL/forker" 2
f=$OUT
check "exit-status-0" status $RC 0 "$ERR"
check "parent_work-50" approx "$(self_pct "$f" parent_work forker)" 50 7
check "child_work-50" approx "$(self_pct "$f" child_work forker)" 50 7
check "child_work-one-row" one_row "$f" child_work
# 2 s of CPU in the parent and 1 s in each child: 4 x 999 samples, ± 15%.
check "samples-match-cpu-time" between "$(header_value "$f" samples)" 3397 4595
check "no-overflow" approx "$(header_value "$f" overflow)" 0 0
finish
