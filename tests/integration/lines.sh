#!/bin/sh
# lines.sh — where inside a function: per-line counts (--annotate), inlined functions as frames
# (and --no-inline), Inferno-style address histograms (--histogram), on workloads with known
# answers, and against perf on the same workloads in the same run:
#   lines:  75% / 25% of two_lines on its "hot line" / "cold line";
#   inline: step() inlined into caller_a (2/3 of the time) and caller_b (1/3).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/lines" "$WL/inline"
require_perf_events

SRC=$(cd "$(dirname "$0")/../workloads" && pwd)
# line_of FILE MARK — the number of the line of FILE holding /* MARK */.
line_of()
{
	grep -n "/\* $2 \*/" "$1" | cut -d: -f1
}
HOT_LINE=$(line_of "$SRC/lines.c" "hot line")
COLD_LINE=$(line_of "$SRC/lines.c" "cold line")
STEP_LINE=$(line_of "$SRC/inline.c" "step line")
CALL_A=$(line_of "$SRC/inline.c" "call a")

# annotated FILE FILE:LINE FIELD — FIELD (1 SELF%, 2 TOTAL%, 3 SAMPLES) of that line's row in the
# last annotation in FILE; "missing" when it has none.
annotated()
{
	awk -v at="$2" -v k="$3" '
	/^--- annotate/ { v = "missing" }
	$4 == at { v = $k }
	END { print v == "" ? "missing" : v }' "$1"
}

# --- per-line counts ------------------------------------------------------------------------------
run_proftop lines -b -n 0 --annotate two_lines -- "$WL/lines" 2
check "lines-exit-0" status $RC 0 "$ERR"
check "lines-hot-line-75" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 5
check "lines-cold-line-25" approx "$(annotated "$OUT" "lines.c:$COLD_LINE" 1)" 25 5
check "lines-source-text-shown" has "$OUT" "lines.c:$HOT_LINE .*/\\* hot line \\*/\$"
check "lines-file-named-whole" has "$OUT" "^file $SRC/lines\\.c\$"
# The function's self samples are exactly the sum of its lines' (every sample had an address).
check "lines-counts-add-up" sh -c "awk '
	/^--- annotate/ { for (i = 1; i < NF; i++) if (\$i == \"self\") want = \$(i + 1); sum = 0; next }
	\$4 ~ /^lines\\.c:[0-9]+\$/ { sum += \$3 }
	END { if (sum != want) { print \"lines sum to \" sum \", the function has \" want; exit 1 } }' '$OUT'"

# --- the DWARF within --max-memory -----------------------------------------------------------------
# 1M leaves the DWARF 256K: the program's and libc's are closed once no new address needed them
# for 8 s, and the lines come out the same. Every batch header says what the call trees and the
# DWARF held of their parts. The program runs 4 s, then its shell sleeps 11 s: no sample needs an
# address then, so the DWARF is unread for 8 s for certain (with the program running throughout,
# a sample now and then at an instruction not seen before reopened it, and on CI's machine nothing
# was closed in 20 s).
run_proftop lines-budget -b -n 0 --max-memory 1M --annotate two_lines -- \
	sh -c '"$0" 4 && sleep 11' "$WL/lines"
check "budget-exit-0" status $RC 0 "$ERR"
check "budget-header-parts" has "$OUT" \
	'^=== proftop final .* \(call trees [0-9.]+[BKM] of 768K, DWARF [0-9.]+[BKM] of 256K, closed [0-9]+ times?\)$'
check "budget-hot-line-75" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 5
check "budget-cold-line-25" approx "$(annotated "$OUT" "lines.c:$COLD_LINE" 1)" 25 5
check "default-budget-parts" has "$TMPD/lines.out" \
	'^=== proftop final .* \(call trees [0-9.]+[BKM] of 24\.0M, DWARF [0-9.]+[BKM] of 8\.0M(, closed [0-9]+ times?)?\)$'

run_proftop no-such-function -b -n 0 --annotate no_such_function -- "$WL/lines" 0.2
check "annotate-unknown-says-so" has "$OUT" \
	'^--- annotate  no_such_function: no function of that name has samples yet$'

# --- the same lines in perf's report --------------------------------------------------------------
if ! command -v perf >/dev/null 2>&1; then
	skip "perf" "perf is not installed (Debian: linux-perf)"
else
	(cd "$TMPD" && timeout 60 perf record -q -F 999 -o lines.data -- "$WL/lines" 2) \
		>"$TMPD/perf-lines.log" 2>&1
	timeout 120 perf report -i "$TMPD/lines.data" --stdio -s srcline --symbols two_lines \
		>"$TMPD/perf-lines.txt" 2>"$TMPD/perf-lines.err"
	perf_line()
	{
		awk -v at="$1" '$2 == at { sub(/%$/, "", $1); print $1; hit = 1 }
			END { if (!hit) print "missing" }' "$TMPD/perf-lines.txt"
	}
	check "perf-hot-line-within-5" approx "$(annotated "$TMPD/lines.out" "lines.c:$HOT_LINE" 1)" \
		"$(perf_line "lines.c:$HOT_LINE")" 5
	check "perf-cold-line-within-5" approx "$(annotated "$TMPD/lines.out" "lines.c:$COLD_LINE" 1)" \
		"$(perf_line "lines.c:$COLD_LINE")" 5
fi

# --- inlined frames -------------------------------------------------------------------------------
run_proftop inline -b -n 0 --tree --min-percent 0 -o "$TMPD/inline.folded" -- "$WL/inline" 2
check "inline-exit-0" status $RC 0 "$ERR"
# folded_share FILE PATTERN — percent of the folded file's samples on stacks matching PATTERN.
folded_share()
{
	awk -v p="$2" '{ n = $NF; all += n; if ($0 ~ p) hit += n }
		END { if (all) printf "%.2f\n", 100 * hit / all; else print "missing" }' "$1"
}
check "inline-step-under-caller_a" approx \
	"$(folded_share "$TMPD/inline.folded" ';caller_a;step \(inlined\) [0-9]+$')" 66.7 5
check "inline-step-under-caller_b" approx \
	"$(folded_share "$TMPD/inline.folded" ';caller_b;step \(inlined\) [0-9]+$')" 33.3 5
check "inline-tree-marks-it" has "$OUT" '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +step \(inlined\)  inline$'

run_proftop inline-top -b -n 0 --annotate caller_a --annotate step -- "$WL/inline" 1
check "inline-top-step-self" approx "$(self_pct "$OUT" "step (inlined)")" 100 3
check "inline-top-callers-no-self" approx "$(self_pct "$OUT" caller_a)" 0 3
check "inline-step-on-its-line" approx "$(annotated "$OUT" "inline.c:$STEP_LINE" 1)" 100 3

run_proftop inline-caller -b -n 0 --annotate caller_a -- "$WL/inline" 1
# caller_a's samples are in step's code: on the line of the call, as totals.
check "inline-caller-cost-on-call-line" approx "$(annotated "$OUT" "inline.c:$CALL_A" 2)" 100 3

# --asm on the inlined step: the instructions of its copies in caller_a and caller_b (an imul in
# each), on its line, every one of its samples in one of them. (Before: "no code address is
# known for it", and no instructions.)
run_proftop inline-asm -b -n 0 --annotate step --asm -- "$WL/inline" 1
check "inline-asm-exit-0" status $RC 0 "$ERR"
check "inline-asm-no-complaint" sh -c "! grep -q '^no instructions' '$OUT'"
check "inline-asm-samples-in-instructions" sh -c "awk '
	/^--- annotate/ { for (i = 1; i < NF; i++) if (\$i == \"self\") want = \$(i + 1); next }
	\$4 ~ /^0x[0-9a-f]+\$/ { sum += \$3 }
	/ 0x[0-9a-f]+  imul / { imul++ }
	END { if (!want || sum != want || imul < 2) {
		print \"instructions: \" sum \" samples, \" imul \" imul; the function: \" want; exit 1 } }' '$OUT'"

run_proftop no-inline -b -n 0 --no-inline -- "$WL/inline" 1
check "no-inline-exit-0" status $RC 0 "$ERR"
check "no-inline-no-inlined-rows" sh -c "! grep -q '(inlined)' '$OUT'"
check "no-inline-caller_a-self" approx "$(self_pct "$OUT" caller_a)" 66.7 5
check "no-inline-caller_b-self" approx "$(self_pct "$OUT" caller_b)" 33.3 5

# --no-lines: no lookups at all, so no inlined frames and no lines in the callgrind export; the
# functions are still named, and --annotate is refused with it.
run_proftop no-lines -b -n 0 --no-lines -o "$TMPD/nolines.callgrind" -f callgrind -- "$WL/inline" 1
check "no-lines-exit-0" status $RC 0 "$ERR"
check "no-lines-no-inlined-rows" sh -c "! grep -q '(inlined)' '$OUT'"
check "no-lines-caller_a-self" approx "$(self_pct "$OUT" caller_a)" 66.7 5
check "no-lines-callgrind-no-source" sh -c "! grep -q '^fl=.*inline\.c' '$TMPD/nolines.callgrind'"
run_proftop no-lines-annotate -b --no-lines --annotate caller_a -- "$WL/inline" 1
check "no-lines-annotate-exit-2" status $RC 2 "$ERR"
check "no-lines-annotate-says-why" has "$ERR" 'annotate needs the per-address counts --no-lines turns off'

if command -v perf >/dev/null 2>&1; then
	(cd "$TMPD" && timeout 60 perf record -q -F 999 --call-graph dwarf -o inline.data -- \
		"$WL/inline" 2) >"$TMPD/perf-inline.log" 2>&1
	timeout 120 perf script -i "$TMPD/inline.data" -F ip,sym --inline \
		>"$TMPD/perf-inline.txt" 2>"$TMPD/perf-inline.err"
	# perf_under CALLER — percent of perf's samples whose two innermost frames are step
	# (inlined) and CALLER.
	perf_under()
	{
		awk -v c="$1" '
		NF == 0 { if (depth) { all++; if (hit) n++ } depth = 0; hit = 0; next }
		{ depth++; name = $0; sub(/^[ \t]*[0-9a-f]+ /, "", name)
		  if (depth == 1) first = name
		  if (depth == 2 && first == "step (inlined)" && name == c) hit = 1 }
		END { if (depth) { all++; if (hit) n++ } if (all) printf "%.2f\n", 100 * n / all; else print "missing" }' \
			"$TMPD/perf-inline.txt"
	}
	check "perf-inline-caller_a-within-5" approx \
		"$(folded_share "$TMPD/inline.folded" ';caller_a;step \(inlined\) [0-9]+$')" \
		"$(perf_under caller_a)" 5
	check "perf-inline-caller_b-within-5" approx \
		"$(folded_share "$TMPD/inline.folded" ';caller_b;step \(inlined\) [0-9]+$')" \
		"$(perf_under caller_b)" 5
fi

# --- --asm: each line's instructions, with the samples at each --------------------------------------
run_proftop asm -b -n 0 --annotate two_lines --asm -- "$WL/lines" 2
check "asm-exit-0" status $RC 0 "$ERR"
# insns_of FILE:LINE — "count sum" of the instruction rows under that line's row, then the row's
# own SAMPLES.
insns_of()
{
	awk -v at="$1" '
	$4 == at { on = 1; want = $3; next }
	on && $0 ~ /^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  [a-z]/ {
		n++; if ($1 ~ /\./) sum += $3; next }
	on { on = 0 }
	END { print n + 0, sum + 0, want + 0 }' "$OUT"
}
set -- $(insns_of "lines.c:$HOT_LINE")
check "asm-hot-line-has-instructions" between "$1" 3 200
check "asm-instruction-samples-add-up" status "$2" "$3"
check "asm-unsampled-lines-listed" has "$OUT" '^ +0\.00 +0\.00 +0  lines\.c:[0-9]+  }$'
check "asm-shows-code" has "$OUT" '^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  imul '

# A file rebuilt (here: replaced) since it was profiled shows no instructions, and says why.
cp "$WL/lines" "$TMPD/replaced"
( sleep 0.5; cp "$WL/inline" "$TMPD/replaced.new" && mv "$TMPD/replaced.new" "$TMPD/replaced" ) &
run_proftop asm-replaced -b -n 0 --annotate two_lines --asm -- "$TMPD/replaced" 1.5
wait
check "asm-replaced-says-so" has "$OUT" \
	"^no instructions: $TMPD/replaced: the file changed since it was profiled\$"
check "asm-replaced-lines-still-shown" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 5

# --- callgrind positions: callgrind_annotate shows the costs on the source lines ------------------
if ! command -v callgrind_annotate >/dev/null 2>&1; then
	skip "callgrind" "callgrind_annotate is not installed (Debian: valgrind)"
else
	run_proftop callgrind -b -n 0 -f callgrind -o "$TMPD/callgrind.out.1" -- "$WL/lines" 2
	check "callgrind-exit-0" status $RC 0 "$ERR"
	# (a file's name is given where it first appears: an fl= line, or a caller's cfi=/cfl=)
	check "callgrind-fl-is-the-source" has "$TMPD/callgrind.out.1" "^c?f[li]=\\([0-9]+\\) $SRC/lines\\.c\$"
	timeout 60 callgrind_annotate --auto=yes "$TMPD/callgrind.out.1" >"$TMPD/cg-annotate.txt" \
		2>"$TMPD/cg-annotate.err"
	# cg_line MARK — the percentage callgrind_annotate puts on the source line holding MARK.
	cg_line()
	{
		awk -v m="$1" 'index($0, m) && match($0, /\( *[0-9.]+%\)/) {
			v = substr($0, RSTART + 1, RLENGTH - 3); gsub(/ /, "", v); print v; hit = 1; exit }
			END { if (!hit) print "missing" }' "$TMPD/cg-annotate.txt"
	}
	check "callgrind-annotate-hot-line-75" approx "$(cg_line "/* hot line */")" 75 5
	check "callgrind-annotate-cold-line-25" approx "$(cg_line "/* cold line */")" 25 5
fi

# --- the histogram ----------------------------------------------------------------------------------
run_proftop histogram -b -n 0 --histogram -- "$WL/lines" 1
check "histogram-exit-0" status $RC 0 "$ERR"
check "histogram-module-heading" has "$OUT" '^--- histogram  lines$'
# Each module's section: "0xADDR COUNT", addresses increasing, counts not zero; the counts of
# module lines add up to its functions' self samples in the table.
check "histogram-pairs-well-formed" sh -c "awk '
	function hex(s,   v, i) { v = 0; for (i = 3; i <= length(s); i++) v = v * 16 + index(\"0123456789abcdef\", substr(s, i, 1)) - 1; return v }
	/^--- histogram/ { on = 1; last = -1; next }
	on && /^=== |^--- / { on = 0 }
	on {
		if (\$0 !~ /^0x[0-9a-f]+ [1-9][0-9]*\$/) { print \"bad line: \" \$0; exit 1 }
		a = hex(\$1)
		if (a <= last) { print \"not increasing: \" \$0; exit 1 }
		last = a
	}' '$OUT'"
check "histogram-sums-to-self" sh -c "
	want=\$(awk '/^=== proftop final/ { on = 1; next } on && \$NF == \"lines\" && \$3 ~ /^[0-9]+\$/ { s += \$3 } /^--- / { on = 0 } END { print s + 0 }' '$OUT')
	got=\$(awk '/^--- histogram  lines\$/ { on = 1; next } /^--- / { on = 0 } on { s += \$2 } END { print s + 0 }' '$OUT')
	[ \"\$want\" -gt 0 ] && [ \"\$want\" = \"\$got\" ] || { echo \"histogram \$got, table \$want\"; exit 1; }"
finish
