#!/bin/sh
# jit_late.sh — a JIT's perf map written after its code ran is still read, and what was sampled
# before is named from it (issue 26, item 3), on Java 17 and tests/workloads/jit/JitHot.java:
#   exit   -XX:+DumpPerfMapAtExit writes the map as the JVM ends: the final table and a folded
#          export name the hot methods, hardly any JIT sample stays unnamed, and the flat profile
#          is perf's (`perf record` + `perf report`, which reads the map after the run) within
#          10 points of total variation distance; the stacks of compiled methods reach the
#          thread's start over HotSpot's frame pointers (-XX:+PreserveFramePointer).
#   mid    `jcmd PID Compiler.perfmap` mid-run, the map removed 2 s later (so that only what was
#          read meanwhile can name anything): the samples from before are renamed too, the hot
#          method is one row, and no unnamed row is left at an address the map names.
#   node   node --perf-basic-prof (a map written as V8 compiles): the hot function is named, and
#          no unnamed row is left at an address the map names.
# Each command runs under `sh -c 'echo $$ >FILE; exec ...'`, which tells its pid, and so its map.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_flat.sh"
need "$PROFTOP_BIN"
require_perf_events

HOT='long JitHot.hotLoop(long, int)'
WARM='long JitHot.warmLoop(long, int)'
# (-XX:+PreserveFramePointer: HotSpot's compiled code keeps rbp as a frame pointer only so, which
# is what steps over its frames, perf's and proftop's; without it most samples in compiled
# methods end there, truncated)
JOPTS="-XX:+UnlockDiagnosticVMOptions -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JitHot::* -XX:+PreserveFramePointer"
MAPS=""
trap 'for m in $MAPS; do rm -f "$m"; done; lib_cleanup' EXIT

# map_of PIDFILE — the perf map of the process whose pid PIDFILE holds; remembered for removal.
map_of()
{
	local m
	m=/tmp/perf-$(cat "$1" 2>/dev/null).map
	MAPS="$MAPS $m"
	echo "$m"
}

# unnamed_in_map OUT MAP — the final table's unnamed rows ("[anon]+0xADDR", "0xADDR") whose
# address MAP names.
unnamed_in_map()
{
	final_table "$1" | awk -v map="$2" '
	function hex(s,    i, v) {
		s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	BEGIN {
		while ((getline line < map) > 0) {
			split(line, f, " ")
			start[n] = hex(f[1]); end[n] = start[n] + hex(f[2]); n++
		}
	}
	{
		name = $0
		sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		sub(/ +[^ ]+ *$/, "", name)
		if (name !~ /^(\[[^]]*\]\+)?0x[0-9a-f]+$/)
			next
		sub(/^.*0x/, "", name)
		a = hex(name)
		for (i = 0; i < n; i++)
			if (a >= start[i] && a < end[i]) { print; bad = 1; break }
	}
	END { exit bad }'
}

# self_in MODULE FILE — the final table's SELF% summed over MODULE's rows.
self_in()
{
	final_table "$2" | awk -v m="$1" '$NF == m { s += $1 } END { printf "%.2f\n", s }'
}

for tool in java javac jcmd; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip "java" "$tool is not installed (make deps installs openjdk-17-jdk-headless)"
		JAVA_MISSING=1
	fi
done

if [ -z "${JAVA_MISSING:-}" ]; then
	javac -d "$TMPD" tests/workloads/jit/JitHot.java >"$TMPD/javac.log" 2>&1
	check "javac" status $? 0 "$TMPD/javac.log"

	# --- exit: the map written as the JVM ends --------------------------------------------
	run_proftop exit -b -n 0 -o "$TMPD/exit.folded" -f folded -- sh -c 'echo $$ >"$0"; exec "$@"' \
		"$TMPD/exit.pid" java $JOPTS -XX:+DumpPerfMapAtExit -cp "$TMPD" JitHot 4
	check "exit-status-0" status "$RC" 0 "$ERR"
	MAP=$(map_of "$TMPD/exit.pid")
	check "exit-map-written" test -s "$MAP"
	check "exit-hot-named" between "$(self_pct "$OUT" "$HOT" '[jit]')" 30 80
	check "exit-warm-named" between "$(self_pct "$OUT" "$WARM" '[jit]')" 15 70
	check "exit-hardly-any-unnamed" between "$(self_in '[anon]' "$OUT")" 0 2
	check "exit-none-unnamed-in-map" unnamed_in_map "$OUT" "$MAP"
	check "exit-folded-names-hot" has "$TMPD/exit.folded" "(^|;)long JitHot\.hotLoop\(long, int\) [0-9]+$"
	# Stepped over by frame pointers: the hot method's stacks reach the thread's start through
	# the JVM's call into Java, and hardly any sample is truncated.
	check "exit-truncated-under-10-percent" between "$(awk '/^=== proftop final/ {
		for (i = 1; i < NF; i++) { if ($i == "samples") s = $(i + 1); if ($i == "truncated") t = $(i + 1) }
		} END { printf "%.1f\n", s ? 100 * t / s : 100 }' "$OUT")" 0 10
	check "exit-hot-rooted-at-thread-start" between "$(awk '/JitHot\.hotLoop/ { n += $NF
		if ($0 ~ /^clone3;start_thread;.*JavaCalls::call_helper.*JitHot\.hotLoop/) r += $NF }
		END { printf "%.1f\n", n ? 100 * r / n : 0 }' "$TMPD/exit.folded")" 90 100
	EXIT_HOT=$(self_pct "$OUT" "$HOT" '[jit]')
	EXIT_OUT=$OUT

	# The same program under perf, which reads the map when it reports.
	if command -v perf >/dev/null 2>&1 &&
	    (cd "$TMPD" && timeout 60 perf record -q -F 999 -o perf.data -- \
		sh -c 'echo $$ >"$0"; exec "$@"' "$TMPD/perf.pid" \
		java $JOPTS -XX:+DumpPerfMapAtExit -cp "$TMPD" JitHot 4) >"$TMPD/perf-record.log" 2>&1; then
		map_of "$TMPD/perf.pid" >/dev/null
		timeout 60 perf report -i "$TMPD/perf.data" --stdio --no-children --sort sym -g none \
			>"$TMPD/perf-report.txt" 2>"$TMPD/perf-report.err"
		perf_flat "$TMPD/perf-report.txt" >"$TMPD/perf.flat"
		proftop_flat "$EXIT_OUT" >"$TMPD/proftop.flat"
		PERF_HOT=$(awk -F '\t' -v f="$HOT" '$2 == f { print $1 }' "$TMPD/perf.flat")
		check "exit-hot-within-5-of-perf" approx "$EXIT_HOT" "${PERF_HOT:-missing}" 5
		TVD=$(tvd "$TMPD/perf.flat" "$TMPD/proftop.flat")
		echo "      TVD against perf (Java, map written at exit): $TVD"
		check "exit-tvd-against-perf-under-10" between "$TVD" 0 10
	else
		skip "exit-perf" "perf record does not work here: $(head -n 1 "$TMPD/perf-record.log")"
	fi

	# --- mid: jcmd Compiler.perfmap while it runs, the map gone before the end -------------
	OUT=$TMPD/mid.out
	ERR=$TMPD/mid.err
	timeout -k 5 60 "$PROFTOP_BIN" -b -n 0 -- sh -c 'echo $$ >"$0"; exec "$@"' "$TMPD/mid.pid" \
		java $JOPTS -cp "$TMPD" JitHot 8 >"$OUT" 2>"$ERR" </dev/null &
	PT=$!
	BG_PIDS="$BG_PIDS $PT"
	sleep 3
	MAP=$(map_of "$TMPD/mid.pid")
	jcmd "$(cat "$TMPD/mid.pid")" Compiler.perfmap >"$TMPD/jcmd.log" 2>&1
	check "mid-jcmd-wrote-map" test -s "$MAP"
	sleep 2
	cp "$MAP" "$TMPD/mid.map" 2>/dev/null
	rm -f "$MAP"
	wait "$PT"
	RC=$?
	if grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$ERR"; then
		fail "mid-sanitizer" "$(grep -E -A12 'ERROR: |runtime error:' "$ERR")"
	fi
	check "mid-status-0" status "$RC" 0 "$ERR"
	check "mid-hot-one-row" one_row "$OUT" "$HOT"
	check "mid-hardly-any-unnamed" between "$(self_in '[anon]' "$OUT")" 0 3
	check "mid-none-unnamed-in-map" unnamed_in_map "$OUT" "$TMPD/mid.map"
	check "mid-hot-as-at-exit" approx "$(self_pct "$OUT" "$HOT" '[jit]')" "$EXIT_HOT" 10
fi

# --- node: a map written as V8 compiles --------------------------------------------------------
if command -v node >/dev/null 2>&1; then
	# (in TMPD: --perf-basic-prof leaves a V8 log in the working directory)
	run_proftop node -b -n 0 -- sh -c 'echo $$ >"$0"; cd "$1" && shift && exec "$@"' \
		"$TMPD/node.pid" "$TMPD" node --perf-basic-prof "$ROOT/tests/workloads/jit/jithot.js" 3
	check "node-status-0" status "$RC" 0 "$ERR"
	MAP=$(map_of "$TMPD/node.pid")
	check "node-hot-named" between "$(final_table "$OUT" |
		awk '$NF == "[jit]" && /JS:.hotLoop / { s += $1 } END { print s + 0 }')" 40 100
	check "node-none-unnamed-in-map" unnamed_in_map "$OUT" "$MAP"
else
	skip "node" "node is not installed (make deps installs nodejs)"
fi
finish
