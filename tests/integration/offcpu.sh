#!/bin/sh
# offcpu.sh — --mode offcpu on workloads with known waits, against perf in the same run: the
# waits workload's reader blocks about 70% of its time in read() on a pipe and 30% in
# nanosleep() (within 3 points of what it timed itself), as `perf record -e cs -c 1 --switch-events --call-graph dwarf` times the
# same switches; its two threads are blocked nearly all the run; halfsleep's one thread is off
# the CPU as long as it timed its sleeps, all in sleep_half; mutex4's four threads wait for one mutex in
# pthread_mutex_lock() under their function; the stacks end in the C library's wrappers; the exports
# carry the unit (pprof offcpu/nanoseconds read by go tool pprof, dprofpp's seconds, callgrind's
# event); the screen says offcpu and shows seconds; three collectors time the waits the same; at
# 5,000 switches a second every switch is kept, as many as the kernel counted for the program
# (getrusage). The permission message at paranoid 2 is in permissions.sh.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/waits" "$WL/halfsleep" "$WL/mutex4" "$WL/switches"
require_perf_events
if ! switches_allowed; then
	skip "all" "context switches need perf_event_paranoid <= 1 or root"
	finish
fi

# blocked FILE — the header's blocked seconds.
blocked()
{
	awk '/^=== proftop final/ { for (i = 1; i < NF; i++) if ($i == "blocked") { v = $(i + 1);
		sub(/s$/, "", v); print v } }' "$1"
}

run_proftop waits -b -n 0 --mode offcpu -- "$WL/waits" 3
check "waits-exit-0" status $RC 0 "$ERR"
check "waits-header" has "$OUT" '^=== proftop final  elapsed [0-9.]+s  offcpu: blocked [0-9.]+s  samples [0-9]+  switches [0-9]+  overflow 0 '
check "waits-seconds-column" has "$OUT" '^  SELF%  TOTAL%  SECONDS  FUNCTION  MODULE$'
pipe=$(first_total "$OUT" wait_on_pipe)
nap=$(first_total "$OUT" take_a_nap)
reader=$(awk -v p="$pipe" -v n="$nap" 'BEGIN { if (p + n > 0) printf "%.2f\n", 100 * p / (p + n) }')
# The reader's own timing of its waits is the truth; 70/30 is what it aims at (a loaded machine's
# late wakeups move it a few points).
truth=$(awk '/^read / { if ($2 + $5 > 0) printf "%.2f\n", 100 * $2 / ($2 + $5) }' "$OUT")
check "waits-reader-as-it-timed" approx "$reader" "$truth" 3
check "waits-reader-about-70-in-read" approx "$reader" 70 10
# Two threads, each blocked nearly all the time: about twice the elapsed time.
elapsed=$(awk '/^=== proftop final/ { v = $5; sub(/s$/, "", v); print v }' "$OUT")
check "waits-blocked-twice-elapsed" between "$(awk -v b="$(blocked "$OUT")" -v e="$elapsed" \
	'BEGIN { printf "%.2f\n", b / e }')" 1.8 2.05
# The wrappers of the calls that blocked are the leaves (no --kernel).
check "waits-leaf-read" has "$OUT" '^ +[0-9.]+ +[0-9.]+ +[0-9.]+  (__GI___libc_read|read|__libc_read)'
check "waits-leaf-nanosleep" has "$OUT" '^ +[1-9][0-9.]* +[0-9.]+ +[0-9.]+  (clock_nanosleep|__clock_nanosleep)'

# Three collectors: each thread's switches go to one of them, whichever read its CPU samples.
run_proftop waits-collectors -b -n 0 --mode offcpu --collectors 3 -- "$WL/waits" 3
check "collectors-exit-0" status $RC 0 "$ERR"
pipe=$(first_total "$OUT" wait_on_pipe)
nap=$(first_total "$OUT" take_a_nap)
check "collectors-reader-as-it-timed" approx "$(awk -v p="$pipe" -v n="$nap" \
	'BEGIN { if (p + n > 0) printf "%.2f\n", 100 * p / (p + n) }')" \
	"$(awk '/^read / { if ($2 + $5 > 0) printf "%.2f\n", 100 * $2 / ($2 + $5) }' "$OUT")" 3
elapsed=$(awk '/^=== proftop final/ { v = $5; sub(/s$/, "", v); print v }' "$OUT")
check "collectors-blocked-twice-elapsed" between "$(awk -v b="$(blocked "$OUT")" -v e="$elapsed" \
	'BEGIN { printf "%.2f\n", b / e }')" 1.8 2.05

# perf in the same run: its switch times, per stack.
if command -v perf >/dev/null 2>&1 &&
	perf record -q -e cs -c 1 --switch-events --call-graph dwarf -o "$TMPD/perf.data" -- \
		"$WL/waits" 3 >"$TMPD/perf.waits" 2>&1; then
	perf_blocked_split "$TMPD/perf.data" wait_on_pipe take_a_nap >"$TMPD/perf.share"
	check "perf-reader-about-70-in-read" approx "$(cat "$TMPD/perf.share")" 70 10
	# Each against its own run's truth (the true split moves between runs with the load and
	# each profiler's overhead), then against each other.
	check "perf-reader-as-it-timed" approx "$(cat "$TMPD/perf.share")" \
		"$(awk '/^read / { if ($2 + $5 > 0) printf "%.2f\n", 100 * $2 / ($2 + $5) }' \
			"$TMPD/perf.waits")" 3
	check "perf-agrees" approx "$reader" "$(cat "$TMPD/perf.share")" 10
else
	skip "perf-reader-70-in-read" "perf record -e cs failed here"
fi

# perf's switch records of the very same run (perf follows proftop and its command): the
# blocked seconds agree within 2%.
if command -v perf >/dev/null 2>&1 &&
	perf record -q -e dummy --switch-events -o "$TMPD/sw.data" -- \
		"$PROFTOP_BIN" -b -n 0 --mode offcpu -- "$WL/waits" 2 >"$TMPD/sw.out" 2>&1; then
	perf_blocked=$(perf_switch_seconds "$TMPD/sw.data" waits | awk '{ print $1 }')
	check "perf-switches-blocked-same-run" between "$(awk -v a="$(blocked "$TMPD/sw.out")" \
		-v p="$perf_blocked" 'BEGIN { if (p > 0) printf "%.3f\n", a / p }')" 0.98 1.02
else
	skip "perf-switches-blocked-same-run" "perf record --switch-events failed here"
fi

# --kernel: the kernel's part of each stack (its callchain, named from /proc/kallsyms) says what
# blocked: every read() of waits that blocks is a pipe read, every nanosleep() do_nanosleep(),
# each switched out in schedule(); perf's context-switch stacks, weighed by their switch times,
# split the blocked time between the two the same way (within 3 points).
if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/kernel/kptr_restrict)" != 2 ]; then
	run_proftop kernel -b -n 0 --mode offcpu --kernel -- "$WL/waits" 2
	check "kernel-exit-0" status "$RC" 0 "$ERR"
	kpipe=$(awk '/^=== proftop final/ { on = 1; next } on && $4 ~ /^(anon_)?pipe_read$/ &&
		$5 == "[kernel.kallsyms]" { print $2; exit }' "$OUT")
	knap=$(first_total "$OUT" do_nanosleep)
	check "kernel-pipe-read-under-read" approx "$kpipe" "$(first_total "$OUT" read)" 1
	check "kernel-nanosleep-under-clock_nanosleep" approx "$knap" "$(first_total "$OUT" clock_nanosleep)" 1
	check "kernel-leaf-schedule" has "$OUT" '^ +(99\.[5-9][0-9]|100\.00) +[0-9.]+ +[0-9.]+  schedule  \[kernel\.kallsyms\]$'
	if perf record -q -e cs -c 1 --switch-events --call-graph dwarf -o "$TMPD/kperf.data" -- \
		"$WL/waits" 2 >/dev/null 2>&1; then
		perf_blocked_split "$TMPD/kperf.data" '(anon_)?pipe_read' do_nanosleep \
			>"$TMPD/kperf.share"
		check "kernel-perf-agrees" approx "$(awk -v p="$kpipe" -v n="$knap" \
			'BEGIN { if (p + n > 0) printf "%.2f\n", 100 * p / (p + n) }')" \
			"$(cat "$TMPD/kperf.share")" 3
	else
		skip "kernel-perf-agrees" "perf record -e cs --call-graph dwarf failed here"
	fi
else
	skip "kernel" "kernel stacks are named as root, with kernel.kptr_restrict below 2"
fi

# One switch in 11 sampled, its time counted 11 times: about the same split as the reader timed
# it, and about the same total (about 70 samples of the reader a second, and a sampled switch
# that was a preemption counts nothing: a wide margin, which an aliasing period still misses by
# far, and a longer run).
run_proftop thin -b -n 0 --mode offcpu --switch-period 11 -- "$WL/waits" 6
pipe=$(first_total "$OUT" wait_on_pipe)
nap=$(first_total "$OUT" take_a_nap)
truth=$(awk '/^read / { if ($2 + $5 > 0) printf "%.2f\n", 100 * $2 / ($2 + $5) }' "$OUT")
# (Under a sanitizer the reader runs slowly enough to be preempted between its waits, and a
# sampled preemption counts nothing: the one-in-11 estimate is then off by more; not checked.)
if [ -z "${PROFTOP_SANITIZER:-}" ]; then
	check "thin-reader-as-it-timed" approx "$(awk -v p="$pipe" -v n="$nap" \
		'BEGIN { if (p + n > 0) printf "%.2f\n", 100 * p / (p + n) }')" "$truth" 15
fi
elapsed=$(awk '/^=== proftop final/ { v = $5; sub(/s$/, "", v); print v }' "$OUT")
check "thin-blocked-twice-elapsed" between "$(awk -v b="$(blocked "$OUT")" -v e="$elapsed" \
	'BEGIN { printf "%.2f\n", b / e }')" 1.6 2.2

# One thread half on the CPU: off it, all its time is in sleep_half, as long as it says it slept
# (timed around each sleep; less than half the run when other work delays its burning).
run_proftop half -b -n 0 --mode offcpu -- "$WL/halfsleep" 3
check "half-exit-0" status $RC 0 "$ERR"
check "half-all-in-sleep" approx "$(first_total "$OUT" sleep_half)" 100 1
slept=$(awk '/^slept / { print $2 }' "$OUT")
# (Its timing also holds the wait for a CPU after each wakeup, runnable, not blocked: within 10%
# on an idle machine, and never more than it timed; a loaded one makes that wait long.)
check "half-blocked-as-slept" between "$(blocked "$OUT")" \
	"$(awk -v s="$slept" 'BEGIN { printf "%.3f\n", s * 0.3 }')" \
	"$(awk -v s="$slept" 'BEGIN { printf "%.3f\n", s * 1.05 + 0.02 }')"
check "half-no-burn" test "$(first_total "$OUT" burn_half)" = missing

# Four threads on one mutex: three wait at any time, all of it in pthread_mutex_lock() under
# contend() (fewer on a loaded machine: a holder preempted leaves the others runnable, which is
# not blocked time).
run_proftop mutex -b -n 0 --mode offcpu -- "$WL/mutex4" 2
check "mutex-exit-0" status $RC 0 "$ERR"
check "mutex-under-lock" between "$(first_total "$OUT" pthread_mutex_lock)" 85 100
check "mutex-under-contend" between "$(first_total "$OUT" contend)" 85 100
elapsed=$(awk '/^=== proftop final/ { v = $5; sub(/s$/, "", v); print v }' "$OUT")
check "mutex-three-waiting" between "$(awk -v b="$(blocked "$OUT")" -v e="$elapsed" \
	'BEGIN { printf "%.2f\n", b / e }')" 0.5 3.1

# Every switch kept: the switch samples are the kernel's own count of the program's switches
# (within 1%: the kernel's count includes the few before the exec, proftop's the exits'), none
# lost (samples wait behind a full ring, in memory of their own, at a rate like this one).
run_proftop rate -b -n 0 --mode offcpu -- "$WL/switches" 2 5000 2
check "rate-exit-0" status "$RC" 0 "$ERR"
kernel=$(awk '/^switches [0-9]+ in / { print $2 }' "$OUT")
check "rate-every-switch-kept" between "$(header_value "$OUT" switches)" \
	"$(awk -v k="$kernel" 'BEGIN { printf "%d", k * 0.99 }')" \
	"$(awk -v k="$kernel" 'BEGIN { printf "%d", k * 1.01 }')"
check "rate-none-lost" test "$(header_value "$OUT" overflow) $(header_value "$OUT" dropped)" = "0 0"

# The exports carry the unit.
run_proftop pprof -b -n 0 --mode offcpu -o "$TMPD/w.pb.gz" -- "$WL/waits" 1
if command -v go >/dev/null 2>&1; then
	go tool pprof -raw "$TMPD/w.pb.gz" >"$TMPD/raw.txt" 2>&1
	check "pprof-types" has "$TMPD/raw.txt" '^Samples:$|microseconds/count offcpu/nanoseconds'
	check "pprof-offcpu-ns" has "$TMPD/raw.txt" 'offcpu/nanoseconds'
else
	skip "pprof-types" "go is not installed"
fi
run_proftop tmon -b -n 0 --mode offcpu -o "$TMPD/w.tmon" -- "$WL/waits" 2
dprofpp "$TMPD/w.tmon" >"$TMPD/dprofpp.txt" 2>&1
check "dprofpp-blocked-seconds" has "$TMPD/dprofpp.txt" '^  User\+System Time = +(3\.[6-9]|4\.[01])[0-9]* Seconds$'
# read(): the reader's 70% and the feeder's wait for each question, about a thread's 2 s, in
# seconds (not samples at some frequency).
check "dprofpp-read-seconds" has "$TMPD/dprofpp.txt" '^ *[0-9.]+ +(1\.[0-9]|2\.[0-5])[0-9]* .*libc_read'
run_proftop cg -b -n 0 --mode offcpu -o "$TMPD/callgrind.out.w" -- "$WL/waits" 1
check "callgrind-event" has "$TMPD/callgrind.out.w" '^events: Offcpu_us$'
callgrind_annotate "$TMPD/callgrind.out.w" >"$TMPD/cg.txt" 2>&1
check "callgrind-annotate-reads" has "$TMPD/cg.txt" 'Events recorded: +Offcpu_us'
finish
