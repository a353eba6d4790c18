#!/bin/sh
# tui_timeline.sh — the screen's timeline on the phases workload (about 12 s in phase_one, then
# about 12 s in phase_two, one thread at full CPU): the strip counts every second, its second row
# follows the selected function and shows the switch; t, Home, [ and ] select the first seconds,
# and then Top shows phase_one alone, the header names the seconds and s saves only them; < >
# move the stretch, x brings the whole run back, w the window; a stretch can still be chosen
# after the run ended; --history 0 keeps no timeline.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/phases"
. "$(dirname "$0")/lib_tmux.sh"
LIMIT=$((LIMIT * 2)) # the first pane lives through the whole run and after it

# report_share FILE FUNC — FUNC's %Time, a whole number, in `proftop report FILE` (0 when it
# is not there).
report_share()
{
	"$PROFTOP_BIN" report "$1" 2>/dev/null |
		awk -v f="phases::$2" '$NF == f { printf "%d\n", $1; found = 1; exit }
			END { if (!found) print 0 }'
}

# bound VALUE BOUND — VALUE is at least BOUND, or at most -BOUND when BOUND is negative.
bound()
{
	case $2 in
	-*) [ "$1" -le "${2#-}" ] ;;
	*) [ "$1" -ge "$2" ] ;;
	esac
}

# shares FILE ONE TWO — phase_one's share within bound ONE, phase_two's within bound TWO.
shares()
{
	local one two
	one=$(report_share "$1" phase_one)
	two=$(report_share "$1" phase_two)
	bound "$one" "$2" && bound "$two" "$3" && return 0
	echo "phase_one $one%, phase_two $two% in $1:"
	"$PROFTOP_BIN" report "$1" 2>&1 | head -n 8
	return 1
}

pane phases 120 30 -o "$TMPD/phases.tmon" -- "$WL/phases" 24
check "starts-in-phase-one" wait_screen phases '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +phase_one '
check "switches-to-phase-two" wait_screen phases '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +phase_two ' 30
# A few seconds of phase two, phase_one still the hottest (the cursor's function): the second
# row has bars in phase one's seconds (12 or more: a loaded machine stretches the CPU time the
# workload counts) and none since.
check "some-of-phase-two" wait_screen phases '\[running\]  1[6-9]\.[0-9]s' 30
check "strip-counts-seconds" line_has phases 3 '^ [▁▂▃▄▅▆▇█]{16,} *$'
check "second-row-shows-switch" wait_screen phases '^ [▁▂▃▄▅▆▇█]{10,} {2,}<- phase_one$'

# The first stretch: t, Home, [ then the cursor to second 4 and ].
tm send-keys -t phases t
check "timeline-mode-hints" wait_screen phases '^ Left/Right:cursor  \[\]:start/end  <>:move'
tm send-keys -t phases Home '[' Right Right Right Right ']'
check "stretch-message" wait_screen phases 'timeline: cursor at 4s; seconds 0-5 shown'
check "stretch-header" wait_screen phases '  seconds 0-5$'
check "stretch-phase-two-gone" wait_gone phases ' phase_two '
# (TOTAL% may be 99.x: a sample whose unwinding stopped short (truncated) has no phase on its
# stack.)
check "stretch-phase-one-all" wait_screen phases '^ +(99\.[0-9]+|100\.00) +(99\.[0-9]+|100\.00) +[0-9]+ +phase_one '
tm send-keys -t phases s
check "stretch-saved" wait_screen phases "saved $TMPD/phases.tmon"
check "saved-phase-one-only" shares "$TMPD/phases.tmon" 99 -0
# Moved later by whole columns (phase two's own seconds are checked after the end, when it is
# sure to have had some).
tm send-keys -t phases '>' '>' '>' '>' '>' '>' '>' '>' '>' '>'
check "moved-header" wait_screen phases '  seconds 10-15$'
tm send-keys -t phases x
check "whole-run-again" wait_screen phases '  cumulative$'
check "whole-run-both" wait_screen phases '^ +(4[0-9]|5[0-9])\.[0-9]+ +[0-9.]+ +[0-9]+ +phase_two '
tm send-keys -t phases w
check "window-preset" wait_screen phases '  window 10s$'
tm send-keys -t phases Escape
check "left-timeline" wait_screen phases '^ \?:help  Tab:view'

# After the end (the screen stays): a stretch still shows only its seconds.
check "ended" wait_screen phases '\[exited with status 0\]' 60
# The last second, widened to the last five: phase two alone.
tm send-keys -t phases x t End '[' + +
check "end-stretch-phase-two" wait_screen phases '^ +(99\.[0-9]+|100\.00) +(99\.[0-9]+|100\.00) +[0-9]+ +phase_two '
check "end-stretch-phase-one-gone" wait_gone phases ' phase_one '
tm send-keys -t phases x Home ']'
check "after-end-stretch" wait_screen phases '\[exited.*  seconds 0-1$'
check "after-end-phase-one" wait_screen phases '^ +(99\.[0-9]+|100\.00) +(99\.[0-9]+|100\.00) +[0-9]+ +phase_one '
# And the second row still follows the cursor: phase_two's bars are in the later seconds.
tm send-keys -t phases x Escape / p h a s e _ t w o Enter
check "after-end-follows-cursor" wait_screen phases '^  {10,}[▁▂▃▄▅▆▇█]{10,} +<- phase_two$'
tm send-keys -t phases q
check "quit" sh -c "i=0; until [ -e '$TMPD/phases.status' ]; do i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done"
check "restored" restored phases
# The -o file written at the end has the whole run, whatever the screen showed.
check "final-file-whole-run" shares "$TMPD/phases.tmon" 30 30

# --history 0: no timeline row, and t says why.
pane nohist 100 30 --history 0 -- "$WL/phases" 6
check "nohist-runs" wait_screen nohist '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +phase_one '
check "nohist-no-strip" line_has nohist 3 '1 Top +2 Tree'
tm send-keys -t nohist t
check "nohist-says" wait_screen nohist 'no timeline: this profile keeps no history'
tm send-keys -t nohist q
check "nohist-quit" ended nohist
finish
