#!/bin/bash
# bench/run_export.sh BUILD_DIR — writing a snapshot of one million samples in each format (time,
# file size, peak memory), and reading the tmon.out back. Figures only.
set -u
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== export: one snapshot of ${BENCH_EXPORT_SAMPLES:-1000000} samples in each format"
"$build/bench/export_bench" "$tmp" "${BENCH_EXPORT_SAMPLES:-1000000}"
