#!/bin/bash
# bench/run_offcpu.sh BUILD_DIR — the off-CPU modes on switch-heavy programs, in two parts.
#
# Loss at a controlled switch rate: the switches workload (OFFCPU_PAIRS thread pairs, default 4,
# bouncing a byte over pipes, paced to OFFCPU_RATE switches a second, default 10000) attached for
# OFFCPU_SECONDS (default 5) by proftop --mode offcpu, by the proftop in OFFCPU_BEFORE when set
# (another build, say main's, for a before/after in the same run), and by `perf record -e cs -c 1
# --switch-events --call-graph dwarf` (the same work: every switch out with its stack, and the
# switch records), on an idle machine and on a busy one (a spinner per CPU beside it). For each:
# the switches a second the workload counted itself (getrusage), the switches the profiler kept,
# what it lost (proftop's overflow and dropped counters; perf's LOST records and lost samples)
# and its own CPU time as a share of one CPU; medians of OFFCPU_REPEAT rounds (default 3).
#
# Slowdown: the pingpong workload (two threads bouncing a byte over pipes, ~100,000 context
# switches a second) for 5 s bare, under proftop attached with --switch-period 1, 11 and 101, and
# under `perf record -e cs -c 1 --call-graph dwarf` attached the same way. For each: the target's
# round trips per second (its slowdown), the profiler's own CPU time (user+system, from
# /usr/bin/time: attached, so the target's is not in it), and what was lost (proftop's overflow
# and dropped counters; perf's LOST records). OFFCPU_REPEAT rounds, one after the other, to see
# the spread on a shared machine.
#
# The engine is the same in every mode but cpu (CPU samples and every context switch): offcpu
# stands for runnable and wall too. Figures only; nothing here fails on a timing.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
wl=$build/workloads/pingpong
sw=$build/workloads/switches
spin=$build/workloads/spin
secs=${OFFCPU_SECONDS:-5}
reps=${OFFCPU_REPEAT:-3}
rate=${OFFCPU_RATE:-10000}
pairs=${OFFCPU_PAIRS:-4}
before=${OFFCPU_BEFORE:-}
if ! [ -x "$wl" ] || ! [ -x "$sw" ] || ! [ -x "$spin" ] || ! [ -x ./proftop ]; then
	echo "== off-CPU: $wl, $sw, $spin or ./proftop is missing (make bench builds them)"
	exit 0
fi
tmp=$(mktemp -d /tmp/proftop-offcpu.XXXXXX)
spinners=
trap '[ -n "$spinners" ] && kill $spinners 2>/dev/null; rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

# header_field FILE NAME — the number after NAME in the final table's header.
header_field() {
	awk -v f="$2" '/^=== proftop final/ { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$1"
}

# attach_proftop NAME BINARY — BINARY attached to the switches workload for $secs; appends
# the workload's rate, the switches kept, overflow, dropped and CPU share to $tmp/NAME.*.
attach_proftop() {
	local name=$1 bin=$2 pid
	"$sw" $((secs + 1)) "$rate" "$pairs" >"$tmp/rate" &
	pid=$!
	sleep 0.3
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$bin" -b -n 0 -d "$secs" --mode offcpu -p "$pid" \
		>"$tmp/table" 2>"$tmp/err"
	wait "$pid"
	awk '{ sub(/\/s$/, "", $NF); print $NF }' "$tmp/rate" >>"$tmp/$name.rate"
	header_field "$tmp/table" switches >>"$tmp/$name.kept"
	header_field "$tmp/table" overflow >>"$tmp/$name.overflow"
	header_field "$tmp/table" dropped >>"$tmp/$name.dropped"
	awk -v s="$secs" '{ printf "%.1f\n", 100 * ($1 + $2) / s }' "$tmp/time" >>"$tmp/$name.cpu"
}

# attach_perf NAME — the same with perf record; lost: the samples its kernel buffers lost.
attach_perf() {
	local name=$1 pid
	"$sw" $((secs + 1)) "$rate" "$pairs" >"$tmp/rate" &
	pid=$!
	sleep 0.3
	/usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -e cs -c 1 --switch-events \
		--call-graph dwarf -o "$tmp/perf.data" -p "$pid" -- sleep "$secs" >/dev/null 2>&1
	wait "$pid"
	awk '{ sub(/\/s$/, "", $NF); print $NF }' "$tmp/rate" >>"$tmp/$name.rate"
	# (--stats: the SAMPLE events, and under the event's own stats the samples the kernel
	# counted lost for it)
	perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk -v k="$tmp/$name.kept" '
		/^ *SAMPLE events:/ && !n { n = $3 } /^ *LOST_SAMPLES events:/ { lost = $3 }
		END { print n + 0 >>k; print lost + 0 }' >>"$tmp/$name.lost"
	awk -v s="$secs" '{ printf "%.1f\n", 100 * ($1 + $2) / s }' "$tmp/time" >>"$tmp/$name.cpu"
}

# One profiler on the machine as it is (idle) or with a spinner per CPU beside it (busy).
section_rate() {
	local cpus load round who
	cpus=$(getconf _NPROCESSORS_ONLN)
	echo "== off-CPU loss at $rate switches/s ($pairs thread pairs), ${secs}s attached," \
		"median of $reps rounds; busy: $cpus spinners beside it"
	[ -n "$before" ] && echo "   proftop before: $before"
	for round in $(seq "$reps"); do
		for load in idle busy; do
			if [ "$load" = busy ]; then
				for _ in $(seq "$cpus"); do
					"$spin" $((secs * 4 + 10)) >/dev/null &
					spinners="$spinners $!"
				done
				sleep 0.2
			fi
			[ -n "$before" ] && attach_proftop "$load.before" "$before"
			attach_proftop "$load.proftop" ./proftop
			command -v perf >/dev/null 2>&1 && attach_perf "$load.perf"
			if [ -n "$spinners" ]; then
				kill $spinners 2>/dev/null
				wait $spinners 2>/dev/null
				spinners=
			fi
		done
	done
	printf '  %-5s %-20s %10s %9s %9s %9s %7s\n' load profiler "switches/s" kept overflow dropped CPU%
	for load in idle busy; do
		for who in before proftop perf; do
			[ -s "$tmp/$load.$who.rate" ] || continue
			case $who in
			before) label="proftop before" ;;
			proftop) label="proftop" ;;
			perf) label="perf record (lost)" ;;
			esac
			if [ "$who" = perf ]; then
				printf '  %-5s %-20s %10s %9s %19s %7s\n' "$load" "$label" \
					"$(median <"$tmp/$load.$who.rate")" "$(median <"$tmp/$load.$who.kept")" \
					"$(median <"$tmp/$load.$who.lost")" "$(median <"$tmp/$load.$who.cpu")"
			else
				printf '  %-5s %-20s %10s %9s %9s %9s %7s\n' "$load" "$label" \
					"$(median <"$tmp/$load.$who.rate")" "$(median <"$tmp/$load.$who.kept")" \
					"$(median <"$tmp/$load.$who.overflow")" \
					"$(median <"$tmp/$load.$who.dropped")" "$(median <"$tmp/$load.$who.cpu")"
			fi
		done
	done
	for load in idle busy; do
		for who in before proftop; do
			[ -s "$tmp/$load.$who.overflow" ] || continue
			echo "  every round, $load $who: overflow $(tr '\n' ' ' <"$tmp/$load.$who.overflow")" \
				"dropped $(tr '\n' ' ' <"$tmp/$load.$who.dropped")"
		done
	done
}

section_slowdown() {
	local round period pid lost samples bin label
	for round in $(seq "$reps"); do
		echo "== off-CPU mode on pingpong, ${secs}s attached, round $round of $reps (round trips/s of the target; profiler CPU)"
		printf '  %-34s %12s\n' "bare" "$("$wl" "$secs" | awk '{ print $1 }')"
		for period in 1 11 101 ${before:+before}; do
			bin=./proftop
			label="proftop --switch-period $period"
			if [ "$period" = before ]; then
				bin=$before
				period=1
				label="proftop before, period 1"
			fi
			"$wl" "$secs" >"$tmp/trips" &
			pid=$!
			sleep 0.05
			/usr/bin/time -f '%U %S' -o "$tmp/time" "$bin" -b -n 0 -d "$secs" --mode offcpu \
				--switch-period "$period" -p "$pid" >"$tmp/table" 2>"$tmp/err"
			wait "$pid"
			printf '  %-34s %12s   proftop CPU %5.2fs   %s\n' "$label" \
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
	done
}

[ "${OFFCPU_PART:-all}" != slowdown ] && section_rate
[ "${OFFCPU_PART:-all}" != rate ] && section_slowdown
exit 0
