#!/bin/sh
# otlp.sh — OpenTelemetry's profiles signal: -f otlp files and --otlp-endpoint pushes, decoded
# by Debian's protoc with the official schema (tests/otlp) and checked by otlp_check.py. The
# receiver is a small server of the test's own (otlp_receiver.py) that can answer 503, hang,
# refuse gzip, or not be there at all.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/paths" "$WL/split" "$WL/allocsplit"
need "$(command -v protoc)" "$(command -v python3)" "$(command -v readelf)" "$(command -v curl)"
require_perf_events

SCHEMA=$ROOT/tests/otlp
decode()
{
	(cd "$SCHEMA" && protoc -I . \
		--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto) <"$1" >"$2"
}
otlp()
{
	python3 "$ROOT/tests/integration/otlp_check.py" "$@"
}

# same_as_table FUNCTIONS OUT — each function of the batch table has, in FUNCTIONS (otlp's
# "functions samples/count" of one or more requests, summed), its self samples (SAMPLES) and
# its total share (TOTAL%, within 0.01).
same_as_table()
{
	final_table "$2" | awk -v f="$1" '
		BEGIN { while ((getline line < f) > 0) { split(line, w, " ")
				if (w[1] == "=") { all += w[2]; continue }
				name = line; sub(/^[^ ]+ [^ ]+ /, "", name); s[name] += w[1]; t[name] += w[2] } }
		{ name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); sub(/ +[^ ]+ *$/, "", name)
		  rows++
		  if (s[name] != $3) { printf "%s: self %s decoded, %s in the table\n", name, s[name], $3; bad = 1 }
		  share = all ? 100 * t[name] / all : 0
		  if (share - $2 > 0.01 || $2 - share > 0.01) {
			printf "%s: total %.2f%% decoded, %s%% in the table\n", name, share, $2; bad = 1 } }
		END { if (!rows) { print "no table"; exit 1 } exit bad }'
}

# share FUNCTIONS NAME LO HI — NAME's self samples are LO..HI of all.
share()
{
	awk -v n="$2" -v lo="$3" -v hi="$4" '$1 == "=" { a = $2 } $3 == n { s = $1 }
		END { if (!a || s / a < lo || s / a > hi) { print n, s, "of", a; exit 1 } }' "$1"
}

types_are()
{
	got=$(otlp "$1" types | tr '\n' ' ')
	[ "$got" = "$2" ] || { echo "types: $got"; return 1; }
}

# --- -f otlp: paths (burn 90, solo 10) -------------------------------------------------------
before=$(date +%s%N)
run_proftop file -b -n 0 -o "$TMPD/paths.otlp" -- "$WL/paths" 2
after=$(date +%s%N)
check "file-exit-0" status "$RC" 0 "$ERR"
check "file-decodes" decode "$TMPD/paths.otlp" "$TMPD/paths.txt"
check "file-valid" otlp "$TMPD/paths.txt" validate
check "file-types" types_are "$TMPD/paths.txt" "samples/count cpu/nanoseconds "
otlp "$TMPD/paths.txt" functions samples/count >"$TMPD/paths.functions"
check "file-same-as-table" same_as_table "$TMPD/paths.functions" "$OUT"
check "file-burn-90" share "$TMPD/paths.functions" burn 0.89 0.91
check "file-solo-10" share "$TMPD/paths.functions" solo 0.09 0.11
# cpu/nanoseconds: each sample is a period of CPU time (1e9 / 999 Hz, rounded).
cpu_ns_is_samples()
{
	n=$(otlp "$1" functions cpu/nanoseconds | sed -n 's/^= //p')
	s=$(otlp "$1" functions samples/count | sed -n 's/^= //p')
	[ "$s" -gt 0 ] && [ "$n" -eq $((s * 1001001)) ] || { echo "cpu $n ns, $s samples"; return 1; }
}
check "file-cpu-ns" cpu_ns_is_samples "$TMPD/paths.txt"
resource_is()
{
	otlp "$1" resources | grep -Eqx "$2" || { otlp "$1" resources; return 1; }
}
check "file-resource" resource_is "$TMPD/paths.txt" \
	"host\.name=$(hostname) process\.executable\.name=paths process\.pid=[0-9]+ service\.name=paths"
exe_id=$(readelf -n "$WL/paths" | sed -n 's/.*Build ID: *//p')
check "file-build-id" sh -c "python3 '$ROOT/tests/integration/otlp_check.py' '$TMPD/paths.txt' mappings | grep -qx '$WL/paths $exe_id'"
# The profile's time is the run's: it began after $before and ended before $after.
time_is_run()
{
	otlp "$1" times samples/count | awk -v b="$2" -v a="$3" '
		{ n++; if ($1 < b || $1 + $2 > a || $2 < 1.5e9) { print "time", $1, "for", $2, "not in", b, a; exit 1 } }
		END { exit !n }'
}
check "file-time" time_is_run "$TMPD/paths.txt" "$before" "$after"

# --service names it; an .otlp.pb name picks the format; --per-thread writes one per thread.
run_proftop service -b -n 0 --service shop -o "$TMPD/s.otlp.pb" -- "$WL/split" 0.3
check "service-decodes" decode "$TMPD/s.otlp.pb" "$TMPD/s.txt"
check "service-named" resource_is "$TMPD/s.txt" ".* service\.name=shop"

# --- served: GET /snapshot?format=otlp --------------------------------------------------------
run_served()
{
	"$PROFTOP_BIN" -b -n 0 --serve 0 -- "$WL/split" 3 >"$TMPD/served.out" 2>"$TMPD/served.err" &
	pid=$!
	for _ in $(seq 50); do
		addr=$(grep -o 'http://[0-9.]*:[0-9]*' "$TMPD/served.err" | head -n 1)
		[ -n "$addr" ] && break
		sleep 0.1
	done
	curl -s -D "$TMPD/served.head" -o "$TMPD/served.otlp" "$addr/snapshot?format=otlp"
	wait "$pid"
}
run_served
check "served-type" grep -qi '^Content-Type: application/x-protobuf' "$TMPD/served.head"
check "served-decodes" decode "$TMPD/served.otlp" "$TMPD/served.txt"
check "served-valid" otlp "$TMPD/served.txt" validate

# --- an allocation run: Go's four heap profiles -----------------------------------------------
run_proftop alloc -b -n 0 --mode alloc -o "$TMPD/alloc.otlp" -- "$WL/allocsplit"
check "alloc-exit-0" status "$RC" 0 "$ERR"
check "alloc-decodes" decode "$TMPD/alloc.otlp" "$TMPD/alloc.txt"
check "alloc-valid" otlp "$TMPD/alloc.txt" validate
check "alloc-types" types_are "$TMPD/alloc.txt" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes "
allocated_is_header()
{
	got=$(otlp "$1" functions alloc_space/bytes | sed -n 's/^= //p')
	want=$(sed -n 's/^=== proftop final .* allocated \([0-9]*\) .*/\1/p' "$2" | tail -n 1)
	[ -n "$got" ] && [ "$got" = "$want" ] || { echo "alloc_space $got, header $want"; return 1; }
}
check "alloc-space-is-header" allocated_is_header "$TMPD/alloc.txt" "$OUT"

# --- pushing ------------------------------------------------------------------------------------
# receiver DIR MODE ARGS... — start one; its port in $PORT.
receiver()
{
	mkdir -p "$1"
	python3 "$ROOT/tests/integration/otlp_receiver.py" "$@" &
	BG_PIDS="$BG_PIDS $!"
	RECEIVER=$!
	for _ in $(seq 100); do
		[ -s "$1/port" ] && break
		sleep 0.1
	done
	PORT=$(cat "$1/port")
}
# bodies DIR — each kept body's functions, summed into DIR/functions; every body validated.
bodies()
{
	: >"$1/functions"
	n=0
	for b in "$1"/body.*.txt; do
		[ -e "$b" ] || break
		otlp "$b" validate || return 1
		otlp "$b" functions samples/count >>"$1/functions"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "no bodies"; return 1; }
}
header_push()
{
	grep -q "^=== proftop final .*  otlp sent $2 retried $3 dropped $4 " "$1" ||
		{ grep -o 'otlp sent [0-9]* retried [0-9]* dropped [0-9]*' "$1" | tail -n 1; return 1; }
}

# A receiver that answers: each second's profile arrives once, gzipped; together they are the
# run's profile, the batch table's.
receiver "$TMPD/up" ok
run_proftop push -b -n 0 --otlp-endpoint "http://127.0.0.1:$PORT/" --otlp-interval 1 -- "$WL/paths" 2
check "push-exit-0" status "$RC" 0 "$ERR"
check "push-bodies-valid" bodies "$TMPD/up"
check "push-sum-is-table" same_as_table "$TMPD/up/functions" "$OUT"
check "push-gzip-protobuf" sh -c "awk '\$2 != 200 || \$3 != \"gzip\" || \$5 != \"application/x-protobuf\" || \$6 != \"/v1development/profiles\" { print; bad = 1 } END { exit bad || NR < 2 }' '$TMPD/up/log'"
check "push-counted" header_push "$OUT" "$(wc -l <"$TMPD/up/log")" 0 0
kill "$RECEIVER" 2>/dev/null

# 503 three times (Retry-After: 1), then 200: every profile arrives once all the same.
receiver "$TMPD/busy" fail 3 503 1
run_proftop busy -b -n 0 --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-interval 1 -- "$WL/paths" 2
check "busy-exit-0" status "$RC" 0 "$ERR"
check "busy-bodies-valid" bodies "$TMPD/busy"
check "busy-sum-is-table" same_as_table "$TMPD/busy/functions" "$OUT"
check "busy-three-503" sh -c "[ \$(awk '\$2 == 503' '$TMPD/busy/log' | wc -l) -eq 3 ]"
check "busy-counted" header_push "$OUT" "$(ls "$TMPD"/busy/body.*.txt | wc -l)" 3 0
kill "$RECEIVER" 2>/dev/null

# A receiver that refuses gzip (415) gets the profiles uncompressed, and all of them.
receiver "$TMPD/plain" fail 1 415
run_proftop plain -b -n 0 --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-interval 1 -- "$WL/paths" 1
check "plain-bodies-valid" bodies "$TMPD/plain"
check "plain-sum-is-table" same_as_table "$TMPD/plain/functions" "$OUT"
check "plain-identity" sh -c "awk 'NR == 1 && (\$2 != 415 || \$3 != \"gzip\") { bad = 1 } NR > 1 && (\$2 != 200 || \$3 != \"identity\") { bad = 1 } END { exit bad || NR < 2 }' '$TMPD/plain/log'"
kill "$RECEIVER" 2>/dev/null

# after_end_ms OUT WALL_MS — how long proftop ran past its profiling (the header's elapsed): the
# start and the end, here the final push. The run's own reference: times on a shared machine
# vary, what is checked is that no backoff or hung request holds the end up.
after_end_ms()
{
	awk -v w="$2" '/^=== proftop final/ { e = $5 } END { sub(/s$/, "", e); printf "%d\n", w - e * 1000 }' "$1"
}

# Nobody there for the whole run: proftop profiles on, counts each profile dropped, and ends as
# it would without pushing (its status; at most 3 s after its profiling ended, where the
# retries' backoffs alone would take 31 s).
receiver "$TMPD/gone" ok
kill "$RECEIVER"
wait "$RECEIVER" 2>/dev/null
t0=$(date +%s%N)
run_proftop gone -b -n 0 --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-interval 1 -- "$WL/split" 2
gone_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "gone-exit-0" status "$RC" 0 "$ERR"
check "gone-profiled" between "$(final_samples "$OUT")" 1500 2100
check "gone-all-dropped" sh -c "grep -Eq '^=== proftop final .*  otlp sent 0 retried [0-9]+ dropped [1-9][0-9]* ' '$OUT'"
check "gone-prompt" between "$(after_end_ms "$OUT" "$gone_ms")" 0 3000

# A receiver that never answers holds up nothing: the run ends at most OTLP_PUSH_FINAL_MS (5 s)
# after its profiling (within 8 s; a request's own timeout is 10 s), its profiles dropped.
receiver "$TMPD/hang" hang
t0=$(date +%s%N)
run_proftop hang -b -n 0 --otlp-endpoint "http://127.0.0.1:$PORT" --otlp-interval 1 -- "$WL/split" 2
hang_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "hang-exit-0" status "$RC" 0 "$ERR"
check "hang-profiled" between "$(final_samples "$OUT")" 1500 2100
check "hang-dropped" sh -c "grep -Eq '^=== proftop final .*  otlp sent 0 retried [0-9]+ dropped [1-9][0-9]* ' '$OUT'"
check "hang-bounded" between "$(after_end_ms "$OUT" "$hang_ms")" 0 8000
kill "$RECEIVER" 2>/dev/null

finish
