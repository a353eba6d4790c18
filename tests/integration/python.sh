#!/bin/sh
# python.sh — Python functions in the live stacks of unmodified CPython processes (issue 28).
# pysplit.py spends 30% of its time in hash_blocks (Python calling sha256, native) and 70% in
# count_primes (pure Python), by the clock: on every CPython this machine has (pyenv's 3.8 to
# 3.13, Debian's 3.11), unmodified and with 3.12's -X perf and 3.13's -X perf_jit (whose jitdump
# names its trampolines), the two functions' totals split 30/70 within 5 points; the folded export has native frames around
# the Python ones in one stack (native -> Python -> native); --annotate lists a Python function's
# source lines; a CPython whose layout proftop does not know (3.7) gives one warning and native
# stacks, never a Python name.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
require_perf_events
here=$(cd "$(dirname "$0")" && pwd)
split=$here/../workloads/pysplit.py
# The Python frames are read when the collector reaches a sample: an AddressSanitizer build is
# slower at it, and a switch of function that much later would move some of a phase's samples
# into the next one (README, Python): its phases are as much longer.
seconds=4 cycle=2
[ "${PROFTOP_SANITIZER:-}" = asan ] && seconds=8 cycle=8

# split_of TAG PYTHON ARG... — profile pysplit.py under PYTHON (its ARGs first); checks the
# split and returns the folded file in $TMPD/TAG.folded.
split_of()
{
	local tag py hash count
	tag=$1 py=$2
	shift 2
	run_proftop "$tag" -b -n 0 -o "$TMPD/$tag.folded" -- "$py" "$@" "$split" "$seconds" "$cycle"
	check "$tag-exit" status "$RC" 0 "$ERR"
	hash=$(total_pct "$OUT" hash_blocks pysplit.py)
	count=$(total_pct "$OUT" count_primes pysplit.py)
	check "$tag-split" sh -c "[ '$hash' != missing ] && [ '$count' != missing ] &&
		awk -v h='$hash' -v c='$count' 'BEGIN { s = 100 * c / (h + c); exit !(s >= 65 && s <= 75) }' ||
		{ echo 'count_primes/(both): want 70 +- 5; hash_blocks $hash%, count_primes $count%'; exit 1; }"
}

found=0
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.8.*/bin/python3 \
	  /root/.pyenv/versions/3.9.*/bin/python3 /root/.pyenv/versions/3.10.*/bin/python3 \
	  /root/.pyenv/versions/3.11.*/bin/python3 /root/.pyenv/versions/3.12.*/bin/python3 \
	  /root/.pyenv/versions/3.13.*/bin/python3; do
	if ! [ -x "$py" ]; then
		skip "python-$py" "not on this machine (the image provides pyenv's CPythons; make deps cannot)"
		continue
	fi
	found=$((found + 1))
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $py in /usr/bin/*) tag=debian-$v ;; *) tag=pyenv-$v ;; esac
	split_of "$tag" "$py"
	# Native -> Python -> native in one stack: the interpreter's main, the Python functions,
	# and sha256's C code called from hash_blocks.
	check "$tag-mixed-stack" sh -c "grep -E '^[^ ]*(main|Py_RunMain)[^ ]*;.*;main;(.*;)?hash_blocks;.*(sha256|SHA256|_hashlib|libcrypto)' '$TMPD/$tag.folded' >/dev/null ||
		{ echo 'no stack main ... main;hash_blocks;...sha256 in the folded export:'; grep hash_blocks '$TMPD/$tag.folded' | head -n 3 | cut -c1-300; exit 1; }"
	case $v in
	3.12) split_of "$tag-X-perf" "$py" -X perf ;;
	3.13)
		split_of "$tag-X-perf-jit" "$py" -X perf_jit
		# Its trampolines named from the jitdump it writes (/tmp/jit-PID.dump).
		check "$tag-jitdump-names" sh -c "grep -q 'py::count_primes:.*pysplit.py  \[jit\]' '$OUT' ||
			{ echo 'no py::count_primes [jit] row named from the jitdump:'; grep -E 'jit|anon' '$OUT' | head -n 5; exit 1; }"
		;;
	esac
done
check "some-python" sh -c "[ $found -gt 0 ] || { echo 'no CPython 3.8-3.13 on this machine'; exit 1; }"

# A Python function's lines (Debian's 3.11: its lines come from pysplit.py).
if [ -x /usr/bin/python3.11 ]; then
	run_proftop annotate -b -n 0 --annotate count_primes -- /usr/bin/python3.11 "$split" 2
	check "annotate-python-lines" sh -c "grep -E 'pysplit.py:[0-9]+ +while j \* j <= i:' '$OUT' >/dev/null ||
		{ echo 'no annotated line of count_primes:'; grep -A8 -- '--- annotate' '$OUT'; exit 1; }"
fi

# A CPython without a known layout: one warning, native stacks only.
old=$(ls -d /root/.pyenv/versions/3.7.*/bin/python3 2>/dev/null | head -n 1)
if [ -n "$old" ]; then
	run_proftop old -b -n 0 -- "$old" "$split" 1
	check "old-python-warned-once" sh -c "[ \$(grep -c 'CPython 3.7, whose frames proftop cannot read' '$ERR') -eq 1 ] ||
		{ cat '$ERR'; exit 1; }"
	check "old-python-no-python-names" sh -c "! grep -q 'pysplit.py' '$OUT' ||
		{ grep pysplit.py '$OUT' | head -n 3; exit 1; }"
else
	skip "old-python" "no CPython 3.7 on this machine"
fi
finish
