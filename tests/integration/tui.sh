#!/bin/sh
# tui.sh — the interactive screen driven like a user would: the real binary in a tmux pane of a
# fixed size, keys sent with send-keys, the screen read back with capture-pane. The hot function
# tops the Top view; Tab reaches the call tree with main above its callees; / filters; the screen
# survives resizing to 40x10 and smaller; q, SIGINT and SIGTERM restore the terminal and return the
# command's exit status; attaching and quitting leaves the process running; themes and TERM=dumb.
#
# Every wait is bounded; each pane runs proftop under timeout(1) too.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/fptree" "$WL/spin" "$WL/exitwith"
. "$(dirname "$0")/lib_tmux.sh"

# columns of the first match of NAME as a word in the screen line: where a tree row's name starts.
indent_of()
{
	awk -v w="$2" '{ if (match($0, "[ ]" w "( |$)")) { print RSTART; exit } }'
}

# --- the top view, filtering, resizing, q ---------------------------------------------------------
pane top 100 30 -- "$WL/split" 30
check "top-shows-hot-function" wait_screen top '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
# Line 7 is the first row: title, counters, the timeline's two rows (all samples, then those
# of the selected function, named once the next snapshot counted them), tab bar, headings.
check "timeline-follows-selected" wait_screen top '^ [▁▂▃▄▅▆▇█ ]+ <- burn_a$'
check "timeline-strip" line_has top 3 '^ [▁▂▃▄▅▆▇█]+ *$'
check "top-hottest-first" line_has top 7 'burn_a'
check "top-header-running" line_has top 1 'proftop .*split 30.*\[running\].*999 Hz'
check "top-header-counters" line_has top 2 'samples [0-9]+.*overflow [0-9]+.*dropped [0-9]+.*throttled [0-9]+.*truncated [0-9]+'
# proftop's own CPU share (of the last refresh) and resident memory, after the counters.
check "top-header-own-cost" line_has top 2 'truncated [0-9]+  proftop [0-9]+\.[0-9]% CPU [0-9.]+[KMG] *$'
check "top-tab-bar" line_has top 5 '1 Top +2 Tree +3 Callers +4 Threads'

tm send-keys -t top / b u r n _ b
check "filter-incremental" wait_gone top ' burn_a '
check "filter-keeps-match" line_has top 7 'burn_b'
check "filter-prompt" wait_screen top 'Filter: burn_b_'
tm send-keys -t top Enter
check "filter-shown-in-tab-bar" wait_screen top 'filter: burn_b'
tm send-keys -t top Escape
check "filter-cleared" wait_screen top ' burn_a '

tm resize-window -t top -x 40 -y 10
check "resize-small-redraws" wait_screen top '^ proftop'
check "resize-small-fits" sh -c "[ \$(tmux -L '$SOCK' display -p -t top '#{window_width}x#{window_height}') = 40x10 ]"
check "resize-small-rows" wait_screen top '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_'
tm resize-window -t top -x 8 -y 2
sleep 0.5
tm resize-window -t top -x 1 -y 1
sleep 0.5
tm resize-window -t top -x 100 -y 30
check "resize-back-rows" wait_screen top '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
check "resize-back-status-line" wait_screen top '^ \?:help  Tab:view'
check "resize-still-running" sh -c "[ ! -e '$TMPD/top.status' ]"

# The mouse: a click (xterm X10 report, as tmux forwards it) on the second row selects it, and
# Enter on the Top view shows that function's callers.
tm send-keys -t top -l "$(printf '\033[M %s%s' "$(printf "\\$(printf %o $((32 + 1 + 30)))")" \
	"$(printf "\\$(printf %o $((32 + 1 + 5)))")")"
tm send-keys -t top -l "$(printf '\033[M#%s%s' "$(printf "\\$(printf %o $((32 + 1 + 30)))")" \
	"$(printf "\\$(printf %o $((32 + 1 + 5)))")")"
tm send-keys -t top Enter
check "mouse-click-selects-row" wait_screen top 'callers of burn_b'

tm send-keys -t top q
check "q-ends" ended top
check "q-status-of-command" exit_status top 143 # split ended by SIGTERM
check "q-restores-terminal" restored top
check "q-no-sanitizer-report" no_sanitizer_report top

# --- s: a snapshot now, while sampling goes on ------------------------------------------------------
pane save 100 30 -o "$TMPD/snap.tmon" -- "$WL/split" 30
check "save-waits-for-rows" wait_screen save '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
tm send-keys -t save s
check "save-says-where" wait_screen save "saved .*snap\.tmon"
check "save-wrote-tmon" has "$TMPD/snap.tmon" '^& [0-9]+ split burn_a$'
check "save-still-running" sh -c "[ ! -e '$TMPD/save.status' ]"
tm send-keys -t save q
check "save-q-ends" ended save
# The snapshot read back shows its counters, and no cost: that was another proftop's.
pane saved 100 30 -i "$TMPD/snap.tmon"
check "saved-shows-rows" wait_screen saved '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
check "saved-header-counters" line_has saved 2 'samples [0-9]+.*truncated [0-9]+'
check "saved-no-own-cost" sh -c "! tmux -L '$SOCK' capture-pane -p -t saved | grep -q '% CPU'"
tm send-keys -t saved q
check "saved-q-ends" ended saved

# --- ?: the help, taller than the terminal, scrolls; q and Esc close it ---------------------------
# At 120x36 not every line fits: the most used keys come first (q among them), the rest is a PgDn
# or End away, and closing the help leaves proftop running.
# not_shown NAME ERE — no line of the screen matches, now.
not_shown()
{
	screen "$1" | grep -Eq -- "$2" || return 0
	echo "a line matches /$2/:"
	screen "$1" | grep -E -- "$2"
	return 1
}
pane help 120 36 -- "$WL/split" 30
check "help-waits-for-rows" wait_screen help '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
tm send-keys -t help '?'
check "help-shown" wait_screen help 'proftop keys, the most used first  \(lines 1-[0-9]+ of [0-9]+\)'
check "help-names-its-keys" wait_screen help 'PgUp PgDn .*Home g End G: scroll; other keys close'
check "help-quit-first" wait_screen help '^ +q F10 +quit: '
check "help-views-first" wait_screen help '^ +Tab Shift-Tab 1 2 3 4 +views: '
check "help-end-not-yet" not_shown help 'Ctrl-L +repaint'
tm send-keys -t help PgDn
check "help-page-down" wait_screen help '\(lines ([2-9]|[1-9][0-9])[0-9]*-[0-9]+ of [0-9]+\)'
check "help-page-down-quit-gone" not_shown help '^ +q F10 +quit: '
tm send-keys -t help End
check "help-end-shown" wait_screen help 'Ctrl-L +repaint'
check "help-end-last-lines" wait_screen help '\(lines [0-9]+-([0-9]+) of \1\)'
tm send-keys -t help Home
check "help-home-quit-again" wait_screen help '^ +q F10 +quit: '
tm send-keys -t help Down Down
check "help-down-scrolls" wait_screen help '\(lines 3-[0-9]+ of [0-9]+\)'
tm send-keys -t help q
check "help-q-closes" wait_gone help 'proftop keys'
check "help-q-keeps-running" sh -c "sleep 0.5; [ ! -e '$TMPD/help.status' ]"
check "help-closed-rows-back" wait_screen help '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
tm send-keys -t help F1
check "help-f1-opens-at-start" wait_screen help '\(lines 1-[0-9]+ of [0-9]+\)'
tm send-keys -t help Escape
check "help-esc-closes" wait_gone help 'proftop keys'
# A terminal tall enough shows it whole, no line count in the title.
tm resize-window -t help -x 120 -y 80
tm send-keys -t help '?'
check "help-tall-shown" wait_screen help 'proftop keys, the most used first'
check "help-tall-quit-shown" wait_screen help '^ +q F10 +quit: '
check "help-tall-end-shown" wait_screen help 'Ctrl-L +repaint'
check "help-tall-whole" not_shown help 'proftop keys.*\(lines'
tm send-keys -t help Escape
check "help-tall-closes" wait_gone help 'proftop keys'
tm send-keys -t help q
check "help-then-q-ends" ended help
check "help-q-status-of-command" exit_status help 143
check "help-no-sanitizer-report" no_sanitizer_report help

# --- the call tree ---------------------------------------------------------------------------------
pane tree 100 30 -g fp -- "$WL/fptree" 30
check "tree-top-view-first" wait_screen tree ' work_hot '
tm send-keys -t tree Tab
check "tree-reached-with-tab" wait_screen tree '^ +[0-9.]+ +[0-9.]+ +[0-9]+ .* work_hot '
check "tree-tab-active" line_has tree 6 'TOTAL% +SELF%'
# main above run above work_hot, each indented further: the hottest path is open by default.
tree_order()
{
	local s m r h mi ri hi
	# one column per mark, so awk's byte offsets are columns
	s=$(screen tree | sed 's/▾/-/g; s/▸/+/g')
	m=$(printf '%s\n' "$s" | grep -n ' main ' | head -n 1 | cut -d: -f1)
	r=$(printf '%s\n' "$s" | grep -n ' run ' | head -n 1 | cut -d: -f1)
	h=$(printf '%s\n' "$s" | grep -n ' work_hot ' | head -n 1 | cut -d: -f1)
	mi=$(printf '%s\n' "$s" | sed -n "${m:-1}p" | indent_of tree main)
	ri=$(printf '%s\n' "$s" | sed -n "${r:-1}p" | indent_of tree run)
	hi=$(printf '%s\n' "$s" | sed -n "${h:-1}p" | indent_of tree work_hot)
	if [ -n "$m" ] && [ -n "$r" ] && [ -n "$h" ] && [ "$m" -lt "$r" ] && [ "$r" -lt "$h" ] &&
	    [ "$mi" -lt "$ri" ] && [ "$ri" -lt "$hi" ]; then
		return 0
	fi
	echo "want main above run above work_hot, each indented more (lines $m $r $h, columns $mi $ri $hi):"
	printf '%s\n' "$s" | sed '/^ *$/d' | head -n 20
	return 1
}
check "tree-main-above-callees" tree_order
check "tree-helper-closed" wait_screen tree '^ +(2[5-9]|3[0-5])\.[0-9]+ .* [+▸] helper '
check "tree-cold-hidden" wait_gone tree ' work_cold '
# Open helper: select it (it follows work_hot), then Right.
helper_row=$(screen tree | grep -n ' helper ' | head -n 1 | cut -d: -f1)
first_row=7
i=$first_row
while [ "$i" -lt "${helper_row:-$first_row}" ]; do
	tm send-keys -t tree Down
	i=$((i + 1))
done
tm send-keys -t tree Right
check "tree-open-node" wait_screen tree ' work_cold '
tm send-keys -t tree Down c
check "tree-c-shows-callers" wait_screen tree 'callers of work_cold'
check "callers-helper-above-run" sh -c "tmux -L '$SOCK' capture-pane -p -t tree | grep -A1 ' work_cold ' | tail -n 1 | grep -q ' helper '"
tm send-keys -t tree 1 3
check "callers-of-top-selection" wait_screen tree 'callers of work_hot'
tm send-keys -t tree 4
check "threads-view" wait_screen tree 'fptree +[0-9.]+% +work_hot'
tm send-keys -t tree 1 w
check "window-toggle" wait_screen tree 'window 10s'
tm send-keys -t tree q
check "tree-q-ends" ended tree
check "tree-no-sanitizer-report" no_sanitizer_report tree

# --- the screen owns the terminal: the command's output goes to a file, named at exit ---------------
pane cmdout 100 20 -- sh -c 'printf "%s-%s\n" marker output; exec "$0" 30' "$WL/split"
check "cmdout-rows" wait_screen cmdout '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
check "cmdout-not-on-screen" sh -c "! tmux -L '$SOCK' capture-pane -p -t cmdout | grep -q marker-output"
tm send-keys -t cmdout q
check "cmdout-q-ends" ended cmdout
check "cmdout-file-named" has "$TMPD/cmdout.err" "^proftop: the command's output is in /"
outfile=$(sed -n "s/^proftop: the command's output is in //p" "$TMPD/cmdout.err")
check "cmdout-file-has-output" has "${outfile:-/nonexistent}" '^marker-output$'
rm -f "$outfile"

# --- the command exits by itself: the final profile stays until q ------------------------------
pane exit3 100 30 -- "$WL/exitwith" 3
check "exit-stays-with-final-profile" wait_screen exit3 'exited with status 3'
check "exit-shows-profile" wait_screen exit3 ' busy +exitwith'
check "exit-waits-for-q" sh -c "sleep 0.5; [ ! -e '$TMPD/exit3.status' ]"
tm send-keys -t exit3 q
check "exit-q-ends" ended exit3
check "exit-status-3" exit_status exit3 3
check "exit-restores-terminal" restored exit3

# --- signals restore the terminal ------------------------------------------------------------------
pane sigterm 100 30 -- "$WL/split" 30
wait_screen sigterm ' burn_a ' >/dev/null
pid=$(proftop_pid sigterm)
[ -n "$pid" ] && kill -TERM "$pid"
check "sigterm-ends" ended sigterm
check "sigterm-status-of-command" exit_status sigterm 143
check "sigterm-restores-terminal" restored sigterm

pane sigint 100 30 -- "$WL/split" 30
wait_screen sigint ' burn_a ' >/dev/null
tm send-keys -t sigint C-c # the whole foreground group: proftop and the command
check "ctrl-c-ends" ended sigint
check "ctrl-c-status-of-command" exit_status sigint 130
check "ctrl-c-restores-terminal" restored sigint

# --- attach, then quit: the process runs on --------------------------------------------------------
if start_spin 60; then
	pane attach 100 30 -p "$SPIN_PID"
	check "attach-shows-target" wait_screen attach ' spin_forever +spin'
	check "attach-header" line_has attach 1 "pid $SPIN_PID.*\\[attached\\]"
	tm send-keys -t attach q
	check "attach-q-ends" ended attach
	check "attach-status-0" exit_status attach 0
	check "attach-restores-terminal" restored attach
	still_running()
	{
		kill -0 "$SPIN_PID" 2>/dev/null || { echo "spin is gone"; return 1; }
		state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$SPIN_PID/stat")
		case $state in [Tt]) echo "spin is stopped or traced ($state)"; return 1 ;; esac
	}
	check "detach-leaves-process-running" still_running
	kill -TERM "$SPIN_PID" 2>/dev/null
else
	fail "attach-setup" "spin did not print its pid"
fi

# --- themes and terminals --------------------------------------------------------------------------
printf 'normal = default\nhot = purple\n' >"$TMPD/bad.theme"
pane badtheme 120 30 -t "$TMPD/bad.theme" -- "$WL/split" 30
check "bad-theme-names-file-and-line" wait_screen badtheme 'bad\.theme:2:7: unknown colour or attribute'
check "bad-theme-still-runs" wait_screen badtheme ' burn_a '
tm send-keys -t badtheme T
check "theme-cycles" wait_screen badtheme 'theme [a-z-]+'
tm send-keys -t badtheme q
check "bad-theme-q-ends" ended badtheme
check "bad-theme-on-stderr" has "$TMPD/badtheme.err" 'bad\.theme:2:7: '

# Colours: the default theme sets some; NO_COLOR leaves only attributes.
colours()
{
	tm capture-pane -p -e -t "$1" | grep -Eq '\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7])(;[0-9;]*)?m'
}
pane colour 100 30 -- "$WL/split" 30
wait_screen colour ' burn_a ' >/dev/null
check "default-theme-has-colours" colours colour
tm send-keys -t colour q
ended colour >/dev/null
tm new-session -d -s nocolor -x 100 -y 30 \
	"NO_COLOR=1 timeout --foreground -k 5 $LIMIT '$PROFTOP_BIN' -- '$WL/split' 30; exec sleep $LIMIT"
check "no-color-shows-screen" wait_screen nocolor ' burn_a '
check "no-color-is-mono" sh -c "! tmux -L '$SOCK' capture-pane -p -e -t nocolor | grep -Eq '\\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7])(;[0-9;]*)?m'"
tm send-keys -t nocolor q

tm new-session -d -s dumb -x 100 -y 30 \
	"TERM=dumb timeout --foreground -k 5 $LIMIT '$PROFTOP_BIN' -d 0.5 -- '$WL/split' 5; exec sleep $LIMIT"
check "term-dumb-is-batch" wait_screen dumb '^=== proftop final'
finish
