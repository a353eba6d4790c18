#!/bin/bash
# bench/run_longrun.sh BUILD_DIR — proftop's own cost over a long run, minute by minute.
#
# The randtree workload's distinct call stacks keep growing (hundreds of thousands in minutes):
# if proftop's cost followed the size of its profile, its CPU per minute would climb. Prints, per
# step, proftop's CPU share of one core in that step (utime+stime of all its threads, from
# /proc/PID/stat), the CPU time per sample (at the workload's 999 samples a second), its RSS and
# peak RSS; then the same for the split workload, and for reference `perf top` on randtree.
# Figures only: nothing here passes or fails on a timing.
#
#   LONGRUN_SECONDS (600)        randtree (0 skips any of these) under `proftop -b -n 0 -F 999`
#   LONGRUN_STEP (60)            seconds per row
#   LONGRUN_SPLIT_SECONDS (120)  split the same way
#   LONGRUN_PYTHON_SECONDS (600) pyenv's CPython 3.13 on tests/workloads/pysplit.py, the same way
#   LONGRUN_PERL_SECONDS (600)   perl on tests/workloads/plsplit.pl, the same way
#   LONGRUN_OTLP_SECONDS (600)   randtree again, pushing to an OTLP receiver every 10 s
#                                (tests/integration/otlp_receiver.py sink, on 127.0.0.1)
#   LONGRUN_PERF_SECONDS (180)   perf top -F 999 --call-graph dwarf --stdio on randtree (0: skip)
#   LONGRUN_ARGS                 more proftop options (e.g. --max-memory 64M)
#   PROFTOP_BIN (./proftop)      the binary to measure
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
secs=${LONGRUN_SECONDS:-600}
step=${LONGRUN_STEP:-60}
hz=$(getconf CLK_TCK)
proftop=${PROFTOP_BIN:-./proftop}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
mib() { awk -v k="$2:" '$1 == k {printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null; }

# watch PID SECONDS: one row per step while PID lives.
watch() {
	local pid=$1 total=$2 t=0 prev now rss hwm
	prev=$(ticks "$pid")
	printf "  %6s  %9s  %12s  %8s  %9s\n" "min" "CPU%" "us/sample" "RSS MiB" "peak MiB"
	while [ "$t" -lt "$total" ]; do
		sleep "$step"
		t=$((t + step))
		now=$(ticks "$pid") rss=$(mib "$pid" VmRSS) hwm=$(mib "$pid" VmHWM)
		[ -n "$now" ] || break
		awk -v t="$t" -v d="$((now - prev))" -v hz="$hz" -v s="$step" -v rss="$rss" -v hwm="$hwm" \
		    'BEGIN {cpu = d / hz; printf "  %6.1f  %8.2f%%  %12.1f  %8s  %9s\n",
			    t / 60, 100 * cpu / s, 1e6 * cpu / (999 * s), rss, hwm}'
		prev=$now
	done
}

# profile LABEL SECONDS COMMAND...: proftop on COMMAND, watched for SECONDS; then its final header.
profile() {
	local label=$1 secs=$2 pid
	shift 2
	echo "== proftop's cost over time: $proftop -b -n 0 -F 999 ${LONGRUN_ARGS:-}-- $*"
	# shellcheck disable=SC2086
	"$proftop" -b -n 0 -F 999 --max-rows 3 ${LONGRUN_ARGS:-} -- "$@" >"$tmp/$label.out" 2>&1 &
	pid=$!
	watch "$pid" "$secs"
	wait "$pid" || echo "  proftop exited with status $?"
	grep -m1 "^=== proftop final" "$tmp/$label.out" | sed 's/^/  /' ||
		{ echo "  no final table"; cat "$tmp/$label.out"; return 1; }
}

status=0
if [ "$secs" -gt 0 ]; then
	profile randtree "$secs" "$build/workloads/randtree" "$secs" || status=1
fi
split_secs=${LONGRUN_SPLIT_SECONDS:-120}
if [ "$split_secs" -gt 0 ]; then
	profile split "$split_secs" "$build/workloads/split" "$split_secs" || status=1
fi
# The Python frames' reader (issue 28): each sample also reads the thread's frame chain and,
# the first time, its code objects; a cost or a cache that grew with time would show here.
py_secs=${LONGRUN_PYTHON_SECONDS:-600}
py=$(ls -d /root/.pyenv/versions/3.13.*/bin/python3 2>/dev/null | head -n 1)
if [ "$py_secs" -gt 0 ] && [ -n "$py" ]; then
	profile python "$py_secs" "$py" tests/workloads/pysplit.py "$py_secs" || status=1
elif [ "$py_secs" -gt 0 ]; then
	echo "== Python: no CPython 3.13 under /root/.pyenv: skipped"
fi
# The Perl subs' reader (issue 29) the same way, on tests/workloads/plsplit.pl.
pl_secs=${LONGRUN_PERL_SECONDS:-600}
if [ "$pl_secs" -gt 0 ] && command -v perl >/dev/null; then
	profile perl "$pl_secs" perl tests/workloads/plsplit.pl "$pl_secs" || status=1
fi

# The OTLP pusher (issue 31): each 10 s stretch encoded and sent from a thread of its own,
# beside the randtree figures without it.
otlp_secs=${LONGRUN_OTLP_SECONDS:-600}
if [ "$otlp_secs" -gt 0 ] && command -v python3 >/dev/null; then
	mkdir -p "$tmp/otlp"
	python3 tests/integration/otlp_receiver.py "$tmp/otlp" sink &
	for _ in $(seq 100); do [ -s "$tmp/otlp/port" ] && break; sleep 0.1; done
	LONGRUN_ARGS="${LONGRUN_ARGS:-} --otlp-endpoint http://127.0.0.1:$(cat "$tmp/otlp/port") " \
		profile randtree-otlp "$otlp_secs" "$build/workloads/randtree" "$otlp_secs" || status=1
	kill %% 2>/dev/null
fi

perf_secs=${LONGRUN_PERF_SECONDS:-180}
if [ "$perf_secs" -gt 0 ] && command -v perf >/dev/null; then
	echo "== for reference: perf top -F 999 --call-graph dwarf --stdio -p PID on randtree, ${perf_secs} s"
	"$build/workloads/randtree" "$((perf_secs + 30))" &
	work=$!
	perf top -F 999 --call-graph dwarf --stdio -p "$work" >/dev/null 2>&1 &
	pid=$!
	sleep 1
	watch "$pid" "$perf_secs"
	kill -INT "$pid" 2>/dev/null
	kill "$work" 2>/dev/null
	wait 2>/dev/null
fi
exit $status
