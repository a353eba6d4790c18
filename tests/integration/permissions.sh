#!/bin/sh
# permissions.sh — what the kernel refuses becomes advice: an unprivileged user attaching to a
# root process gets a one-line explanation naming perf_event_paranoid and CAP_PERFMON, exit 1;
# --mode offcpu at paranoid 2 names the setting to change, and CPU mode still works.
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
rm -rf "$dir"
finish
