#!/bin/bash
# bench/run_python.sh — what reading CPython's frames costs proftop, and how its Python shares
# compare with perf's. On tests/workloads/pysplit.py (30% hash_blocks, 70% count_primes by the
# clock) under pyenv's 3.13 (PY_VERSION), PY_SECONDS (default 6) each, PY_REPEAT rounds
# (default 2): proftop with --python=off (native frames only), with the default (Python frames
# spliced), and `perf record --call-graph dwarf` of `python -X perf_jit` followed by
# `perf inject --jit` and `perf report`, perf's own reference for Python functions.
# For each proftop run: its CPU time per sample (its own CPU share over the run, from its
# final table, times the elapsed time, divided by the samples) and the two functions' shares;
# for perf: the shares of py::hash_blocks and py::count_primes (children, of all samples) and
# the CPU time perf record and perf inject took. Figures only; nothing here fails on them.
set -u
cd "$(dirname "$0")/.." || exit 1
proftop=${PY_PROFTOP:-./proftop}
secs=${PY_SECONDS:-6}
reps=${PY_REPEAT:-2}
py=$(ls -d /root/.pyenv/versions/${PY_VERSION:-3.13}.*/bin/python3 2>/dev/null | head -n 1)
wl=tests/workloads/pysplit.py
if [ -z "$py" ] || ! [ -x "$proftop" ]; then
	echo "== Python: no CPython ${PY_VERSION:-3.13} under /root/.pyenv or no $proftop"
	exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# proftop_run LABEL ARG... — one run; prints its cost per sample and the shares.
proftop_run()
{
	local label=$1
	shift
	"$proftop" -b -n 0 "$@" -- "$py" "$wl" "$secs" >"$tmp/out" 2>"$tmp/err"
	awk -v label="$label" '
	/^=== proftop final/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "elapsed") elapsed = $(i + 1) + 0
			if ($i == "samples") samples = $(i + 1) + 0
			if ($i == "proftop") cpu = $(i + 1) + 0
		}
	}
	$NF == "pysplit.py" && $(NF - 1) == "hash_blocks" { hash = $2 }
	$NF == "pysplit.py" && $(NF - 1) == "count_primes" { count = $2 }
	END {
		printf "  %-22s %6.1f us CPU per sample (%.1f%% CPU, %d samples)  hash_blocks %5.2f%%  count_primes %5.2f%%\n",
		       label, samples ? cpu / 100 * elapsed / samples * 1e6 : 0, cpu, samples, hash, count
	}' "$tmp/out"
}

perf_run()
{
	local t0 t1
	if ! command -v perf >/dev/null 2>&1; then
		echo "  perf: not installed"
		return
	fi
	t0=$(awk '{ print $14 + $15 }' /proc/self/stat)
	( cd "$tmp" && /usr/bin/time -f '%U %S' -o perf.time perf record -q -g --call-graph dwarf -k 1 \
		-o perf.data -- "$py" -X perf_jit "$OLDPWD/$wl" "$secs" >/dev/null 2>&1 &&
	  /usr/bin/time -f '%U %S' -o inject.time perf inject --jit -i perf.data -o perf.jit.data \
		>/dev/null 2>&1 &&
	  perf report -i perf.jit.data --children --stdio --sort sym -g none 2>/dev/null >report.txt )
	awk '
	/\[\.\] py::hash_blocks/ && !h { h = $1 }
	/\[\.\] py::count_primes/ && !c { c = $1 }
	END { printf "  %-22s hash_blocks %s  count_primes %s (children)\n", "perf + inject --jit", h, c }
	' "$tmp/report.txt"
	printf "  %-22s perf record %s s user+system, perf inject %s s\n" "" \
		"$(awk '{ print $1 + $2 }' "$tmp/perf.time" 2>/dev/null)" \
		"$(awk '{ print $1 + $2 }' "$tmp/inject.time" 2>/dev/null)"
	rm -f "$tmp"/perf.data* "$tmp"/jit-*.dump "$tmp"/*.so /tmp/jitted-*.so 2>/dev/null
	: "$t0"
}

echo "== Python frames: $py, pysplit.py ${secs}s (truth: hash_blocks 30%, count_primes 70%)"
for r in $(seq 1 "$reps"); do
	echo " round $r"
	proftop_run "proftop --python=off" --python=off
	proftop_run "proftop (Python frames)"
	proftop_run "proftop --python=only" --python=only
	perf_run
done
