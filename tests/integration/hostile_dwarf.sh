#!/bin/sh
# hostile_dwarf.sh — debug information and sources that are not what proftop expects, through
# the real binary (--annotate, --asm, --histogram, --no-inline) on copies of the real workloads
# built here as the Makefile builds them:
#   - a function of a megabyte of code with thousands of helpers inlined into it: the profile,
#     --annotate and --asm finish in bounded time and memory, each instruction listed once.
# Every run is bounded by timeout(1) (run_proftop): a hang is a failure of its own.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
require_perf_events
PROFTOP_TIMEOUT=${PROFTOP_TIMEOUT:-30}
SRC=$ROOT/tests/workloads
CC=${CC:-cc}
# What the Makefile builds the workloads with.
WL_CFLAGS="-O2 -g -fomit-frame-pointer -pthread"

# --- a function of a megabyte of code ---------------------------------------------------------
# huge(): STEPS calls of an always_inline helper, each 16 add/imul pairs (128 bytes of code) and
# an inlined-subroutine DIE of its own; main() runs it for SECONDS of CPU time. -O0 compiles it in
# seconds (always_inline still inlines); -O2 would take minutes.
STEPS=5800
awk -v n=$STEPS 'BEGIN {
	print "#include <stdlib.h>\n#include <time.h>\nstatic volatile unsigned long v;"
	print "static inline __attribute__((always_inline)) unsigned long step(unsigned long x, unsigned long k)\n{"
	print "\t__asm__ volatile(\".rept 16\\n\\tadd $1, %0\\n\\timul $3, %0, %0\\n\\t.endr\" : \"+r\"(x));"
	print "\treturn x ^ k;\n}"
	print "__attribute__((noipa)) void huge(void)\n{\n\tunsigned long x = v;"
	for (i = 0; i < n; i++)
		printf "\tx = step(x, %d);\n", i
	print "\tv = x;\n}"
	print "int main(int argc, char **argv)\n{\n\tdouble secs = argc > 1 ? atof(argv[1]) : 1;"
	print "\tstruct timespec ts;\n\n\tdo {\n\t\thuge();"
	print "\t\tclock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);"
	print "\t} while (ts.tv_sec + ts.tv_nsec / 1e9 < secs);\n\treturn 0;\n}"
}' >"$TMPD/huge.c"
if ! $CC -O0 -g -o "$TMPD/huge" "$TMPD/huge.c" 2>"$TMPD/huge-cc.err"; then
	fail "huge-build" "$(cat "$TMPD/huge-cc.err")"
else
	# The address space proftop may use: far above what it needs (about 300 MiB), far below
	# what a copy per instruction of the function per lookup would take. AddressSanitizer
	# reserves terabytes up front, so it runs without the limit.
	as_limit=unlimited
	[ "${PROFTOP_SANITIZER:-}" = asan ] || as_limit=786432
	for mode in lines asm; do
		flag=""
		[ $mode = asm ] && flag=--asm
		(
			ulimit -v $as_limit
			run_proftop "huge-$mode" -b -n 0 --annotate huge $flag -- "$TMPD/huge" 1
			echo $RC >"$TMPD/huge-$mode.rc"
		)
		OUT=$TMPD/huge-$mode.out
		ERR=$TMPD/huge-$mode.err
		check "huge-$mode-exit-0" status "$(cat "$TMPD/huge-$mode.rc")" 0 "$ERR"
		check "huge-$mode-annotated" has "$OUT" '^--- annotate  huge  huge  self [1-9]'
		check "huge-$mode-lines-shown" has "$OUT" '^ +[0-9.]+ +[0-9.]+ +[1-9][0-9]*  huge\.c:[0-9]+  +x = step\(x, [0-9]+\);$'
	done
	# Each instruction once, under its line: 16 imul per step, and no address twice. The
	# output grows with the code, not faster: under 100 bytes per instruction row.
	LC_ALL=C awk '
	/^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  [a-z]/ {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^0x/)
				break
		rows++
		if (seen[$i]++)
			dup = dup " " $i
		if ($0 ~ /  imul rax, rax, 3$/)
			imul++
	}
	END { print rows + 0, imul + 0, dup == "" ? "none" : dup }' "$OUT" >"$TMPD/huge-asm.count"
	read -r rows imul dup <"$TMPD/huge-asm.count"
	check "huge-asm-every-imul-once" status "$imul" $((STEPS * 16))
	check "huge-asm-no-address-twice" test "$dup" = none
	check "huge-asm-output-size" awk -v r="$rows" -v b="$(wc -c <"$OUT")" -v want=$((STEPS * 32)) \
		'BEGIN { if (r >= want && b < r * 100) exit 0; print b " bytes for " r " instruction rows"; exit 1 }'
	check "huge-asm-no-reason-to-refuse" sh -c "! grep -n '^no instructions' '$OUT'"
fi

finish
