#!/bin/sh
# children.sh — -p on a server whose work runs in processes it started before the attach (the
# prefork workload: an idle parent, two workers burning CPU, one with a helper of its own, as
# PostgreSQL's postmaster and backends; postgres.sh has the real one). Without --children the
# workers are not followed, and proftop says so (batch: on standard error, after 2 s or at the
# end of a shorter run; the screen: on its status line) instead of showing an empty profile; with
# --children (-C, or children in $PROFTOP) the workers and the helper are profiled. It needs -p.
# The server is left running as it was: it ends on SIGTERM with its own status.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/prefork"
require_perf_events

# start_prefork — the server, up with its workers: PREFORK_PID.
start_prefork()
{
	local i
	"$WL/prefork" 120 >"$TMPD/prefork.out" 2>&1 &
	PREFORK_BG=$!
	BG_PIDS="$BG_PIDS $PREFORK_BG"
	i=0
	while [ $i -lt 50 ]; do
		PREFORK_PID=$(sed -n 's/^\([0-9]*\) ready$/\1/p' "$TMPD/prefork.out")
		# The helper is started by a worker: wait until the three exist.
		[ -n "$PREFORK_PID" ] && [ "$(pgrep -c -f "^$WL/prefork 120$")" -ge 4 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# samples FILE — the sample count in the final table's header.
samples()
{
	sed -n 's/^=== proftop final .* samples \([0-9]*\) .*/\1/p' "$1" | tail -n 1
}

IDLE="warning: pid [0-9]+ is idle \([0-9.]+s of CPU in [0-9.]+s\); the 3 processes it started before proftop attached are not followed: use --children \(-C\)"

start_prefork || { fail "setup" "prefork did not start: $(cat "$TMPD/prefork.out")"; finish; }

run_proftop plain -b -n 0 -d 3 -p "$PREFORK_PID"
check "plain-exit-status-0" status "$RC" 0 "$ERR"
check "plain-says-children-not-followed" has "$ERR" "^proftop: $(echo "$IDLE" | sed "s/pid \[0-9\]+/pid $PREFORK_PID/")\$"
check "plain-no-worker-samples" sh -c "! grep -E 'worker_burn|helper_burn' '$OUT'"

# A run shorter than the 2 s looks at the end.
run_proftop short -b -n 0 -d 0.5 -p "$PREFORK_PID"
check "short-exit-status-0" status "$RC" 0 "$ERR"
check "short-says-children-not-followed" has "$ERR" "$IDLE"

run_proftop children -b -n 0 -d 3 -C -p "$PREFORK_PID"
check "children-exit-status-0" status "$RC" 0 "$ERR"
check "children-no-idle-warning" sh -c "! grep -E 'is idle' '$ERR'"
check "children-says-how-many" has "$ERR" "^proftop: --children: 3 processes started before the attach are followed too\$"
# Two workers and the helper share the CPU: worker_burn two thirds, helper_burn one.
check "children-worker_burn" between "$(self_pct "$OUT" worker_burn prefork)" 45 85
check "children-helper_burn" between "$(self_pct "$OUT" helper_burn prefork)" 15 50
check "children-most-samples-there" between "$(awk -v s="$(samples "$OUT")" -v a="$(self_pct "$OUT" worker_burn prefork)" -v b="$(self_pct "$OUT" helper_burn prefork)" 'BEGIN { print (s > 0) * (a + b) }')" 90 100

PROFTOP=children run_proftop env -b -n 0 -d 1 -p "$PREFORK_PID"
check "env-exit-status-0" status "$RC" 0 "$ERR"
check "env-worker_burn" between "$(self_pct "$OUT" worker_burn prefork)" 45 85

run_proftop usage -b -C -- "$WL/split" 1
check "usage-exit-status-2" status "$RC" 2 "$ERR"
check "usage-says-why" has "$ERR" "--children follows the processes that -p's started before the attach: it needs -p"

# The screen says it on its status line.
. "$ROOT/tests/integration/lib_tmux.sh"
pane screen 220 20 -p "$PREFORK_PID"
check "screen-says-children-not-followed" wait_screen screen "pid $PREFORK_PID is idle .* not followed: use --children \(-C\)\$"
tm send-keys -t screen q
check "screen-ends" ended screen
check "screen-exit-status-0" exit_status screen 0
check "screen-no-sanitizer-report" no_sanitizer_report screen

kill -TERM "$PREFORK_BG"
wait "$PREFORK_BG"
check "server-ends-on-sigterm" status $? 0
finish
