#!/bin/sh
# hostile_perfmap.sh — under -a, an unprivileged process's perf map cannot stall the machine's
# profile. jitflood (run as nobody) makes its /tmp/perf-PID.map as costly as it can: 5 million
# functions (big), a 1 GiB sparse file touched every 20 ms (sparse), a million new lines a second
# (grow). Meanwhile split burns 3 s of CPU time, so its samples are 3 s x the frequency when none
# is lost. Each mode runs twice, the reference with `jitflood MODE decoy`: the same writes to a
# file that is not its map, the same load on the machine, nothing for proftop to read. With the
# map, split keeps at least 90% of the samples it keeps with the decoy (before the fix, reading
# the map took the collector's time and the ring overflowed: 30-85%); jit_hot_loop is still named
# from the map, and a map proftop cannot keep up with is said once.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/jitflood"
require_perf_events
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	skip "all" "needs root, the user nobody and setpriv (util-linux) to run a process as another user"
	finish
fi

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

# flood TAG MODE [decoy] — proftop -a while jitflood MODE runs and split burns 3 s. Sets SPLIT
# (split's pid), FLOOD (jitflood's), RC; TAG.out, TAG.err and TAG.folded.PID in $TMPD.
flood()
{
	local tag=$1 mode=$2 decoy=${3:-} pt
	timeout -k 5 60 "$PROFTOP_BIN" -a -b -n 1 --per-thread -o "$TMPD/$tag.folded" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err" </dev/null &
	pt=$!
	first_table "$TMPD/$tag.out"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$WL/jitflood" "$mode" 60 $decoy &
	FLOOD=$!
	BG_PIDS="$BG_PIDS $FLOOD"
	"$WL/split" 3 >/dev/null &
	SPLIT=$!
	wait "$SPLIT"
	kill -INT "$pt"
	wait "$pt"
	RC=$?
	kill "$FLOOD" 2>/dev/null
	wait "$FLOOD"
	if grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$TMPD/$tag.err"; then
		fail "$tag-sanitizer" "$(grep -E -A12 'ERROR: |runtime error:' "$TMPD/$tag.err")"
	fi
}

# has_once FILE ERE — exactly one line of FILE matches ERE.
has_once()
{
	[ "$(grep -Ec -- "$2" "$1")" -eq 1 ] && return 0
	echo "want one line matching /$2/ in $1:"
	head -n 8 "$1"
	return 1
}

# samples FILE — the samples a folded file holds.
samples()
{
	awk '{ n += $NF } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# at_least A B FRACTION — A >= B x FRACTION.
at_least()
{
	awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a >= b * f) }' ||
		{ echo "$1 against $2: less than $3 of it"; return 1; }
}

for mode in grow big sparse; do
	steal=$(steal_mark)
	flood "$mode-decoy" "$mode" decoy
	ref=$(samples "$TMPD/$mode-decoy.folded.$SPLIT")
	check "$mode-decoy-exit-0" status "$RC" 0 "$TMPD/$mode-decoy.err"
	check "$mode-decoy-split-sampled" between "$ref" 1 1000000
	flood "$mode" "$mode"
	check "$mode-exit-0" status "$RC" 0 "$TMPD/$mode.err"
	check_cpu "$mode-split-samples-kept" "$steal" \
		at_least "$(samples "$TMPD/$mode.folded.$SPLIT")" "$ref" 0.9
	check "$mode-jit-named" has "$TMPD/$mode.folded.$FLOOD" '(^|;)jit_hot_loop [0-9]+$'
done
# grow writes more than proftop reads in the time it gives perf maps.
check "grow-behind-said-once" has_once "$TMPD/grow.err" \
	"^proftop: warning: JIT symbols of pid [0-9]+: /[^ ]*perf-[0-9]+\.map holds more than proftop reads of it \(10 ms of every 100, for all perf maps\)"
finish
