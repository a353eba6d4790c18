#!/bin/bash
# bench/run_perfmap.sh BUILD_DIR — what a huge JIT perf map costs: peak memory and time to read
# one of 3 million functions (distinct names, then 1024 names between them) and one with a 100 MiB
# line. Figures only; perfmap.h states the limits that bound them.
set -u
build=${1:-build}
echo "== JIT perf maps past proftop's limits (perfmap.h)"
for run in "entries 3000000" "starts 3000000" "line 100"; do
	"$build/bench/perfmap_mem" $run | sed 's/^/  /'
done
