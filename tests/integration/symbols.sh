#!/bin/sh
# symbols.sh — names for what a real process maps besides its own ELF file: a library loaded
# with dlopen() while it runs (known only from the kernel's MMAP2 record), JIT code described by
# /tmp/perf-PID.map (trusted only when the target's user owns it), the vdso.
. "$(dirname "$0")/lib.sh"
require_perf_events
need "$WL/dlopener" "$WL/jit" || finish

# has_once FILE ERE — exactly one line of FILE matches ERE.
has_once()
{
	[ "$(grep -Ec -- "$2" "$1")" -eq 1 ] && return 0
	echo "want one line matching /$2/ in $1:"
	head -n 8 "$1"
	return 1
}

run_proftop dlopen -b -n 0 -- "$WL/dlopener" 1
check dlopen-exit-status-0 status "$RC" 0
check dlopen-libm-hot awk '$NF == "libm.so.6" { s += $1 } END { if (s >= 80) exit 0; print "libm.so.6 self " s "%"; exit 1 }' "$OUT"
check dlopen-main-total-100 between "$(total_pct "$OUT" main dlopener)" 99 100

run_proftop jit -b -n 0 -- "$WL/jit" 1
check jit-exit-status-0 status "$RC" 0
check jit-named-from-perf-map approx "$(self_pct "$OUT" jit_hot_loop '[jit]')" 99 5

# A name that would set the terminal's title and clear the screen reaches it in caret notation.
JIT_MAP_NAME=$(printf 'jit\033]0;TITLE\007\033[2J') run_proftop jit_escape -b -n 0 -- "$WL/jit" 1
check jit-escape-exit-status-0 status "$RC" 0
check jit-escape-no-control-bytes awk '/[\033\007]/ { print "raw control byte: " $0; bad = 1 } END { exit bad }' "$OUT"
check jit-escape-shown-in-caret-notation has "$OUT" 'jit\^\[\]0;TITLE\^G\^\[\[2J  \[jit\]'

# A map no profiler should hold whole: the function is named all the same, and the limits it met
# are said once each. proftop reads perf maps for at most a tenth of its time (symbols.c), and
# this one (50 MB) takes it five seconds on an idle machine: jit runs long enough for it to read
# to the end on a loaded one (CI, with 6 s, once did not).
JIT_MAP_JUNK=1 run_proftop jit_junk -b -n 0 -- "$WL/jit" 12
check jit-junk-map-exit-status-0 status "$RC" 0 "$ERR"
# Writing the map takes some of the samples.
check jit-junk-map-named between "$(self_pct "$OUT" jit_hot_loop '[jit]')" 50 100
check jit-junk-map-entries-limit-said-once has_once "$ERR" \
	"warning: JIT symbols of pid [0-9]+: /[^ ]*perf-[0-9]+\.map is past proftop's limit of 1048576 functions and 64 MiB of names per map: lines past it are skipped \([0-9]+ so far\)"
check jit-junk-map-long-name-said-once has_once "$ERR" \
	"warning: JIT symbols of pid [0-9]+: /[^ ]*perf-[0-9]+\.map has names longer than 4096 bytes: they are cut there \(1 so far\)"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	JIT_MAP_UID=$(id -u nobody) run_proftop jit_foreign -b -n 0 -- "$WL/jit" 1
	check jit-foreign-map-exit-status-0 status "$RC" 0
	check jit-foreign-map-ignored awk '/jit_hot_loop/ { print; bad = 1 } END { exit bad }' "$OUT"
	check jit-foreign-map-still-named has "$OUT" '^ *[0-9.]+ +[0-9.]+ +[0-9]+  \[anon\]\+0x[0-9a-f]+  \[anon\]$'
else
	skip jit-foreign-map "needs root and the user nobody"
fi
finish
