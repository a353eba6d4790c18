#!/bin/sh
# export.sh — snapshots read by the real tools: dprofpp (Devel::DProf) on tmon.out, with its
# exclusive and cumulative times checked against proftop's own final table, and -T's tree;
# callgrind_annotate (valgrind) on the callgrind output; folded stacks summed back to the sample
# count; pprof decoded by the npm package pprof-format (installed under BUILD_DIR/npm), and read by
# `go tool pprof` (Debian golang-go): the hot line of lines with the share and samples proftop's
# --annotate gives it, the mapping's build ID and executable segment as readelf reads them, the
# hot line's addresses on that line for addr2line, every address inside its mapping, and an
# inlined chain as Lines of one Location. Then where snapshots come from: -o at the end, -o - on stdout, --per-thread, SIGUSR1 without stopping,
# SIGINT/SIGTERM, and the numbered names that never replace a file.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split" "$WL/paths" "$WL/threads4" "$WL/spin" "$WL/lines" "$WL/inline"
require_perf_events

HZ=999

# dprof_value FILE NAME COLUMN — a column of dprofpp's row for NAME (1 %Time, 2 ExclSec,
# 3 CumulS, 4 #Calls), "missing" when there is no such row.
dprof_value()
{
	awk -v n="$2" -v c="$3" '$7 == n { print $c; found = 1; exit } END { if (!found) print "missing" }' "$1"
}

# same_ticks SECONDS SAMPLES — dprofpp's seconds (3 decimals) are SAMPLES / HZ.
same_ticks()
{
	awk -v s="$1" -v n="$2" -v hz=$HZ 'BEGIN { exit !(s != "missing" && sprintf("%.3f", n / hz) == s) }' ||
		{ echo "dprofpp says $1 s, proftop counted $2 samples = $(awk -v n="$2" -v hz=$HZ 'BEGIN { printf "%.3f", n / hz }') s"; return 1; }
}

# samples_of_total TABLE FUNCTION — TOTAL% of FUNCTION times the header's samples, rounded.
samples_of_total()
{
	awk -v p="$(total_pct "$1" "$2")" -v s="$(header_value "$1" samples)" \
	    'BEGIN { printf "%d", p * s / 100 + 0.5 }'
}

# --- tmon.out and dprofpp on split (60/30/10) -----------------------------------------------------
run_proftop tmon -b -n 0 -o "$TMPD/split.tmon" -- "$WL/split" 2
check "tmon-exit-status-0" status $RC 0 "$ERR"
check "tmon-written" has "$TMPD/split.tmon" '^PART2$'
check "tmon-header-is-dprof" has "$TMPD/split.tmon" '^\$hz=999;$'
# The Perl header dprofpp evaluates: only proftop's numbers, nothing of the target's.
check "tmon-header-no-names" sh -c "! sed '/^PART2/q' '$TMPD/split.tmon' | grep -Eq 'split|burn|libc'"
# proftop's own cost, a comment in the header (dprofpp reading the file is checked below).
COST_RE='proftop itself: cpu [0-9]+\.[0-9]{3}s of [0-9]+\.[0-9]{3}s \([0-9]+\.[0-9]{2}%\), rss [0-9.]+[KMG], peak [0-9.]+[KMG]'
check "tmon-own-cost-comment" sh -c "sed '/^PART2/q' '$TMPD/split.tmon' | grep -Eq '^# $COST_RE\$'"
dprofpp -O 30 "$TMPD/split.tmon" >"$TMPD/split.dprofpp.out" 2>"$TMPD/split.dprofpp.err"
check "dprofpp-reads-it" status $? 0 "$TMPD/split.dprofpp.err"
D=$TMPD/split.dprofpp.out
for fn in burn_a burn_b burn_c; do
	check "dprofpp-$fn-exclusive-is-self" same_ticks "$(dprof_value "$D" "split::$fn" 2)" \
		"$(row_value "$OUT" "$fn" split 3)"
done
check "dprofpp-burn_a-60" approx "$(dprof_value "$D" split::burn_a 1)" 60 6
check "dprofpp-burn_b-30" approx "$(dprof_value "$D" split::burn_b 1)" 30 5
check "dprofpp-burn_c-10" approx "$(dprof_value "$D" split::burn_c 1)" 10 4
check "dprofpp-main-cumulative-is-total" same_ticks "$(dprof_value "$D" split::main 3)" \
	"$(samples_of_total "$OUT" main)"
# The header's user+system time is split's CPU time: 2 s of burning.
check "dprofpp-user-system-time" between \
	"$(awk '/User\+System Time =/ { print $4 }' "$D")" 1.8 2.5
check "dprofpp-elapsed" between "$(awk '/Total Elapsed Time =/ { print $5 }' "$D")" 1.8 4
# Read back, the file is a past run: its table shows no cost of the proftop reading it.
run_proftop saved -b -i "$TMPD/split.tmon"
check "saved-exit-status-0" status $RC 0 "$ERR"
check "saved-header" has "$OUT" '^=== proftop final .*samples [0-9]+'
check "saved-no-own-cost" sh -c "! grep -q '% CPU' '$OUT'"

# --- the call tree: paths (main → path_a → burn 60, main → path_b → mid_b → burn 30, solo 10) ---
run_proftop paths -b -n 0 -o "$TMPD/paths.tmon" -- "$WL/paths" 2
check "paths-exit-status-0" status $RC 0 "$ERR"
dprofpp -T "$TMPD/paths.tmon" >"$TMPD/paths.tree.out" 2>&1
check "dprofpp-T-reads-it" status $? 0 "$TMPD/paths.tree.out"
# indent FILE NAME N — the indentation of the N-th line naming NAME in -T's output.
indent()
{
	awk -v n="$2" -v k="$3" '{ name = $0; sub(/^ */, "", name) }
	     name == n && ++seen == k { print length($0) - length(name); exit }' "$1"
}
tree_shape()
{
	local t m a b1 pb mb b2
	t=$TMPD/paths.tree.out
	m=$(indent "$t" paths::main 1)
	a=$(indent "$t" paths::path_a 1)
	b1=$(indent "$t" paths::burn 1)
	pb=$(indent "$t" paths::path_b 1)
	mb=$(indent "$t" paths::mid_b 1)
	b2=$(indent "$t" paths::burn 2)
	[ -n "$m" ] && [ "$a" = $((m + 3)) ] && [ "$b1" = $((a + 3)) ] && [ "$pb" = $((m + 3)) ] &&
	    [ "$mb" = $((pb + 3)) ] && [ "$b2" = $((mb + 3)) ] ||
		{ echo "main $m, path_a $a, burn $b1, path_b $pb, mid_b $mb, burn $b2:"; cat "$t"; return 1; }
}
check "dprofpp-T-tree" tree_shape
dprofpp "$TMPD/paths.tmon" >"$TMPD/paths.dprofpp.out" 2>&1
D=$TMPD/paths.dprofpp.out
check "dprofpp-burn-90" approx "$(dprof_value "$D" paths::burn 1)" 90 6
check "dprofpp-burn-two-paths" approx "$(dprof_value "$D" paths::burn 4)" 2 0
check "dprofpp-path_a-cumulative" same_ticks "$(dprof_value "$D" paths::path_a 3)" \
	"$(samples_of_total "$OUT" path_a)"
check "dprofpp-burn-exclusive" same_ticks "$(dprof_value "$D" paths::burn 2)" \
	"$(row_value "$OUT" burn paths 3)"

# --- callgrind_annotate --------------------------------------------------------------------------
if command -v callgrind_annotate >/dev/null 2>&1; then
	run_proftop callgrind -b -n 0 -o "$TMPD/callgrind.out.1" -- "$WL/paths" 1
	check "callgrind-exit-status-0" status $RC 0 "$ERR"
	callgrind_annotate --auto=no "$TMPD/callgrind.out.1" >"$TMPD/cg.self.out" 2>&1
	check "callgrind_annotate-reads-it" status $? 0 "$TMPD/cg.self.out"
	callgrind_annotate --auto=no --inclusive=yes "$TMPD/callgrind.out.1" >"$TMPD/cg.incl.out" 2>&1
	# cg_value FILE FUNCTION — the count callgrind_annotate shows for FUNCTION of paths (named
	# FILE:FUNCTION, the file being paths.c, or the module paths where lines are unknown).
	cg_value()
	{
		awk -v f="$2" '$NF ~ /^\[/ && $(NF - 1) ~ ("(^|/)paths(\\.c)?:" f "$") { gsub(/,/, "", $1); print $1; found = 1; exit }
		     END { if (!found) print "missing" }' "$1"
	}
	check "callgrind-burn-self" approx "$(cg_value "$TMPD/cg.self.out" burn)" \
		"$(row_value "$OUT" burn paths 3)" 0
	for fn in main path_a path_b mid_b; do
		check "callgrind-$fn-inclusive-is-total" approx "$(cg_value "$TMPD/cg.incl.out" $fn)" \
			"$(samples_of_total "$OUT" $fn)" 0
	done
	# callgrind_annotate groups thousands with commas ("1,015").
	check "callgrind-total" approx "$(awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1; exit }' \
		"$TMPD/cg.self.out")" "$(header_value "$OUT" samples)" 0
else
	skip "callgrind" "callgrind_annotate not installed (valgrind; make deps installs it)"
fi

# --- folded on stdout: the counts add up to the samples; the tables go to stderr ---------------
run_proftop folded -b -n 0 -f folded -o - -- "$WL/split" 1
check "folded-exit-status-0" status $RC 0 "$ERR"
check "folded-tables-on-stderr" has "$ERR" '^=== proftop final'
check "folded-lines" sh -c "grep -Evq '^.+ [0-9]+\$' '$OUT' && exit 1; grep -q 'main;burn_a [0-9]' '$OUT'"
check "folded-sum-is-samples" approx "$(awk '{ s += $NF } END { print s + 0 }' "$OUT")" \
	"$(header_value "$ERR" samples)" 0

# --- pprof, decoded by pprof-format --------------------------------------------------------------
NPM_DIR=$BUILD_DIR/npm
if ! [ -d "$NPM_DIR/node_modules/pprof-format" ] && command -v npm >/dev/null 2>&1; then
	mkdir -p "$NPM_DIR"
	timeout 120 npm install --silent --no-audit --no-fund --no-save --prefix "$NPM_DIR" \
	    pprof-format@2 >"$TMPD/npm.log" 2>&1
fi
if ! command -v node >/dev/null 2>&1; then
	skip "pprof" "node is not installed"
elif ! [ -d "$NPM_DIR/node_modules/pprof-format" ]; then
	skip "pprof" "npm could not install pprof-format: $(tail -n 1 "$TMPD/npm.log" 2>/dev/null || echo 'npm missing')"
else
	run_proftop pprof -b -n 0 -o "$TMPD/cpu.pb.gz" -- "$WL/split" 1
	check "pprof-exit-status-0" status $RC 0 "$ERR"
	cat >"$TMPD/decode.js" <<'EOF'
const fs = require('fs'), zlib = require('zlib');
const { Profile } = require(process.argv[3] + '/node_modules/pprof-format');
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const str = (i) => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
const loc = new Map(p.location.map((l) => [Number(l.id), fn.get(Number(l.line[0].functionId))]));
let total = 0, cpu = 0;
const self = {};
for (const s of p.sample) {
	const leaf = s.locationId.length ? loc.get(Number(s.locationId[0])) : '-';
	total += Number(s.value[0]);
	cpu += Number(s.value[1]);
	self[leaf] = (self[leaf] || 0) + Number(s.value[0]);
}
console.log('total ' + total);
console.log('cpu_ns ' + cpu);
console.log('period ' + Number(p.period));
console.log('types ' + p.sampleType.map((t) => str(t.type) + '/' + str(t.unit)).join(','));
for (const c of p.comment) console.log('comment ' + str(c));
for (const [k, v] of Object.entries(self)) console.log('self ' + k + ' ' + v);
EOF
	node "$TMPD/decode.js" "$TMPD/cpu.pb.gz" "$NPM_DIR" >"$TMPD/decoded.txt" 2>&1
	check "pprof-decodes" status $? 0 "$TMPD/decoded.txt"
	P=$TMPD/decoded.txt
	check "pprof-total-is-samples" approx "$(awk '$1 == "total" { print $2 }' "$P")" \
		"$(header_value "$OUT" samples)" 0
	check "pprof-sample-types" has "$P" '^types samples/count,cpu/nanoseconds$'
	check "pprof-period" has "$P" '^period 1001001$'
	check "pprof-counters-comment" has "$P" '^comment proftop [^ ]+: samples [0-9]+ overflow 0 '
	check "pprof-own-cost-comment" has "$P" "^comment $COST_RE\$"
	for fn in burn_a burn_b burn_c; do
		check "pprof-$fn-self" approx "$(awk -v f=$fn '$1 == "self" && $2 == f { print $3 }' "$P")" \
			"$(row_value "$OUT" $fn split 3)" 0
	done
fi

# --- pprof read by go tool pprof --------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
	skip "go-pprof" "go is not installed (Debian: golang-go)"
else
	# go wants a cache and a home; CI runs as root with neither set.
	mkdir -p "$TMPD/go-home"
	gopprof()
	{
		HOME=$TMPD/go-home GOCACHE=$TMPD/go-cache timeout 120 go tool pprof "$@" 2>>"$TMPD/go-pprof.err"
	}
	SRC=$ROOT/tests/workloads
	HOT_LINE=$(grep -n '/\* hot line \*/' "$SRC/lines.c" | cut -d: -f1)
	run_proftop go-lines -b -n 0 --annotate two_lines -o "$TMPD/lines.pb.gz" -- "$WL/lines" 2
	check "go-pprof-exit-status-0" status $RC 0 "$ERR"
	# annotated FIELD — the hot line's SELF% (1, of two_lines) or SAMPLES (3) in --annotate.
	annotated()
	{
		awk -v at="lines.c:$HOT_LINE" -v k="$1" '$4 == at { v = $k } END { print v == "" ? "missing" : v }' "$OUT"
	}
	# pprof_line FILE FIELD — the hot line's flat (1) or flat% (2) in go tool pprof -lines -top.
	pprof_line()
	{
		awk -v at="lines.c:$HOT_LINE" -v k="$2" '$6 == "two_lines" && substr($7, length($7) - length(at) + 1) == at {
			v = $k; sub(/%$/, "", v) } END { print v == "" ? "missing" : v }' "$1"
	}
	gopprof -sample_index=samples -lines -top "$TMPD/lines.pb.gz" >"$TMPD/go-top.txt"
	check "go-pprof-reads-it" has "$TMPD/go-top.txt" '^ +flat +flat%' "go tool pprof's output ($(tail -n 3 "$TMPD/go-pprof.err"))"
	check "go-pprof-hot-line-share" approx "$(pprof_line "$TMPD/go-top.txt" 2)" "$(annotated 1)" 3
	check "go-pprof-hot-line-samples" approx "$(pprof_line "$TMPD/go-top.txt" 1)" "$(annotated 3)" 0
	gopprof -comments "$TMPD/lines.pb.gz" >"$TMPD/go-comments.txt"
	check "go-pprof-own-cost-comment" has "$TMPD/go-comments.txt" "^$COST_RE\$"
	gopprof -raw "$TMPD/lines.pb.gz" >"$TMPD/go-raw.txt"
	# The mapping of the lines file: "ID: 0xSTART/0xLIMIT/0xOFFSET PATH BUILDID [FLAGS]".
	mapping_line=$(awk -v f="$WL/lines" '/^Mappings/ { on = 1; next } on && $3 == f' "$TMPD/go-raw.txt")
	# same GOT WANT — the same (non-empty) text.
	same()
	{
		[ -n "$2" ] && [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }
	}
	check "go-pprof-build-id-is-readelfs" same "$(echo "$mapping_line" | awk '{ print $4 }')" \
		"$(readelf -n "$WL/lines" | awk '/Build ID:/ { print $3 }')"
	# The executable PT_LOAD as readelf -lW shows it (Offset VirtAddr ... MemSiz ... "R E").
	set -- $(readelf -lW "$WL/lines" | awk '$1 == "LOAD" && $(NF - 1) == "E" { print $2, $3, $6; exit }')
	check "go-pprof-mapping-is-the-exec-segment" same "$(echo "$mapping_line" | awk '{ print $2 }')" \
		"$(printf '0x%x/0x%x/0x%x' $(($2)) $(($2 + $3)) $(($1)))"
	check "go-pprof-mapping-flags" has "$TMPD/go-raw.txt" "^[0-9]+: 0x[0-9a-f/x]+ $WL/lines [0-9a-f]+ \\[FN\\]\\[FL\\]\\[LN\\]"
	# The addresses are the file's link-time ones: addr2line puts the hot line's on that line.
	if command -v addr2line >/dev/null 2>&1; then
		hot_addrs=$(awk -v at="lines.c:$HOT_LINE" '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
			on && $4 == "two_lines" && substr($5, length($5) - length(at) + 1) == at { printf "%s ", $2 }' \
			"$TMPD/go-raw.txt")
		check "go-pprof-hot-addresses-are-the-files" sh -c "[ -n '$hot_addrs' ] || { echo 'no Location on the hot line'; exit 1; }
			addr2line -e '$WL/lines' $hot_addrs | grep -Ev 'lines\.c:$HOT_LINE( |\$)' && exit 1; exit 0"
	else
		skip "go-pprof-hot-addresses-are-the-files" "addr2line is not installed (Debian: binutils)"
	fi
	# Every Location with an address is inside its mapping.
	check "go-pprof-addresses-in-mappings" awk '
		function hex(s,   v, i) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		/^Locations/ { part = "l"; next } /^Mappings/ { part = "m"; next }
		part == "l" && $2 ~ /^0x/ && $3 ~ /^M=/ { n++; addr[n] = hex($2); map[n] = substr($3, 3) }
		part == "m" && $1 ~ /^[0-9]+:$/ { split($2, r, "/"); id = $1 + 0; lo[id] = hex(r[1]); hi[id] = hex(r[2]) }
		END {
			for (i = 1; i <= n; i++) if (addr[i]) {
				checked++
				if (!(map[i] in lo) || addr[i] < lo[map[i]] || addr[i] >= hi[map[i]]) {
					printf "location %d at 0x%x outside mapping %s\n", i, addr[i], map[i]; bad = 1 }
			}
			if (!checked) { print "no location has an address"; bad = 1 }
			exit bad
		}' "$TMPD/go-raw.txt"
	# inline: step() inlined into caller_a and caller_b; its samples sit in one Location with the
	# caller's line of the call under step's.
	run_proftop go-inline -b -n 0 -o "$TMPD/inline.pb.gz" -- "$WL/inline" 1
	gopprof -raw "$TMPD/inline.pb.gz" >"$TMPD/go-inline-raw.txt"
	CALL_A=$(grep -n '/\* call a \*/' "$SRC/inline.c" | cut -d: -f1)
	check "go-pprof-inlined-chain-in-one-location" awk -v call="inline.c:$CALL_A" '
		/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ step \(inlined\) / { inl = 1; next }
		inl && $1 == "caller_a" && substr($2, length($2) - length(call) + 1) == call { ok = 1 }
		{ inl = 0 }
		END { if (!ok) print "no Location with step (inlined) and then caller_a at " call; exit !ok }' \
		"$TMPD/go-inline-raw.txt"
	check "go-pprof-inline-frames-flag" has "$TMPD/go-inline-raw.txt" "$WL/inline [0-9a-f]+ .*\\[IN\\]"
	gopprof -lines -top "$TMPD/inline.pb.gz" >"$TMPD/go-inline-top.txt"
	check "go-pprof-step-inline-top" has "$TMPD/go-inline-top.txt" ' step \(inlined\) .*inline\.c:[0-9]+ \(inline\)$'
fi

# --- per thread: one file per thread, named FILE.TID ---------------------------------------------
run_proftop per-thread -b -n 0 --per-thread -o "$TMPD/pt.tmon" -- "$WL/threads4" 1
check "per-thread-exit-status-0" status $RC 0 "$ERR"
per_thread_files()
{
	local n sum f s
	n=0 sum=0
	for f in "$TMPD"/pt.tmon.*; do
		[ -f "$f" ] || continue
		s=$(awk '$1 == "@" { t += $2 } END { print t + 0 }' "$f")
		dprofpp "$f" >/dev/null 2>&1 || { echo "dprofpp cannot read $f"; return 1; }
		n=$((n + 1))
		sum=$((sum + ${s:-0}))
	done
	[ $n -ge 4 ] || { echo "$n per-thread files, want one per worker (4) at least"; return 1; }
	[ -e "$TMPD/pt.tmon" ] && { echo "the merged file was written too"; return 1; }
	# The threads' samples (one tick each) add up to all samples.
	approx "$sum" "$(header_value "$OUT" samples)" 0
}
check "per-thread-files" per_thread_files

# --- SIGUSR1: numbered snapshots while profiling goes on (batch mode) -----------------------------
# proftop runs without timeout(1) in front, which would take the signal itself; split ends on its
# own after 3 s of CPU time.
mkdir -p "$TMPD/usr1"
(cd "$TMPD/usr1" && PROFTOP_OUT_FILE=snap.tmon exec "$PROFTOP_BIN" -b -n 0 -- "$WL/split" 3) \
    >"$TMPD/usr1.out" 2>"$TMPD/usr1.err" </dev/null &
pid=$!
BG_PIDS="$BG_PIDS $pid"
sleep 1
kill -USR1 $pid 2>/dev/null
sleep 0.5
kill -USR1 $pid 2>/dev/null
wait $pid
check "usr1-exit-status-0" status $? 0 "$TMPD/usr1.err"
check "usr1-first" has "$TMPD/usr1.err" '^proftop: saved snap\.tmon$'
check "usr1-second" has "$TMPD/usr1.err" '^proftop: saved snap\.tmon\.1$'
check "usr1-kept-profiling" has "$TMPD/usr1.out" '^=== proftop final'
check "usr1-snapshots-read" sh -c "dprofpp '$TMPD/usr1/snap.tmon' >/dev/null && \
	'$PROFTOP_BIN' report '$TMPD/usr1/snap.tmon.1' >/dev/null"
# The later snapshot has more samples than the earlier one.
snap_samples()
{
	awk '/^# proftop: samples/ { print $4 }' "$1"
}
check "usr1-grows" between "$(snap_samples "$TMPD/usr1/snap.tmon.1")" \
	"$(($(snap_samples "$TMPD/usr1/snap.tmon") + 100))" 100000

# --- SIGINT ends profiling and still writes -o -------------------------------------------------
"$PROFTOP_BIN" -b -n 0 -o "$TMPD/int.folded" -- "$WL/spin" 30 >"$TMPD/int.out" 2>"$TMPD/int.err" </dev/null &
pid=$!
BG_PIDS="$BG_PIDS $pid"
sleep 1
kill -INT $pid 2>/dev/null
wait $pid
check "sigint-written" sh -c "[ -s '$TMPD/int.folded' ] && awk '{ s += \$NF } END { exit !(s > 0) }' '$TMPD/int.folded'"

# --- symbolic link at -o: refused, what it points to left alone ---------------------------------
echo precious >"$TMPD/precious"
ln -s "$TMPD/precious" "$TMPD/link.tmon"
run_proftop link -b -n 0 -o "$TMPD/link.tmon" -- "$WL/split" 0.2
check "symlink-exit-status-1" status $RC 1 "$ERR"
check "symlink-message" has "$ERR" "cannot write .*link\.tmon: it is a symbolic link"
check "symlink-target-intact" has "$TMPD/precious" '^precious$'
finish
