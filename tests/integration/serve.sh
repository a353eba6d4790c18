#!/bin/sh
# serve.sh — --serve, as its clients use it: `go tool pprof -top http://.../debug/pprof/profile?
# seconds=2` (Debian golang-go) against split (burn_a 60%, burn_b 30%, burn_c 10%): the split
# within 5 points and a 2 s duration; two scrapes at once while the screen runs, which keeps
# answering keys; curl for everything else: Go's error answers (400, 404, 405 as text/plain with
# X-Go-Pprof), /snapshot in each format read by the tool that reads it (proftop report,
# callgrind_annotate, the folded sum), a request still waiting when proftop ends, --history 0;
# a NUL (%00) refused, clients that go while their profile waits (their slots free at once),
# slowloris (connections trickling a request closed after 5 s, a waiting profile not); and the
# option's own errors (a bad address, a port in use, -i) and the warning for an address other
# machines reach.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
require_perf_events
for tool in curl go callgrind_annotate; do
	if ! command -v $tool >/dev/null 2>&1; then
		fail "setup" "$tool is not installed (make deps installs it)"
		finish
	fi
done
export HOME=$TMPD/go-home GOCACHE=$TMPD/go-cache PPROF_TMPDIR=$TMPD/pprof
mkdir -p "$HOME"

# serve_in_background TAG ARG... — proftop ARG... in the background, its stderr in TAG.err;
# sets PID and PORT (from the line saying where it serves).
serve_in_background()
{
	local tag i
	tag=$1
	shift
	timeout -k 5 "${PROFTOP_TIMEOUT:-60}" "$PROFTOP_BIN" "$@" >"$TMPD/$tag.out" \
		2>"$TMPD/$tag.err" </dev/null &
	PID=$!
	BG_PIDS="$BG_PIDS $PID"
	PORT=""
	i=0
	while [ $i -lt 100 ] && [ -z "$PORT" ]; do
		PORT=$(sed -n 's|.*serving profiles at http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' \
			"$TMPD/$tag.err" | head -n 1)
		[ -z "$PORT" ] && sleep 0.1
		i=$((i + 1))
	done
}

# http TAG URL [CURL-ARG...] — TAG.body, TAG.head; prints the status.
http()
{
	local tag url
	tag=$1 url=$2
	shift 2
	curl -s -m 30 -D "$TMPD/$tag.head" -o "$TMPD/$tag.body" -w '%{http_code}' "$@" "$url"
}

# pprof_pct FILE FUNCTION — flat% of FUNCTION in go tool pprof -top's output.
pprof_pct()
{
	awk -v f="$2" '$NF == f { sub(/%/, "", $2); print $2; found = 1 } END { if (!found) print "missing" }' "$1"
}

# split_right FILE — burn_a, burn_b, burn_c within 5 points of 60, 30, 10.
split_right()
{
	approx "$(pprof_pct "$1" burn_a)" 60 5 && approx "$(pprof_pct "$1" burn_b)" 30 5 &&
		approx "$(pprof_pct "$1" burn_c)" 10 5
}

# code_when_free URL — the status of GET URL, asked again while it is 500 (every profile slot
# taken), ten times at most.
code_when_free()
{
	local code i
	i=0
	while :; do
		code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$1")
		i=$((i + 1))
		[ "$code" != 500 ] || [ $i -ge 10 ] && break
		sleep 0.3
	done
	echo "$code"
}

# slowloris PORT N — a profile of 7 s with format=folded, then N connections that trickle a
# request header that never ends, a byte every 0.2 s, until proftop closed them all (30 s at
# most). Prints "closed C profile STATUS" and whether the profile holds burn_a ("burn_a").
slowloris()
{
	perl -e '
		use strict; use IO::Socket::INET; use IO::Select;
		$SIG{PIPE} = "IGNORE";
		my ($port, $n) = @ARGV;
		sub conn { IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port) or die "connect: $!\n" }
		my $profile = conn();
		syswrite($profile, "GET /debug/pprof/profile?seconds=7&format=folded HTTP/1.0\r\n\r\n");
		my @slow = map { my $s = conn(); syswrite($s, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "); $s } 1 .. $n;
		my %closed;
		my $end = time + 30;
		while (keys(%closed) < $n && time < $end) {
			select(undef, undef, undef, 0.2);
			for my $i (0 .. $n - 1) {
				next if $closed{$i};
				my $buf;
				$closed{$i} = 1 if IO::Select->new($slow[$i])->can_read(0) && !sysread($slow[$i], $buf, 64);
				$closed{$i} = 1 if !$closed{$i} && !defined(syswrite($slow[$i], "a"));
			}
		}
		my ($all, $buf) = ("");
		$all .= $buf while sysread($profile, $buf, 65536);
		my ($status) = $all =~ m{^HTTP/1\.\d (\d+)};
		printf "closed %d profile %s%s\n", scalar(keys %closed), $status // "none",
			$all =~ /;burn_a \d/ ? " burn_a" : "";
	' "$1" "$2"
}

# --- batch mode, serving alone --------------------------------------------------------------------

serve_in_background alone -b -n 0 --serve 0 -- "$WL/split" 40
check "announces-where" test -n "$PORT"
base=http://127.0.0.1:$PORT
check "go-tool-pprof" sh -c "go tool pprof -top '$base/debug/pprof/profile?seconds=2' >'$TMPD/g.top' 2>&1 || { cat '$TMPD/g.top'; exit 1; }"
check "go-split" split_right "$TMPD/g.top"
check "go-duration" has "$TMPD/g.top" '^Duration: 2s'
check "go-type" has "$TMPD/g.top" '^Type: cpu'
check "go-build-id" has "$TMPD/g.top" '^Build ID: [0-9a-f]{40}'

check "profile-headers" sh -c "
	[ \$(curl -s -m 30 -D '$TMPD/p.head' -o '$TMPD/p.pb.gz' -w '%{http_code}' '$base/debug/pprof/profile?seconds=1') = 200 ] &&
	grep -qi '^content-type: application/octet-stream' '$TMPD/p.head' &&
	gzip -t '$TMPD/p.pb.gz'"
# Its own cost is of the moment it was made: the go tool's profile of 2 s came before it, so
# proftop had run 3 s at least (a run without periodic tables published its cost only once, early).
go tool pprof -comments "$TMPD/p.pb.gz" >"$TMPD/p.comments" 2>&1
check "profile-own-cost-of-now" sh -c "awk '/proftop itself: cpu/ { sub(/s\$/, \"\", \$6); w = \$6 }
	END { if (w + 0 < 3) exit 1 }' '$TMPD/p.comments' || { cat '$TMPD/p.comments'; exit 1; }"
check "bad-seconds-400" sh -c "[ \$(curl -s -m 10 -D '$TMPD/e.head' -o '$TMPD/e.body' -w '%{http_code}' '$base/debug/pprof/profile?seconds=abc') = 400 ] &&
	grep -qi '^x-go-pprof: 1' '$TMPD/e.head' && grep -qi '^content-type: text/plain' '$TMPD/e.head' &&
	grep -q \"'abc'\" '$TMPD/e.body'"
check "too-long-400" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' '$base/debug/pprof/profile?seconds=100000') = 400 ]"
check "unknown-parameter-400" sh -c "[ \$(curl -s -m 10 -o '$TMPD/u.body' -w '%{http_code}' '$base/snapshot?seconds=3') = 400 ] && grep -q seconds '$TMPD/u.body'"
check "bad-format-400" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' '$base/snapshot?format=svg') = 400 ]"
check "no-files-404" sh -c "[ \$(curl -s -m 10 --path-as-is -o /dev/null -w '%{http_code}' '$base/../../etc/passwd') = 404 ]"
check "post-405" sh -c "[ \$(curl -s -m 10 -X POST -D '$TMPD/m.head' -o /dev/null -w '%{http_code}' '$base/debug/pprof/profile') = 405 ] && grep -qi '^allow: GET, HEAD' '$TMPD/m.head'"
# HEAD makes no profile: the headers at once, not after 30 s.
check "head-at-once" sh -c "[ \$(curl -s -m 5 -I -o /dev/null -w '%{http_code}' '$base/debug/pprof/profile?seconds=30') = 200 ]"
check "index-lists" sh -c "[ \$(curl -s -m 10 -o '$TMPD/i.html' -w '%{http_code}' '$base/debug/pprof/') = 200 ] && grep -q '/debug/pprof/profile' '$TMPD/i.html'"

check "snapshot-folded" sh -c "[ \$(curl -s -m 10 -o '$TMPD/s.folded' -w '%{http_code}' '$base/snapshot?format=folded') = 200 ] &&
	grep -q ';burn_a [0-9]' '$TMPD/s.folded'"
check "snapshot-tmon-report" sh -c "[ \$(curl -s -m 10 -o '$TMPD/s.tmon' -w '%{http_code}' '$base/snapshot?format=tmon') = 200 ] &&
	'$PROFTOP_BIN' report '$TMPD/s.tmon' | grep -q 'burn_a'"
check "snapshot-callgrind" sh -c "[ \$(curl -s -m 10 -o '$TMPD/s.callgrind' -w '%{http_code}' '$base/snapshot?format=callgrind') = 200 ] &&
	callgrind_annotate '$TMPD/s.callgrind' | grep -q 'burn_a'"

# A NUL (%00) hides nothing after it: the parameter, or the page, is refused as sent.
check "nul-seconds-400" sh -c "[ \$(curl -s -m 10 -o '$TMPD/n1.body' -w '%{http_code}' '$base/debug/pprof/profile?seconds=5%00') = 400 ] &&
	grep -q \"'5%00'\" '$TMPD/n1.body'"
check "nul-format-400" sh -c "[ \$(curl -s -m 10 -o '$TMPD/n2.body' -w '%{http_code}' '$base/debug/pprof/profile?seconds=1&format=pprof%00') = 400 ] &&
	grep -q \"'pprof%00'\" '$TMPD/n2.body'"
check "nul-junk-400" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' '$base/snapshot?format=folded%00junk') = 400 ]"
check "nul-path-404" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' '$base/snapshot%00.html') = 404 ]"

# Six clients (more than the four profile slots) ask for 25 s and leave after one: their slots
# are free at once (they were held the 25 s: 500 for everyone meanwhile).
gone=""
for i in 1 2 3 4 5 6; do
	curl -s -m 1 -o /dev/null "$base/debug/pprof/profile?seconds=25" &
	gone="$gone $!"
done
wait $gone
code=$(code_when_free "$base/debug/pprof/profile?seconds=1")
check "gone-clients-free-slots" sh -c "[ '$code' = 200 ] || { echo 'got $code'; exit 1; }"

# Slowloris: 15 connections trickling a request fill the 16 with a profile waiting 7 s: proftop
# closes them 5 s after they opened (before, they held theirs as long as they trickled), and the
# profile, which sent its request whole, is answered.
slowloris "$PORT" 15 >"$TMPD/slow.out" 2>&1
check "slowloris-closed" has "$TMPD/slow.out" '^closed 15 '
check "slowloris-profile-answered" has "$TMPD/slow.out" ' profile 200 burn_a$'
check "served-after-slowloris" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' '$base/debug/pprof/') = 200 ]"

# A request that waits when proftop ends gets what was profiled.
curl -s -m 30 -o "$TMPD/w.body" -w '%{http_code}' "$base/debug/pprof/profile?seconds=20&format=folded" >"$TMPD/w.code" &
waiter=$!
sleep 2
kill -INT "$PID"
wait "$PID"
rc=$?
wait "$waiter"
check "waiting-answered" sh -c "[ \"\$(cat '$TMPD/w.code')\" = 200 ] && grep -q ';burn_a [0-9]' '$TMPD/w.body'"
check "ends-on-sigint" status "$rc" 130 "$TMPD/alone.err"
check "no-sanitizer-report" sh -c "! grep -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' '$TMPD/alone.err'"

# --- no history: the snapshot alone -----------------------------------------------------------

serve_in_background nohist -b -n 0 --history 0 --serve 0 -- "$WL/split" 30
check "no-history-400" sh -c "[ \$(curl -s -m 10 -o '$TMPD/h.body' -w '%{http_code}' 'http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1') = 400 ] && grep -q -- '--history' '$TMPD/h.body'"
check "no-history-snapshot" sh -c "[ \$(curl -s -m 10 -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$PORT/snapshot') = 200 ]"

# --- the option's errors ----------------------------------------------------------------------

run_proftop badaddr -b --serve localhost:80 -- "$WL/split" 1
check "bad-address" sh -c "[ $RC = 2 ] && grep -q 'localhost:80' '$ERR'"
run_proftop taken -b --serve "$PORT" -- "$WL/split" 1
check "port-in-use" sh -c "[ $RC = 1 ] && grep -q 'cannot listen on 127.0.0.1:$PORT: Address already in use' '$ERR'"
kill -INT "$PID"
wait "$PID"
run_proftop withinput -b --serve 0 -i "$TMPD/s.tmon"
check "not-with-input" sh -c "[ $RC = 2 ] && grep -q -- '--serve' '$ERR'"
run_proftop exposed -b -n 0 --serve 0.0.0.0:0 -- "$WL/split" 0.3
check "exposed-warns" has "$ERR" 'warning: serving profiles at http://0\.0\.0\.0:[0-9]+/debug/pprof/ to every machine'

# --- beside the screen: two scrapes at once -------------------------------------------------------

. "$(dirname "$0")/lib_tmux.sh"
pane tv 160 30 --serve 0 -- "$WL/split" 40
check "title-serving" wait_screen tv 'serving 127\.0\.0\.1:[0-9]+'
PORT=$(screen tv | sed -n 's/.*serving 127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -n 1)
go tool pprof -top "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2" >"$TMPD/g1.top" 2>&1 &
g1=$!
go tool pprof -top "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2" >"$TMPD/g2.top" 2>&1 &
g2=$!
tm send-keys -t tv 2
check "screen-answers-meanwhile" wait_screen tv '^ +TOTAL% +SELF% +SAMPLES +FUNCTION'
wait $g1
wait $g2
check "scrape-1-split" split_right "$TMPD/g1.top"
check "scrape-2-split" split_right "$TMPD/g2.top"
tm send-keys -t tv q
check "quit" ended tv
check "restored" restored tv
check "tui-no-sanitizer-report" no_sanitizer_report tv
finish
