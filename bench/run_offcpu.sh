#!/bin/bash
# bench/run_offcpu.sh BUILD_DIR — the cost of --mode offcpu on a switch-heavy program: the
# pingpong workload (two threads bouncing a byte over pipes, ~100,000 context switches a second)
# for 5 s bare, under proftop attached with --switch-period 1, 11 and 101, and under
# `perf record -e cs -c 1 --call-graph dwarf` attached the same way. For each: the target's
# round trips per second (its slowdown), the profiler's own CPU time (user+system, from
# /usr/bin/time: attached, so the target's is not in it), and what was lost (proftop's overflow
# and dropped counters; perf's LOST records). OFFCPU_REPEAT rounds (default 3), one after the
# other, to see the spread on a shared machine. The engine is the same in every mode but cpu
# (CPU samples and every context switch): offcpu stands for runnable and wall too. Figures only;
# nothing here fails on a timing.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
wl=$build/workloads/pingpong
secs=${OFFCPU_SECONDS:-5}
if ! [ -x "$wl" ] || ! [ -x ./proftop ]; then
	echo "== off-CPU: $wl or ./proftop is missing (make bench builds them)"
	exit 0
fi
tmp=$(mktemp -d /tmp/proftop-offcpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

reps=${OFFCPU_REPEAT:-3}
round=1
while [ "$round" -le "$reps" ]; do
	echo "== off-CPU mode on pingpong, ${secs}s attached, round $round of $reps (round trips/s of the target; profiler CPU)"
	printf '  %-34s %12s\n' "bare" "$("$wl" "$secs" | awk '{ print $1 }')"
	for period in 1 11 101; do
		"$wl" "$secs" >"$tmp/trips" &
		pid=$!
		sleep 0.05
		/usr/bin/time -f '%U %S' -o "$tmp/time" ./proftop -b -n 0 -d "$secs" --mode offcpu \
			--switch-period "$period" -p "$pid" >"$tmp/table" 2>"$tmp/err"
		wait "$pid"
		printf '  %-34s %12s   proftop CPU %5.2fs   %s\n' "proftop --switch-period $period" \
			"$(awk '{ print $1 }' "$tmp/trips")" "$(awk '{ print $1 + $2 }' "$tmp/time")" \
			"$(awk '/^=== proftop final/ { for (i = 1; i < NF; i++) if ($i ~ /^(switches|overflow|dropped)$/) printf "%s %s  ", $i, $(i + 1) }' "$tmp/table")"
	done
	if command -v perf >/dev/null 2>&1; then
		"$wl" "$secs" >"$tmp/trips" &
		pid=$!
		sleep 0.05
		/usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -e cs -c 1 --call-graph dwarf \
			-o "$tmp/perf.data" -p "$pid" -- sleep "$secs" >/dev/null 2>&1
		wait "$pid"
		lost=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/LOST events/ { print $3 }')
		samples=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/SAMPLE events/ { print $3; exit }')
		printf '  %-34s %12s   perf CPU %5.2fs      samples %s  lost records %s\n' \
			"perf record -e cs -c 1 dwarf" "$(awk '{ print $1 }' "$tmp/trips")" \
			"$(awk 'END { print $1 + $2 }' "$tmp/time")" "${samples:-?}" "${lost:-0}"
	fi
	round=$((round + 1))
done
