#!/bin/sh
# periodic.sh — batch mode prints a table every -n interval, each with the same layout as the final
# one, then exactly one final table; split's shares hold in every window.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
require_perf_events

# periodic_rows_at_most FILE N — no periodic table has more than N rows.
periodic_rows_at_most()
{
	awk -v max="$2" '
	/^--- proftop/ { on = 1; n = 0; next }
	/^=== proftop/ { on = 0 }
	on && NF >= 5 && $1 ~ /^[0-9]+\.[0-9]+$/ && $3 ~ /^[0-9]+$/ {
		if (++n == max + 1) { print "a periodic table has more than " max " rows"; bad = 1 }
	}
	END { exit bad }' "$1"
}

# periodic_share FILE FUNCTION WANT TOL — FUNCTION's SELF% is WANT ± TOL in every periodic table.
periodic_share()
{
	awk -v f="$2" -v want="$3" -v tol="$4" '
	function close_table() {
		if (on && (got < want - tol || got > want + tol)) {
			print "table " t ": " f " at " got "%, want " want " ± " tol; bad = 1
		}
	}
	/^(---|===) proftop/ { close_table(); on = /^---/; t++; got = 0; next }
	on && NF >= 5 && $1 ~ /^[0-9]+\.[0-9]+$/ {
		name = $0
		sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		sub(/ +[^ ]+ *$/, "", name)
		if (name == f) got += $1
	}
	END { close_table(); exit bad }' "$1"
}

# elapsed_increases FILE — each header's elapsed time is later than the one before.
elapsed_increases()
{
	grep -E '^(---|===) proftop' "$1" | sed -n 's/.*elapsed \([0-9.]*\)s.*/\1/p' | awk '
	NR > 1 && $1 + 0 <= prev + 0 { print "elapsed " $1 "s after " prev "s"; bad = 1 }
	{ prev = $1 }
	END { exit bad }'
}

# -d 2 ends the profile (split would run 5 s): tables at 0.5, 1.0, 1.5 (and perhaps 2.0) s.
run_proftop periodic -b -n 0.5 -d 2 -- "$WL/split" 5
f=$OUT
check "duration-ends-profile" between "$(header_value "$f" elapsed)" 1.9 2.6
check "at-least-3-periodic-tables" between "$(grep -c '^--- proftop' "$f")" 3 100
check "one-final-table-last" one_final "$f"
check "headers-well-formed" headers_well_formed "$f"
check "elapsed-increases" elapsed_increases "$f"
check "own-cost-in-every-header" cost_in_headers "$f"
check "periodic-at-most-25-rows" periodic_rows_at_most "$f" 25
check "burn_a-60-in-every-table" periodic_share "$f" burn_a 60 8
finish
