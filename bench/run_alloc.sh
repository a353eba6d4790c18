#!/bin/sh
# bench/run_alloc.sh BUILD_DIR — the cost of the allocation library (--mode alloc) on the
# malloc-heavy mallocs workload (4 threads of malloc/free, blocks of 16-1024 bytes), run for
# ALLOC_SECONDS (2) of wall time each: bare; with libproftop-alloc.so at the default mean (one
# sample every 512 KiB) and at 64 KiB, its ring read as proftop reads it (bench/alloc_bench); a
# pass-through library (the price of interposing malloc at all); heaptrack; valgrind's massif.
# Each twice: with blocks written whole ("fill", as programs use what they allocate) and with
# only their first byte written (the allocator alone, the worst case). The figures are the
# allocations per second the workload counts and the slowdown against bare in the same round,
# and the program's own CPU time per allocation and what it adds to bare's (steadier on a shared
# machine: other load, and the ring's reader, are not in it).
# proftop itself, end to end (proftop -b --mode alloc: the library, the sampler and the
# collector). ALLOC_REPEAT rounds (3). Then the accuracy at the default rate: allocsplit's 70/30
# split and its known leak, ALLOC_ACCURACY runs (10), each run's error and their spread, with
# heaptrack's leak total of one run. Figures only; nothing here fails on a timing.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
wl=$build/workloads/mallocs
lib=$PWD/$build/libproftop-alloc.so
secs=${ALLOC_SECONDS:-2}
reps=${ALLOC_REPEAT:-3}
if ! [ -x "$wl" ] || ! [ -e "$lib" ] || ! [ -x "$build/bench/alloc_bench" ]; then
	echo "== allocation library: $wl, $lib or $build/bench/alloc_bench is missing"
	exit 0
fi
tmp=$(mktemp -d /tmp/proftop-alloc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '#include <stddef.h>\nvoid *__libc_malloc(size_t); void __libc_free(void *);\n__attribute__((visibility("default"))) void *malloc(size_t n) { return __libc_malloc(n); }\n__attribute__((visibility("default"))) void free(void *p) { __libc_free(p); }\n' >"$tmp/pass.c"
cc -O2 -fPIC -shared -o "$tmp/pass.so" "$tmp/pass.c"

rate() { awk '/allocations\/s/ { print $1 }' "$1"; }
# cpu FILE — the program's own CPU time per allocation, in ns (what the machine's other load and
# a reader of the ring spend is not in it: steadier than the rate on a shared machine).
cpu() { awk '/ns of CPU per allocation/ { print $1 }' "$1"; }
# row NAME FILE BARE_FILE — the rate and its slowdown, the CPU per allocation and what it adds.
row()
{
	printf '  %-34s %12.0f  %6.1f%%  %6.1f ns  %+6.1f ns\n' "$1" "$(rate "$2")" \
		"$(awk -v r="$(rate "$2")" -v b="$(rate "$3")" 'BEGIN { print (b > 0 ? 100 * (b - r) / b : 0) }')" \
		"$(cpu "$2")" "$(awk -v c="$(cpu "$2")" -v b="$(cpu "$3")" 'BEGIN { print c - b }')"
}

for mode in fill touch; do
	round=1
	while [ "$round" -le "$reps" ]; do
		echo "== allocation library on mallocs ($mode), ${secs}s, round $round of $reps (allocations/s, slowdown; CPU per allocation, added)"
		"$wl" "$secs" "$mode" >"$tmp/bare"
		printf '  %-34s %12.0f           %6.1f ns\n' "bare" "$(rate "$tmp/bare")" "$(cpu "$tmp/bare")"
		LD_PRELOAD="$tmp/pass.so" "$wl" "$secs" "$mode" >"$tmp/pass"
		row "pass-through malloc/free" "$tmp/pass" "$tmp/bare"
		for mean in 524288 65536; do
			"$build/bench/alloc_bench" "$lib" "$mean" "$wl" "$secs" "$mode" >"$tmp/lib" 2>"$tmp/lib.err"
			row "libproftop-alloc mean $mean" "$tmp/lib" "$tmp/bare"
			sed 's/^/      /' "$tmp/lib.err"
		done
		./proftop -b -n 0 --mode alloc -- "$wl" "$secs" "$mode" >"$tmp/proftop" 2>/dev/null
		row "proftop -b --mode alloc" "$tmp/proftop" "$tmp/bare"
		if command -v heaptrack >/dev/null 2>&1; then
			(cd "$tmp" && heaptrack -o "$tmp/ht" "$OLDPWD/$wl" "$secs" "$mode" >"$tmp/ht.out" 2>&1)
			row "heaptrack" "$tmp/ht.out" "$tmp/bare"
		fi
		if command -v valgrind >/dev/null 2>&1; then
			valgrind --tool=massif --massif-out-file="$tmp/massif.out" "$wl" "$secs" "$mode" \
				>"$tmp/massif" 2>/dev/null
			row "valgrind --tool=massif" "$tmp/massif" "$tmp/bare"
		fi
		round=$((round + 1))
	done
done

# --- accuracy at the default rate -----------------------------------------------------------------
split=$build/workloads/allocsplit
runs=${ALLOC_ACCURACY:-10}
if [ -x "$split" ] && [ -x ./proftop ]; then
	echo "== accuracy at the default rate (512 KiB): allocsplit, $runs runs"
	n=1
	while [ "$n" -le "$runs" ]; do
		./proftop -b -n 0 --mode alloc -- "$split" >"$tmp/split" 2>/dev/null
		awk '/^seventy / { a = $2 } /^thirty / { b = $2 } /^leak / { l = $2 }
			/^=== proftop final/ { for (i = 1; i < NF; i++) if ($i == "in" && $(i + 1) == "use") u = $(i + 2); on = 1 }
			/^===/ && !/final/ { on = 0 }
			on && $(NF - 1) == "alloc_seventy" { p7 = $1 } on && $(NF - 1) == "alloc_thirty" { p3 = $1 }
			END { printf "  run %2d: 70/30 split %.2f (truth %.2f), in use %d vs leaked %d: %+.1f%%\n",
				'"$n"', 100 * p7 / (p7 + p3), 100 * a / (a + b), u, l, 100 * (u - l) / l }' "$tmp/split"
		n=$((n + 1))
	done | tee "$tmp/acc"
	awk '{ d = $5 - $7; gsub(/[()]/, "", d); s += ($5 - substr($7, 1, length($7) - 1)) ^ 2
		e = $NF; sub(/%$/, "", e); le += e * e; n++ }
		END { if (n) printf "  rms: split %.2f points, leak %.1f%%\n", sqrt(s / n), sqrt(le / n) }' "$tmp/acc"
	if command -v heaptrack >/dev/null 2>&1; then
		(cd "$tmp" && heaptrack -o "$tmp/hts" "$OLDPWD/$split" >/dev/null 2>&1)
		heaptrack_print -f "$(ls "$tmp"/hts*.zst "$tmp"/hts*.gz 2>/dev/null | head -n 1)" 2>/dev/null |
			awk '/^total memory leaked:/ { print "  heaptrack: total memory leaked " $4 }'
	fi
fi
