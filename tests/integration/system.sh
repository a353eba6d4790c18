#!/bin/sh
# system.sh — -a, every process on the machine: split (burn_a/b/c 60/30/10) and paths (burn 90,
# solo 10) started independently of proftop, one of them before it and one after, and a short
# split that starts and exits during the run, unwound by one collector and by two. Batch with --per-thread writes a file per process:
# each process's split is its own; the short one is there with its name; the header names the
# machine's CPU times. The screen: Processes lists both with their commands, picking split shows
# only split's functions in Top. --mode offcpu machine-wide: waits' blocked read() and nap, and
# no wait without a user stack. Refusals: -a with a command, -a --mode alloc.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/paths" "$WL/waits"
require_perf_events
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
	skip "all" "-a needs root or perf_event_paranoid <= 0"
	finish
fi

# pct_of FILE FUNCTION — FUNCTION's share (as leaf) of the folded FILE's samples.
pct_of()
{
	awk -v f="$2" '{ n = $NF; total += n; k = split($1, a, ";"); if (a[k] == f) mine += n }
		END { printf "%.1f", total ? 100 * mine / total : 0 }' "$1"
}

# Off the CPU, machine-wide: waits (started apart) blocks 7 ms in read() and naps 3 ms in each
# cycle; without --kernel no wait without a user stack (a kernel thread's, a dying thread's
# last switch) is counted.
"$WL/waits" 6 >/dev/null &
waits_pid=$!
BG_PIDS="$BG_PIDS $waits_pid"
sleep 0.3
run_proftop offcpu -a -b -n 0 -d 2 --mode offcpu --per-thread -o "$TMPD/off.folded"
sum_of() { awk -v f="$2" 'index($0, f) { n += $NF } END { print n + 0 }' "$1" 2>/dev/null || echo 0; }
check "offcpu-exit-0" status "$RC" 0 "$ERR"
check "offcpu-waits-read" sh -c "[ $(sum_of "$TMPD/off.folded.$waits_pid" ';wait_on_pipe;') -gt $(sum_of "$TMPD/off.folded.$waits_pid" ';take_a_nap;') ] && [ $(sum_of "$TMPD/off.folded.$waits_pid" ';take_a_nap;') -gt 0 ] || { ls '$TMPD'; cat '$TMPD/off.folded.$waits_pid'; exit 1; }"
check "offcpu-no-kernel-waits" sh -c "! cat '$TMPD'/off.folded.* | grep -E '(^|;)(schedule|do_task_dead|worker_thread|kthread)[; ]'"
kill "$waits_pid" 2>/dev/null



# The same with one collector (the default here) and with two.
for collectors in 1 2; do
	[ "$collectors" = 1 ] && c="" || c="collectors$collectors-"
	"$WL/split" 8 >/dev/null &
	split_pid=$!
	BG_PIDS="$BG_PIDS $split_pid"
	sleep 0.3
	( sleep 1; exec "$WL/paths" 5 ) >/dev/null &
	paths_pid=$!
	BG_PIDS="$BG_PIDS $paths_pid"
	( sleep 2; exec "$WL/split" 0.4 ) >/dev/null &
	short_pid=$!
	BG_PIDS="$BG_PIDS $short_pid"
	run_proftop "${c}all" -a -b -n 0 -d 5 --collectors "$collectors" --per-thread \
		-o "$TMPD/sys$collectors.folded"
	wait "$short_pid"
	check "${c}exit-0" status "$RC" 0 "$ERR"
	check "${c}header-state" has "$OUT" '^=== proftop final  elapsed [0-9.]+s'
	check "${c}split-file" test -s "$TMPD/sys$collectors.folded.$split_pid"
	check "${c}split-burn_a" approx "$(pct_of "$TMPD/sys$collectors.folded.$split_pid" burn_a)" 60 5
	check "${c}split-burn_b" approx "$(pct_of "$TMPD/sys$collectors.folded.$split_pid" burn_b)" 30 5
	check "${c}split-burn_c" approx "$(pct_of "$TMPD/sys$collectors.folded.$split_pid" burn_c)" 10 5
	check "${c}split-alone" sh -c "! grep -q ';solo ' '$TMPD/sys$collectors.folded.$split_pid'"
	check "${c}paths-file" test -s "$TMPD/sys$collectors.folded.$paths_pid"
	check "${c}paths-burn" approx "$(pct_of "$TMPD/sys$collectors.folded.$paths_pid" burn)" 90 5
	check "${c}paths-solo" approx "$(pct_of "$TMPD/sys$collectors.folded.$paths_pid" solo)" 10 5
	check "${c}paths-call-paths" has "$TMPD/sys$collectors.folded.$paths_pid" 'main;path_b;mid_b;burn [0-9]+$'
	check "${c}short-lived" has "$TMPD/sys$collectors.folded.$short_pid" ';burn_a [0-9]+$'
	check "${c}no-sanitizer-report" sh -c "! grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$ERR'"
	kill "$split_pid" "$paths_pid" 2>/dev/null
	wait "$split_pid" "$paths_pid" 2>/dev/null
done

run_proftop withcmd -a -b -- "$WL/split" 1
check "refuses-command" sh -c "[ $RC = 2 ] && grep -q -- '-a profiles every process' '$ERR'"
run_proftop withalloc -a -b --mode alloc
check "refuses-alloc" sh -c "[ $RC = 2 ] && grep -q 'not with -a' '$ERR'"

# --- the screen ------------------------------------------------------------------------------------

. "$(dirname "$0")/lib_tmux.sh"
"$WL/split" 20 >/dev/null &
split_pid=$!
BG_PIDS="$BG_PIDS $split_pid"
"$WL/paths" 20 >/dev/null &
paths_pid=$!
BG_PIDS="$BG_PIDS $paths_pid"
pane sa 160 40 -a -d 30
check "title" wait_screen sa '^ proftop  all CPUs  \[running\]'
tm send-keys -t sa 4
check "processes-tab" wait_screen sa ' 4 Processes '
check "processes-columns" wait_screen sa '^  SAMPLES   SHARE%      PID  COMMAND +SELF%  HOTTEST FUNCTION'
check "split-row" wait_screen sa "^ +[0-9]+ +[0-9.]+ +$split_pid  split +[0-9.]+%  burn_a"
check "paths-row" wait_screen sa "^ +[0-9]+ +[0-9.]+ +$paths_pid  paths +[0-9.]+%  burn"
# Down to split's row, Enter picks it; Top then shows split alone.
row=$(screen sa | awk -v p="$split_pid" '/all processes/ { start = NR } $3 == p { print NR - start; exit }')
i=0
while [ "$i" -lt "${row:-0}" ]; do
	tm send-keys -t sa Down
	i=$((i + 1))
done
tm send-keys -t sa Enter 1
check "picked" wait_screen sa " process $split_pid"
check "top-is-split" wait_screen sa '^ +[5-6][0-9]\.[0-9]+ +[0-9.]+ +[0-9]+  burn_a +split'
check "no-paths-in-split" sh -c "! tmux -L '$SOCK' capture-pane -p -t sa | grep -q ' solo '"
tm send-keys -t sa q
check "quit" ended sa
check "restored" restored sa
check "tui-no-sanitizer-report" no_sanitizer_report sa
kill "$split_pid" "$paths_pid" 2>/dev/null
finish
