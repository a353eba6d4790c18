#!/bin/bash
# bench/run.sh BUILD_DIR — proftop's benchmarks. Figures only: nothing here passes or fails on a
# timing, because these machines are shared and noisy; each figure is compared with a reference
# measured in the same run.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
proftop=./proftop
work="$build/workloads/bench_loop"
runs=${BENCH_RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The workload's own wall seconds (it reports them), so the profiler's start-up and shutdown
# stay out of the slowdown; all output is kept in $tmp/out.
timed() {
	BENCH_REPORT=1 "$@" >"$tmp/out" 2>&1
	awk '$1 == "bench_loop" {print $2}' "$tmp/out"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

section_overhead() {
	echo "== overhead: $work under proftop -F 999 (median of $runs runs, interleaved)"
	: >"$tmp/alone"; : >"$tmp/proftop"; : >"$tmp/proftopnone"; : >"$tmp/perf"; : >"$tmp/perfdwarf"; : >"$tmp/overflow"
	local have_perf=0
	perf record -q -F 999 -o "$tmp/perf.data" -- true >/dev/null 2>&1 && have_perf=1
	for _ in $(seq "$runs"); do
		timed "$work" >>"$tmp/alone"
		timed "$proftop" -b -n 0 -F 999 -- "$work" >>"$tmp/proftop"
		grep -o 'overflow [0-9]*' "$tmp/out" | tail -1 | awk '{print $2}' >>"$tmp/overflow"
		timed "$proftop" -b -n 0 -F 999 -g none -- "$work" >>"$tmp/proftopnone"
		if [ $have_perf = 1 ]; then
			timed perf record -q -F 999 -o "$tmp/perf.data" -- "$work" >>"$tmp/perf"
			timed perf record -q -F 999 --call-graph dwarf -o "$tmp/perf.data" -- "$work" >>"$tmp/perfdwarf"
		fi
	done
	local alone pt pn pf pd
	alone=$(median <"$tmp/alone")
	pt=$(median <"$tmp/proftop")
	printf '  alone            %.3f s\n' "$alone"
	printf '  proftop          %.3f s   slowdown %.2f%%   overflow max %s   (dwarf stacks)\n' "$pt" \
		"$(echo "($pt / $alone - 1) * 100" | bc -l)" "$(sort -n "$tmp/overflow" | tail -1)"
	pn=$(median <"$tmp/proftopnone")
	printf '  proftop -g none  %.3f s   slowdown %.2f%%\n' "$pn" "$(echo "($pn / $alone - 1) * 100" | bc -l)"
	if [ $have_perf = 1 ]; then
		pf=$(median <"$tmp/perf")
		pd=$(median <"$tmp/perfdwarf")
		printf '  perf record      %.3f s   slowdown %.2f%%\n' "$pf" "$(echo "($pf / $alone - 1) * 100" | bc -l)"
		printf '  perf record -g dwarf %.3f s   slowdown %.2f%%\n' "$pd" "$(echo "($pd / $alone - 1) * 100" | bc -l)"
		printf '  proftop / perf record: %.3f\n' "$(echo "$pt / $pf" | bc -l)"
	else
		echo "  perf record: not available here"
	fi
}

section_replay() {
	echo "== collector throughput: raw samples replayed through unwind -> symbols -> profile, one core"
	echo "   (median of 6 replays each, page cache warm; lines = source lines and inlined frames on;"
	echo "    fresh = a new collector's first pass, warm = its second pass over the same records;"
	echo "    libunwind = lines on, every frame unwound by libunwind instead of by cached CFI rows;"
	echo "    collectors = 1 and 2 unwinding threads reading the records from a ring, samples/s of"
	echo "    wall-clock time, median of 3: fresh = the first copy, warm = many more after it)"
	local cc1 src
	cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
	src=$here/src/profile.c
	for w in "paths 2" "qsortcb 2" "threads4 1" "recurse 2" "cc1"; do
		set -- $w
		if [ "$1" = cc1 ]; then
			[ -x "$cc1" ] || continue
			# cc1 alone knows no multiarch include directory (gcc passes it): without it the
			# compile stops at <bits/libc-header-start.h> after a few milliseconds.
			set -- "$cc1" -quiet -imultiarch "$(gcc -print-multiarch)" -O2 -Iinclude \
				-D_GNU_SOURCE "$src" -o /dev/null
			name=cc1
		else
			name=$1
			set -- "$build/workloads/$1" "$2"
		fi
		"$build/bench/replay" "$@" | awk -v w="$name" '
			/^replay [2-9] / { v[$3 " " $4] = v[$3 " " $4] " " $(NF-1) }
			/^replay threads / { t[$4 " " $6] = t[$4 " " $6] " " $(NF-1) }
			function median(list,   a, n, i, j, t) {
				n = split(list, a, " ")
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return a[int((n + 1) / 2)]
			}
			END {
				for (p = 0; p < 2; p++) {
					pass = p ? "warm" : "fresh"
					on = median(v["lines " pass]); off = median(v["nolines " pass])
					lu = median(v["libunwind " pass])
					printf "  %-9s %-5s lines %8.0f samples/s, without %8.0f: %+.1f%%; libunwind alone %8.0f: x%.1f\n", w, pass, on, off, off ? 100 * (off - on) / off : 0, lu, lu ? on / lu : 0
					one = median(t["1 " pass ":"]); two = median(t["2 " pass ":"])
					printf "  %-9s %-5s collectors: 1 %8.0f samples/s, 2 %8.0f: x%.2f\n", w, pass, one, two, one ? two / one : 0
				}
			}
			/^replay: stacks/ { sub(/^replay: /, ""); same = $0 }
			END { print "  " w "       " same }'
	done
}

section_rss() {
	local secs=${BENCH_RSS_SECONDS:-60}
	echo "== peak RSS of proftop over a ${secs} s run at 999 Hz (dwarf stacks, threads4: 4 threads)"
	python3 - "$proftop" "$build/workloads/threads4" "$secs" <<'PY'
import resource, subprocess, sys
proftop, work, secs = sys.argv[1:]
out = subprocess.run([proftop, "-b", "-n", "0", "--", work, secs], capture_output=True, text=True).stdout
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
header = [l for l in out.splitlines() if l.startswith("=== proftop final")]
print("  peak RSS %.1f MiB (the largest of proftop and its workload)" % rss)
print("  " + (header[0] if header else "no final table"))
PY
}

section_overhead
section_replay
section_rss
for extra in bench/run_*.sh; do
	[ -e "$extra" ] && bash "$extra" "$build"
done
exit 0
