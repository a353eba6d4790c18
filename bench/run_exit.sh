#!/bin/bash
# bench/run_exit.sh BUILD_DIR — how long proftop adds before a command's first instruction and
# after its exit (`proftop -b -n 0 -- true` is mostly these two), against the command alone.
build=${1:-build}
echo "== start and exit: proftop -b -n 0 -- a command that only notes the time"
"$build/bench/exit_latency" ./proftop "${BENCH_EXIT_RUNS:-30}"
