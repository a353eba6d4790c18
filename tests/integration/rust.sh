#!/bin/sh
# rust.sh — a Rust program as its users build it for profiling (iterchain, rustc -O -g: a HashMap
# with String keys, sort_unstable_by with a closure, DefaultHasher, and a chain of iterator
# adapters whose Map::fold is inlined into the Map::fold around it). Its pprof export, which once
# walked a cycle of inlining sites until memory ran out, ends under a 4 GiB address-space limit
# (not under AddressSanitizer, whose shadow needs more; the time limit catches the loop there)
# and `go tool pprof` reads it: as many samples as proftop took, and one Location holding
# Map::fold inlined into itself three times over. The same through --serve's /debug/pprof/profile,
# after which proftop holds about what it held before.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/iterchain"
require_perf_events
if ! command -v go >/dev/null 2>&1; then
	fail "setup" "go is not installed (make deps installs golang-go)"
	finish
fi
export HOME=$TMPD/go-home GOCACHE=$TMPD/go-cache PPROF_TMPDIR=$TMPD/pprof
mkdir -p "$HOME"
as_limit=unlimited
[ "${PROFTOP_SANITIZER:-}" = asan ] || as_limit=4194304

# batch_samples — the sample count in the header of the last table of $OUT.
batch_samples()
{
	sed -n 's/^=== proftop final .* samples \([0-9]*\) .*/\1/p' "$OUT" | tail -n 1
}

# sh -c "$limited" PROGRAM ARG... runs PROGRAM under the address-space limit.
limited="ulimit -v $as_limit && exec \"\$0\" \"\$@\""

OUT=$TMPD/export.out ERR=$TMPD/export.err
timeout -k 5 40 sh -c "$limited" "$PROFTOP_BIN" -b -n 0 -o "$TMPD/rust.pb.gz" -- "$WL/iterchain" 3 >"$OUT" 2>"$ERR" </dev/null
RC=$?
check "export-ends" status "$RC" 0 "$ERR"
go tool pprof -sample_index=samples -top "$TMPD/rust.pb.gz" >"$TMPD/top.txt" 2>"$TMPD/top.err"
check "go-pprof-reads-it" has "$TMPD/top.txt" '^ +flat +flat%' "go tool pprof ($(tail -n 2 "$TMPD/top.err"))"
total=$(sed -n 's/.*Total samples = \([0-9]*\).*/\1/p' "$TMPD/top.txt")
check "all-samples" sh -c "[ -n '$total' ] && [ '$total' = '$(batch_samples)' ] ||
	{ echo 'pprof total ${total:-none}, batch $(batch_samples)'; exit 1; }"
go tool pprof -raw "$TMPD/rust.pb.gz" >"$TMPD/raw.txt" 2>/dev/null
# A Location's Lines, one per line after its id; three Map::fold in a row is the chain of code
# inlined into itself.
check "fold-inlined-into-itself" sh -c "awk '/^ *[0-9]+: 0x/ { run = 0 }
	/adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold/ { if (++run >= 3) found = 1; next }
	{ run = 0 } END { exit !found }' '$TMPD/raw.txt' || { echo 'no Location with Map::fold thrice:'; grep -m 5 'Map<I,F>' '$TMPD/raw.txt'; exit 1; }"

# The same export served: the profile of 2 s, while the program runs.
timeout -k 5 40 sh -c "$limited" "$PROFTOP_BIN" -b -n 0 --serve 0 -- "$WL/iterchain" 12 >"$TMPD/serve.out" 2>"$TMPD/serve.err" </dev/null &
PID=$!
BG_PIDS="${BG_PIDS:-} $PID"
i=0 port=""
while [ $i -lt 100 ] && [ -z "$port" ]; do
	port=$(sed -n 's|.*serving profiles at http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMPD/serve.err" | head -n 1)
	[ -z "$port" ] && sleep 0.1
	i=$((i + 1))
done
# rss_kb — proftop's resident memory now, in KiB.
rss_kb()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$(pgrep -P "$PID" | head -n 1)/status" 2>/dev/null
}
sleep 2
rss_before=$(rss_kb)
check "served" sh -c "[ \$(curl -s -m 20 -o '$TMPD/served.pb.gz' -w '%{http_code}' 'http://127.0.0.1:$port/debug/pprof/profile?seconds=2') = 200 ]"
check "served-reads" sh -c "go tool pprof -top '$TMPD/served.pb.gz' 2>&1 | grep -q 'Duration: 2s'"
rss_after=$(rss_kb)
# What a profile request keeps: the profile of 2 s is a copy of the call tree and a few hundred KB
# of pprof, freed once answered (a request once left a server's proftop 350M bigger).
check "served-memory-given-back" sh -c "[ -n '$rss_before' ] && [ -n '$rss_after' ] &&
	[ $((${rss_after:-0} - ${rss_before:-0})) -lt 32768 ] || { echo 'RSS ${rss_before}K before, ${rss_after}K after'; exit 1; }"
kill -INT $PID 2>/dev/null
wait $PID
check "served-ends-on-sigint" status $? 130 "$TMPD/serve.err"
check "no-sanitizer-report" sh -c "! grep -E -A12 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$ERR' '$TMPD/serve.err'"
finish
