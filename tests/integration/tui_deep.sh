#!/bin/sh
# tui_deep.sh — deep stacks in the screen's trees, in an 80-column terminal: every row's depth can
# be read off the screen at any depth. Indentation stops at a third of the function column (7
# levels here); deeper rows show their depth as a number ("·27") where the indentation was. With
# everything open (*), the hottest path is the first rows, each the child of the one above: each
# row must read one level deeper than the one above it, down to the first leaf. Before, every
# row past the 7th level read as the 7th, so `HashMap::entry` looked like a sibling of the
# `hash_phase` that called it.
#
# On recurse (60 frames of recursion above its leaf): the Tree, and the Callers of leaf (each
# caller one level deeper, up to _start). On rsdeep, a Rust program (rustc -O -g) 25 frames of
# recursion and std's inlined functions deep: the Tree, and hash_phase's hottest callee one level
# below hash_phase. Every wait is bounded.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/recurse"
. "$(dirname "$0")/lib_tmux.sh"

# depths NAME — the tree rows of the screen as "DEPTH LEAF NAME": the depth as the row shows it
# (columns of indentation / 2 before the open/closed mark, or the number that replaces them), 1
# when the row has no mark (no children), and the name. The function column starts at column 27.
depths()
{
	screen "$1" | awk '
		/ FUNCTION / { on = 1; next }
		!on || length($0) < 27 || $1 !~ /^[0-9.]+$/ { next }
		{
			rest = substr($0, 27)
			blanks = match(rest, /[^ ]/) - 1
			rest = substr(rest, blanks + 1)
			depth = -1
			if (match(rest, /^(\302\267|:)[0-9]+ /)) {
				depth = substr(rest, 1, RLENGTH - 1)
				gsub(/[^0-9]/, "", depth)
				rest = substr(rest, RLENGTH + 1)
				blanks = 0
			}
			leaf = rest ~ /^ / || !(rest ~ /^(\342\226\276|\342\226\270|-|\+) /)
			if (depth < 0)
				depth = leaf ? (blanks - 2) / 2 : blanks / 2
			sub(/^ *(\342\226\276|\342\226\270|-|\+)? +/, "", rest)
			sub(/  +[^ ]+ *$/, "", rest)
			print depth, leaf, rest
		}'
}

# hottest_path NAME MIN — the rows from the top down to the first leaf read one level deeper
# each, starting at 0, and there are at least MIN of them.
hottest_path()
{
	depths "$1" | awk -v min="$2" '
		{ if ($1 != NR - 1) { bad = NR; exit } if ($2 == 1) { n = NR; exit } }
		END {
			if (bad) { printf "row %d reads as depth %s, want %d\n", bad, $1, bad - 1; exit 1 }
			if (n < min) { printf "the path to the first leaf is %d rows, want %d or more\n", n, min; exit 1 }
		}' && return 0
	depths "$1" | head -n 70 | sed 's/^/    /'
	return 1
}

# child_of NAME FUNC — the row after the first row of FUNC is one level deeper.
child_of()
{
	depths "$1" | awk -v f="$2" '
		found { if ($1 == want) exit 0; printf "%s reads as depth %s, its callee as %s\n", f, want - 1, $1; exit 1 }
		index($0, " " f) { found = 1; want = $1 + 1 }
		END { if (!found) { print f " is not on the screen"; exit 1 } }'
}

# --- recurse: Tree and Callers -------------------------------------------------------------------
pane rec 80 100 -- "$WL/recurse" 60
check "recurse-top" wait_screen rec '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +leaf +recurse'
sleep 1
tm send-keys -t rec 2 '*'
check "recurse-tree-open" wait_screen rec ' leaf +recurse'
tm send-keys -t rec Space
sleep 0.5
check "recurse-tree-depth-marks" wait_screen rec '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +(·|:)[0-9]+ '
check "recurse-tree-every-depth" hottest_path rec 60
check "recurse-tree-callee-deeper" child_of rec recurse
# The callers of leaf: recurse 60 times, then main and what called it.
tm send-keys -t rec Space 1 / l e a f Enter Enter
check "recurse-callers" wait_screen rec ' callers of leaf'
tm send-keys -t rec '*' Space
sleep 0.5
check "recurse-callers-every-depth" hottest_path rec 60
tm send-keys -t rec q
check "recurse-q-ends" ended rec
check "recurse-restores-terminal" restored rec
check "recurse-no-sanitizer-report" no_sanitizer_report rec

# --- rsdeep: a Rust program ----------------------------------------------------------------------
need "$WL/rsdeep" # make builds it with rustc -O -g
pane rs 80 100 -- "$WL/rsdeep" 60
check "rust-top" wait_screen rs '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +.* +rsdeep'
sleep 2
tm send-keys -t rs 2 '*'
check "rust-tree-open" wait_screen rs ' rsdeep::hash_phase +rsdeep'
tm send-keys -t rs Space
sleep 0.5
check "rust-tree-every-depth" hottest_path rs 45
check "rust-tree-hash_phase-callee-deeper" child_of rs rsdeep::hash_phase
tm send-keys -t rs q
check "rust-q-ends" ended rs
check "rust-no-sanitizer-report" no_sanitizer_report rs
finish
