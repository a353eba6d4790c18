#!/bin/sh
# tui_coverage.sh — --mode coverage on the screen, driven in tmux: covprog (it sleeps in steps
# after its counted work) shows in Top with each function's executions and lines that ran
# (never_called 0 of 3), the header says the cap and the probes, the counters the lines that ran;
# `a` on every_third opens its Lines view with the capped loop lines (>=1000) and the source; on
# main, the line that never ran is marked #####; q ends the run with the terminal restored.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/covprog"
. "$(dirname "$0")/lib_tmux.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "all" "coverage mode loads a BPF program, which needs root (or CAP_BPF and CAP_PERFMON)"
	finish
fi
SRC=tests/workloads/covprog.c
loop=$(grep -nF 'if (i % 3 == 0)' "$SRC" | cut -d: -f1)
never=$(grep -nF '		never_called();' "$SRC" | cut -d: -f1)

pane cov 150 40 --theme mono --mode coverage -- "$WL/covprog" 30
check "top-lines-ran" wait_screen cov 'EXECUTIONS +LINES RAN +FUNCTION'
check "top-never-called" wait_screen cov ' 0 +0/3 +0% never_called +covprog'
check "top-every-third" wait_screen cov ' 3004 +7/7 +100% every_third +covprog'
check "header-coverage" line_has cov 1 'coverage: cap 1000, [0-9]+ of 45 probes placed'
check "counters-lines-ran" line_has cov 2 'lines ran [0-9]+'
tm send-keys -t cov a
check "lines-every-third" wait_screen cov "lines of every_third"
check "lines-capped" wait_screen cov ">=1000  covprog\\.c:$loop +if \\(i % 3 == 0\\)"
check "lines-heading" wait_screen cov 'EXECUTED +LINE +SOURCE'
tm send-keys -t cov Escape
check "back-to-top" wait_screen cov 'EXECUTIONS +LINES RAN'
tm send-keys -t cov Down Down a
check "lines-main" wait_screen cov "lines of main"
check "lines-never-ran" wait_screen cov "#####  covprog\\.c:$never +never_called\\(\\);"
tm send-keys -t cov q
check "ended" ended cov
check "restored" restored cov
check "no-sanitizer-report" no_sanitizer_report cov
finish
