#!/bin/sh
# tui_flame.sh — the screen's Flame view (5) driven in tmux on the split workload (60/30/10 % of
# its CPU in burn_a, burn_b, burn_c under main): frame widths on an 80-column screen within one
# cell of the shares proftop shows for them and of the known split; moving, zooming in and out,
# the search's marks and share, the flame orientation, freezing, a resize to 40x10 and back.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
. "$(dirname "$0")/lib_tmux.sh"

# burn_x NAME FUNC — the column (from 0) where FUNC's frame starts on the screen's burn row.
burn_x()
{
	screen "$1" | awk -v f="$2" '/burn_a/ && /burn_b/ { print index($0, f) - 1; exit }'
}

# heading NAME FIELD — from the Flame heading " total N (P%)  self N (P%)  NAME  MODULE": field
# total (N), pct (P) or name.
heading()
{
	screen "$1" | awk -v want="$2" '/^ total [0-9]+ \(/ {
		gsub(/[()%]/, "")
		if (want == "total") print $2; else if (want == "pct") print $3; else print $(NF - 1)
		exit }'
}

# root_at_bottom NAME — the last row above the hints is the root.
root_at_bottom()
{
	local i=0
	until screen "$1" | tail -n 2 | head -n 1 | grep -q '^all'; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "the row above the hints is not the root:"; screen "$1"; return 1; }
		sleep 0.2
	done
}

# above NAME FIRST SECOND — the row starting with FIRST is above the one starting with SECOND.
above()
{
	screen "$1" | awk -v a="$2" -v b="$3" 'index($0, a) == 1 && !ya { ya = NR }
		index($0, b) == 1 && !yb { yb = NR } END { exit !(ya && yb && ya < yb) }' ||
		{ echo "$2 is not above $3:"; screen "$1"; return 1; }
}

# within_cells GOT EXACT — |GOT - EXACT| < 1 cell.
within_cells()
{
	awk -v g="$1" -v e="$2" 'BEGIN { d = g - e; exit !(g != "" && d < 1 && d > -1) }' ||
		{ echo "got $1 cells, want $2 ± <1"; return 1; }
}

pane flame 80 24 -t mono -- "$WL/split" 60
check "top-first" wait_screen flame '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
sleep 2 # a few thousand samples
tm send-keys -t flame 5
check "tab-named" wait_screen flame ' 5 Flame '
check "root-row" wait_screen flame '^all *$'
check "burn-row" wait_screen flame '^burn_a +burn_b +burn_c *$'
check "hints" wait_screen flame 'h/j/k/l:move  Enter:zoom'

# Frozen, the widths and the heading's shares come from one snapshot.
tm send-keys -t flame ' ' j j j j j
check "burn_a-selected" wait_screen flame '^ total [0-9]+ \([0-9.]+%\)  self [0-9]+ \([0-9.]+%\)  burn_a  split'
pa=$(heading flame pct)
tm send-keys -t flame l
check "burn_b-selected" wait_screen flame '  burn_b  split$'
pb=$(heading flame pct)
xb=$(burn_x flame burn_b)
xc=$(burn_x flame burn_c)
check "burn_a-width" within_cells "$xb" "$(echo "$pa * 80 / 100" | bc -l)"
check "burn_b-width" within_cells "$((xc - xb))" "$(echo "$pb * 80 / 100" | bc -l)"
check "burn_a-known-split" approx "$xb" 48 2
check "burn_b-known-split" approx "$((xc - xb))" 24 2
check "burn_c-known-split" approx "$((80 - xc))" 8 2
total=$(heading flame total)
sleep 1.5
check "frozen-total-stays" sh -c "[ '$(heading flame total)' = '$total' ]"

# Zoom into burn_b: it spans the width; Esc comes back.
tm send-keys -t flame Enter
check "zoomed-top-row" wait_screen flame '^burn_b *$'
check "zoomed-heading" wait_screen flame '  zoomed  '
check "zoomed-others-gone" wait_gone flame '^all'
tm send-keys -t flame Escape
check "unzoomed" wait_screen flame '^all *$'
check "unzoomed-selection-kept" wait_screen flame '  burn_b  split$'

# The search: its share in the heading, Esc clears it first.
tm send-keys -t flame ' ' / b u r n _ c Enter
check "search-share" wait_screen flame '  match [0-9.]+%  '
share=$(screen flame | sed -n 's/.*  match \([0-9.]*\)%  .*/\1/p' | head -n 1)
check "search-share-10" approx "$share" 10 2
tm send-keys -t flame Escape
check "search-cleared" wait_gone flame '  match [0-9.]+%'

# A flame: the root at the bottom, just above the hints.
tm send-keys -t flame f
check "flame-root-at-bottom" root_at_bottom flame
check "flame-burn-above-main" above flame burn_a main
tm send-keys -t flame f
check "icicle-again" above flame main burn_a

# Smaller (5 rows of frames: the root to main) and back: then the widths are as before.
tm resize-window -t flame -x 40 -y 10
check "small-root" wait_screen flame '^all *$'
check "small-main" wait_screen flame '^main *$'
check "small-no-wider" sh -c "! tmux -L '$SOCK' capture-pane -p -t flame | awk 'length(\$0) > 40' | grep -q ."
tm resize-window -t flame -x 80 -y 24
check "big-again" wait_screen flame '^burn_a {30,}burn_b'
check "big-burn_b-at" approx "$(burn_x flame burn_b)" 48 2

tm send-keys -t flame q
check "quit" sh -c "i=0; until [ -e '$TMPD/flame.status' ]; do i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done"
check "restored" restored flame
finish
