#!/bin/sh
# tui_offcpu.sh — the screen in --mode offcpu on the waits workload: the title says what 100% is
# (the blocked seconds), the counters count switches, the views count SECONDS, the timeline has
# the blocked time of every second, and + does not pretend to change a frequency.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/waits"
. "$(dirname "$0")/lib_tmux.sh"
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "all" "context switches need perf_event_paranoid <= 1 or root"
	finish
fi

pane off 110 24 --mode offcpu -- "$WL/waits" 6
check "title-offcpu" wait_screen off '^ proftop .*\[running\]  [0-9.]+s  offcpu: blocked [0-9.]+s  cumulative'
check "counters-switches" wait_screen off '^ switches [0-9]+'
check "seconds-column" wait_screen off '^  SELF%  TOTAL%  SECONDS  FUNCTION'
check "read-row" wait_screen off '^ +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}  (__GI___libc_read|read)'
check "timeline" wait_screen off '^ [▁▂▃▄▅▆▇█]{2,} *$'
tm send-keys -t off +
check "no-frequency" wait_screen off 'off-CPU mode takes every context switch: it has no frequency'
tm send-keys -t off q
check "quit" ended off
check "command-ended-by-q" exit_status off 143 # SIGTERM to the command still running
check "restored" restored off
check "no-sanitizer-report" no_sanitizer_report off
finish
