#!/bin/bash
# bench/run_go.sh BUILD_DIR — proftop beside `perf record --call-graph dwarf` on a Go program (the
# gochurn workload: goroutines, maps, sorting, the garbage collector on the g0 stacks), GO_SECONDS
# (default 5) each, GO_REPEAT rounds (default 2), one after the other: perf twice and proftop
# once per round. For each run: where its stacks start (the outermost frame: a Go root such as
# runtime.goexit, runtime.mstart, a stack switch such as runtime.systemstack, or anything else,
# runtime.etext and unnamed addresses included), and the total variation distance (TVD, half
# the sum of the differences of the shares, in points) of the flat self profile (functions by
# their symbol, inlined frames in their caller) from perf's first run, beside perf's second run's
# from its first: what two runs of the same profiler differ by. Both sample user mode only
# (perf: cpu-clock:u; proftop: cpu-clock, user stacks), at 999 Hz.
#
# GO_PROFTOP names the binary (default ./proftop): an older build gives the figures before a
# change. Figures only; nothing here fails on them.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
wl=$build/workloads/gochurn
proftop=${GO_PROFTOP:-./proftop}
secs=${GO_SECONDS:-5}
reps=${GO_REPEAT:-2}
if ! [ -x "$wl" ] || ! [ -x "$proftop" ]; then
	echo "== Go: $wl or $proftop is missing (make bench builds them)"
	exit 0
fi
if ! command -v perf >/dev/null 2>&1 ||
    ! perf record -q -e cpu-clock:u -o /dev/null -- true >/dev/null 2>&1; then
	echo "== Go: perf record does not work here"
	exit 0
fi
tmp=$(mktemp -d /tmp/proftop-go.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# perf_stacks DATA OUT — one line per sample: "ROOT<tab>LEAF" (symbol names, [unknown] unnamed).
# perf script lists the functions inlined at an address before its symbol's, at the same
# address: the leaf is the last name at the first address.
perf_stacks()
{
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		NF == 0 { if (leaf != "") print root "\t" leaf; leaf = ""; next }
		{ ip = $1; sub(/^[ \t]*[0-9a-f]+ /, "")
		  if (leaf == "" || ip == first) { leaf = $0; first = ip }
		  root = $0 }
		END { if (leaf != "") print root "\t" leaf }' >"$2"
}

# folded_stacks FOLDED OUT — the same from proftop's folded file ("a;b;c COUNT"), a line per sample.
folded_stacks()
{
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		for (i = 0; i < n; i++) print f[1] "\t" f[k] }' "$1" >"$2"
}

# roots STACKS — the shares of the outermost frames' kinds.
roots()
{
	awk -F '\t' '{ r = $1; sub(/\.abi0$/, "", r)
		if (r ~ /^runtime\.(goexit|mstart|rt0_go|sigtramp|cgoSigtramp)$/) go++
		else if (r ~ /^(runtime\.(systemstack|mcall|morestack|asmcgocall|asmcgocall_no_g|gogo|cgocallback|nanotime1|walltime1?|callCgoMmap|callCgoMunmap|callCgoSigaction|sigfwd)|time\.now)$/) sw++
		else { other++; what[r]++ } }
		END { n = go + sw + other; if (!n) n = 1
			printf "Go root %5.1f%%  stack switch %5.1f%%  other %5.1f%%", 100 * go / n, 100 * sw / n, 100 * other / n
			printf "  of %d", n
			for (i = 0; i < 3; i++) { best = ""
				for (w in what) if (best == "" || what[w] > what[best]) best = w
				if (best == "") break
				printf "%s %s %.1f%%", i ? "," : "  other roots:", best, 100 * what[best] / n
				delete what[best] }
			printf "\n" }' "$1"
}

# tvd A B — total variation distance of the leaves' shares, in points.
tvd()
{
	awk -F '\t' 'FNR == 1 { f++ } { c[f, $2]++; n[f]++; k[$2] = 1 }
		END { for (x in k) { a = c[1, x] / n[1] - c[2, x] / n[2]; s += a < 0 ? -a : a }
			printf "%.1f", 50 * s }' "$1" "$2"
}

round=1
while [ "$round" -le "$reps" ]; do
	echo "== Go (gochurn ${secs}s): roots of the stacks and the flat self profile's TVD from perf, round $round of $reps"
	for i in 1 2; do
		perf record -q -e cpu-clock:u -F 999 --call-graph dwarf -o "$tmp/perf$i.data" -- \
			"$wl" "$secs" >/dev/null 2>"$tmp/perf.err"
		perf_stacks "$tmp/perf$i.data" "$tmp/perf$i.stacks"
	done
	"$proftop" -b -n 0 --no-inline -o "$tmp/proftop.folded" -- "$wl" "$secs" >"$tmp/table" 2>"$tmp/err"
	folded_stacks "$tmp/proftop.folded" "$tmp/proftop.stacks"
	printf '  %-28s %s\n' "perf --call-graph dwarf" "$(roots "$tmp/perf1.stacks")"
	printf '  %-28s %s\n' "perf, again" "$(roots "$tmp/perf2.stacks")"
	printf '  %-28s %s\n' "proftop" "$(roots "$tmp/proftop.stacks")"
	printf '  TVD of the flat self profile: proftop from perf %s points; perf from perf %s points\n' \
		"$(tvd "$tmp/proftop.stacks" "$tmp/perf1.stacks")" "$(tvd "$tmp/perf2.stacks" "$tmp/perf1.stacks")"
	round=$((round + 1))
done
