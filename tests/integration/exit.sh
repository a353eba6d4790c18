#!/bin/sh
# exit.sh — in launch mode proftop exits with the command's status (128+N for signal N) and still
# prints the final profile; a command that cannot run gives 127 (not found) or 126 (not executable)
# and one message.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/exitwith"
require_perf_events

# cannot_run FILE NAME — stderr names the command: "proftop: cannot run 'NAME': <reason>".
cannot_run()
{
	grep -Fq "proftop: cannot run '$2': " "$1" && [ "$(grep -c . "$1")" -eq 1 ] && return 0
	echo "want one line \"proftop: cannot run '$2': <reason>\" on stderr, got:"
	head -n 5 "$1"
	return 1
}

# No -b: stdout is a file, so batch mode is implied.
run_proftop exit3 -- "$WL/exitwith" 3
check "status-3" status $RC 3 "$ERR"
check "batch-implied-without-tty" one_final "$OUT"
check "short-run-profiled" between "$(self_pct "$OUT" busy exitwith)" 80 100

run_proftop sigterm -b -- "$WL/exitwith" -15
check "killed-by-SIGTERM-143" status $RC 143 "$ERR"
check "SIGTERM-final-table" one_final "$OUT"

run_proftop sigkill -b -- "$WL/exitwith" -9
check "killed-by-SIGKILL-137" status $RC 137 "$ERR"
check "SIGKILL-final-table" one_final "$OUT"

missing=proftop-no-such-command-$$
run_proftop notfound -b -- "$missing"
check "not-found-127" status $RC 127 "$ERR"
check "not-found-message" cannot_run "$ERR" "$missing"

noexec=$TMPD/not-executable
printf '#!/bin/sh\nexit 0\n' >"$noexec"
chmod 644 "$noexec"
run_proftop noexec -b -- "$noexec"
check "not-executable-126" status $RC 126 "$ERR"
check "not-executable-message" cannot_run "$ERR" "$noexec"
finish
