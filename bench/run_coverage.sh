#!/bin/bash
# bench/run_coverage.sh BUILD_DIR — what --mode coverage costs the program and proftop. On
# tests/workloads/covhot.c (-O0: a hot loop over about 8.5 probed addresses an iteration, which
# times its own loop, so proftop's start and end are not counted): the loop alone, and under
# coverage at caps 1,
# 1000 (the default) and 10000, COVERAGE_ITERATIONS (default 10 million) iterations, the fastest
# of COVERAGE_REPEAT runs (default 3); uncapped (--coverage-cap 0, every execution a trap) on
# 200,000 iterations, its cost per trap. Then the probes of a large program, proftop itself
# (about 16,000 line addresses) running --version: proftop's wall time from start to end, and
# the lines reached. Figures only; nothing here fails on them. Needs root.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
proftop=./proftop
hot=$build/workloads/covhot
iters=${COVERAGE_ITERATIONS:-10000000}
reps=${COVERAGE_REPEAT:-3}
echo "== --mode coverage: the program's slowdown, and proftop on a large program"
if [ "$(id -u)" -ne 0 ] || ! [ -x "$hot" ] || ! [ -x "$proftop" ]; then
	echo "  (needs root, $proftop and $hot)"
	exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# fastest CMD... — the least loop time of reps runs.
fastest()
{
	local best="" t
	for _ in $(seq 1 "$reps"); do
		t=$("$@" 2>/dev/null | sed -n 's/^loop \([0-9.]*\) s$/\1/p')
		[ -z "$t" ] && continue
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$t
		fi
	done
	echo "${best:-?}"
}

alone=$(fastest "$hot" "$iters")
printf "  %-30s loop %s s (%d iterations)\n" "alone" "$alone" "$iters"
for cap in 1 1000 10000; do
	t=$(fastest "$proftop" --mode coverage --coverage-cap "$cap" -b -n 0 -- "$hot" "$iters")
	printf "  %-30s loop %s s (%s x alone)\n" "coverage, --coverage-cap $cap" "$t" \
		"$(awk -v a="$t" -v b="$alone" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "?" }')"
done
small=200000
t0=$(fastest "$hot" "$small")
t=$(fastest "$proftop" --mode coverage --coverage-cap 0 -b -n 0 -- "$hot" "$small")
# About 8.5 probed addresses run each iteration (-O0: the loop's test and increment, the call
# and sum, step's entry, its three statements, the branch half the time, its return).
printf "  %-30s loop %s s for %d iterations (alone %s s): %s us per trap\n" "uncapped" "$t" \
	"$small" "$t0" "$(awk -v a="$t" -v b="$t0" -v n="$small" 'BEGIN { printf "%.2f", (a - b) / (n * 8.5) * 1e6 }')"

start=$(date +%s.%N)
"$proftop" --mode coverage -b -n 0 -o "$tmp/self.info" -- "$proftop" --version \
	>"$tmp/self.out" 2>&1
end=$(date +%s.%N)
lines=$(grep -c '^DA:' "$tmp/self.info" 2>/dev/null)
ran=$(grep -c '^DA:[0-9]*,[1-9]' "$tmp/self.info" 2>/dev/null)
printf "  %-30s %.2f s from start to end, %s lines probed, %s ran\n" "proftop --version" \
	"$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "${lines:-?}" "${ran:-?}"
grep -a 'warning' "$tmp/self.out" | sed 's/^/  /'
exit 0
