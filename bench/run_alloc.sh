#!/bin/sh
# bench/run_alloc.sh BUILD_DIR — the cost of the allocation library (--mode alloc) on the
# malloc-heavy mallocs workload (4 threads of malloc/free, blocks of 16-1024 bytes), run for
# ALLOC_SECONDS (2) of wall time each: bare; with libproftop-alloc.so at the default mean (one
# sample every 512 KiB) and at 64 KiB, its ring read as proftop reads it (bench/alloc_bench); a
# pass-through library (the price of interposing malloc at all); heaptrack; valgrind's massif.
# Each twice: with blocks written whole ("fill", as programs use what they allocate) and with
# only their first byte written (the allocator alone, the worst case). The figure is the
# allocations per second the workload counts, and the slowdown against bare in the same round.
# ALLOC_REPEAT rounds (3). Figures only; nothing here fails on a timing.
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
row()
{
	printf '  %-34s %12.0f  %6.1f%%\n' "$1" "$2" "$(awk -v r="$2" -v b="$3" 'BEGIN { print (b > 0 ? 100 * (b - r) / b : 0) }')"
}

for mode in fill touch; do
	round=1
	while [ "$round" -le "$reps" ]; do
		echo "== allocation library on mallocs ($mode), ${secs}s, round $round of $reps (allocations/s, slowdown)"
		"$wl" "$secs" "$mode" >"$tmp/bare"
		bare=$(rate "$tmp/bare")
		printf '  %-34s %12.0f\n' "bare" "$bare"
		LD_PRELOAD="$tmp/pass.so" "$wl" "$secs" "$mode" >"$tmp/pass"
		row "pass-through malloc/free" "$(rate "$tmp/pass")" "$bare"
		for mean in 524288 65536; do
			"$build/bench/alloc_bench" "$lib" "$mean" "$wl" "$secs" "$mode" >"$tmp/lib" 2>"$tmp/lib.err"
			row "libproftop-alloc mean $mean" "$(rate "$tmp/lib")" "$bare"
			sed 's/^/      /' "$tmp/lib.err"
		done
		if command -v heaptrack >/dev/null 2>&1; then
			(cd "$tmp" && heaptrack -o "$tmp/ht" "$OLDPWD/$wl" "$secs" "$mode" >"$tmp/ht.out" 2>&1)
			row "heaptrack" "$(rate "$tmp/ht.out")" "$bare"
		fi
		if command -v valgrind >/dev/null 2>&1; then
			valgrind --tool=massif --massif-out-file="$tmp/massif.out" "$wl" "$secs" "$mode" \
				>"$tmp/massif" 2>/dev/null
			row "valgrind --tool=massif" "$(rate "$tmp/massif")" "$bare"
		fi
		round=$((round + 1))
	done
done
