#!/bin/sh
# postgres.sh — PostgreSQL under pgbench, attached to as its users do: -p of the postmaster, whose
# backends (one per connection, forked when pgbench connected, before proftop attached) do the
# work. Without --children proftop profiles the idle postmaster alone and says that the processes
# it started are not followed; with --children the backends' functions are the profile (every
# backend's stack runs through PostgresMain; the executor's functions are there). A throwaway
# cluster in a temporary directory, run by the postgres user (nobody when there is none; initdb
# refuses root), reached on a Unix socket only; pgbench's select-only load, and pgbench must end
# well: proftop changes nothing in the processes it profiles.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
require_perf_events

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
for tool in initdb pg_ctl pgbench postgres; do
	if ! [ -x "$PGBIN/$tool" ]; then
		fail "setup" "PostgreSQL's $tool is not installed (make deps installs postgresql)"
		finish
	fi
done

# as_owner CMD... — run CMD as the cluster's owner: the postgres user (or nobody) under root,
# else whoever runs the test.
OWNER=""
if [ "$(id -u)" -eq 0 ]; then
	OWNER=postgres
	id postgres >/dev/null 2>&1 || OWNER=nobody
fi
as_owner()
{
	if [ -n "$OWNER" ]; then
		runuser -u "$OWNER" -- "$@"
	else
		"$@"
	fi
}

PG=$TMPD/pg
mkdir "$PG"
if [ -n "$OWNER" ]; then
	chmod 711 "$TMPD"
	chown "$OWNER" "$PG"
fi
pg_stop()
{
	[ -f "$PG/data/postmaster.pid" ] && as_owner "$PGBIN/pg_ctl" -D "$PG/data" -m immediate stop >/dev/null 2>&1
}
trap 'pg_stop; lib_cleanup' EXIT

if ! as_owner "$PGBIN/initdb" -D "$PG/data" -A trust -U postgres --no-sync >"$PG/initdb.log" 2>&1 ||
    ! as_owner "$PGBIN/pg_ctl" -D "$PG/data" -l "$PG/server.log" -w -t 60 \
	-o "-c listen_addresses='' -c unix_socket_directories='$PG' -c fsync=off" start >"$PG/start.log" 2>&1 ||
    ! as_owner "$PGBIN/pgbench" -h "$PG" -U postgres -i -s 1 postgres >"$PG/init.log" 2>&1; then
	fail "setup" "a PostgreSQL cluster did not start: $(tail -n 3 "$PG/initdb.log" "$PG/start.log" "$PG/server.log" "$PG/init.log" 2>/dev/null)"
	finish
fi
POSTMASTER=$(head -n 1 "$PG/data/postmaster.pid")

# The load: two connections, made now, for longer than both runs below.
as_owner "$PGBIN/pgbench" -h "$PG" -U postgres -c 2 -j 2 -S -T 14 postgres >"$PG/bench.log" 2>&1 &
BENCH=$!
BG_PIDS="$BG_PIDS $BENCH"
i=0
while [ $i -lt 100 ] && [ "$(pgrep -c -P "$POSTMASTER" -f 'postgres: postgres postgres')" -lt 2 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "setup-backends-up" between "$(pgrep -c -P "$POSTMASTER" -f 'postgres: postgres postgres')" 2 2

run_proftop plain -b -n 0 -d 3 -p "$POSTMASTER"
check "plain-exit-status-0" status "$RC" 0 "$ERR"
check "plain-says-backends-not-followed" has "$ERR" \
	"^proftop: warning: pid $POSTMASTER is idle \([0-9.]+s of CPU in [0-9.]+s\); the [0-9]+ processes it started before proftop attached are not followed: use --children \(-C\)\$"
check "plain-no-backend-work" sh -c "! grep -E ' (PostgresMain|standard_ExecutorRun|exec_simple_query) ' '$OUT'"

run_proftop children -b -n 0 -d 3 -C -p "$POSTMASTER"
check "children-exit-status-0" status "$RC" 0 "$ERR"
check "children-no-idle-warning" sh -c "! grep 'is idle' '$ERR'"
check "children-in-backends" between "$(total_pct "$OUT" PostgresMain postgres)" 80 100
check "children-executor" between "$(total_pct "$OUT" standard_ExecutorRun postgres)" 1 100

wait "$BENCH"
check "pgbench-ends-well" status $? 0 "$PG/bench.log"
check "pgbench-ran" has "$PG/bench.log" '^tps = [0-9.]+'
finish
