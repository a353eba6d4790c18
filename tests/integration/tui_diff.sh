#!/bin/sh
# tui_diff.sh — differences against a baseline on the screen, with the phases workload (about 8 s
# in phase_one, then about 8 s in phase_two): b in phase one takes what is shown (all phase_one)
# as the baseline; at the end the whole run is half each, so Top's ΔSELF says phase_one -50 and
# phase_two +50 (new), Tree the same per path, Flame colours phase_two's frame as grown and
# phase_one's as shrunk; s saves a folded diff (the -o file's format) with both counts per stack;
# B drops the baseline and b takes the whole run, against which nothing moved.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/phases"
. "$(dirname "$0")/lib_tmux.sh"
LIMIT=$((LIMIT * 2)) # the pane lives through the whole run and after it

# top_delta FUNC FIELD — on Top's screen, FUNC's field (4 ΔSELF, 5 ΔTOTAL) as a number; "missing".
top_delta()
{
	screen diff | awk -v f="$1" -v k="$2" '
		$6 == f && $1 ~ /^[0-9.]+$/ && $4 ~ /^[-+][0-9.]+$/ { v = $k; sub(/^\+/, "", v); print v; found = 1; exit }
		END { if (!found) print "missing" }'
}

# folded_field FILE STACK-END FIELD — the count (1 OLD, 2 NEW) of the stack ending in STACK-END.
folded_field()
{
	awk -v e="$2" -v k="$3" '
		{ n = split($1, frames, ";") }
		frames[n] == e { v += $(NF - 2 + k); found = 1 }
		END { print found ? v : "missing" }' "$1"
}

pane diff 120 30 -o "$TMPD/diff.folded" -- "$WL/phases" 16
check "starts-in-phase-one" wait_screen diff '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +phase_one '
check "some-of-phase-one" wait_screen diff '\[running\]  [4-6]\.[0-9]s' 20
tm send-keys -t diff b
check "baseline-message" wait_screen diff 'baseline: seconds 0-[3-7]; the views show the change since'
check "baseline-header" wait_screen diff '  cumulative  vs seconds 0-[3-7]$'
check "delta-headings" wait_screen diff '^  SELF%  TOTAL%  SAMPLES    ΔSELF  ΔTOTAL FUNCTION  +MODULE$'
check "ended" wait_screen diff '\[exited with status 0\]' 60

# The known amounts: the baseline was all phase_one, the whole run is half each.
check "phase-two-new" wait_screen diff '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +\+[0-9.]+ +\+[0-9.]+ phase_two \(new\) '
check "phase-one-down-50" approx "$(top_delta phase_one 4)" -50 6
check "phase-two-up-50" approx "$(top_delta phase_two 4)" 50 6
check "phase-two-total-up-50" approx "$(top_delta phase_two 5)" 50 6
# Sorted by the change of SELF%: the two phases first.
tm send-keys -t diff '>' '>'
check "sorted-by-change" wait_screen diff \
	'^ +[0-9.]+ +[0-9.]+ +[0-9]+ +[-+][0-9.]+ +[-+][0-9.]+ phase_(one|two)'
check "sorted-two-first-rows" sh -c "tmux -L '$SOCK' capture-pane -p -t diff | sed -n 7,8p |
	grep -c ' phase_' | grep -qx 2"

# The Tree: phase_two's path is new, ΔTOTAL about +50.
tm send-keys -t diff 2
check "tree-headings" wait_screen diff '^ TOTAL%   SELF%  SAMPLES   ΔTOTAL   ΔSELF FUNCTION'
check "tree-phase-two" wait_screen diff \
	'^ +(4[4-9]|5[0-6])\.[0-9]+ +[0-9.]+ +[0-9]+ +\+(4[4-9]|5[0-6])\.[0-9]+ +\+[0-9.]+ +[▸▾+-]? ?phase_two \(new\)'
check "tree-phase-one" wait_screen diff \
	'^ +(4[4-9]|5[0-6])\.[0-9]+ +[0-9.]+ +[0-9]+ +-(4[4-9]|5[0-6])\.[0-9]+ +-[0-9.]+ +[▸▾+-]? ?phase_one '

# The flame graph: phase_two's frame in diff-grown (bright white on red), phase_one's in
# diff-shrunk (on blue); the heading says the selected frame's change.
tm send-keys -t diff 5
check "flame-heading" wait_screen diff 'points since baseline'
colours=$(tm capture-pane -p -e -t diff)
check "flame-grown-red" sh -c "printf '%s\n' \"\$1\" | grep -q '41mphase_two'" - "$colours"
check "flame-shrunk-blue" sh -c "printf '%s\n' \"\$1\" | grep -q '44mphase_one'" - "$colours"

# s saves the folded diff: phase_two had nothing in the baseline, phase_one had it all.
tm send-keys -t diff s
check "saved" wait_screen diff "saved $TMPD/diff.folded"
check "folded-three-columns" sh -c "awk 'NF < 3 || \$(NF-1) !~ /^[0-9]+\$/ || \$NF !~ /^[0-9]+\$/ \
	{ bad = 1 } END { exit bad }' '$TMPD/diff.folded'"
check "folded-phase-two-old-0" test "$(folded_field "$TMPD/diff.folded" phase_two 1)" = 0
check "folded-phase-two-new" between "$(folded_field "$TMPD/diff.folded" phase_two 2)" 1000 99999
check "folded-phase-one-both" between "$(folded_field "$TMPD/diff.folded" phase_one 1)" 1000 99999
cp "$TMPD/diff.folded" "$TMPD/first.folded"

# B drops it; b takes the whole run, which no longer moves: every change is +0.00.
tm send-keys -t diff 1 B
check "dropped" wait_screen diff '^ no baseline$|^ no baseline '
check "dropped-header" wait_gone diff '  vs seconds'
check "dropped-columns" wait_gone diff 'ΔSELF'
tm send-keys -t diff b
check "whole-run-unchanged" wait_screen diff '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +\+0\.00 +\+0\.00 phase_two '
tm send-keys -t diff q
check "quit" ended diff
check "exit-0" exit_status diff 0
check "restored" restored diff
# The final file is against the last baseline: the same counts on both sides.
check "final-equal-sides" sh -c "awk '\$(NF-1) != \$NF { bad = 1 } END { exit bad || NR == 0 }' \
	'$TMPD/diff.folded'"
check "no-sanitizer-report" no_sanitizer_report diff
finish
