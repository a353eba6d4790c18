#!/bin/sh
# cli.sh — the command line: --help and --version, usage errors (exit 2, the error and a one-line
# hint on stderr), options from $PROFTOP, and attaching to a process that does not exist (exit 1
# and one message). Only the run with $PROFTOP's options needs perf events.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"

# usage_error TAG ARG... — proftop ARG... is refused as a usage error: exit 2, nothing on stdout,
# and on stderr the error ("proftop: ...") with at most a one-line hint pointing to --help.
usage_error()
{
	local tag
	tag=$1
	shift
	run_proftop "$tag" "$@"
	if [ $RC -ne 2 ]; then
		echo "proftop $*: exit status $RC, want 2"
		head -n 3 "$ERR"
		return 1
	fi
	[ "$(grep -c . "$ERR")" -le 2 ] && head -n 1 "$ERR" | grep -q '^proftop: ' &&
		grep -q -- '--help' "$ERR" && ! [ -s "$OUT" ] && return 0
	echo "proftop $*: want \"proftop: <error>\" and a --help hint (2 lines at most) on stderr, nothing on stdout; stderr:"
	head -n 5 "$ERR"
	[ -s "$OUT" ] && echo "stdout: $(head -c 200 "$OUT")"
	return 1
}

# lists_options FILE OPTION... — each option appears as a word of its own in FILE.
lists_options()
{
	local f o missing
	f=$1
	shift
	missing=""
	for o in "$@"; do
		grep -Eq -- "(^|[^-[:alnum:]])$o([^-[:alnum:]]|\$)" "$f" || missing="$missing $o"
	done
	[ -z "$missing" ] || { echo "--help does not mention:$missing"; return 1; }
}

# with_proftop VALUE CMD... — CMD with PROFTOP=VALUE in proftop's environment (lib.sh unsets it).
with_proftop()
{
	local rc
	PROFTOP=$1
	export PROFTOP
	shift
	"$@"
	rc=$?
	unset PROFTOP
	return $rc
}

# first_error_is LINE — stderr's first line is exactly LINE.
first_error_is()
{
	[ "$(head -n 1 "$ERR")" = "$1" ] && return 0
	echo "stderr: $(head -n 1 "$ERR"), want: $1"
	return 1
}

# no_such_process TAG PID — -p PID for a PID that does not exist: exit 1, one message.
no_such_process()
{
	run_proftop "$1" -b -p "$2" -d 0.5
	[ $RC -eq 1 ] && grep -qx "proftop: no such process: $2" "$ERR" && return 0
	echo "exit status $RC (want 1); stderr (want \"proftop: no such process: $2\"):"
	head -n 5 "$ERR"
	return 1
}

run_proftop help --help
check "help-exit-status-0" status $RC 0 "$ERR"
check "help-lists-options" lists_options "$OUT" -F --freq -d --duration -b --batch -n --interval \
	--max-rows -p -h --help -V --version --kernel
run_proftop help-h -h
check "h-exit-status-0" status $RC 0 "$ERR"

version=$(sed -n 's/^VERSION *:= *//p' Makefile)
run_proftop version --version
check "version-exit-status-0" status $RC 0 "$ERR"
check "version-prints-version" has "$OUT" "proftop.*${version:-[0-9]+\.[0-9]+}"
run_proftop version-V -V
check "V-exit-status-0" status $RC 0 "$ERR"

check "usage-unknown-option" usage_error bogus --no-such-option -- true
check "usage-no-command" usage_error noargs
check "usage-F-0" usage_error F0 -F 0 -- true
check "usage-F-abc" usage_error Fabc -F abc -- true
check "usage-d-negative" usage_error dneg -d -1 -- true
check "usage-p-not-a-number" usage_error pabc -p abc
check "usage-p-without-argument" usage_error pnone -p

# $PROFTOP: options by long name, the command line winning; a bad entry is a usage error naming it.
check "env-usage-bad-value" with_proftop 'freq=x' usage_error env-bad -- true
with_proftop 'freq=x' run_proftop env-bad -- true
check "env-names-entry" first_error_is "proftop: PROFTOP: invalid frequency (1 to 100000 Hz): 'x' in 'freq=x'"
check "env-usage-path" with_proftop "$PROFTOP_BIN" usage_error env-path -- true
with_proftop 'batch=0' run_proftop env-flag -- true
check "env-flag-value" first_error_is "proftop: PROFTOP: invalid flag value (none, 1 or yes): '0' in 'batch=0'"
with_proftop 'frq=1' run_proftop env-help --help
check "env-bad-help-still-works" status $RC 0 "$ERR"
if ! perf_events_ok; then
	skip "env-run" "perf events unavailable: $PERF_EVENTS_WHY"
elif ! [ -x "$WL/split" ]; then
	skip "env-run" "no $WL/split (make builds the workloads)"
else
	with_proftop "freq=499:batch:output=$TMPD/env\\:run.folded" run_proftop env-run -n 0 -- "$WL/split" 0.5
	check "env-run-exit-0" status $RC 0 "$ERR"
	check "env-run-freq" approx "$(header_value "$OUT" freq)" 499 0
	check "env-run-output-escaped" has "$TMPD/env:run.folded" 'burn_a'
	with_proftop 'freq=499' run_proftop env-cli-wins -F 199 -n 0 -- "$WL/split" 0.2
	check "env-cli-wins" approx "$(header_value "$OUT" freq)" 199 0
fi

# What was typed comes back visible, in caret notation: an escape sequence in a value, in an
# option's name or in $PROFTOP shows in the message rather than acting on the terminal.
# only_text FILE — FILE holds printable ASCII and line ends, no control character.
only_text()
{
	local n
	n=$(LC_ALL=C tr -d '\n\040-\176' <"$1" | wc -c)
	[ "$n" -eq 0 ] && return 0
	echo "$n other bytes in: $(od -c "$1" | head -n 4)"
	return 1
}
esc=$(printf '\033')
bel=$(printf '\007')
run_proftop esc-pid -p "1$esc[2J"
check "escape-in-value-shown" first_error_is "proftop: invalid PID: '1^[[2J'"
check "escape-in-value-text-only" only_text "$ERR"
run_proftop esc-name "--fr$esc]0;title$bel" -- true
check "escape-in-name-shown" first_error_is "proftop: unknown or incomplete option '--fr^[]0;title^G'"
check "escape-in-name-text-only" only_text "$ERR"
with_proftop "freq=$esc[31mX" run_proftop esc-env -- true
check "escape-in-env-shown" first_error_is "proftop: PROFTOP: invalid frequency (1 to 100000 Hz): '^[[31mX' in 'freq=^[[31mX'"
check "escape-in-env-text-only" only_text "$ERR"

# No pid can be this large (pid_max is at most 2^22); the second pid existed a moment ago.
check "missing-pid-huge" no_such_process pid-huge 999999999
sh -c 'exit 0' &
gone=$!
wait $gone
check "missing-pid-exited" no_such_process pid-exited $gone
finish
