#!/bin/sh
# system_self.sh — -a leaves proftop's own process out of the profile (issue 26, item 9): its
# sampler and collector threads, busy unwinding two spinning processes' samples, have no samples
# and no waits of their own in it, while the spinners have samples and waits (a process that
# blocks) its waits; --include-self keeps proftop in. Batch
# with --per-thread writes a file per process: none for proftop's pid unless asked, in cpu and in
# offcpu mode. --include-self without -a is refused.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/spin" "$WL/waits"
require_perf_events
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
	skip "all" "-a needs root or perf_event_paranoid <= 0"
	finish
fi

# samples_in FILE — the samples (or microseconds) a folded file holds; 0 when there is none.
samples_in()
{
	awk '{ n += $NF } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# profile_all TAG ARG... — proftop -a in batch mode for 3 s, a folded file per process, with two
# spinners busy and waits blocking meanwhile. Sets PT (proftop's pid), SPIN (a spinner's), WAITS
# and RC.
profile_all()
{
	local tag spin2
	tag=$1
	shift
	"$WL/spin" 6 >/dev/null &
	SPIN=$!
	"$WL/spin" 6 >/dev/null &
	spin2=$!
	"$WL/waits" 6 >/dev/null &
	WAITS=$!
	BG_PIDS="$BG_PIDS $SPIN $spin2 $WAITS"
	sleep 0.3
	timeout -k 5 60 sh -c 'echo $$ >"$0"; exec "$@"' "$TMPD/$tag.pid" \
		"$PROFTOP_BIN" -a -b -n 0 -d 3 --per-thread -o "$TMPD/$tag.folded" "$@" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err" </dev/null
	RC=$?
	PT=$(cat "$TMPD/$tag.pid")
	kill "$SPIN" "$spin2" "$WAITS" 2>/dev/null
	wait "$SPIN" "$spin2" "$WAITS" 2>/dev/null
	if grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$TMPD/$tag.err"; then
		fail "$tag-sanitizer" "$(grep -E -A12 'ERROR: |runtime error:' "$TMPD/$tag.err")"
	fi
}

for mode in cpu offcpu; do
	profile_all "$mode" --mode "$mode"
	check "$mode-exit-0" status "$RC" 0 "$TMPD/$mode.err"
	[ "$mode" = cpu ] && other=$SPIN || other=$WAITS
	check "$mode-others-kept" between "$(samples_in "$TMPD/$mode.folded.$other")" 1 1000000000000
	check "$mode-proftop-left-out" sh -c "[ ! -e '$TMPD/$mode.folded.$PT' ] ||
		{ echo 'proftop (pid $PT) has a file:'; head -n 3 '$TMPD/$mode.folded.$PT'; exit 1; }"

	profile_all "$mode-self" --mode "$mode" --include-self
	check "$mode-include-self-exit-0" status "$RC" 0 "$TMPD/$mode-self.err"
	check "$mode-include-self-kept" between "$(samples_in "$TMPD/$mode-self.folded.$PT")" 1 1000000000000
done

run_proftop no_all -b -n 0 --include-self -- "$WL/spin" 0.1
check "include-self-without-a-refused" status "$RC" 2 "$ERR"
check "include-self-without-a-says-why" has "$ERR" "include-self.*-a"
finish
