#!/bin/sh
# permissions.sh — what the kernel refuses becomes advice: an unprivileged user attaching to a
# root process gets a one-line explanation naming perf_event_paranoid and CAP_PERFMON, exit 1.
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
rm -rf "$dir"
finish
