#!/bin/sh
# report_diff.sh — `proftop report --diff OLD NEW`: hand-made tmon.out files with known shares
# (the changes, their order, functions on one side only, -O, a run twice as long), two real
# runs of the split workload (nothing moves), the phased workload against its own first phase
# (one half moves 50 points to the other), and bad input: a missing file, a file of another
# format (folded), garbage, one file only, options that do not apply, a name with escapes.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/phases"

# old.out and new.out: known differences (lib.sh's known_diff_files).
known_diff_files "$TMPD/old.out" "$TMPD/new.out"

# row FILE FUNCTION — the diff row of FUNCTION: "SELF TOTAL +SELF +TOTAL MARK".
row()
{
	awk -v f="$2" '$5 == f { print $1, $2, $3, $4, ($7 == "" ? "-" : $7) }' "$1"
}

run_proftop diff report --diff "$TMPD/old.out" "$TMPD/new.out"
check "diff-exit-0" status $RC 0 "$ERR"
check "diff-heading" has "$OUT" '^=== proftop diff  old 100 samples  new 200 samples  '
check "diff-columns" has "$OUT" '^  SELF%  TOTAL%   \+SELF  \+TOTAL  FUNCTION  MODULE$'
check "diff-phase_one" test "$(row "$OUT" phase_one)" = "20.00 20.00 -40.00 -40.00 -"
check "diff-phase_two" test "$(row "$OUT" phase_two)" = "60.00 80.00 +30.00 +50.00 -"
check "diff-brand_new" test "$(row "$OUT" brand_new)" = "20.00 20.00 +20.00 +20.00 (new)"
check "diff-gone_soon" test "$(row "$OUT" gone_soon)" = "0.00 0.00 -10.00 -10.00 (gone)"
check "diff-largest-first" sh -c "[ \"\$(sed -n 3p '$OUT' | awk '{ print \$5 }')\" = phase_one ]"
check "diff-four-rows" test "$(grep -c ' main' "$OUT")" = 4
check "diff-no-stderr" test ! -s "$ERR"
run_proftop diff-O2 report --diff -O 2 "$TMPD/old.out" "$TMPD/new.out"
check "diff-O-rows" test "$(grep -c ' main' "$OUT")" = 2
# The other way round, every change turns.
run_proftop diff-back report --diff "$TMPD/new.out" "$TMPD/old.out"
check "diff-back-phase_one" test "$(row "$OUT" phase_one)" = "60.00 60.00 +40.00 +40.00 -"
check "diff-back-gone_soon" test "$(row "$OUT" brand_new)" = "0.00 0.00 -20.00 -20.00 (gone)"

# Two runs of split: the same shares within a few points.
run_proftop split-a -b -n 0 -o "$TMPD/a.out" -- "$WL/split" 1
run_proftop split-b -b -n 0 -o "$TMPD/b.out" -- "$WL/split" 2
run_proftop split report --diff "$TMPD/a.out" "$TMPD/b.out"
check "split-exit-0" status $RC 0 "$ERR"
for f in burn_a burn_b burn_c; do
	check "split-$f-unchanged" approx "$(awk -v f=$f '$5 == f { print $3 + 0 }' "$OUT")" 0 5
done
check "split-burn_a-share" approx "$(awk '$5 == "burn_a" { print $1 }' "$OUT")" 60 5

# phases: a snapshot after phase one (the workload sends SIGUSR1 to proftop), one at the end;
# from the first to the second, phase_one falls from 100 to 50 % and phase_two comes at 50 %.
PROFTOP_OUT_FILE=$TMPD/phase.out run_proftop phases-run -b -n 0 -- "$WL/phases" 2 signal
check "phases-two-snapshots" test -s "$TMPD/phase.out" -a -s "$TMPD/phase.out.1"
run_proftop phases report --diff "$TMPD/phase.out" "$TMPD/phase.out.1"
check "phases-exit-0" status $RC 0 "$ERR"
check "phases-one-down-50" approx "$(awk '$5 == "phase_one" { print $3 + 0 }' "$OUT")" -50 3
check "phases-two-up-50" approx "$(awk '$5 == "phase_two" { print $3 + 0 }' "$OUT")" 50 3
check "phases-two-new" has "$OUT" ' phase_two  phases  \(new\)$'
check "phases-two-first-or-second" sh -c "sed -n '3,4p' '$OUT' | grep -q ' phase_two '"

# Bad input: each an error naming the file, exit 1 (usage errors 2).
run_proftop missing report --diff "$TMPD/old.out" "$TMPD/nothing.out"
check "missing-exit-1" status $RC 1 "$ERR"
check "missing-says" has "$ERR" "^proftop report: cannot read $TMPD/nothing.out: No such file or directory\$"
run_proftop folded -b -n 0 -o "$TMPD/a.folded" -- "$WL/split" 0.3
run_proftop other-format report --diff "$TMPD/a.folded" "$TMPD/new.out"
check "other-format-exit-1" status $RC 1 "$ERR"
check "other-format-says" has "$ERR" "^proftop report: $TMPD/a.folded: line 1: not a tmon.out file"
check "other-format-no-table" test ! -s "$OUT"
head -c 300 /dev/urandom >"$TMPD/garbage.bin"
run_proftop garbage report --diff "$TMPD/old.out" "$TMPD/garbage.bin"
check "garbage-exit-1" status $RC 1 "$ERR"
check "garbage-says" has "$ERR" "^proftop report: $TMPD/garbage.bin: line 1: "
run_proftop one-file report --diff "$TMPD/old.out"
check "one-file-exit-2" status $RC 2 "$ERR"
check "one-file-says" has "$ERR" 'report --diff needs two files: the baseline OLD, then NEW'
run_proftop tree report --diff -T "$TMPD/old.out" "$TMPD/new.out"
check "tree-exit-2" status $RC 2 "$ERR"
check "tree-says" has "$ERR" 'do not apply'
printf '+ 2\n@ 5 0 5\n- 2\n' | tmon_file "$TMPD/evil.tmon" 5 "$(printf '2 main evil\033]0;owned\007')"
run_proftop evil report --diff "$TMPD/old.out" "$TMPD/evil.tmon"
check "evil-exit-0" status $RC 0 "$ERR"
check "evil-visible" has "$OUT" 'evil\^\[\]0;owned\^G'
check "evil-no-escape" sh -c "! grep -q \"\$(printf '\\033')\" '$OUT'"
finish
