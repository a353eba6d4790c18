#!/bin/sh
# tui_lines.sh — the screen's Lines view (`a`, as perf top's annotate), driven in tmux: on the
# lines workload, two_lines's hot line has about 75% of its samples and the cursor opens on it;
# n goes to the cold line and N back; d lists each line's instructions under it (an imul under
# the hot line, whose instructions' samples add up to the line's) and every line of the code,
# d again hides them; % switches the basis; the window mode and a thread scope
# say what the lines count; Esc returns to Top. On a copy of split without DWARF, the view says
# why there are no lines and how to get them; on a copy of lines whose source gained lines after
# the build, each row says the source is newer instead of showing the wrong text.
#
# The panes use the mono theme, where the selected row is the only reverse-video row holding a
# file:line: that is how the cursor is read back. Every wait is bounded.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/lines" "$WL/split" "$WL/inline"
. "$(dirname "$0")/lib_tmux.sh"

hot=$(grep -n '/\* hot line \*/' tests/workloads/lines.c | cut -d: -f1)
cold=$(grep -n '/\* cold line \*/' tests/workloads/lines.c | cut -d: -f1)
ESC=$(printf '\033')
case "$hot $cold" in
[0-9]*" "[0-9]*) ;;
*) fail "lines-marks" "want one hot and one cold line in lines.c, found '$hot' '$cold'"; finish ;;
esac

# selected NAME — the file:line of the row under the cursor (reverse video in the mono theme).
# tmux writes an attribute only where it changes, so a row right under the reverse-video column
# headings starts with no escape of its own: the state is carried from line to line, and a line is
# reverse video when some text of it is.
selected()
{
	tm capture-pane -e -p -t "$1" | awk -v esc="$ESC" '
		{
			line = $0; out = 0
			while (line != "") {
				i = index(line, esc "[")
				text = i ? substr(line, 1, i - 1) : line
				if (rev && text ~ /[^ ]/)
					out = 1
				if (!i)
					break
				line = substr(line, i + 2)
				j = index(line, "m")
				n = split(substr(line, 1, j - 1), codes, ";")
				if (!n)
					rev = 0
				for (k = 1; k <= n; k++)
					if (codes[k] == "" || codes[k] == 0 || codes[k] == 27)
						rev = 0
					else if (codes[k] == 7)
						rev = 1
				line = substr(line, j + 1)
			}
			if (out)
				print
		}' | grep -o '[A-Za-z0-9_.-]*:[0-9][0-9]*' | grep -v '^proftop' | head -n 1
}

# wait_selected NAME FILE:LINE — until the cursor is on that row.
wait_selected()
{
	local i
	i=0
	while [ $i -lt $((WAIT * 5)) ]; do
		[ "$(selected "$1")" = "$2" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "the cursor is on '$(selected "$1")', want $2; the screen:"
	screen "$1" | sed '/^ *$/d' | head -n 20
	return 1
}

# under_line NAME FILE LINE — of one frame, the rows under FILE:LINE up to the next line: how
# many are instructions, how many of them an imul, the sum of their SAMPLES, and the line's
# SAMPLES.
under_line()
{
	screen "$1" | awk -v at=" $2:$3 " -v file=" $2:[0-9]+ " '
		index($0, at) { on = 1; line = $3; next }
		on && $0 ~ file { on = 0 }
		on && /^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  / {
			n++; if ($0 ~ /0x[0-9a-f]+  imul /) imul++
			if ($1 !~ /^0x/) sum += $3
		}
		END { printf "%d %d %d %d\n", n, imul, sum, line }'
}

# cell NAME ERE COLUMN — field COLUMN of the first screen line matching ERE.
cell()
{
	screen "$1" | grep -E -- "$2" | head -n 1 | awk -v c="$3" '{ print $c }'
}

# --- the lines workload: the hot line, n / N, %, the window, a thread, Esc ----------------------
pane lines 120 30 -t mono -- "$WL/lines" 30
check "lines-top-rows" wait_screen lines '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +two_lines +lines'
tm send-keys -t lines / t w o _ l i n e s Enter
check "lines-filtered" wait_screen lines 'filter: two_lines'
sleep 1 # some more samples
tm send-keys -t lines a
check "lines-tab" wait_screen lines ' lines of two_lines'
check "lines-heading" wait_screen lines '^ two_lines +lines +self [0-9]+ +total [0-9]+ +% of the function'
check "lines-columns" wait_screen lines 'SELF% +TOTAL% +SAMPLES +LINE +SOURCE'
check "lines-hot-row-has-text" wait_screen lines " lines\\.c:$hot +for .*6364136223846793005"
check "lines-hot-self-pct" between "$(cell lines " lines\\.c:$hot " 1)" 65 85
check "lines-cold-self-pct" between "$(cell lines " lines\\.c:$cold " 1)" 15 35
check "lines-cursor-on-hottest" wait_selected lines "lines.c:$hot"
check "lines-hints" wait_screen lines '^ \?:help  Tab:view  Esc:back  n/N:next hot  d:asm  %:of all'
tm send-keys -t lines n
check "lines-n-to-cold" wait_selected lines "lines.c:$cold"
tm send-keys -t lines N
check "lines-N-back-to-hot" wait_selected lines "lines.c:$hot"
# d: each line's instructions under it, with the samples at each address; every line of the code
# listed, the unsampled ones too; d again: the lines alone.
tm send-keys -t lines d
check "lines-d-shows-instructions" wait_screen lines '^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  imul '
tm send-keys -t lines Space
sleep 0.5 # a paused frame: the line's and its instructions' counts of one snapshot
set -- $(under_line lines lines.c "$hot")
check "lines-d-hot-line-has-instructions" between "${1:-0}" 3 40
check "lines-d-imul-under-hot-line" between "${2:-0}" 1 40
check "lines-d-hot-instruction-samples" between "${3:-0}" 1 1000000
check "lines-d-instruction-samples-add-up" status "${3:-0}" "${4:-x}"
tm send-keys -t lines Space G
check "lines-d-unsampled-line" wait_screen lines '^ +0\.00 +0\.00 +0  lines\.c:[0-9]+  }$'
# n from the last instruction (an unsampled line's) goes to the hottest line; d there centres it
tm send-keys -t lines n d
check "lines-d-again-hides-them" wait_gone lines '0x[0-9a-f]+  imul '
check "lines-d-again-cursor-on-hot" wait_selected lines "lines.c:$hot"
tm send-keys -t lines %
check "lines-percent-of-profile" wait_screen lines '^ two_lines .*% of the whole profile'
check "lines-percent-message" wait_screen lines 'percentages of the whole profile'
tm send-keys -t lines %
check "lines-percent-of-function" wait_screen lines '^ two_lines .*% of the function'
# The window mode: the lines count the window's self samples, without totals ("-").
tm send-keys -t lines w
check "lines-window-says-self-only" wait_screen lines "^ two_lines .*\\(the window's self samples: no line totals\\)"
check "lines-window-hot-row" wait_screen lines "^ +[0-9.]+ +- +[0-9]+  lines\\.c:$hot "
check "lines-window-hot-self-pct" between "$(cell lines " lines\\.c:$hot " 1)" 65 85
check "lines-window-keeps-cursor" wait_selected lines "lines.c:$hot"
tm send-keys -t lines w
check "lines-cumulative-again" wait_gone lines 'no line totals'
# A thread scope: that thread's self samples (lines runs one thread).
tm send-keys -t lines 4 Down Enter 6
check "lines-thread-says-self-only" wait_screen lines "^ two_lines .*\\(this thread's self samples: no line totals\\)"
check "lines-thread-hot-self-pct" between "$(cell lines " lines\\.c:$hot " 1)" 65 85
tm send-keys -t lines 4 Home Enter 6
check "lines-all-threads-again" wait_gone lines 'no line totals'
tm send-keys -t lines Escape
check "lines-esc-back-to-top" wait_screen lines 'SELF% +TOTAL% +SAMPLES +FUNCTION'
check "lines-esc-left-lines" wait_gone lines ' lines of two_lines'
tm send-keys -t lines q
check "lines-q-ends" ended lines
check "lines-restores-terminal" restored lines
check "lines-no-sanitizer-report" no_sanitizer_report lines

# --- i: inlined functions counted in their callers ----------------------------------------------
# On the inline workload, step (inlined) has about every sample; i folds it into caller_a (2/3)
# and caller_b (1/3), whose lines then hold them on the line of the call; i again brings it back.
# d on step (inlined) lists its copies' instructions in caller_a and caller_b under its own line,
# their samples adding up to the line's (it said there was no code address before).
call_a=$(grep -n '/\* call a \*/' tests/workloads/inline.c | cut -d: -f1)
step=$(grep -n '/\* step line \*/' tests/workloads/inline.c | cut -d: -f1)
pane inl 120 50 -t mono -- "$WL/inline" 30
check "inline-step-row" wait_screen inl '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +step \(inlined\) +inline'
sleep 1
tm send-keys -t inl i
check "inline-i-header" wait_screen inl '^ proftop .* no inline'
check "inline-i-step-gone" wait_gone inl 'step \(inlined\)'
check "inline-i-caller_a-self" between "$(cell inl ' caller_a +inline' 1)" 50 80
check "inline-i-caller_b-self" between "$(cell inl ' caller_b +inline' 1)" 20 50
tm send-keys -t inl / c a l l e r _ a Enter a
check "inline-i-lines-of-caller_a" wait_screen inl ' lines of caller_a'
check "inline-i-call-line-hot" between "$(cell inl " inline\\.c:$call_a " 1)" 90 100
tm send-keys -t inl Escape Escape i
check "inline-i-again-step-back" wait_screen inl '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +step \(inlined\) +inline'
check "inline-i-again-header" wait_gone inl '^ proftop .* no inline'
# > and <: the next and previous function in Top's order, from the hottest (step).
tm send-keys -t inl Home a
check "inline-a-on-step" wait_screen inl ' lines of step \(inlined\)'
tm send-keys -t inl d
check "inline-d-instructions" wait_screen inl '^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  imul '
check "inline-d-no-complaint" wait_gone inl 'no instructions'
tm send-keys -t inl Space
sleep 0.5 # a paused frame: the line's and its instructions' counts of one snapshot
set -- $(under_line inl inline.c "$step")
check "inline-d-step-line-has-instructions" between "${1:-0}" 4 60
check "inline-d-imul-in-both-copies" between "${2:-0}" 2 40
check "inline-d-instruction-samples" between "${3:-0}" 1 1000000
check "inline-d-instruction-samples-add-up" status "${3:-0}" "${4:-x}"
tm send-keys -t inl Space d
check "inline-d-again-hides-them" wait_gone inl '0x[0-9a-f]+  imul '
tm send-keys -t inl '>'
check "inline-next-function" wait_gone inl ' lines of step \(inlined\)'
check "inline-next-function-lines" wait_screen inl ' lines of [a-z_]+'
tm send-keys -t inl '<'
check "inline-previous-function" wait_screen inl ' lines of step \(inlined\)'
tm send-keys -t inl q
check "inline-q-ends" ended inl
check "inline-no-sanitizer-report" no_sanitizer_report inl

# --- a source file changed since the build -----------------------------------------------------
# Lines added at its top: the binary's line numbers point at other text now. The Lines view says
# so on each row instead of showing that text.
mkdir "$TMPD/newer"
cp tests/workloads/lines.c tests/workloads/burn.h "$TMPD/newer/"
if ! ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$TMPD/newer/lines" "$TMPD/newer/lines.c"; then
	fail "newer-build" "cannot compile $TMPD/newer/lines.c"
else
	touch -d '1 hour ago' "$TMPD/newer/lines"
	sed -i '1i /* a comment added after the build */\n\n' "$TMPD/newer/lines.c"
	pane newer 160 30 -t mono -- "$TMPD/newer/lines" 30
	check "newer-top-rows" wait_screen newer '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +two_lines +lines'
	tm send-keys -t newer / t w o _ l i n e s Enter
	check "newer-filtered" wait_screen newer 'filter: two_lines'
	tm send-keys -t newer a
	check "newer-says-why" wait_screen newer \
		" lines\\.c:$hot +\\(source newer than $TMPD/newer/lines: it changed since the build\\)"
	check "newer-no-stale-text" wait_gone newer '6364136223846793005'
	tm send-keys -t newer q
	check "newer-q-ends" ended newer
	check "newer-no-sanitizer-report" no_sanitizer_report newer
fi

# --- a function without line information --------------------------------------------------------
if ! command -v objcopy >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
	skip "nodebug" "objcopy or readelf (binutils) is not installed"
	finish
fi
objcopy --strip-debug "$WL/split" "$TMPD/split-nodebug"
check "nodebug-has-no-line-table" sh -c "! readelf -S '$TMPD/split-nodebug' | grep -q debug_line"
pane nodebug 140 30 -t mono -- "$TMPD/split-nodebug" 30
check "nodebug-top-rows" wait_screen nodebug '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split-nodebug'
sleep 1
tm send-keys -t nodebug a
check "nodebug-lines-of-burn_a" wait_screen nodebug ' lines of burn_a'
check "nodebug-says-why" wait_screen nodebug 'no source lines: its file has no DWARF line table, nor a debug file with one \(build with -g, or install its debug package\)'
check "nodebug-one-row-all-samples" wait_screen nodebug '^ +100\.00 +100\.00 +[0-9]+ +\[no line\]'
tm send-keys -t nodebug %
check "nodebug-percent-of-profile" wait_screen nodebug '% of the whole profile'
check "nodebug-burn_a-share-of-profile" between "$(cell nodebug '\[no line\]' 1)" 45 75
tm send-keys -t nodebug Left
check "nodebug-left-back-to-top" wait_screen nodebug 'SELF% +TOTAL% +SAMPLES +FUNCTION'
tm send-keys -t nodebug q
check "nodebug-q-ends" ended nodebug
check "nodebug-no-sanitizer-report" no_sanitizer_report nodebug
finish
