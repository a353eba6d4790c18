#!/bin/sh
# unwind_info.sh — where unwind information comes from, and what happens without it: code
# described only by .debug_frame unwinds completely; code with no unwind information at all
# keeps its leaf frames and is counted as truncated, never shown with guessed callers; a
# stripped binary still unwinds (its .eh_frame stays) and its functions show as module+0xoffset.
. "$(dirname "$0")/lib.sh"
require_perf_events

need "$WL/nounwind" "$WL/split" || finish

# nounwind has .debug_frame for its code and .eh_frame only for the C runtime's.
run_proftop nounwind -b -n 0 -- "$WL/nounwind" 1.5
check nounwind-exit-status-0 status "$RC" 0
check nounwind-main-total-100 between "$(total_pct "$OUT" main nounwind)" 99 100
check nounwind-burn_a-60 approx "$(self_pct "$OUT" burn_a nounwind)" 60 5
truncated=$(header_value "$OUT" truncated)
samples=$(header_value "$OUT" samples)
check nounwind-truncated-under-1pct awk -v t="$truncated" -v s="$samples" \
    'BEGIN { if (s > 0 && t <= s / 100) exit 0; print "truncated " t " of " s; exit 1 }'

# The same binary without .debug_frame: no unwind information for burn_* and main.
if objcopy --remove-section .debug_frame "$WL/nounwind" "$TMPD/nocfi" 2>/dev/null; then
	run_proftop nocfi -b -n 0 -- "$TMPD/nocfi" 1
	check nocfi-exit-status-0 status "$RC" 0
	check nocfi-leaf-kept approx "$(self_pct "$OUT" burn_a nocfi)" 60 5
	truncated=$(header_value "$OUT" truncated)
	samples=$(header_value "$OUT" samples)
	check nocfi-counted-truncated awk -v t="$truncated" -v s="$samples" \
	    'BEGIN { if (s > 0 && t >= s * 0.9) exit 0; print "truncated " t " of " s; exit 1 }'
	check nocfi-no-guessed-main awk -v v="$(total_pct "$OUT" main nocfi)" \
	    'BEGIN { if (v + 0 <= 5) exit 0; print "main TOTAL% " v " from guessed frames"; exit 1 }'
else
	skip nocfi "objcopy is not installed"
fi

# A stripped binary: no symbols, but .eh_frame is loaded, so stacks still reach _start's
# caller chain; its functions are named module+0xSTART, never [unknown].
if objcopy --strip-all "$WL/split" "$TMPD/stripped" 2>/dev/null; then
	run_proftop stripped -b -n 0 -- "$TMPD/stripped" 1
	check stripped-exit-status-0 status "$RC" 0
	check stripped-offsets-named has "$OUT" ' stripped\+0x[0-9a-f]+  stripped$'
	check stripped-no-unknown-module awk '/\[unknown\]$/ { print; bad = 1 } END { exit bad }' "$OUT"
	truncated=$(header_value "$OUT" truncated)
	samples=$(header_value "$OUT" samples)
	check stripped-unwinds awk -v t="$truncated" -v s="$samples" \
	    'BEGIN { if (s > 0 && t <= s / 100) exit 0; print "truncated " t " of " s; exit 1 }'
	check stripped-libc-start-100 between "$(total_pct "$OUT" __libc_start_main libc.so.6)" 99 100
	# Each stripped function is one row named by its start, which its .eh_frame FDE gives: the
	# address nm finds for it in the unstripped file; burn_a/b/c keep their 60/30/10 split.
	if command -v nm >/dev/null 2>&1; then
		for fn_share in burn_a:60 burn_b:30 burn_c:10; do
			fn=${fn_share%:*}
			start=$(nm "$WL/split" | awk -v f="$fn" '$3 == f { sub(/^0+/, "", $1); print $1 }')
			check "stripped-$fn-one-row-at-its-start" approx \
				"$(self_pct "$OUT" "stripped+0x$start" stripped)" "${fn_share#*:}" 5
		done
	fi
else
	skip stripped "objcopy is not installed"
fi

finish
