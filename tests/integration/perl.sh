#!/bin/sh
# perl.sh — Perl subs in the live stacks of an unmodified perl, and in tmon.out as Devel::DProf
# names them (issue 29). plsplit.pl spends 30% of its time in digest_blocks (Perl calling
# Digest::MD5's XS md5_hex) and 70% in sort_numbers (pure Perl: a sort with a comparator sub),
# by the clock: under Debian's perl 5.36 the two subs' totals split 30/70 within 6 points; the
# XS sub is named as Perl calls it with its native frames under it; the comparator runs inside
# sort's own run loop; the real dprofpp reads proftop's tmon.out: -I names main::sort_numbers,
# main::digest_blocks and Digest::MD5::md5_hex, with inclusive times as the batch table's TOTAL%,
# and -T nests main::by_number under main::sort_numbers; --perl=only leaves perl's own frames
# out; proftop report -I and -T print what dprofpp does.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
require_perf_events
here=$(cd "$(dirname "$0")" && pwd)
split=$here/../workloads/plsplit.pl
seconds=6 cycle=2
# (the subs are read when the collector reaches a sample: slower under AddressSanitizer, so
# phases as much longer; README, Perl)
[ "${PROFTOP_SANITIZER:-}" = asan ] && seconds=16 cycle=8
for tool in perl dprofpp; do
	if ! command -v $tool >/dev/null 2>&1; then
		fail "setup" "$tool is not installed (make deps installs perl and libdevel-dprof-perl)"
		finish
	fi
done

run_proftop split -b -n 0 --max-rows 200 -o "$TMPD/tmon.out" -- perl "$split" "$seconds" "$cycle"
check "exit-status-0" status "$RC" 0 "$ERR"
digest=$(total_pct "$OUT" digest_blocks main)
sorting=$(total_pct "$OUT" sort_numbers main)
check "split-30-70" sh -c "[ '$digest' != missing ] && [ '$sorting' != missing ] &&
	awk -v d='$digest' -v s='$sorting' 'BEGIN { p = 100 * s / (d + s); exit !(p >= 64 && p <= 76) }' ||
	{ echo 'sort_numbers/(both): want 70 +- 6; digest_blocks $digest%, sort_numbers $sorting%'; exit 1; }"
check "xs-sub-named" sh -c "[ \"\$(total_pct '$OUT' md5_hex Digest::MD5)\" != missing ] ||
	{ echo 'no md5_hex row of Digest::MD5:'; grep -i md5 '$OUT' | head -n 5; exit 1; }"
check "comparator-named" sh -c "[ \"\$(total_pct '$OUT' by_number main)\" != missing ] ||
	{ echo 'no by_number row of main'; exit 1; }"

# The real dprofpp on proftop's tmon.out.
dprofpp -O 100 -I "$TMPD/tmon.out" >"$TMPD/inclusive.txt" 2>&1
check "dprofpp-I-reads" status $? 0 "$TMPD/inclusive.txt"
for sub in main::sort_numbers main::digest_blocks main::by_number Digest::MD5::md5_hex; do
	check "dprofpp-I-names-$sub" sh -c "grep -Eq ' $sub\$' '$TMPD/inclusive.txt' ||
		{ echo 'dprofpp -I does not name $sub:'; head -n 20 '$TMPD/inclusive.txt'; exit 1; }"
done
# Its inclusive %Time is the batch table's TOTAL% (both of the same samples).
dp_sort=$(awk '$NF == "main::sort_numbers" { print $1 }' "$TMPD/inclusive.txt")
check "dprofpp-I-is-total" sh -c "awk -v a='$dp_sort' -v b='$sorting' 'BEGIN { d = a - b; exit !(a != \"\" && d < 0.6 && d > -0.6) }' ||
	{ echo 'dprofpp -I main::sort_numbers ${dp_sort:-?}%, batch TOTAL% $sorting'; exit 1; }"
dprofpp -T "$TMPD/tmon.out" >"$TMPD/tree.txt" 2>&1
check "dprofpp-T-reads" status $? 0 "$TMPD/tree.txt"
check "dprofpp-T-nests-comparator" sh -c "awk '
	/main::sort_numbers\$/ { match(\$0, /^ */); depth = RLENGTH; inside = 1; next }
	inside { match(\$0, /^ */); if (RLENGTH <= depth) inside = 0; else if (\$0 ~ /main::by_number\$/) found = 1 }
	END { exit !found }' '$TMPD/tree.txt' ||
	{ echo 'main::by_number is not under main::sort_numbers in dprofpp -T:'; grep -n 'main::' '$TMPD/tree.txt' | head; exit 1; }"

# proftop report prints what dprofpp prints for the same file.
for o in -I -T; do
	"$PROFTOP_BIN" report -O 100 $o "$TMPD/tmon.out" >"$TMPD/report$o.txt" 2>&1
	dprofpp -O 100 $o "$TMPD/tmon.out" >"$TMPD/dprofpp$o.txt" 2>&1
	check "report$o-is-dprofpp$o" sh -c "cmp -s '$TMPD/dprofpp$o.txt' '$TMPD/report$o.txt' ||
		{ diff '$TMPD/dprofpp$o.txt' '$TMPD/report$o.txt' | head -n 10; exit 1; }"
done

# --perl=only: the subs and the native code they call outside perl, as py-spy shows Python.
run_proftop only -b -n 0 --perl=only -o "$TMPD/only.folded" -- perl "$split" 3 2
check "only-exit-status-0" status "$RC" 0 "$ERR"
check "only-subs-nested" sh -c "grep -Eq '^RUNTIME;sort_numbers;by_number [0-9]+\$' '$TMPD/only.folded' ||
	{ echo 'no stack RUNTIME;sort_numbers;by_number:'; head -n 5 '$TMPD/only.folded'; exit 1; }"
# (a stack whose subs could not be read stays native: a few)
check "only-interpreter-frames-under-5-percent" sh -c "awk '{ n += \$NF } /Perl_/ { p += \$NF }
	END { exit !(n > 0 && 100 * p / n < 5) }' '$TMPD/only.folded' ||
	{ grep 'Perl_' '$TMPD/only.folded' | head -n 3; exit 1; }"
finish
