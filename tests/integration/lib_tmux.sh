# lib_tmux.sh — sourced after lib.sh by the scripts that drive the interactive screen like a user
# would: the real binary in a tmux pane of a fixed size (its own server, killed at exit), keys sent
# with send-keys, the screen read back with capture-pane, the pane's terminal modes after proftop
# ended. Skips the whole script when tmux is missing. Every wait is bounded; each pane runs
# proftop under timeout(1) too.
if ! command -v tmux >/dev/null 2>&1; then
	skip "all" "tmux is not installed"
	finish
fi
require_perf_events

SOCK=proftop-test-$$
LIMIT=${PROFTOP_TIMEOUT:-60}
# Sanitizer builds start slower.
WAIT=${PROFTOP_TUI_WAIT:-15}

tm()
{
	tmux -L "$SOCK" -f /dev/null "$@"
}
trap 'tm kill-server >/dev/null 2>&1; lib_cleanup' EXIT

# pane NAME COLS LINES ARG... — run proftop ARG... in a new tmux session NAME of that size. When
# proftop ends, its exit status goes to $TMPD/NAME.status and the terminal modes to NAME.stty;
# the pane then stays (sleeping) so its screen can still be read. stderr goes to NAME.err.
pane()
{
	local name cols lines script
	name=$1 cols=$2 lines=$3
	shift 3
	script=$TMPD/$name.sh
	{
		echo "cd '$ROOT'"
		# Ctrl-C and Ctrl-\ reach the whole foreground group: this shell must outlive them (a
		# handler, not SIG_IGN, which proftop and the command would inherit).
		echo "trap : INT QUIT"
		printf "timeout --foreground -k 5 %s '%s'" "$LIMIT" "$PROFTOP_BIN"
		for a in "$@"; do printf " '%s'" "$a"; done
		echo " 2>'$TMPD/$name.err'"
		echo "echo \$? >'$TMPD/$name.status.tmp'"
		echo "stty -a >'$TMPD/$name.stty' 2>&1"
		echo "mv '$TMPD/$name.status.tmp' '$TMPD/$name.status'"
		echo "exec sleep $LIMIT"
	} >"$script"
	tm new-session -d -s "$name" -x "$cols" -y "$lines" "sh '$script'"
}

screen()
{
	tm capture-pane -p -t "$1"
}

# wait_screen NAME ERE [SECONDS] — until some line of the screen matches; prints it on failure.
wait_screen()
{
	local i limit
	limit=$((${3:-$WAIT} * 5))
	i=0
	while [ $i -lt $limit ]; do
		screen "$1" | grep -Eq -- "$2" && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "no line matches /$2/ after ${3:-$WAIT}s; the screen:"
	screen "$1" | sed '/^ *$/d' | head -n 20
	return 1
}

# wait_gone NAME ERE — until no line matches.
wait_gone()
{
	local i
	i=0
	while [ $i -lt $((WAIT * 5)) ]; do
		screen "$1" | grep -Eq -- "$2" || return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "a line still matches /$2/; the screen:"
	screen "$1" | sed '/^ *$/d' | head -n 20
	return 1
}

# ended NAME [SECONDS] — proftop in pane NAME has exited.
ended()
{
	local i
	i=0
	while [ $i -lt $((${2:-$WAIT} * 5)) ]; do
		[ -e "$TMPD/$1.status" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "proftop still running after ${2:-$WAIT}s; the screen:"
	screen "$1" | sed '/^ *$/d' | head -n 20
	return 1
}

exit_status()
{
	status "$(cat "$TMPD/$1.status" 2>/dev/null || echo -1)" "$2" "$TMPD/$1.err"
}

# restored NAME — the pane left the alternate screen, and the tty is back in canonical mode
# with echo.
restored()
{
	local alt
	alt=$(tm display -p -t "$1" '#{alternate_on}')
	[ "$alt" = 0 ] || { echo "the pane is still on the alternate screen"; return 1; }
	grep -Eq '(^| )icanon( |$)' "$TMPD/$1.stty" && grep -Eq '(^| )echo( |$)' "$TMPD/$1.stty" &&
		return 0
	echo "terminal modes not restored:"
	cat "$TMPD/$1.stty"
	return 1
}

# line NAME N — line N (from 1) of the screen.
line()
{
	screen "$1" | sed -n "${2}p"
}

line_has()
{
	line "$1" "$2" | grep -Eq -- "$3" && return 0
	echo "line $2 does not match /$3/; it is: $(line "$1" "$2")"
	return 1
}

no_sanitizer_report()
{
	! grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$TMPD/$1.err" && return 0
	grep -E -A12 'ERROR: |runtime error:' "$TMPD/$1.err"
	return 1
}

# proftop_pid NAME — proftop's pid in pane NAME (the pane runs sh → timeout → proftop).
proftop_pid()
{
	local sh to
	sh=$(tm display -p -t "$1" '#{pane_pid}')
	to=$(ps -o pid= --ppid "$sh" | head -n 1 | tr -d ' ')
	ps -o pid= --ppid "$to" | head -n 1 | tr -d ' '
}
