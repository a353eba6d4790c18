#!/bin/sh
# tui_offcpu.sh — the screen in --mode offcpu on the waits workload: the title says what 100% is
# (the blocked seconds), the counters count switches, the views count SECONDS, the timeline has
# the blocked time of every second, and + does not pretend to change a frequency. m goes through
# runnable, wall and cpu, keeping the view and the selection; a cpu run says it has no others.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/waits"
. "$(dirname "$0")/lib_tmux.sh"
if ! switches_allowed; then
	skip "all" "context switches need perf_event_paranoid <= 1 or root"
	finish
fi

pane off 110 24 --mode offcpu -- "$WL/waits" 40
check "title-offcpu" wait_screen off '^ proftop .*\[running\]  [0-9.]+s  offcpu: blocked [0-9.]+s  cumulative'
check "counters-switches" wait_screen off '^ samples [0-9]+ .*switches [0-9]+'
check "seconds-column" wait_screen off '^  SELF%  TOTAL%  SECONDS  FUNCTION'
check "read-row" wait_screen off '^ +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}  (__GI___libc_read|read)'
check "timeline" wait_screen off '^ [▁▂▃▄▅▆▇█]{2,} *$'
tm send-keys -t off +
check "no-frequency" wait_screen off 'weighed as time against each other: the frequency stays'
# The second row's function, as Callers names it; after m twice (runnable, wall) the same one.
tm send-keys -t off Down c
check "callers-of-selection" wait_screen off 'callers of [^ ]'
sel=$(screen off | sed -n 's/.*callers of \([^ ]*\).*/\1/p' | head -n 1)
tm send-keys -t off 1 m
check "mode-runnable" wait_screen off '  runnable: preempted [0-9.]+s  '
check "mode-runnable-says" wait_screen off 'mode runnable: 100% is every thread.s time preempted'
tm send-keys -t off m
check "mode-wall" wait_screen off '  wall: thread time [0-9.]+s  '
check "wall-seconds-column" wait_screen off '^  SELF%  TOTAL%  SECONDS  FUNCTION'
tm send-keys -t off c
check "selection-held" wait_screen off "callers of $sel"
# In Tree, m keeps Tree: the CPU's profile, in samples.
tm send-keys -t off 2 m
check "mode-cpu" wait_screen off '  cpu [0-9]+ Hz  '
check "tree-kept" wait_screen off '^ +TOTAL% +SELF% +SAMPLES +FUNCTION'
tm send-keys -t off m
check "mode-offcpu-again" wait_screen off '  offcpu: blocked [0-9.]+s  '
check "tree-kept-seconds" wait_screen off '^ +TOTAL% +SELF% +SECONDS +FUNCTION'
tm send-keys -t off q
check "quit" ended off
check "command-ended-by-q" exit_status off 143 # SIGTERM to the command still running
check "restored" restored off
check "no-sanitizer-report" no_sanitizer_report off

# A cpu run samples no context switches: m says how to get them.
pane cpu 110 24 -- "$WL/waits" 4
check "cpu-title" wait_screen cpu '\[running\]  [0-9.]+s  cpu [0-9]+ Hz  cumulative'
tm send-keys -t cpu m
check "cpu-m-says-why" wait_screen cpu 'this run samples the CPU only: start with --mode offcpu'
tm send-keys -t cpu q
check "cpu-quit" ended cpu
finish
