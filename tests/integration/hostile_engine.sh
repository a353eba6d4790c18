#!/bin/sh
# hostile_engine.sh — what the kernel cannot give is said for what it is: -p of a kernel thread
# (nothing to sample), --kernel as a user at perf_event_paranoid 2 (1 is enough, -1 is not
# needed), the kernel's ring buffers past the locked-memory limits (not paranoid's doing).
#
# The last two run proftop as nobody with setpriv and change kernel.perf_event_paranoid and
# kernel.perf_event_mlock_kb for a few seconds, always putting the old values back.
. "$(dirname "$0")/lib.sh"
require_perf_events
need "$WL/spin" || finish

# one_line FILE — FILE is one line (a refusal is one message, not a cascade).
one_line()
{
	awk 'END { if (NR == 1) exit 0; print NR " lines:"; exit 1 }' "$1" || { cat "$1"; return 1; }
}

# lacks FILE ERE — no line of FILE matches ERE.
lacks()
{
	! grep -Eq -- "$2" "$1" && return 0
	echo "a line matches /$2/ in $1:"
	grep -E -- "$2" "$1"
	return 1
}

# --- -p of a kernel thread ---------------------------------------------------------------------

if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	run_proftop kthread -b -d 0.5 -p 2
	check kthread-exit-1 status "$RC" 1 "$ERR"
	check kthread-said has "$ERR" \
	    '^proftop: pid 2 \(kthreadd\) is a kernel thread: it has no user space for proftop to profile$'
	check kthread-one-line one_line "$ERR"
	start_spin 30
	run_proftop kthread_and_process -b -n 0 -d 1 -p "2,$SPIN_PID"
	check kthread-and-process-exit-0 status "$RC" 0 "$ERR"
	check kthread-and-process-warned has "$ERR" \
	    '^proftop: warning: pid 2 \(kthreadd\) is a kernel thread: .*; the other PIDs are profiled$'
	check kthread-and-process-profiled between "$(self_pct "$OUT" spin_forever spin)" 90 100
else
	skip kthread "pid 2 is not kthreadd here (a PID namespace?)"
fi

# --- as an unprivileged user -------------------------------------------------------------------

PARANOID=/proc/sys/kernel/perf_event_paranoid
MLOCK=/proc/sys/kernel/perf_event_mlock_kb
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	skip unprivileged "needs root (to change the sysctls), the user nobody and setpriv"
	finish
fi
OLD_PARANOID=$(cat "$PARANOID") && OLD_MLOCK=$(cat "$MLOCK") || { fail setup "cannot read the sysctls"; finish; }
restore_sysctls()
{
	echo "$OLD_PARANOID" >"$PARANOID"
	echo "$OLD_MLOCK" >"$MLOCK"
}
trap 'restore_sysctls; lib_cleanup' EXIT
if ! echo "$OLD_PARANOID" 2>/dev/null >"$PARANOID" || ! echo "$OLD_MLOCK" 2>/dev/null >"$MLOCK"; then
	skip unprivileged "cannot write $PARANOID and $MLOCK (read-only /proc/sys?)"
	finish
fi
# nobody runs copies: the tree may not be readable to other users.
dir=$TMPD/nobody
mkdir "$dir" && cp "$PROFTOP_BIN" "$WL/spin" "$dir/" && chmod 755 "$TMPD" "$dir" "$dir/proftop" "$dir/spin" ||
    { fail setup "cannot stage copies for nobody"; finish; }

# as_nobody TAG MEMLOCK_KIB ARG... — run_proftop's files and RC, for proftop run as nobody with
# RLIMIT_MEMLOCK at MEMLOCK_KIB.
as_nobody()
{
	local tag memlock
	tag=$1
	memlock=$2
	shift 2
	OUT=$TMPD/$tag.out
	ERR=$TMPD/$tag.err
	(ulimit -l "$memlock" && exec timeout -k 5 "${PROFTOP_TIMEOUT:-60}" setpriv --reuid=nobody \
	    --regid=nogroup --clear-groups "$dir/proftop" "$@") >"$OUT" 2>"$ERR" </dev/null
	RC=$?
}

# --kernel at paranoid 2 is refused, and the advice is the setting that is enough: 1.
echo 2 >"$PARANOID"
as_nobody kernel_paranoid2 8192 -b -n 0 -d 0.5 --kernel -- "$dir/spin" 30
check kernel-paranoid-2-exit-1 status "$RC" 1 "$ERR"
check kernel-paranoid-2-advice has "$ERR" \
    '^proftop: perf_event_open: Permission denied \(/proc/sys/kernel/perf_event_paranoid is 2: --kernel needs it at 1 or lower'
check kernel-paranoid-2-not-minus-1 lacks "$ERR" '-1'
check kernel-paranoid-2-one-line one_line "$ERR"
echo 1 >"$PARANOID"
as_nobody kernel_paranoid1 8192 -b -n 0 -d 0.5 --kernel -- "$dir/spin" 30
check kernel-paranoid-1-is-enough status "$RC" 0 "$ERR"
check kernel-paranoid-1-samples rows_well_formed "$OUT"

# Locked memory: perf_event_mlock_kb 0 leaves RLIMIT_MEMLOCK, and at 0 KiB even the smallest ring
# is refused, which is said to be locked memory, not paranoid.
echo 2 >"$PARANOID"
echo 0 >"$MLOCK"
as_nobody mlock_none 0 -b -n 0 -d 0.5 -- "$dir/spin" 30
check mlock-exit-1 status "$RC" 1 "$ERR"
check mlock-said has "$ERR" \
    '^proftop: mmap of a kernel ring buffer: Operation not permitted \(.*locked memory.*[0-9]+ KiB per CPU.*kernel\.perf_event_mlock_kb \(0 KiB per CPU.*RLIMIT_MEMLOCK \(ulimit -l: 0 KiB\)'
check mlock-not-blamed-on-paranoid lacks "$ERR" 'must be [0-9-]+ or lower'
check mlock-one-line one_line "$ERR"
# Enough RLIMIT_MEMLOCK for the smallest ring: it is tried although perf_event_mlock_kb is 0.
as_nobody mlock_rlimit 4096 -b -n 0 -d 0.5 -- "$dir/spin" 30
check mlock-rlimit-enough status "$RC" 0 "$ERR"
check mlock-rlimit-small-ring-said has "$ERR" '^proftop: warning: kernel buffers of [0-9]+ KiB per CPU'
restore_sysctls
check sysctls-restored test "$(cat "$PARANOID") $(cat "$MLOCK")" = "$OLD_PARANOID $OLD_MLOCK"
finish
