#!/bin/sh
# hostile_perfmap.sh — under -a, unprivileged processes' perf maps cannot stall the machine's
# profile. Three jitflood processes (run as nobody) make their /tmp/perf-PID.map as costly as
# they can: 2 million functions each (big), a 1 GiB sparse file touched every 20 ms (sparse), a
# million new lines a second (grow). Meanwhile split burns 2 s of CPU time, so its samples are
# 2 s x the frequency when none is lost. Each mode runs twice, the reference with `jitflood MODE
# decoy`: the same writes to files that are not the maps, the same load on the machine, nothing
# for proftop to read. With the maps, split keeps at least 90% of the samples it keeps with the
# decoys (before the fix, reading the maps stalled the collector and the ring overflowed: split
# kept 5-65% in grow and big, 45-95% in sparse, whose re-reading test_perfmap's refresh_touched
# catches; the new code keeps 98-100%). proftop's CPU share is not
# compared: reading the maps may take a tenth of a collector's time by design (symbols.c), as
# much as the old code took on a quiet machine; stalls were the harm. A pair that misses is made
# once more, as the rest of a shared machine is profiled too and its load changes from one run
# to the next. jit_hot_loop is still named from its map, and a map proftop cannot keep up with
# is said once.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/jitflood"
require_perf_events
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	skip "all" "needs root, the user nobody and setpriv (util-linux) to run a process as another user"
	finish
fi
FLOODERS=${FLOODERS:-3}

# first_table FILE — wait (at most 30 s) for proftop's first periodic table: it has read every
# process's maps and is sampling.
first_table()
{
	local i=0
	while [ $i -lt 300 ] && ! grep -q '^--- proftop' "$1" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}

# flood TAG MODE [decoy] — proftop -a while FLOODERS jitflood MODE run and split burns 2 s. Sets
# SPLIT (split's pid), FLOOD (the first jitflood's), RC; TAG.out, TAG.err and TAG.folded.PID in
# $TMPD.
flood()
{
	local tag=$1 mode=$2 decoy=${3:-} pt floods="" i=0
	timeout -k 5 60 "$PROFTOP_BIN" -a -b -n 1 --per-thread -o "$TMPD/$tag.folded" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err" </dev/null &
	pt=$!
	first_table "$TMPD/$tag.out"
	while [ $i -lt $FLOODERS ]; do
		setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
			"$WL/jitflood" "$mode" 60 $decoy &
		floods="$floods $!"
		i=$((i + 1))
	done
	BG_PIDS="$BG_PIDS $floods"
	set -- $floods
	FLOOD=$1
	"$WL/split" 2 >/dev/null &
	SPLIT=$!
	wait "$SPLIT"
	kill -INT "$pt"
	wait "$pt"
	RC=$?
	kill $floods 2>/dev/null
	wait $floods
	if grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$TMPD/$tag.err"; then
		fail "$tag-sanitizer" "$(grep -E -A12 'ERROR: |runtime error:' "$TMPD/$tag.err")"
	fi
}

# samples FILE — the samples a folded file holds.
samples()
{
	awk '{ n += $NF } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# kept A B — A >= 0.9 B: split's samples with the maps (A) and with the decoys (B).
kept()
{
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= 0.9 * b) }' ||
		{ echo "split kept $1 samples with the maps, $2 with the decoys: less than 90%"; return 1; }
}

# pair MODE TRY — the decoy run and the flooded one: KEPT_MAPS and KEPT_REF are split's samples
# with the maps and with the decoys.
pair()
{
	local ref
	flood "$1-decoy$2" "$1" decoy
	ref=$(samples "$TMPD/$1-decoy$2.folded.$SPLIT")
	check "$1-decoy$2-exit-0" status "$RC" 0 "$TMPD/$1-decoy$2.err"
	check "$1-decoy$2-split-sampled" between "$ref" 1 1000000
	flood "$1$2" "$1"
	check "$1$2-exit-0" status "$RC" 0 "$TMPD/$1$2.err"
	check "$1$2-jit-named" has "$TMPD/$1$2.folded.$FLOOD" '(^|;)jit_hot_loop [0-9]+$'
	KEPT_MAPS=$(samples "$TMPD/$1$2.folded.$SPLIT")
	KEPT_REF=$ref
}

for mode in grow big sparse; do
	steal=$(steal_mark)
	pair "$mode" ""
	if ! kept "$KEPT_MAPS" "$KEPT_REF" >/dev/null; then
		echo "      $mode: split kept $KEPT_MAPS samples against $KEPT_REF: once more"
		pair "$mode" "-again"
	fi
	check_cpu "$mode-split-samples-kept" "$steal" kept "$KEPT_MAPS" "$KEPT_REF"
done
# grow writes more than proftop reads in the time it gives perf maps: said, once per map.
behind_said()
{
	local said="^proftop: warning: JIT symbols of pid [0-9]+: /[^ ]*perf-[0-9]+\\.map holds more than proftop reads of it \\(10 ms of every 100, for all perf maps\\)"
	grep -E "$said" "$1" | awk '{ n++; if (seen[$7]++) { print "twice: " $0; bad = 1 } }
		END { if (!n) print "never said"; exit bad || !n }' || { head -n 5 "$1"; return 1; }
}
check "grow-behind-said-once-per-map" behind_said "$TMPD/grow.err"
finish
