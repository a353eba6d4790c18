#!/bin/sh
# permissions.sh — what the kernel refuses becomes advice: an unprivileged user attaching to a
# root process gets a one-line explanation naming perf_event_paranoid and CAP_PERFMON, exit 1;
# --mode offcpu at paranoid 2 names the setting to change, and CPU mode still works.
#
# And root shows nothing another user's program points it at that the user could not read: a
# program of nobody's whose debug information (#line) names a file only root may read (mode 640,
# group root, so root's own groups must not open it either) gets its lines counted but not that
# text, under -a and -p, in batch --annotate and in the screen's Lines view, also when a root
# process becomes that program (setuid, then exec, as su does); a file nobody may read is shown,
# and so is the root-only file for root's own run of the same program. A theme
# file (-t) that is not one is named with the position of what is wrong, not its content.
. "$(dirname "$0")/lib.sh"
require_perf_events

if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v su >/dev/null; then
	skip attach-other-user "needs root, the user nobody and su"
	finish
fi
need "$WL/spin" || finish
dir=$(mktemp -d /var/tmp/proftop-it-perm.XXXXXX) && chmod 755 "$dir" && cp "$PROFTOP_BIN" "$dir/proftop" &&
    chmod 755 "$dir/proftop" || { fail attach-other-user "cannot stage a copy for nobody"; finish; }
if ! su nobody -s /bin/sh -c "'$dir/proftop' --version" >/dev/null 2>&1; then
	skip attach-other-user "nobody cannot run a binary here"
	rm -rf "$dir"
	finish
fi
start_spin 30
su nobody -s /bin/sh -c "'$dir/proftop' -b -d 0.5 -p $SPIN_PID" >"$TMPD/perm.out" 2>"$TMPD/perm.err" </dev/null
rc=$?
check attach-other-user-exit-1 status "$rc" 1
check attach-other-user-advice has "$TMPD/perm.err" '^proftop: .*(perf_event_paranoid|CAP_PERFMON)'
check attach-other-user-one-line awk 'END { if (NR == 1) exit 0; print NR " lines"; exit 1 }' "$TMPD/perm.err"
check target-still-running kill -0 "$SPIN_PID"

# Off-CPU mode samples context switches, in the kernel: refused at paranoid 2, with the setting
# to change; CPU mode still works for the same user.
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	su nobody -s /bin/sh -c "'$dir/proftop' -b -n 0 --mode offcpu -- /bin/sleep 0.2" \
		>"$TMPD/offcpu.out" 2>"$TMPD/offcpu.err" </dev/null
	check offcpu-refused-exit-1 status "$?" 1 "$TMPD/offcpu.err"
	check offcpu-says-the-setting has "$TMPD/offcpu.err" \
		'^proftop: .*perf_event_paranoid is [2-9].*--mode offcpu.*sysctl -w kernel\.perf_event_paranoid=1.*--mode cpu works'
	check offcpu-one-line awk 'END { if (NR == 1) exit 0; print NR " lines"; exit 1 }' \
		"$TMPD/offcpu.err"
	su nobody -s /bin/sh -c "'$dir/proftop' -b -n 0 -- /bin/sleep 0.2" \
		>"$TMPD/cpu.out" 2>"$TMPD/cpu.err" </dev/null
	check cpu-mode-still-works status "$?" 0 "$TMPD/cpu.err"
else
	skip offcpu-refused "perf_event_paranoid is below 2 here"
fi

# --- source files are read as the process's user could -----------------------------------------
SRC=$ROOT/tests/workloads
HOT=$(grep -n '/\* hot line \*/' "$SRC/lines.c" | cut -d: -f1)
seq 1 60 | sed 's/^/SECRET-TEXT-/' >"$dir/secret.txt"
seq 1 60 | sed 's/^/OPEN-TEXT-/' >"$dir/open.txt"
chown root:root "$dir/secret.txt"
chmod 640 "$dir/secret.txt"
chmod 644 "$dir/open.txt"
cp "$SRC/burn.h" "$dir/"
for which in secret open; do
	{ echo "#line 1 \"$dir/$which.txt\""; cat "$SRC/lines.c"; } >"$dir/sl-$which.c"
	${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$dir/sl-$which" "$dir/sl-$which.c" \
		2>"$TMPD/cc-$which.err" || { fail "build-sl-$which" "$(cat "$TMPD/cc-$which.err")"; finish; }
done
# as_nobody PROGRAM ARG... — PROGRAM run as nobody in the background, its pid in AS_PID (setpriv
# execs it: the pid is the program's).
as_nobody()
{
	setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@" >/dev/null 2>&1 &
	AS_PID=$!
	BG_PIDS="$BG_PIDS $AS_PID"
	sleep 0.3
}

if ! command -v setpriv >/dev/null; then
	fail "sources-setup" "setpriv (util-linux) is missing: make deps installs it"
	finish
fi
as_nobody "$dir/sl-secret" 30
run_proftop src-all -a -b -n 0 -d 1.5 --annotate two_lines
check "source-all-exit-0" status "$RC" 0 "$ERR"
check "source-all-annotated" has "$OUT" "^ +[0-9.]+ +[0-9.]+ +[0-9]+  secret\\.txt:$HOT"
check "source-all-not-shown" sh -c "! grep -n 'SECRET-TEXT' '$OUT'"
check "source-all-says-why" has "$OUT" \
	"^file $dir/secret\\.txt  \\(text not shown: cannot be opened by its process's user \\(uid $(id -u nobody)\\): Permission denied\\)\$"
run_proftop src-pid -b -n 0 -d 1 -p "$AS_PID" --annotate two_lines
check "source-pid-exit-0" status "$RC" 0 "$ERR"
check "source-pid-annotated" has "$OUT" "secret\\.txt:$HOT"
check "source-pid-not-shown" sh -c "! grep -n 'SECRET-TEXT' '$OUT'"
kill "$AS_PID" 2>/dev/null

# What nobody may read is shown; the root-only file is, to root for root's own process.
as_nobody "$dir/sl-open" 30
run_proftop src-open -b -n 0 -d 1 -p "$AS_PID" --annotate two_lines
check "source-readable-shown" has "$OUT" "open\\.txt:$HOT  OPEN-TEXT-$HOT\$"
kill "$AS_PID" 2>/dev/null
run_proftop src-root -b -n 0 --annotate two_lines -- "$dir/sl-secret" 0.5
check "source-own-process-shown" has "$OUT" "secret\\.txt:$HOT  SECRET-TEXT-$HOT\$"

# A root process that becomes nobody's program (as su does: setuid, then exec) is read as nobody
# from then on: who runs a process is looked for again after an exec. Its root part (a shell's
# loop, about a second) is sampled first: proftop is up before it starts.
timeout -k 5 "${PROFTOP_TIMEOUT:-60}" "$PROFTOP_BIN" -a -b -n 1 --annotate two_lines \
	>"$TMPD/src-exec.out" 2>"$TMPD/src-exec.err" </dev/null &
pt=$!
i=0
while [ $i -lt 300 ] && ! grep -q '^--- proftop' "$TMPD/src-exec.out"; do
	sleep 0.1
	i=$((i + 1))
done
sh -c 'i=0; while [ $i -lt 500000 ]; do i=$((i + 1)); done
	exec setpriv --reuid="$1" --regid="$2" --clear-groups "$0" 2' "$dir/sl-secret" \
	"$(id -u nobody)" "$(id -g nobody)" &
exec_pid=$!
BG_PIDS="$BG_PIDS $exec_pid"
wait "$exec_pid"
kill -INT "$pt"
wait "$pt"
check "source-after-exec-exit-0" status "$?" 0 "$TMPD/src-exec.err"
check "source-after-exec-root-part-sampled" has "$TMPD/src-exec.out" '^ +[0-9.]+ +[0-9.]+ +[0-9]+  .*  (dash|bash|sh)$'
check "source-after-exec-annotated" has "$TMPD/src-exec.out" "secret\\.txt:$HOT"
check "source-after-exec-not-shown" sh -c "! grep -n 'SECRET-TEXT' '$TMPD/src-exec.out'"

# --- the screen -----------------------------------------------------------------------------------
. "$(dirname "$0")/lib_tmux.sh"
as_nobody "$dir/sl-secret" 60
pane srcs 140 30 -a -t mono
check "screen-top-rows" wait_screen srcs ' two_lines +sl-secret'
tm send-keys -t srcs / t w o _ l i n e s Enter
check "screen-filtered" wait_screen srcs 'filter: two_lines'
tm send-keys -t srcs a
check "screen-lines-view" wait_screen srcs ' lines of two_lines'
check "screen-lines-why" wait_screen srcs \
	"secret\\.txt:$HOT +\\(source cannot be opened by its process's user \\(uid $(id -u nobody)\\)"
check "screen-lines-not-shown" sh -c "! tmux -L '$SOCK' capture-pane -p -t srcs | grep -n SECRET-TEXT"
tm send-keys -t srcs q
check "screen-quit" ended srcs
kill "$AS_PID" 2>/dev/null

# A file that is not a theme (root's /etc/shadow, say): where, not what.
printf 'root:$y$j9T$notforyoureyes:19000:0:99999:7:::\n' >"$dir/shadowlike"
pane badtheme 120 30 -t "$dir/shadowlike" -- "$WL/spin" 30
check "theme-error-position" wait_screen badtheme 'shadowlike:1:1: unknown role'
tm send-keys -t badtheme q
check "theme-quit" ended badtheme
check "theme-error-on-stderr" has "$TMPD/badtheme.err" '^proftop: theme: .*/shadowlike:1:1: unknown role; using the default theme$'
check "theme-content-not-shown" sh -c "! grep -n notforyoureyes '$TMPD/badtheme.err'"
rm -rf "$dir"
finish
