#!/bin/sh
# hostile_io.sh — files that are not what proftop expects, through the real binary: /dev/zero
# and endless input as a tmon.out (an error at once, not a read of everything), a FIFO as -i, as
# a theme and as -o (with no reader, with one, with one that stops reading), -o checked before
# profiling starts, -o - on a terminal (script(1) gives one), a full device, and the temporary
# files a killed write leaves behind. No perf events needed: nothing here reaches profiling.
#
# Every run is bounded by timeout(1); a run that hangs is a failure (run_proftop records it, and
# its exit status is then the wrong one).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
PROFTOP_TIMEOUT=${PROFTOP_TIMEOUT:-30}
LIMIT=$PROFTOP_TIMEOUT

# A saved profile: main → work 300 ticks, main 50, at 1000 Hz.
T=$TMPD/saved.tmon
cat >"$T" <<'EOF'
#fOrTyTwO
$hz=1000;
$rrun_utime=350; $rrun_stime=0; $rrun_rtime=350;
PART2
& 1 prog main
+ 1
@ 50 0 50
& 2 prog work
+ 2
@ 300 0 300
- 2
- 1
EOF
# 5000 functions: a snapshot larger than a pipe holds.
BIG=$TMPD/big.tmon
perl -e 'print "#fOrTyTwO\n\$hz=100;\n\$rrun_utime=5000;\nPART2\n";
	 for $i (1 .. 5000) { print "& $i prog function_number_$i\n+ $i\n\@ 1 0 1\n- $i\n" }' >"$BIG"

# --- input: read a line at a time, the magic first ----------------------------------------------
run_proftop report-zero report /dev/zero
check "report-dev-zero-exit-1" status $RC 1 "$ERR"
check "report-dev-zero-message" has "$ERR" \
	'^proftop report: /dev/zero: line 1: not a tmon\.out file \(the first line is not #fOrTyTwO\)$'
run_proftop input-zero -b -i /dev/zero
check "input-dev-zero-exit-1" status $RC 1 "$ERR"
check "input-dev-zero-message" has "$ERR" '^proftop: /dev/zero: line 1: not a tmon\.out file'

run_proftop report-empty-name report ""
check "report-empty-name-exit-1" status $RC 1 "$ERR"
check "report-empty-name-message" has "$ERR" \
	"^proftop report: invalid input file '': give a file name, or - for standard input\$"

# A good header, then zeros without end: the line cap ends it.
endless()
{
	{ printf '#fOrTyTwO\n$hz=100;\n'; cat /dev/zero; } |
		timeout -k 5 "$LIMIT" "$PROFTOP_BIN" "$@" >"$TMPD/endless.out" 2>"$TMPD/endless.err"
}
endless report -
check "report-endless-line-exit-1" status $? 1 "$TMPD/endless.err"
check "report-endless-line-message" has "$TMPD/endless.err" \
	'^proftop report: standard input: line 3: longer than 1048576 bytes: not a tmon\.out line$'
endless -b -i -
check "input-endless-line-exit-1" status $? 1 "$TMPD/endless.err"
check "input-endless-line-message" has "$TMPD/endless.err" '^proftop: standard input: line 3: longer than'

# -i of a FIFO nobody writes to waits, as a reader should, but SIGTERM ends it.
mkfifo "$TMPD/in.fifo"
timeout --preserve-status -k 5 -s TERM 1 "$PROFTOP_BIN" -b -i "$TMPD/in.fifo" \
	>"$TMPD/in-fifo.out" 2>"$TMPD/in-fifo.err" </dev/null
check "input-fifo-sigterm-ends-it" status $? 143 "$TMPD/in-fifo.err"

# --- -o checked before profiling starts ----------------------------------------------------------
# The command would leave a mark if it ran: it must not.
run_proftop missing-dir -b -o "$TMPD/missing/cpu.folded" -- sh -c "touch '$TMPD/ran'"
check "missing-dir-exit-1" status $RC 1 "$ERR"
check "missing-dir-message" has "$ERR" \
	"^proftop: cannot write $TMPD/missing/cpu\\.folded: cannot create a file in $TMPD/missing: No such file or directory\$"
check "missing-dir-before-profiling" sh -c "! [ -e '$TMPD/ran' ]"
run_proftop dir-target -b -o "$TMPD" -- sh -c "touch '$TMPD/ran'"
check "dir-target-exit-1" status $RC 1 "$ERR"
check "dir-target-message" has "$ERR" "^proftop: cannot write $TMPD: Is a directory\$"
check "dir-target-before-profiling" sh -c "! [ -e '$TMPD/ran' ]"
# A directory this user may not write to: root writes anywhere, so proftop runs as nobody.
mkdir -m 0555 "$TMPD/ro"
mkdir -m 0777 "$TMPD/mark"
chmod 0711 "$TMPD"
if ! setpriv --reuid=65534 --regid=65534 --clear-groups "$PROFTOP_BIN" --version >/dev/null 2>&1; then
	skip "unwritable-dir" "cannot run $PROFTOP_BIN as nobody (setpriv, or its directory's mode)"
else
	timeout -k 5 "$LIMIT" setpriv --reuid=65534 --regid=65534 --clear-groups "$PROFTOP_BIN" \
		-b -o "$TMPD/ro/cpu.folded" -- sh -c "touch '$TMPD/mark/ran'" \
		>"$TMPD/ro.out" 2>"$TMPD/ro.err" </dev/null
	check "unwritable-dir-exit-1" status $? 1 "$TMPD/ro.err"
	check "unwritable-dir-message" has "$TMPD/ro.err" \
		"^proftop: cannot write $TMPD/ro/cpu\\.folded: cannot create a file in $TMPD/ro: Permission denied\$"
	check "unwritable-dir-before-profiling" sh -c "! [ -e '$TMPD/mark/ran' ]"
fi
run_proftop empty-output -b -o "" -- sh -c "touch '$TMPD/ran'"
check "empty-output-exit-2" status $RC 2 "$ERR"
check "empty-output-message" has "$ERR" "^proftop: invalid output file '': give a file name, or - for standard output\$"
check "empty-output-before-profiling" sh -c "! [ -e '$TMPD/ran' ]"

# --- -o FIFO --------------------------------------------------------------------------------------
FIFO=$TMPD/out.fifo
mkfifo "$FIFO"
run_proftop fifo-no-reader -i "$T" -o "$FIFO" -f folded
check "fifo-no-reader-exit-1" status $RC 1 "$ERR"
check "fifo-no-reader-message" has "$ERR" \
	"^proftop: cannot write $FIFO: it is a FIFO that no process has open for reading\$"

# A reader: this shell holds the FIFO open (read-write, which never waits) so that cat's open
# and proftop's find each other in any order; cat sees the end once the shell lets go. Neither
# gets the shell's descriptor (cat would never see the end, proftop would be its own reader).
exec 3<>"$FIFO"
cat "$FIFO" >"$TMPD/fifo.got" 3>&- &
cat_pid=$!
BG_PIDS="$BG_PIDS $cat_pid"
run_proftop fifo-reader -i "$T" -o "$FIFO" -f folded 3>&-
exec 3>&-
timeout 10 sh -c "while kill -0 $cat_pid 2>/dev/null; do sleep 0.1; done"
check "fifo-reader-exit-0" status $RC 0 "$ERR"
check "fifo-reader-got-it" sh -c "printf 'main 50\nmain;work 300\n' | cmp - '$TMPD/fifo.got'"

# hold FIFO|FD READY [HOLDING]: a reader that holds a FIFO (or the pipe open at descriptor FD)
# with room for 4 KiB and never reads; HOLDING appears once it holds it, READY once something
# has arrived. It runs in the background ($! is its pid) until killed, or until the shell that
# started it ends, however that ends: the kernel kills it then (PR_SET_PDEATHSIG), so no holder
# outlives its test, even one whose parent lib_cleanup cannot name.
hold()
{
	python3 - "$1" "$2" "${3:-}" <<'PY' &
import array, ctypes, fcntl, os, signal, sys, termios, time
parent = os.getppid()
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != parent:  # the parent ended before the prctl
    sys.exit(1)
fd = int(sys.argv[1]) if sys.argv[1].isdigit() else os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ; EBUSY when more than that is in already
except OSError:
    pass
if sys.argv[3]:
    open(sys.argv[3], "w").close()
while True:
    n = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, n)
    if n[0] > 0:
        break
    time.sleep(0.05)
open(sys.argv[2], "w").close()
while True:
    signal.pause()
PY
}

# stop PID... — end background helpers now and reap them (lib_cleanup would only at the end).
stop()
{
	kill -9 "$@" 2>/dev/null
	wait "$@" 2>/dev/null
}

# A reader that stops reading: a helper holds the FIFO open and never reads; once the snapshot
# has started to arrive (proftop then waits for room with its signals blocked), SIGTERM must end
# proftop with an error that says what happened.
hold "$FIFO" "$TMPD/stuck.started" "$TMPD/stuck.holding"
stuck_holder=$!
BG_PIDS="$BG_PIDS $stuck_holder"
timeout "$LIMIT" sh -c "until [ -e '$TMPD/stuck.holding' ]; do sleep 0.1; done"
timeout -k 5 "$LIMIT" "$PROFTOP_BIN" -i "$BIG" -o "$FIFO" >"$TMPD/stuck.out" 2>"$TMPD/stuck.err" </dev/null &
stuck_pid=$!
timeout "$LIMIT" sh -c "until [ -e '$TMPD/stuck.started' ]; do sleep 0.1; done"
kill -TERM $stuck_pid # timeout(1) hands it on to proftop
wait $stuck_pid
check "fifo-stuck-reader-sigterm-exit-1" status $? 1 "$TMPD/stuck.err"
check "fifo-stuck-reader-message" has "$TMPD/stuck.err" \
	"^proftop: cannot write $FIFO: interrupted by SIGTERM while waiting to write: only [0-9]+ bytes of the snapshot went in\$"
stop $stuck_holder


# Profiling ended by one SIGTERM, which the session has read; the snapshot then goes to a FIFO
# whose reader takes nothing. No second signal comes: proftop gives up after a stall of 5 s.
LIVE_FIFO=$TMPD/live.fifo
mkfifo "$LIVE_FIFO"
hold "$LIVE_FIFO" "$TMPD/live.started" "$TMPD/live.holding"
live_holder=$!
BG_PIDS="$BG_PIDS $live_holder"
# proftop checks for a reader before profiling: the holder must have the FIFO open by then.
timeout "$LIMIT" sh -c "until [ -e '$TMPD/live.holding' ]; do sleep 0.1; done"
# (timeout's -k counts from the signal: longer than the stall.)
timeout -k 20 "$LIMIT" "$PROFTOP_BIN" -b -n 0 -f folded -o "$LIVE_FIFO" -- \
	"$BUILD_DIR/workloads/randtree" 60 >/dev/null 2>"$TMPD/live.err" </dev/null &
live_pid=$!
sleep 2
pkill -TERM -P $live_pid # proftop alone: timeout(1) would also signal its process group
wait $live_pid
check "fifo-stalled-after-signal-exit-1" status $? 1 "$TMPD/live.err"
check "fifo-stalled-after-signal-message" has "$TMPD/live.err" \
	"^proftop: cannot write $LIVE_FIFO: its reader took nothing for 5 s after profiling ended: only [0-9]+ bytes of the snapshot went in\$"
stop $live_holder

# Batch tables into a pipe whose reader takes nothing: SIGTERM still ends proftop (with the
# command's status, not by the clock), and the -o snapshot is written. The holder is a child of the
# pipeline's last part ($!), and ends with it.
( timeout -k 5 "$LIMIT" "$PROFTOP_BIN" -b -n 0.05 -o "$TMPD/tables.tmon" -- \
	"$BUILD_DIR/workloads/randtree" 60 2>"$TMPD/tables.err" </dev/null &
	echo $! >"$TMPD/tables.timeout"; wait $!; echo $? >"$TMPD/tables.status" ) |
	{ hold 3 "$TMPD/tables.started" 3<&0; wait; } &
tables_reader=$!
BG_PIDS="$BG_PIDS $tables_reader"
timeout "$LIMIT" sh -c "until [ -e '$TMPD/tables.started' ]; do sleep 0.1; done"
sleep 1 # the pipe fills
pkill -TERM -P "$(cat "$TMPD/tables.timeout")"
timeout "$LIMIT" sh -c "until [ -e '$TMPD/tables.status' ]; do sleep 0.1; done"
check "stalled-tables-sigterm-status" status "$(cat "$TMPD/tables.status")" 143 "$TMPD/tables.err"
check "stalled-tables-snapshot-written" has "$TMPD/tables.tmon" '^#fOrTyTwO$'
check "stalled-tables-no-error" sh -c "! grep -v 'no symbols' '$TMPD/tables.err'"
stop $tables_reader

# --- a full device ----------------------------------------------------------------------------------
for format in tmon pprof; do
	run_proftop "full-$format" -i "$T" -o /dev/full -f $format
	check "dev-full-$format-exit-1" status $RC 1 "$ERR"
	check "dev-full-$format-message" has "$ERR" '^proftop: cannot write /dev/full: writing: No space left on device$'
done

# --- temporary files a killed write left ------------------------------------------------------------
# .NAME.PID.XXXXXX.tmp: the next write of NAME removes those of a PID that is gone and not written
# to for ten minutes (here: an hour ago), or old ones with no PID in the name; it keeps a dead
# PID's written a moment ago, a live PID's (this shell's), and anything else.
mkdir "$TMPD/stale"
sh -c 'exit 0' &
dead=$!
wait $dead
for f in ".tmon.out.$dead.0a1b2c.tmp" ".tmon.out.0a1b2c.tmp" ".tmon.out.$$.0a1b2c.tmp" \
	 ".tmon.out.1.$dead.0a1b2c.tmp" ".tmon.out.$dead.0a1b2c.tmp.keep" "tmon.out.$dead.0a1b2c.tmp"; do
	echo partial >"$TMPD/stale/$f"
	touch -d '1 hour ago' "$TMPD/stale/$f"
done
echo partial >"$TMPD/stale/.tmon.out.$dead.3d4e5f.tmp"
run_proftop stale -i "$T" -o "$TMPD/stale/tmon.out"
check "stale-exit-0" status $RC 0 "$ERR"
check "stale-dead-pid-removed" sh -c "! [ -e '$TMPD/stale/.tmon.out.$dead.0a1b2c.tmp' ]"
check "stale-no-pid-removed" sh -c "! [ -e '$TMPD/stale/.tmon.out.0a1b2c.tmp' ]"
check "stale-fresh-kept" sh -c "[ -e '$TMPD/stale/.tmon.out.$dead.3d4e5f.tmp' ]"
check "stale-live-pid-kept" sh -c "[ -e '$TMPD/stale/.tmon.out.$$.0a1b2c.tmp' ]"
check "stale-others-kept" sh -c "[ \$(ls -A '$TMPD/stale' | wc -l) -eq 6 ]"
check "stale-written" has "$TMPD/stale/tmon.out" '^& [0-9]+ prog work$'
# The check before profiling clears them too (the final write may never come).
echo partial >"$TMPD/stale/.cpu.folded.$dead.abcdef.tmp"
touch -d '1 hour ago' "$TMPD/stale/.cpu.folded.$dead.abcdef.tmp"
run_proftop stale-check -b -o "$TMPD/stale/cpu.folded" -- "$TMPD/no-such-command"
check "stale-check-removed" sh -c "! [ -e '$TMPD/stale/.cpu.folded.$dead.abcdef.tmp' ]"

# --- -o - on a terminal ----------------------------------------------------------------------------
# script(1) runs proftop on a pseudo-terminal; its exit status is proftop's.
on_terminal()
{
	local tag
	tag=$1
	shift
	TERM=xterm timeout -k 5 "$LIMIT" script -qec "$*" /dev/null >"$TMPD/$tag.out" 2>&1 </dev/null
}
if ! script -qec true /dev/null >/dev/null 2>&1 </dev/null; then
	skip "terminal" "script(1) cannot make a pseudo-terminal here"
else
	on_terminal tty-screen "'$PROFTOP_BIN' -o - -- sh -c \"touch '$TMPD/ran'\""
	check "tty-screen-exit-1" status $? 1 "$TMPD/tty-screen.out"
	check "tty-screen-message" has "$TMPD/tty-screen.out" \
		'^proftop: -o - would write the snapshot onto the terminal the screen uses: give -o a file name, redirect standard output, or add -b'
	check "tty-screen-before-profiling" sh -c "! [ -e '$TMPD/ran' ]"
	on_terminal tty-pprof "'$PROFTOP_BIN' -b -o - -f pprof -- sh -c \"touch '$TMPD/ran'\""
	check "tty-pprof-exit-1" status $? 1 "$TMPD/tty-pprof.out"
	check "tty-pprof-message" has "$TMPD/tty-pprof.out" \
		'^proftop: -o -: a pprof snapshot is binary, and standard output is a terminal'
	check "tty-pprof-before-profiling" sh -c "! [ -e '$TMPD/ran' ]"
	on_terminal tty-convert-pprof "'$PROFTOP_BIN' -i '$T' -o - -f pprof"
	check "tty-convert-pprof-exit-1" status $? 1 "$TMPD/tty-convert-pprof.out"
	on_terminal tty-folded "'$PROFTOP_BIN' -i '$T' -o - -f folded"
	check "tty-folded-exit-0" status $? 0 "$TMPD/tty-folded.out"
	check "tty-folded-text" has "$TMPD/tty-folded.out" '^main;work 300'
fi

# --- a theme that is a FIFO, on the screen ---------------------------------------------------------
if ! command -v tmux >/dev/null 2>&1; then
	skip "theme-fifo" "tmux is not installed"
else
	SOCK=proftop-hostile-$$
	mkfifo "$TMPD/fifo.theme"
	trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; lib_cleanup' EXIT
	tmux -L "$SOCK" -f /dev/null new-session -d -s theme -x 120 -y 30 \
		"timeout --foreground -k 5 $LIMIT '$PROFTOP_BIN' -i '$T' -t '$TMPD/fifo.theme' 2>'$TMPD/theme.err'; echo \$? >'$TMPD/theme.status'; exec sleep $LIMIT"
	theme_screen()
	{
		i=0
		while [ $i -lt $((LIMIT * 5)) ]; do
			tmux -L "$SOCK" capture-pane -p -t theme | grep -Eq -- "$1" && return 0
			sleep 0.2
			i=$((i + 1))
		done
		echo "no line matches /$1/; the screen:"
		tmux -L "$SOCK" capture-pane -p -t theme | sed '/^ *$/d' | head -n 20
		return 1
	}
	check "theme-fifo-screen-starts" theme_screen ' work '
	check "theme-fifo-says-why" theme_screen 'fifo\.theme: not a regular file'
	tmux -L "$SOCK" send-keys -t theme q
	check "theme-fifo-q-ends" timeout "$LIMIT" sh -c "until [ -s '$TMPD/theme.status' ]; do sleep 0.2; done"
	check "theme-fifo-exit-0" status "$(cat "$TMPD/theme.status" 2>/dev/null || echo -1)" 0 "$TMPD/theme.err"
	check "theme-fifo-on-stderr" has "$TMPD/theme.err" \
		"^proftop: theme: $TMPD/fifo\\.theme: not a regular file; using the default theme\$"
	tmux -L "$SOCK" kill-server >/dev/null 2>&1
fi
# --- -o - onto a terminal nobody reads ------------------------------------------------------------
# A pseudo-terminal whose other side is never read, as when a remote terminal's connection
# stalls: once it is full, proftop must wait for room in poll() (syscall 7), not in a write()
# (1) it started when there was a little room, which would hold it with its signals blocked.
# SIGTERM must end it, with an error that says so. The helper prints proftop's exit status, or
# "hang" (after killing it) when SIGTERM did not end it.
python3 - "$LIMIT" "$TMPD/unread.err" "$PROFTOP_BIN" -b -i "$BIG" -o - -f folded \
	>"$TMPD/unread.status" 2>&1 <<'PY'
import os, pty, signal, sys, time
limit, err, argv = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.dup2(slave, 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
    os.execv(argv[0], argv)
os.close(slave)
def waiting():
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] in ("1", "7")
    except (OSError, IndexError):
        return False
deadline = time.monotonic() + limit
while not waiting() and time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
    time.sleep(0.05)
os.kill(pid, signal.SIGTERM)
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print(os.waitstatus_to_exitcode(status))
        sys.exit(0)
    time.sleep(0.05)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("hang")
PY
check "tty-unread-sigterm-exit-1" status "$(cat "$TMPD/unread.status")" 1 "$TMPD/unread.err"
check "tty-unread-message" has "$TMPD/unread.err" \
	'^proftop: cannot write standard output: interrupted by SIGTERM while waiting to write: only [0-9]+ bytes of the snapshot went in$'

# --- nothing left behind ----------------------------------------------------------------------------
# Every helper this script started has ended by now: none may sleep on after the suite. (Each
# one's command line names a file in $TMPD.)
# leftovers — the processes but this shell whose command line names $TMPD.
leftovers()
{
	local p line found
	found=0
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		line=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)
		case $line in
		*"$TMPD/"*) echo "pid ${p#/proc/}: $line"; found=1 ;;
		esac
	done
	[ $found = 0 ]
}
check "no-helper-left" leftovers
finish
