#!/bin/bash
# bench/run_snapshot.sh BUILD_DIR — what a snapshot costs as the profile grows, run by
# bench/run.sh: a snapshot updated from a pooled one (what proftop does) against a full copy, every
# 1,000 samples of randtree-shaped stacks with no memory budget. Figures only.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
echo "== a snapshot every 1,000 random samples (randtree's shape), no budget: median of the last 20"
"$build/bench/snapshot_bench" "${BENCH_SNAPSHOT_SAMPLES:-300000}" | sed 's/^/  /'
