#!/bin/bash
# bench/run_system.sh BUILD_DIR — -a with every core busy: one split per CPU (a CPU-bound
# program with a known 60/30/10 split), profiled for SYSTEM_SECONDS (default 20) by proftop -a
# (dwarf stacks, and -g fp), then by perf record -a -g (frame pointers), perf record -a
# --call-graph dwarf and perf top -g on the same load, one after the other. Figures: samples per second the
# profiler kept, its losses, and its own CPU time as a share of the machine's. Nothing passes
# or fails here: the machine is shared and noisy.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
secs=${SYSTEM_SECONDS:-20}
cpus=$(getconf _NPROCESSORS_ONLN)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

echo "== -a: every process, $cpus CPUs busy (one split each), ${secs} s at 999 Hz per CPU"
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
	echo "  skipped: -a needs root or perf_event_paranoid <= 0"
	exit 0
fi
for _ in $(seq "$cpus"); do
	"$build/workloads/split" $((secs * 6)) >/dev/null &
done
sleep 1

# perf_stats — samples per second in $tmp/p.data, and what perf lost.
perf_stats() {
	perf report -i "$tmp/p.data" --stats 2>/dev/null | awk -v s="$secs" '
		/SAMPLE events:/ { n = $NF }
		/LOST events:/ { lost = $NF }
		/LOST_SAMPLES events:/ { lostsamples = $NF }
		END { printf "    %.0f samples/s kept; lost records %d, lost samples %d\n", n / s, lost, lostsamples }'
}

# run NAME CMD... — CMD's CPU time (its children's rusage) over its wall time.
run() {
	local name=$1
	shift
	python3 - "$name" "$cpus" "$@" <<'PY'
import resource, subprocess, sys, time
name, cpus, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t0 = time.monotonic()
p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
print("%-28s CPU %6.2f s = %5.2f%% of the machine's %d CPUs; peak RSS %6.1f MiB" %
      (name, cpu, 100 * cpu / wall / cpus, cpus, ru.ru_maxrss / 1024.0))
for line in (p.stdout + p.stderr).splitlines():
    if line.startswith("=== proftop final"):
        f = line.split()
        samples, elapsed = int(f[f.index("samples") + 1]), float(f[f.index("elapsed") + 1].rstrip("s"))
        print("    %.0f samples/s kept; %s" % (samples / elapsed, " ".join(f[f.index("samples"):])))
PY
}

run "proftop -a (dwarf)" ./proftop -a -b -n 0 -d "$secs" -o "$tmp/a.folded"
run "proftop -a -g fp" ./proftop -a -b -n 0 -g fp -d "$secs"
if perf record -q -o "$tmp/p.data" -- true >/dev/null 2>&1; then
	run "perf record -a -g (fp)" perf record -a -g -F 999 -o "$tmp/p.data" -- sleep "$secs"
	perf_stats
	run "perf record -a --call-graph dwarf" perf record -a --call-graph dwarf -F 999 -o "$tmp/p.data" -- sleep "$secs"
	perf_stats
	# perf top's own view: its CPU while it shows the load (it prints no sample counts).
	run "perf top -a -g --stdio" timeout -s INT "$secs" perf top -F 999 -g --stdio -d 2
else
	echo "  perf record: not available here"
fi
