#!/bin/bash
# bench/run_tui.sh BUILD_DIR — the interactive screen's costs, run by bench/run.sh: a frame of a
# 111,110-node call tree drawn by the real TUI code (aim: under 5 ms), a Flame frame of a
# 299,592-node tree (aim: under 10 ms), the first frame of the real
# binary on a pseudo-terminal (aim: within 200 ms of start), and the UI thread's CPU at the default
# refresh (aim: under 2% of a core), and a frame of the Lines view with the disassembly of a
# function of about 5,000 instructions (generated here; aim: under 5 ms). Figures only; nothing here fails on a timing.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
bench=$build/bench/tui_bench
if ! [ -x "$bench" ]; then
	echo "== TUI: $bench is missing (make bench builds it)"
	exit 0
fi
"$bench" frame
"$bench" flame
# big_function: 800 source lines of a few instructions each, kept apart by empty asm statements.
src=$(mktemp /tmp/proftop-bigfunc.XXXXXX.c) && bin=${src%.c}
awk 'BEGIN {
	print "unsigned long big_function(unsigned long x, unsigned long y)\n{"
	for (i = 1; i <= 800; i++)
		printf "\tx = x * %du + (y >> %d); y ^= x + %d; __asm__ volatile(\"\" : \"+r\"(x), \"+r\"(y));\n", 2 * i + 1, i % 31 + 1, i
	print "\treturn x + y;\n}\nint main(int argc, char **argv) { (void)argv; return (int)big_function(argc, 2); }"
}' >"$src"
if cc -O2 -g -o "$bin" "$src"; then
	set -- $(nm -S "$bin" | awk '$4 == "big_function" { print "0x" $1, "0x" $2 }')
	"$bench" asm "$bin" "$1" "$(printf '0x%x' $(($1 + $2)))"
fi
rm -f "$src" "$bin"
"$bench" live ./proftop "$build/workloads/split" "${BENCH_TUI_SECONDS:-10}"
