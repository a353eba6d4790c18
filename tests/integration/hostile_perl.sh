#!/bin/sh
# hostile_perl.sh — a process that lies about being perl 5.36 (fakeperl: PL_curinterp and
# PL_interp_size exported, its time spent in a function named Perl_runops_standard, and what
# PL_curinterp leads to rewritten every 50 ms: a chain of context stacks that comes round, a
# million contexts over a zeroed mapping, subs whose globs, stashes and names point at themselves
# or claim gigabytes, words pointing anywhere and changing while read). proftop neither crashes
# nor hangs nor reads without bound: the run ends with the program's own exit status, the samples
# keep up with --perl=off's, proftop's own CPU share stays near the one with --perl=off, the lies
# are counted as unread, and no row comes from them. A perl whose layout proftop does not know
# (an interpreter of another size) gets one warning and native stacks, nothing read.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/fakeperl"
require_perf_events

run_proftop off -b -n 0 --perl=off -- "$WL/fakeperl" 3
check "off-exit-status-0" status "$RC" 0 "$ERR"
off=$(final_samples "$OUT")
off_cpu=$(final_cpu "$OUT")

run_proftop lies -b -n 0 --max-rows 100 -- "$WL/fakeperl" 3
check "lies-exit-status-0" status "$RC" 0 "$ERR"
lies=$(final_samples "$OUT")
lies_cpu=$(final_cpu "$OUT")
check "lies-keep-up" sh -c "[ -n '$lies' ] && [ -n '$off' ] && [ \$(( $lies * 2 )) -ge '$off' ] ||
	{ echo 'samples with the lies read: ${lies:-none}, with --perl=off: ${off:-none}'; exit 1; }"
check "lies-counted" sh -c "grep -Eq '^=== proftop final .* unread [1-9][0-9]* ' '$OUT' ||
	{ echo 'no unread count in:'; grep '^=== proftop final' '$OUT'; exit 1; }"
check "lies-cost-bounded" sh -c "awk -v a='$lies_cpu' -v b='$off_cpu' 'BEGIN { exit !(a != \"\" && b != \"\" && a <= 3 * b + 10) }' ||
	{ echo 'proftop CPU with the lies read: ${lies_cpu:-?}%, with --perl=off: ${off_cpu:-?}%'; exit 1; }"
# No row comes from the lies: every row's module is the program's, a library's or the kernel's
# (a name claiming gigabytes of zeros is an empty name: no sub). main's RUNTIME, proftop's own
# name for a program at its top level, may come of garbage that reads as one (running, a main
# stack that ends, a statement with a line and a file): it names nothing the process wrote.
rows() { final_table "$1" | awk '{ $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' | sort -u; }
rows "$OUT" >"$TMPD/lies.rows"
check "no-row-from-lies" sh -c "awk '\$0 == \"RUNTIME main\" { next }
	NF < 2 || \$NF !~ /^(fakeperl|.*\\.so(\\.[0-9]+)*|\\[.*\\])\$/ { print \"row: \" \$0; bad = 1 } END { exit bad }' '$TMPD/lies.rows'"
run_proftop other -b -n 0 -- "$WL/fakeperl" 1 other
check "other-exit-status-0" status "$RC" 0 "$ERR"
check "other-warned-once" sh -c "[ \$(grep -c 'interpreter (4000 bytes) proftop does not know (it knows 5.36' '$ERR') -eq 1 ] ||
	{ cat '$ERR'; exit 1; }"
check "other-nothing-read" sh -c "! grep -Eq '^=== proftop final .* unread ' '$OUT' ||
	{ grep '^=== proftop final' '$OUT'; exit 1; }"
finish
