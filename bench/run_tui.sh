#!/bin/bash
# bench/run_tui.sh BUILD_DIR — the interactive screen's costs, run by bench/run.sh: a frame of a
# 111,110-node call tree drawn by the real TUI code (aim: under 5 ms), the first frame of the real
# binary on a pseudo-terminal (aim: within 200 ms of start), and the UI thread's CPU at the default
# refresh (aim: under 2% of a core). Figures only; nothing here fails on a timing.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
bench=$build/bench/tui_bench
if ! [ -x "$bench" ]; then
	echo "== TUI: $bench is missing (make bench builds it)"
	exit 0
fi
"$bench" frame
"$bench" live ./proftop "$build/workloads/split" "${BENCH_TUI_SECONDS:-10}"
