#!/bin/sh
# hostile_python.sh — a process that lies about being CPython (fakepython: _PyRuntime, Py_Version
# 3.12 and PyCode_Type exported, its time spent in a function named _PyEval_EvalFrameDefault,
# and what the symbols lead to rewritten every 50 ms: a thread list that loops, a frame chain that
# loops, strings and a line table claiming terabytes, words pointing anywhere and changing while
# read). proftop neither crashes nor hangs nor reads without bound: the run ends with the
# program's own exit status, every sample reaches the table (as many as with --python=off, less
# what the machine's noise takes), proftop's own CPU share stays near the one with --python=off
# (a loop followed to its bound costs hundreds of reads a sample: 40% of a core before loops were
# found as they came round, 5% after), the lies are counted as unread, and no row comes from
# them (every row's module is the program's, a library's or the kernel's).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/fakepython"
require_perf_events

# rows FILE — the final table's functions and modules, sorted.
rows()
{
	final_table "$1" | awk '{ $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' | sort -u
}

run_proftop off -b -n 0 --python=off -- "$WL/fakepython" 3
check "off-exit-status-0" status "$RC" 0 "$ERR"
off=$(final_samples "$OUT")
off_cpu=$(final_cpu "$OUT")

run_proftop lies -b -n 0 -- "$WL/fakepython" 3
check "lies-exit-status-0" status "$RC" 0 "$ERR"
lies=$(final_samples "$OUT")
lies_cpu=$(final_cpu "$OUT")
rows "$OUT" >"$TMPD/lies.rows"
check "lies-keep-up" sh -c "[ -n '$lies' ] && [ -n '$off' ] && [ \$(( $lies * 2 )) -ge '$off' ] ||
	{ echo 'samples with the lies read: ${lies:-none}, with --python=off: ${off:-none}'; exit 1; }"
check "lies-counted" sh -c "grep -Eq '^=== proftop final .* unread [1-9][0-9]* ' '$OUT' ||
	{ echo 'no unread count in:'; grep '^=== proftop final' '$OUT'; exit 1; }"
check "lies-cost-bounded" sh -c "awk -v a='$lies_cpu' -v b='$off_cpu' 'BEGIN { exit !(a != \"\" && b != \"\" && a <= 3 * b + 10) }' ||
	{ echo 'proftop CPU with the lies read: ${lies_cpu:-?}%, with --python=off: ${off_cpu:-?}%'; exit 1; }"
check "no-row-from-lies" sh -c "awk '\$NF !~ /^(fakepython|.*\\.so(\\.[0-9]+)*|\\[.*\\])\$/ { print; bad = 1 } END { exit bad }' '$TMPD/lies.rows'"
finish
