#!/bin/bash
# bench/run_lines_rss.sh BUILD_DIR — the memory source lines and inlined frames cost: proftop's
# peak RSS over a run of gcc's cc1 compiling proftop's own sources in a loop (deep stacks, tens of
# thousands of distinct addresses), with line lookups on (the default) and with --no-lines.
# Figures only.
#
#   LINES_RSS_SECONDS (60)      each run's length
#   PROFTOP_BIN (./proftop)     the binary to measure
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
secs=${LINES_RSS_SECONDS:-60}
proftop=${PROFTOP_BIN:-./proftop}
cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
if [ ! -x "$cc1" ]; then
	echo "== lines RSS: gcc's cc1 is not installed, skipped"
	exit 0
fi
loop="while :; do for f in src/*.c; do '$cc1' -quiet -imultiarch '$(gcc -print-multiarch)' -O2 -Iinclude -D_GNU_SOURCE \$f -o /dev/null; done; done"

# peak OPTION... — proftop's peak RSS (VmHWM, polled) and its final header, over one run.
peak() {
	local pid hwm=0 now
	"$proftop" -b -n 0 -d "$secs" "$@" -- sh -c "$loop" >"$tmp/out" 2>/dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		now=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$now" ] && [ "$now" -gt "$hwm" ] && hwm=$now
		sleep 0.5
	done
	wait "$pid"
	printf '  %-12s peak RSS %6.1f MiB   %s\n' "${1:-lines on}" "$(echo "$hwm / 1024" | bc -l)" \
		"$(grep -m1 -o 'samples [0-9]*' "$tmp/out" | tail -1)"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== peak RSS with source lines and inlined frames, and without: cc1 in a loop, ${secs} s each"
peak
peak --no-lines
