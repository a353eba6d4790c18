#!/bin/bash
# bench/run_history_rss.sh BUILD_DIR — what the screen's history costs: first the collector's
# side (history_bench: a sample added, the timeline, a stretch's snapshot), then proftop's peak
# RSS and CPU over a run of gcc's cc1 compiling proftop's own sources in a loop (deep stacks, many
# distinct ones), on the real screen in a tmux pane, with the default --history 600 and with
# --history 0 (no history). The issue's budget: at most 64 MiB more with 10 minutes of history.
# Figures only.
#
#   HISTORY_RSS_SECONDS (600)   each run's length
#   PROFTOP_BIN (./proftop)     the binary to measure
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
if [ -x "$build/bench/history_bench" ]; then
	echo "== the history in the collector: randtree-shaped samples, 1,000 a second"
	"$build/bench/history_bench" | sed 's/^/  /'
fi
secs=${HISTORY_RSS_SECONDS:-600}
proftop=$(cd "$(dirname "${PROFTOP_BIN:-./proftop}")" && pwd)/$(basename "${PROFTOP_BIN:-./proftop}")
cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
if [ ! -x "$cc1" ] || ! command -v tmux >/dev/null; then
	echo "== history RSS: gcc's cc1 or tmux is not installed, skipped"
	exit 0
fi
loop="while :; do for f in src/*.c; do '$cc1' -quiet -imultiarch '$(gcc -print-multiarch)' -O2 -Iinclude -D_GNU_SOURCE \$f -o /dev/null; done; done"
sock=proftop-bench-$$
tmp=$(mktemp -d)
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT

# run NAME OPTION... — proftop's peak RSS (VmHWM, polled) and its CPU share over one run.
run() {
	local name=$1 pid hwm=0 now ticks i=0 start=$SECONDS
	shift
	tmux -L "$sock" new-session -d -s "$name" -x 120 -y 40 \
		"cd '$here' && '$proftop' -d '$secs' $* -- sh -c \"$loop\" 2>'$tmp/$name.err'; echo \$? >'$tmp/$name.status'; sleep 5"
	until pid=$(pgrep -f "^$proftop -d $secs $*" | head -n 1) && [ -n "$pid" ]; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "  $name: proftop did not start"; return; }
		sleep 0.1
	done
	# The screen stays after the -d duration until q: the figures are taken until then.
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $((start + secs + 2)) ]; do
		now=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$now" ] && [ "$now" -gt "$hwm" ] && hwm=$now
		# utime + stime of the whole process, in clock ticks (fields 14 and 15)
		ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo "$ticks")
		sleep 1
	done
	tmux -L "$sock" send-keys -t "$name" q
	if [ $SECONDS -lt $((start + secs)) ]; then
		sleep 1
		echo "  $name: proftop ended after $((SECONDS - start)) s, status $(cat "$tmp/$name.status" 2>/dev/null):"
		head -n 5 "$tmp/$name.err"
	fi
	printf '  %-14s peak RSS %6.1f MiB   CPU %5.2f %% of a core over %s s\n' "$name" \
		"$(echo "$hwm / 1024" | bc -l)" \
		"$(echo "${ticks:-0} * 100 / $(getconf CLK_TCK) / $secs" | bc -l)" "$secs"
}

echo "== peak RSS and CPU of the screen with a history and without: cc1 in a loop, ${secs} s each"
run history600
run history0 --history 0
