#!/bin/sh
# split.sh — accuracy and layout of the final table on `split`, which burns CPU 60/30/10 in
# burn_a/burn_b/burn_c: the shares, the sample count at the default 999 Hz and at -F 200, no
# overflow, the header and row layout, --max-rows and --kernel; --collectors 3 gives the same.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
require_perf_events

modules_are_split()
{
	local fn m
	for fn in burn_a burn_b burn_c; do
		m=$(module_of "$1" $fn)
		[ "$m" = split ] || { echo "$fn: module \"$m\", want split"; return 1; }
	done
}

# few_truncated FILE — at most 5% of the samples have a stack that stopped short (with -g none
# nothing is unwound and the count is 0).
few_truncated()
{
	local t s
	t=$(header_value "$1" truncated)
	s=$(header_value "$1" samples)
	awk -v t="$t" -v s="$s" 'BEGIN { exit !(t ~ /^[0-9]+$/ && t <= 0.05 * s) }' ||
		{ echo "truncated $t of $s samples"; return 1; }
}

# samples_match_self FILE FUNCTION — its SAMPLES over the header's samples is its SELF% (burn_a
# calls nothing, so self and total counts agree whichever the column shows).
samples_match_self()
{
	local n s p
	n=$(row_value "$1" "$2" "" 3)
	s=$(header_value "$1" samples)
	p=$(self_pct "$1" "$2")
	awk -v n="$n" -v s="$s" -v p="$p" 'BEGIN { exit !(s > 0 && (100 * n / s - p) ^ 2 <= 1) }' ||
		{ echo "$2: SAMPLES $n of $s but SELF% $p"; return 1; }
}

row_count()
{
	local n
	n=$(final_table "$1" | wc -l)
	[ "$n" -eq "$2" ] || { echo "$n final rows, want $2:"; final_table "$1"; return 1; }
}

first_row_is()
{
	final_table "$1" | head -n 1 | grep -Eq "^ *[0-9.]+ +[0-9.]+ +[0-9]+  $2  +$3 *\$" ||
		{ echo "first row is not $2 in $3:"; final_table "$1"; return 1; }
}

# two_seconds_split PREFIX FILE STEAL — the checks (names PREFIX…) of a final table of `split 2`
# at 999 Hz: the 60/30/10 shares in split's own functions; split's burn is CPU time, so the kernel
# takes 2 s x 999 Hz samples (less the ~1% spent in the clock_gettime syscall, which user-only
# sampling does not see): 1998 ± 15%; no overflow; few stacks cut short.
two_seconds_split()
{
	check "${1}burn_a-60" approx "$(self_pct "$2" burn_a)" 60 5
	check "${1}burn_b-30" approx "$(self_pct "$2" burn_b)" 30 5
	check "${1}burn_c-10" approx "$(self_pct "$2" burn_c)" 10 5
	check "${1}module-is-split" modules_are_split "$2"
	check_cpu "${1}samples-2s-999Hz" "$3" between "$(header_value "$2" samples)" 1698 2298
	check "${1}no-overflow" approx "$(header_value "$2" overflow)" 0 0
	check "${1}few-truncated" few_truncated "$2"
}

# --- default frequency: 2 s of CPU -----------------------------------------------------------------
steal=$(steal_mark)
run_proftop split -b -- "$WL/split" 2
f=$OUT
check "exit-status-0" status $RC 0 "$ERR"
check "one-final-table" one_final "$f"
two_seconds_split "" "$f" "$steal"
check "no-dropped" approx "$(header_value "$f" dropped)" 0 0
check "burn_a-total-equals-self" approx "$(total_pct "$f" burn_a)" "$(self_pct "$f" burn_a)" 1
check "samples-column-consistent" samples_match_self "$f" burn_a
check "self-sums-to-100" between "$(final_table "$f" | awk '{ s += $1 } END { printf "%.2f", s }')" 99 101
check "elapsed-about-2s" between "$(header_value "$f" elapsed)" 1.8 4
check "header-freq-999" has "$f" '^=== proftop final.*freq 999 Hz'
check "headers-well-formed" headers_well_formed "$f"
check "rows-well-formed" rows_well_formed "$f"
samples999=$(header_value "$f" samples)

# --- --collectors 3: three unwinding threads, each taking a third of the samples, give the same --
steal=$(steal_mark)
run_proftop split-collectors -b --collectors 3 -- "$WL/split" 2
check "collectors-exit-status-0" status $RC 0 "$ERR"
two_seconds_split collectors- "$OUT" "$steal"
run_proftop split-collectors-folded -b -n 0 --collectors 2 -o "$TMPD/collectors.folded" -- "$WL/split" 1
check "collectors-call-paths" has "$TMPD/collectors.folded" '^_start;__libc_start_main;__libc_start_call_main;main;burn_a [0-9]+$' 

# --- -F 200: the same work, about a fifth of the samples -----------------------------------------
run_proftop split-F200 -b -F 200 -- "$WL/split" 2
f=$OUT
check "F200-exit-status-0" status $RC 0 "$ERR"
check "F200-header-freq" has "$f" '^=== proftop final.*freq 200 Hz'
check "F200-samples" between "$(header_value "$f" samples)" 340 460
check "F200-5x-fewer" between "$(awk -v a="$samples999" -v b="$(header_value "$f" samples)" \
	'BEGIN { if (b > 0) printf "%.2f", a / b; else print "none" }')" 4.25 5.75
check "F200-burn_a-60" approx "$(self_pct "$f" burn_a)" 60 7

# --- --max-rows ---------------------------------------------------------------------------------
run_proftop max-rows -b --max-rows 2 -- "$WL/split" 0.5
check "max-rows-exit-status-0" status $RC 0 "$ERR"
check "max-rows-2" row_count "$OUT" 2
check "max-rows-keeps-top" first_row_is "$OUT" burn_a split

# --- --kernel: kernel frames allowed, the user-space shares unchanged -----------------------------
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "kernel" "kernel sampling needs root or kernel.perf_event_paranoid <= 1"
else
	run_proftop kernel -b --kernel -- "$WL/split" 1
	check "kernel-exit-status-0" status $RC 0 "$ERR"
	check "kernel-burn_a-60" approx "$(self_pct "$OUT" burn_a)" 60 6
fi
finish
