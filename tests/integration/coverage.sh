#!/bin/sh
# coverage.sh — --mode coverage on tests/workloads/covprog.c (-O0 -g), whose lines run a known
# number of times: the lcov tracefile has those DA counts exactly (a branch taken 1000 of 3000
# times, a loop body 12345 times, a function never called), the real `lcov --summary` and
# `genhtml` read it, --annotate shows the same counts and marks the lines that never ran, and
# gcov's counts of the same program rebuilt with --coverage agree line for line. The cap stops a
# line's counting (>=N); attached to a running program, proftop's probes are breakpoints in its
# code (the probed instruction's first byte reads 0xcc in /proc/PID/mem) until proftop ends, by
# SIGTERM or SIGKILL: then the byte is the file's again at once, and the program runs on and
# prints what it prints without proftop. --histogram's pairs; -p with --module NAME counts a
# library (built here with -g) the process had mapped before the attach. Without root: an error
# that says so.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/covprog"
require_perf_events
if [ "$(id -u)" -ne 0 ]; then
	skip "all" "coverage mode loads a BPF program, which needs root (or CAP_BPF and CAP_PERFMON)"
	finish
fi
for tool in lcov genhtml gcov gcc; do
	command -v $tool >/dev/null 2>&1 || { fail "setup" "$tool missing (make deps installs lcov)"; finish; }
done
SRC=$ROOT/tests/workloads/covprog.c

# line_of TEXT — the number of covprog.c's line that holds TEXT.
line_of()
{
	grep -nF -- "$1" "$SRC" | head -n 1 | cut -d: -f1
}

# da FILE LINE — the DA count of LINE in the tracefile.
da()
{
	sed -n "s/^DA:$2,\([0-9]*\)\$/\1/p" "$1" | head -n 1
}

# has_da FILE TEXT COUNT — the line holding TEXT ran COUNT times.
has_da()
{
	local n got
	n=$(line_of "$2")
	got=$(da "$1" "$n")
	[ "$got" = "$3" ] && return 0
	echo "line $n ($2): DA ${got:-missing}, expected $3"
	return 1
}

# --- exact counts: no cap ------------------------------------------------------------------------
run_proftop exact --mode coverage --coverage-cap 0 -b -n 0 -o "$TMPD/exact.info" -- "$WL/covprog"
check "exact-exit-0" status "$RC" 0 "$ERR"
check "exact-program-output" has "$OUT" '^taken 1000 sink 76193340$'
INFO=$TMPD/exact.info
check "da-branch-3000" has_da "$INFO" "if (i % 3 == 0)" 3000
check "da-taken-1000" has_da "$INFO" "taken++;" 1000
check "da-loop-test-3001" has_da "$INFO" "for (int i = 0; i < n; i++)" 3001
check "da-body-12345" has_da "$INFO" "sink += j;" 12345
check "da-loop-test-12346" has_da "$INFO" "for (int j = 0; j < n; j++)" 12346
check "da-never-0" has_da "$INFO" "sink = -1;" 0
check "da-never-called-site-0" has_da "$INFO" "		never_called();" 0
check "da-call-1" has_da "$INFO" "spin(12345);" 1
check "fnda-never-0" has "$INFO" '^FNDA:0,never_called$'
check "fnda-every-third-1" has "$INFO" '^FNDA:1,every_third$'
check "fn-at-declaration" has "$INFO" "^FN:$(line_of 'long every_third(int n)'),every_third\$"
check "sf-absolute" has "$INFO" "^SF:$SRC\$"
# The table: executions, and the share of lines that ran.
check "top-never-called-row" sh -c "grep -E '^ +0\.00 +0\.00 +0 +0/3 +0% never_called  covprog\$' '$OUT'"
check "top-spin-lines" sh -c "grep -E ' 24693 +4/4 +100% spin  covprog\$' '$OUT'"

# lcov and genhtml read it.
lcov --summary "$INFO" >"$TMPD/summary" 2>&1
check "lcov-summary" sh -c "grep -E 'lines\\.+: [0-9.]+% \\(21 of 29 lines\\)' '$TMPD/summary' &&
	grep -E 'functions\\.+: 75\\.0% \\(3 of 4 functions\\)' '$TMPD/summary' || cat '$TMPD/summary'"
genhtml -q -o "$TMPD/html" "$INFO" >"$TMPD/genhtml.log" 2>&1
check "genhtml" sh -c "[ -s '$TMPD/html/index.html' ] && grep -rq 'covprog.c' '$TMPD/html' || cat '$TMPD/genhtml.log'"

# --- --annotate: the same counts, the lines that never ran marked -------------------------------
run_proftop annotate --mode coverage --coverage-cap 0 -b -n 0 --annotate every_third -- "$WL/covprog"
check "annotate-exit-0" status "$RC" 0 "$ERR"
check "annotate-3000" has "$OUT" "  3000  covprog.c:$(line_of 'if (i % 3 == 0)')  "
check "annotate-1000" has "$OUT" "  1000  covprog.c:$(line_of 'taken++;')  "
check "annotate-3001" has "$OUT" "  3001  covprog.c:$(line_of 'for (int i = 0; i < n; i++)')  "
check "annotate-heading" has "$OUT" 'EXECUTED  LINE'
run_proftop never --mode coverage --coverage-cap 0 -b -n 0 --annotate never_called -- "$WL/covprog"
check "annotate-never" has "$OUT" "#####  covprog.c:$(line_of 'sink = -1;')  "
check "annotate-never-text" has "$OUT" "#####  covprog.c:$(line_of 'sink = -1;')  *sink = -1;\$"

# --- gcov on the same program built with --coverage: the counts agree ---------------------------
mkdir -p "$TMPD/gcov" && cp "$SRC" "$TMPD/gcov/covprog.c"
(cd "$TMPD/gcov" && gcc -O0 -g --coverage covprog.c -o covprog && ./covprog >/dev/null &&
	gcov covprog.c >/dev/null 2>&1)
# agree_with_gcov — every line gcov counts has proftop's count (##### is 0; 1* is 1).
agree_with_gcov()
{
	local gcovfile=$TMPD/gcov/covprog.c.gcov bad=0 n=0 count line ours
	[ -s "$gcovfile" ] || { echo "gcov wrote no covprog.c.gcov"; return 1; }
	while IFS=: read -r count line _; do
		count=$(echo "$count" | tr -d ' *')
		line=$(echo "$line" | tr -d ' ')
		case $count in -|'') continue ;; '#####') count=0 ;; esac
		n=$((n + 1))
		ours=$(da "$INFO" "$line")
		if [ "$ours" != "$count" ]; then
			echo "line $line: gcov $count, proftop ${ours:-none}"
			bad=1
		fi
	done <"$gcovfile"
	[ "$n" -ge 20 ] || { echo "gcov counted only $n lines"; return 1; }
	return $bad
}
check "gcov-agrees" agree_with_gcov

# --- --histogram: Inferno's (address, count) pairs, each line's first address --------------------
run_proftop histogram --mode coverage --coverage-cap 0 -b -n 0 --histogram -- "$WL/covprog"
check "histogram-exit-0" status "$RC" 0 "$ERR"
check "histogram-heading" has "$OUT" '^--- histogram  covprog$'
# hist_has TEXT COUNT — the line holding TEXT starts at an address the histogram counts COUNT.
hist_has()
{
	local n addr
	n=$(line_of "$1")
	addr=$(objdump --dwarf=decodedline "$WL/covprog" | awk -v n="$n" '$1 == "covprog.c" && $2 == n { print $3; exit }')
	grep -q "^$addr $2\$" "$OUT" && return 0
	echo "no '$addr $2' (line $n: $1) in the histogram:"
	sed -n '/^--- histogram/,$p' "$OUT" | head -n 12
	return 1
}
check "histogram-branch" hist_has "if (i % 3 == 0)" 3000
check "histogram-body" hist_has "sink += j;" 12345

# --- the cap -------------------------------------------------------------------------------------
run_proftop capped --mode coverage -b -n 0 -o "$TMPD/capped.info" --annotate spin -- "$WL/covprog"
check "capped-exit-0" status "$RC" 0 "$ERR"
check "capped-shown" has "$OUT" ">=1000  covprog.c:$(line_of 'sink += j;')  "
# The program ended before the table: its links closed then, its 45 probes' counts kept.
check "ended-probes-closed" has "$OUT" '^=== proftop final .* coverage: cap 1000  lines ran 21  probes 45  placed 0 '
# The probe was removed long before the 12345th run: counting stopped near the cap.
capped_near()
{
	local got
	got=$(da "$TMPD/capped.info" "$(line_of 'sink += j;')")
	[ -n "$got" ] && [ "$got" -ge 1000 ] && [ "$got" -lt 12345 ] && return 0
	echo "DA of the capped body: ${got:-missing} (expected 1000 up to well below 12345)"
	return 1
}
check "capped-stopped" capped_near
run_proftop once --mode coverage --coverage-cap 1 -b -n 0 -o "$TMPD/once.info" -- "$WL/covprog"
check "once-exit-0" status "$RC" 0 "$ERR"
check "once-same-lines" sh -c "[ \"\$(grep -c '^DA:.*,[1-9]' '$TMPD/once.info')\" = \"\$(grep -c '^DA:.*,[1-9]' '$INFO')\" ]"

# --- attached: the breakpoints are in the program until proftop ends ----------------------------
# first_byte PID ADDR_OF — the byte of the running program's code at main's first instruction.
MAIN_ADDR=$(nm "$WL/covprog" | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')
first_byte()
{
	python3 - "$1" "$WL/covprog" "$MAIN_ADDR" <<'PY'
import os, struct, sys
pid, path, vaddr = int(sys.argv[1]), sys.argv[2], int(sys.argv[3], 16)
data = open(path, "rb").read()
phoff, phentsize, phnum = struct.unpack_from("<Q", data, 32)[0], *struct.unpack_from("<HH", data, 54)
offset = None
for i in range(phnum):
    p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
    if p_type == 1 and p_vaddr <= vaddr < p_vaddr + p_filesz:
        offset = p_offset + vaddr - p_vaddr
real = os.path.realpath(path)
for line in open("/proc/%d/maps" % pid):
    f = line.split()
    if len(f) >= 6 and f[5] == real:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        pgoff = int(f[2], 16)
        if pgoff <= offset < pgoff + hi - lo:
            with open("/proc/%d/mem" % pid, "rb") as mem:
                mem.seek(lo + offset - pgoff)
                print("%02x %02x" % (mem.read(1)[0], data[offset]))
            sys.exit(0)
sys.exit(1)
PY
}

"$WL/covprog" 5 >"$TMPD/bare.stdout" 2>&1
BARE_RC=$?
for sig in TERM KILL; do
	"$WL/covprog" 5 >"$TMPD/attached-$sig.stdout" 2>&1 &
	prog=$!
	BG_PIDS="$BG_PIDS $prog"
	sleep 0.3
	before=$(first_byte $prog)
	timeout -k 5 30 "$PROFTOP_BIN" --mode coverage -p $prog -b -n 0 \
		>"$TMPD/attached-$sig.out" 2>"$TMPD/attached-$sig.err" </dev/null &
	pt=$!
	probed=""
	for _ in $(seq 1 50); do
		sleep 0.1
		probed=$(first_byte $prog)
		[ "${probed%% *}" = cc ] && break
	done
	check "attached-$sig-before-unprobed" sh -c "[ '${before%% *}' = '${before##* }' ] || echo 'main starts with ${before%% *}, the file has ${before##* }'"
	check "attached-$sig-probed" sh -c "[ '${probed%% *}' = cc ] || echo 'main starts with ${probed%% *}: no breakpoint'"
	kill -$sig $pt
	wait $pt
	after=$(first_byte $prog)
	check "attached-$sig-unprobed-after" sh -c "[ '${after%% *}' = '${after##* }' ] || echo 'main starts with ${after%% *} after proftop ended, the file has ${after##* }'"
	wait $prog
	check "attached-$sig-program-status" status $? "$BARE_RC" /dev/null
	check "attached-$sig-program-output" cmp "$TMPD/bare.stdout" "$TMPD/attached-$sig.stdout"
done
check "attached-TERM-table" has "$TMPD/attached-TERM.out" ' main  covprog$'

# --- -p with --module NAME: a library the process has mapped already is counted -----------------
mkdir -p "$TMPD/lib"
cat >"$TMPD/lib/covlib.c" <<'EOF'
int covlib_tick(int i)
{
	int twice = i * 2;
	return twice + 1;
}
EOF
cat >"$TMPD/lib/ticker.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
int covlib_tick(int i);
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 150; i++) {
		sum += covlib_tick(i);
		usleep(20000);
	}
	printf("sum %d\n", sum);
	return 0;
}
EOF
(cd "$TMPD/lib" && gcc -O0 -g -shared -fPIC covlib.c -o libcovlib.so &&
	gcc -O0 -g ticker.c -o ticker -L. -lcovlib -Wl,-rpath,"$TMPD/lib")
"$TMPD/lib/ticker" >"$TMPD/ticker.out" 2>&1 &
ticker=$!
BG_PIDS="$BG_PIDS $ticker"
sleep 0.5
run_proftop module --mode coverage -p $ticker --module libcovlib -b -n 0 -d 1.5
check "module-exit-0" status "$RC" 0 "$ERR"
check "module-counted" sh -c "grep -E '^ +[0-9.]+ +[0-9.]+ +[1-9][0-9]* +4/4 +100% covlib_tick  libcovlib\\.so\$' '$OUT' || { cat '$OUT' '$ERR'; exit 1; }"
wait $ticker
check "module-program-output" has "$TMPD/ticker.out" '^sum 22500$'

# --- without root: it says what it needs -------------------------------------------------------
if command -v setpriv >/dev/null 2>&1; then
	chmod o+rx "$TMPD"
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$PROFTOP_BIN" --mode coverage \
		-b -n 0 -- "$WL/covprog" >"$TMPD/nobody.out" 2>"$TMPD/nobody.err" </dev/null
	check "nobody-fails" sh -c "[ $? -ne 0 ]"
	check "nobody-says-root" has "$TMPD/nobody.err" 'needs root, or CAP_BPF and CAP_PERFMON'
else
	fail "nobody" "setpriv missing (util-linux)"
fi

finish
