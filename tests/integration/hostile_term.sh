#!/bin/sh
# hostile_term.sh — what a hostile target's names cannot do, and what a standard output that goes
# away does. A JIT names its code `jit ESC]0;TITLE BEL ESC[2J` plus a C1 CSI and a stray byte
# (a real /tmp/perf-PID.map, profiled for real), an ELF file is named `evil ESC[2J`: batch tables,
# --tree, the text snapshots on stdout, `proftop report`, -i and the error messages show them in
# visible form (^[ as the screen does), with no ESC or BEL byte. Then `| head` ends a run that
# would go on for 30 seconds, a reader that exits before -n 0's only table ends it too, and
# tables written to /dev/full are an error that names standard output. Last, in a real terminal
# (tmux): the same name on the screen; Ctrl-\ ends profiling as Ctrl-C does and restores the
# terminal; Ctrl-S does not freeze the screen, whose end gives the shell its flow control back;
# pprof is not written to a terminal.
#
# Every run is bounded by timeout(1); a run that needs its time limit is a failure.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/jit" "$WL/split" "$WL/spin"
require_perf_events

LIMIT=${PROFTOP_TIMEOUT:-60}
ESC=$(printf '\033')
BEL=$(printf '\007')
CSI=$(printf '\302\233')
EVIL=$(printf 'jit\033]0;TITLE\007\033[2J\302\233\377')
SHOWN='jit^[]0;TITLE^G^[[2J\u009b\xff'

# no_controls FILE... — no ESC, BEL or UTF-8 C1 CSI in any of the files.
no_controls()
{
	local f
	for f in "$@"; do
		if LC_ALL=C grep -q "[$ESC$BEL]" "$f" || LC_ALL=C grep -qF "$CSI" "$f"; then
			echo "raw control bytes in $f:"
			cat -v "$f" | LC_ALL=C grep -E '\^\[|\^G|M-BM-\^\[' | head -n 5
			return 1
		fi
	done
}

# has_text FILE TEXT — TEXT appears, as it is, in FILE.
has_text()
{
	LC_ALL=C grep -qF -- "$2" "$1" && return 0
	echo "no '$2' in $1:"
	cat -v "$1" | head -n 8
	return 1
}

# --- names from a JIT's perf map ---------------------------------------------------------------------
JIT_MAP_NAME=$EVIL run_proftop jit -b -n 0.2 -- "$WL/jit" 1
check "jit-exit-status-0" status "$RC" 0 "$ERR"
check "jit-no-raw-controls" no_controls "$OUT" "$ERR"
check "jit-row-visible" has_text "$OUT" "  $SHOWN  [jit]"
check "jit-periodic-tables-too" sh -c "[ \$(LC_ALL=C grep -cF -- '$SHOWN' '$OUT') -ge 2 ]"

JIT_MAP_NAME=$EVIL run_proftop jit_tree -b -n 0 --tree -- "$WL/jit" 1
check "tree-no-raw-controls" no_controls "$OUT" "$ERR"
check "tree-row-visible" has_text "$OUT" "$SHOWN  [jit]"

# The text snapshots on standard output: one name per field, every line whole.
JIT_MAP_NAME=$EVIL run_proftop jit_folded -b -n 0 -o - -f folded -- "$WL/jit" 1
check "folded-no-raw-controls" no_controls "$OUT" "$ERR"
check "folded-frame-visible" has_text "$OUT" 'jit^[]0:TITLE^G^[[2J\u009b\xff '
check "folded-lines-whole" awk '!/^[^ ].* [0-9]+$/ { print "bad line: " $0; bad = 1 } END { exit bad }' "$OUT"

JIT_MAP_NAME=$EVIL run_proftop jit_callgrind -b -n 0 -o - -f callgrind -- "$WL/jit" 1
check "callgrind-no-raw-controls" no_controls "$OUT" "$ERR"
check "callgrind-name-visible" has "$OUT" "^c?fn=\\([0-9]+\\) jit\\^\\[\\]0;TITLE"

# A tmon.out of it, read back by `proftop report` (table and tree) and by -b -i.
JIT_MAP_NAME=$EVIL run_proftop jit_tmon -b -n 0 -o "$TMPD/evil.tmon" -- "$WL/jit" 1
check "tmon-file-no-raw-controls" no_controls "$TMPD/evil.tmon"
run_proftop report_table report -O -1 "$TMPD/evil.tmon"
check "report-exit-status-0" status "$RC" 0 "$ERR"
check "report-no-raw-controls" no_controls "$OUT" "$ERR"
check "report-name-visible" has_text "$OUT" "TITLE^G^[[2J"
run_proftop report_tree report -T "$TMPD/evil.tmon"
check "report-tree-no-raw-controls" no_controls "$OUT" "$ERR"
check "report-tree-name-visible" has_text "$OUT" "[jit]::$SHOWN"
run_proftop input -b -i "$TMPD/evil.tmon"
check "input-no-raw-controls" no_controls "$OUT" "$ERR"
check "input-name-visible" has_text "$OUT" "$SHOWN  [jit]"

# Errors quote a file's names: a sub that never exited.
printf '#fOrTyTwO\n$hz=100;\nPART2\n& 1 main %s\n+ 1\n@ 3 0 3\n' "$EVIL" >"$TMPD/open.tmon"
run_proftop report_error report "$TMPD/open.tmon"
check "report-error-status-1" status "$RC" 1 "$ERR"
check "report-error-no-raw-controls" no_controls "$ERR"
check "report-error-names-sub" has_text "$ERR" "never exited (main::$SHOWN)"
run_proftop input_error -b -i "$TMPD/open.tmon"
check "input-error-status-1" status "$RC" 1 "$ERR"
check "input-error-no-raw-controls" no_controls "$ERR"
check "input-error-names-sub" has_text "$ERR" "main::$SHOWN"

# --- a module (an ELF file) whose name is an escape sequence -----------------------------------------
evil_bin=$TMPD/$(printf 'evil\033[2J')
cp "$WL/split" "$evil_bin"
run_proftop module -b -n 0 -o - -f folded -- "$evil_bin" 1
check "module-exit-status-0" status "$RC" 0 "$ERR"
check "module-no-raw-controls" no_controls "$OUT" "$ERR"
run_proftop module_table -b -n 0 -- "$evil_bin" 1
check "module-table-no-raw-controls" no_controls "$OUT" "$ERR"
check "module-row-visible" has_text "$OUT" "  burn_a  evil^[[2J"

# --- standard output goes away -----------------------------------------------------------------------
# `| head` stops reading after the first table: profiling ends as on SIGTERM (split dies of it),
# the -o snapshot is still written, and proftop's status is the command's.
timeout -k 5 "$LIMIT" sh -c "{ '$PROFTOP_BIN' -b -n 0.2 -o '$TMPD/head.tmon' -- '$WL/split' 30 \
	2>'$TMPD/head.err'; echo \$? >'$TMPD/head.status'; } | head -n 3 >'$TMPD/head.out'"
RC=$?
check "head-ends-within-limit" status "$RC" 0
check "head-got-a-table" has "$TMPD/head.out" '^--- proftop'
check "head-status-after-sigterm" status "$(cat "$TMPD/head.status" 2>/dev/null || echo -1)" 143 "$TMPD/head.err"
check "head-snapshot-written" has "$TMPD/head.tmon" '^& [0-9]+ split burn_a$'
check "head-no-error-message" sh -c "! grep -q 'cannot write' '$TMPD/head.err' || cat '$TMPD/head.err'"

# Attached, `| head -n 3` as the issue has it: profiling ends, the process runs on.
if start_spin 60; then
	timeout -k 5 "$LIMIT" sh -c "{ '$PROFTOP_BIN' -b -n 0.2 -p '$SPIN_PID' 2>'$TMPD/headp.err'; \
		echo \$? >'$TMPD/headp.status'; } | head -n 3 >'$TMPD/headp.out'"
	RC=$?
	check "head-attached-ends-within-limit" status "$RC" 0
	check "head-attached-got-a-table" has "$TMPD/headp.out" '^--- proftop'
	check "head-attached-status-0" status "$(cat "$TMPD/headp.status" 2>/dev/null || echo -1)" 0 "$TMPD/headp.err"
	check "head-attached-leaves-process" kill -0 "$SPIN_PID"
	kill -TERM "$SPIN_PID" 2>/dev/null
else
	fail "head-attached-setup" "spin did not print its pid"
fi

# -n 0 writes nothing until the end: a reader that exits at once still ends the run (attach mode:
# status 0, the process runs on).
if start_spin 60; then
	timeout -k 5 "$LIMIT" sh -c "{ '$PROFTOP_BIN' -b -n 0 -p '$SPIN_PID' 2>'$TMPD/gone.err'; \
		echo \$? >'$TMPD/gone.status'; } | true"
	RC=$?
	check "reader-gone-ends-within-limit" status "$RC" 0
	check "reader-gone-status-0" status "$(cat "$TMPD/gone.status" 2>/dev/null || echo -1)" 0 "$TMPD/gone.err"
	check "reader-gone-leaves-process" kill -0 "$SPIN_PID"
	kill -TERM "$SPIN_PID" 2>/dev/null
else
	fail "reader-gone-setup" "spin did not print its pid"
fi

# A full device: an error naming standard output, status 1, and the snapshot all the same.
for n in 0.2 0; do
	timeout -k 5 "$LIMIT" "$PROFTOP_BIN" -b -n "$n" -d 1 -o "$TMPD/full-$n.tmon" -- "$WL/split" 30 \
		>/dev/full 2>"$TMPD/full-$n.err" </dev/null
	RC=$?
	check "full-n$n-status-1" status "$RC" 1 "$TMPD/full-$n.err"
	check "full-n$n-names-stdout" has "$TMPD/full-$n.err" '^proftop: cannot write the tables to standard output: No space left on device$'
	check "full-n$n-snapshot-written" has "$TMPD/full-$n.tmon" '^& [0-9]+ split burn_a$'
done
# With -o -, the tables go to standard error: a full one there, and the snapshot on stdout.
timeout -k 5 "$LIMIT" "$PROFTOP_BIN" -b -n 0.2 -d 0.5 -o - -- "$WL/split" 30 \
	>"$TMPD/full-stderr.out" 2>/dev/full </dev/null
RC=$?
check "full-stderr-status-1" status "$RC" 1
check "full-stderr-snapshot-on-stdout" has "$TMPD/full-stderr.out" '^#fOrTyTwO$'

# --- the screen, in a real terminal (tmux) ------------------------------------------------------------
# The command's output file goes to a directory of its own (the tmux server, started below, passes
# TMPDIR on to the panes); the command's Ctrl-\ leaves no core file behind.
QDIR=$(mktemp -d /tmp/ptq.XXXXXX) || exit 1
export TMPDIR=$QDIR
ulimit -c 0
. "$(dirname "$0")/lib_tmux.sh"

# Ctrl-\ (SIGQUIT, to the whole foreground group) ends profiling as Ctrl-C does: the terminal is
# restored, the -o snapshot written, the command's empty output file removed, and the status is the
# command's (split dies of SIGQUIT).
pane quit 100 30 -o "$TMPD/quit.tmon" -- "$WL/split" 30
check "ctrl-backslash-rows" wait_screen quit '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
tm send-keys -t quit 'C-\'
check "ctrl-backslash-ends" ended quit
check "ctrl-backslash-status-of-command" exit_status quit 131
check "ctrl-backslash-restores-terminal" restored quit
check "ctrl-backslash-snapshot-written" has "$TMPD/quit.tmon" '^& [0-9]+ split burn_a$'
check "ctrl-backslash-no-output-file" sh -c "[ -z \"\$(ls -A '$QDIR')\" ] || { ls -l '$QDIR'; false; }"

# Ctrl-S does not stop the screen (flow control is off while it is up): a key after it still
# redraws, SIGTERM still ends it, and the shell gets its flow control back.
pane xon 100 30 -- "$WL/split" 30
check "ctrl-s-rows" wait_screen xon '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +burn_a +split'
check "ctrl-s-no-flow-control-while-up" sh -c "tmux -L '$SOCK' display -p -t xon '#{pane_tty}' | xargs -I{} stty -F {} -a | grep -Eq '(^| )-ixon( |$)'"
tm send-keys -t xon C-s Tab
check "ctrl-s-screen-still-draws" wait_screen xon 'TOTAL% +SELF%'
pid=$(proftop_pid xon)
[ -n "$pid" ] && kill -TERM "$pid"
check "ctrl-s-sigterm-ends" ended xon
check "ctrl-s-status-of-command" exit_status xon 143
check "ctrl-s-restores-terminal" restored xon
check "ctrl-s-flow-control-back" grep -Eq '(^| )ixon( |$)' "$TMPD/xon.stty"
# The JIT's name on the screen: drawn in visible form (curses' own ^[ for ESC, and the same form
# as batch mode for the rest), so the pane's title stays and the screen is not cleared.
pane jitscreen 150 30 -- env "JIT_MAP_NAME=$EVIL" "$WL/jit" 30
check "screen-name-visible" wait_screen jitscreen "$(printf '%s' "$SHOWN" | sed 's/[][^\\.*$]/\\&/g')  +\\[jit\\]"
check "screen-title-untouched" sh -c "[ \"\$(tmux -L '$SOCK' display -p -t jitscreen '#{pane_title}')\" != TITLE ]"
tm send-keys -t jitscreen q
check "screen-name-q-ends" ended jitscreen
check "screen-name-no-raw-controls" no_controls "$TMPD/jitscreen.err"

# pprof is binary, names included as they are: not to a terminal (batch tables go to stderr).
pane pprof 100 30 -b -n 0 -o - -f pprof -- "$WL/split" 1
check "pprof-to-terminal-ends" ended pprof
check "pprof-to-terminal-status-1" exit_status pprof 1
check "pprof-to-terminal-says-why" has "$TMPD/pprof.err" '^proftop: -o -: a pprof snapshot is binary, and standard output is a terminal'
check "pprof-to-terminal-nothing-written" sh -c "! tmux -L '$SOCK' capture-pane -p -t pprof | grep -q ."
rm -rf "$QDIR"
finish
