# lib.sh — sourced by every tests/integration/*.sh: where the binaries are, running proftop under
# a time limit, reading its batch output, and counting checks.
#
# Each check records one line in the results file named by $PROFTOP_RESULTS (format in
# tests/results.sh), so run_all.sh can sum every script. A script run by hand keeps its own file
# and prints its own summary. Every script ends with `finish`, which exits 1 if one of its checks
# failed; the proftop outputs are then kept for a look.
#
# Environment: BUILD_DIR (default build, or build-asan under PROFTOP_SANITIZER=asan), PROFTOP_BIN
# (the binary under test, default ./proftop), PROFTOP_TIMEOUT (seconds per proftop run, default
# 60), PROFTOP_KEEP_TMP. PROFTOP itself is proftop's own options variable: it is unset here so a
# developer's setting cannot change the results; the tests that want it set it per run. So is
# DEBUGINFOD_URLS.

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. "$ROOT/tests/results.sh"

if [ "${PROFTOP_SANITIZER:-}" = asan ]; then
	BUILD_DIR=${BUILD_DIR:-build-asan}
	# 86 tells a sanitizer's exit from every status the tests expect; the reports are also
	# searched for in each run's stderr.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}
fi
BUILD_DIR=${BUILD_DIR:-build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/${BUILD_DIR#./} ;; esac
WL=$BUILD_DIR/workloads
PROFTOP_BIN=${PROFTOP_BIN:-proftop}
case $PROFTOP_BIN in /*) ;; *) PROFTOP_BIN=$ROOT/${PROFTOP_BIN#./} ;; esac
unset PROFTOP
# libdebuginfod's variables would have proftop fetch debug files (debuginfod.sh sets them per run).
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
SUITE=$(basename "$0" .sh)
CORES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
COLUMNS_LINE='  SELF%  TOTAL%  SAMPLES  FUNCTION  MODULE'

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/proftop-it-$SUITE.XXXXXX") || exit 1
BG_PIDS=""
own_results=0
if [ -z "${PROFTOP_RESULTS:-}" ]; then
	PROFTOP_RESULTS=$TMPD/results
	own_results=1
fi

# suite_failures — failures this script recorded. Counted from the results file, since a check
# that runs proftop records from inside a subshell.
suite_failures()
{
	awk -v p="$SUITE/" '$1 == "fail" && index($3, p) == 1 { n += $2 } END { print n + 0 }' \
	    "$PROFTOP_RESULTS" 2>/dev/null || echo 0
}

lib_cleanup()
{
	for pid in $BG_PIDS; do
		kill -9 "$pid" 2>/dev/null
	done
	if ls "$TMPD"/*.out >/dev/null 2>&1 &&
	    { [ "$(suite_failures)" -gt 0 ] || [ -n "${PROFTOP_KEEP_TMP:-}" ]; }; then
		echo "      outputs kept in $TMPD"
	else
		rm -rf "$TMPD"
	fi
}
trap lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- counting -------------------------------------------------------------------------------

pass()
{
	echo "ok    $SUITE: $1"
	results_add "$PROFTOP_RESULTS" pass 1 "$SUITE/$1"
}

# fail NAME [DETAIL] — DETAIL may span lines; each is shown indented.
fail()
{
	echo "FAIL  $SUITE: $1"
	[ $# -gt 1 ] && [ -n "$2" ] && printf '%s\n' "$2" | head -n 20 | sed 's/^/      | /'
	results_add "$PROFTOP_RESULTS" fail 1 "$SUITE/$1"
}

skip()
{
	echo "skip  $SUITE: $1 — $2"
	results_add "$PROFTOP_RESULTS" skip 1 "$SUITE/$1"
}

# check NAME CMD... — one check: passes when CMD succeeds; what CMD printed explains a failure.
# CMD runs in a subshell, so it can only report, not set variables.
check()
{
	local name why
	name=$1
	shift
	if why=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$why"
	fi
}

# cpu-clock samples count the time a thread held a CPU, including the time the hypervisor stole
# from that CPU; the kernel's CPU times (/proc/PID/stat, CLOCK_THREAD_CPUTIME_ID) leave steal out.
# So when the VM is starved, CPU time is no reference for a sample count.
# steal_mark — the machine's stolen and total CPU ticks so far, for check_cpu.
steal_mark()
{
	awk '/^cpu / { for (i = 2; i <= 9; i++) t += $i; print $9 "," t; exit }' /proc/stat
}

# steal_since MARK — percent of the machine's CPU time stolen since steal_mark printed MARK.
steal_since()
{
	awk -v m="$1" '/^cpu / { split(m, a, ","); for (i = 2; i <= 9; i++) t += $i
		printf "%d", (t > a[2] ? 100 * ($9 - a[1]) / (t - a[2]) : 0); exit }' /proc/stat
}

# check_cpu NAME MARK CMD... — a check whose reference is CPU time: skipped when more than
# STEAL_MAX percent (default 20) of the CPU time since MARK was stolen.
check_cpu()
{
	local name stolen
	name=$1
	stolen=$(steal_since "$2")
	shift 2
	if [ "$stolen" -gt "${STEAL_MAX:-20}" ]; then
		skip "$name" "the hypervisor stole $stolen % of the CPU meanwhile"
	else
		check "$name" "$@"
	fi
}

finish()
{
	[ $own_results = 1 ] && results_summary "$PROFTOP_RESULTS"
	[ "$(suite_failures)" -eq 0 ]
	exit
}

# --- assertions for check: silent on success, say what was seen on failure ------------------

# approx VALUE WANT TOL — |VALUE - WANT| <= TOL
approx()
{
	awk -v v="$1" -v w="$2" -v t="$3" \
	    'BEGIN { exit !(v ~ /^-?[0-9]+(\.[0-9]*)?$/ && v - w <= t && w - v <= t) }' ||
		{ echo "got $1, want $2 ± $3"; return 1; }
}

# between VALUE LO HI — LO <= VALUE <= HI
between()
{
	awk -v v="$1" -v lo="$2" -v hi="$3" \
	    'BEGIN { exit !(v ~ /^-?[0-9]+(\.[0-9]*)?$/ && v >= lo + 0 && v <= hi + 0) }' ||
		{ echo "got $1, want $2..$3"; return 1; }
}

# status RC WANT [FILE] — an exit status, showing FILE (stderr) when it is not the one wanted.
status()
{
	[ "$1" -eq "$2" ] && return 0
	echo "exit status $1, want $2"
	[ $# -gt 2 ] && head -n 5 "$3"
	return 1
}

# has FILE ERE [WHAT] — some line of FILE matches ERE.
has()
{
	grep -Eq -- "$2" "$1" && return 0
	echo "no line matches /$2/ in ${3:-$1}:"
	head -n 8 "$1"
	return 1
}

# --- running proftop ------------------------------------------------------------------------

# need FILE... — the binaries a script runs; missing ones fail the script at once.
need()
{
	local f missing
	missing=""
	for f in "$@"; do
		[ -x "$f" ] || missing="$missing $f"
	done
	[ -z "$missing" ] && return 0
	fail "setup" "missing:$missing (make test builds them)"
	finish
}

# run_proftop TAG ARG... — run proftop with stdin from /dev/null and a time limit. Sets OUT and
# ERR (its stdout and stderr files, named after TAG) and RC. A timeout or a sanitizer report is
# recorded as a failure of its own, named TAG.
run_proftop()
{
	local tag t0 limit
	tag=$1
	shift
	OUT=$TMPD/$tag.out
	ERR=$TMPD/$tag.err
	limit=${PROFTOP_TIMEOUT:-60}
	t0=$(date +%s)
	timeout -k 5 "$limit" "$PROFTOP_BIN" "$@" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	# timeout(1) says 124, or 137 when proftop also ignored SIGTERM: tell that from a
	# command that died of SIGKILL by the clock.
	if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
		fail "$tag-timeout" "proftop $* still running after ${limit}s"
	fi
	if grep -Eq 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$ERR"; then
		fail "$tag-sanitizer" "$(grep -E -A12 'ERROR: |runtime error:' "$ERR")"
	fi
	return 0
}

# --- reading batch output ---------------------------------------------------------------------

# final_samples FILE — the samples of the last "=== proftop final" header in FILE.
final_samples()
{
	sed -n 's/^=== proftop final .* samples \([0-9]*\) .*/\1/p' "$1" | tail -n 1
}

# final_cpu FILE — proftop's own CPU share (percent) in that header.
final_cpu()
{
	sed -n 's/^=== proftop final .* proftop \([0-9.]*\)% CPU.*/\1/p' "$1" | tail -n 1
}

# final_table FILE — the rows of the last `=== proftop final` table, as printed.
final_table()
{
	awk '
	/^=== proftop final/ { on = 1; n = 0; delete row; next }
	on && /^  SELF%/ { next }
	on && NF >= 5 && $1 ~ /^[0-9]+\.[0-9]+$/ && $2 ~ /^[0-9]+\.[0-9]+$/ && ($3 ~ /^[0-9]+$/ || $3 ~ /^[0-9.]+[BKMGTPE]$/) {
		row[n++] = $0
		next
	}
	on { on = 0 }
	END { for (i = 0; i < n; i++) print row[i] }
	' "$1"
}

# row_value FILE FUNCTION MODULE FIELD — FIELD (1 SELF%, 2 TOTAL%, 3 SAMPLES) of the final-table
# row for FUNCTION in MODULE (any module when MODULE is empty), summed if several match; prints
# "missing" when none does. The function name is everything between the third field and the last.
row_value()
{
	final_table "$1" | awk -v f="$2" -v m="$3" -v k="$4" '
	{
		name = $0
		sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		sub(/ +[^ ]+ *$/, "", name)
		if (name == f && (m == "" || $NF == m)) { sum += $k; hit++ }
	}
	END { if (hit) printf "%.2f\n", sum; else print "missing" }'
}

self_pct()
{
	row_value "$1" "$2" "${3:-}" 1
}

total_pct()
{
	row_value "$1" "$2" "${3:-}" 2
}

# rows_named FILE FUNCTION — how many final-table rows are for FUNCTION.
rows_named()
{
	final_table "$1" | awk -v f="$2" '
	{ name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); sub(/ +[^ ]+ *$/, "", name) }
	name == f { n++ }
	END { print n + 0 }'
}

# one_row FILE FUNCTION — FUNCTION has exactly one final row: its samples from every thread and
# process were merged.
one_row()
{
	local n
	n=$(rows_named "$1" "$2")
	[ "$n" -eq 1 ] || { echo "$n rows for $2, want 1 (aggregated across processes)"; return 1; }
}

# module_of FILE FUNCTION — the module column of FUNCTION's first row.
module_of()
{
	final_table "$1" | awk -v f="$2" '
	{ name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); sub(/ +[^ ]+ *$/, "", name) }
	name == f { print $NF; exit }'
}

# final_header FILE — the last `=== proftop final` header line.
final_header()
{
	grep '^=== proftop final' "$1" | tail -n 1
}

# header_value FILE KEY — the number after KEY in the final header ("samples", "overflow",
# "elapsed", "freq", ...), without a unit; "missing" if absent.
header_value()
{
	final_header "$1" | awk -v k="$2" '
	{ for (i = 1; i < NF; i++) if ($i == k) { v = $(i + 1); sub(/s$/, "", v); print v; exit } }
	END { if (v == "") print "missing" }'
}

# --- assertions on the layout of batch output ----------------------------------------------------

# one_final FILE — exactly one final table, and it comes last.
one_final()
{
	local n
	n=$(grep -c '^=== proftop final' "$1")
	[ "$n" -eq 1 ] || { echo "$n \"=== proftop final\" headers"; head -n 5 "$1"; return 1; }
	[ "$(grep -E '^(---|===) proftop' "$1" | tail -n 1 | cut -c1-3)" = "===" ] ||
		{ echo "a periodic table follows the final one"; return 1; }
}

# headers_well_formed FILE — every table header carries the counters, elapsed time and frequency,
# and the column line follows it.
headers_well_formed()
{
	awk -v cols="$COLUMNS_LINE" '
	/^(---|===) proftop/ {
		n++
		if ($0 !~ /samples [0-9]+  overflow [0-9]+  dropped [0-9]+  throttled [0-9]+  truncated [0-9]+/ ||
		    $0 !~ /elapsed [0-9]+\.[0-9][0-9]s/ || $0 !~ /freq [0-9]+ Hz/) {
			print "bad header: " $0; bad = 1
		}
		if ((getline line) <= 0 || line != cols) { print "after \"" $0 "\" comes \"" line "\""; bad = 1 }
	}
	END { if (!n) print "no table header"; exit bad || !n }' "$1"
}

# cost_in_headers FILE — every table header has proftop's own figures after its counters,
# "proftop 1.3% CPU 35.0M": a share of at least 0 and some resident memory.
cost_in_headers()
{
	awk '
	/^(---|===) proftop/ {
		n++
		if (!match($0, /  proftop [0-9]+\.[0-9]% CPU [0-9.]+[BKMGT]( |$)/)) { print "no cost in: " $0; bad = 1; next }
		split(substr($0, RSTART + 2), f, " ")
		if (f[2] + 0 < 0 || f[4] + 0 <= 0) { print "bad cost in: " $0; bad = 1 }
	}
	END { if (!n) print "no table header"; exit bad || !n }' "$1"
}

# rows_well_formed FILE — each final row is printf("%7.2f %7.2f %8lu  FUNCTION  MODULE") (the
# numbers are printed again and compared), with TOTAL% >= SELF%.
rows_well_formed()
{
	final_table "$1" | awk '
	{
		p = sprintf("%7.2f %7.2f %8d  ", $1, $2, $3)
		rest = substr($0, length(p) + 1)
		if (substr($0, 1, length(p)) != p || rest !~ /^[^ ].*  +[^ ]+$/) { print "bad row: " $0; bad = 1 }
		if ($2 + 0.005 < $1) { print "TOTAL% < SELF%: " $0; bad = 1 }
		n++
	}
	END { if (!n) print "no rows in the final table"; exit bad || !n }'
}

# --- the kernel's side ------------------------------------------------------------------------

# perf_events_ok — may this user open sampling perf events? Sets PERF_EVENTS_WHY when not.
# Asks the kernel directly (perf_event_open through python3), else perf stat, else the sysctl.
perf_events_ok()
{
	local rc
	PERF_EVENTS_WHY=""
	if ! [ -e /proc/sys/kernel/perf_event_paranoid ]; then
		PERF_EVENTS_WHY="this kernel has no perf events (no /proc/sys/kernel/perf_event_paranoid)"
		return 1
	fi
	if command -v python3 >/dev/null 2>&1; then
		PERF_EVENTS_WHY=$(python3 - 2>&1 <<'PY'
import ctypes, os, platform, struct, sys
nr = {"x86_64": 298, "aarch64": 241, "riscv64": 241, "ppc64le": 319, "s390x": 331,
      "i686": 336, "armv7l": 364}.get(platform.machine())
if nr is None:
    sys.exit(3)
# perf_event_attr: type, size, config, sample_period, sample_type, read_format, flags
# = SOFTWARE, 112, CPU_CLOCK, 1 ms, IP, 0, disabled|exclude_kernel|exclude_hv
attr = struct.pack("=IIQQQQQ", 1, 112, 0, 1000000, 1, 0, 1 | 32 | 64).ljust(112, b"\0")
buf = ctypes.create_string_buffer(attr, len(attr))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fd = libc.syscall(ctypes.c_long(nr), buf, ctypes.c_long(0), ctypes.c_long(-1),
                  ctypes.c_long(-1), ctypes.c_long(0))
if fd < 0:
    print("perf_event_open: " + os.strerror(ctypes.get_errno()))
    sys.exit(1)
os.close(fd)
PY
)
		rc=$?
		[ $rc -eq 0 ] && return 0
		if [ $rc -eq 1 ]; then
			PERF_EVENTS_WHY="$PERF_EVENTS_WHY (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
			return 1
		fi
	fi
	if command -v perf >/dev/null 2>&1; then
		perf stat -e cpu-clock true >/dev/null 2>&1 && return 0
		PERF_EVENTS_WHY="perf stat -e cpu-clock true failed"
		return 1
	fi
	[ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] && return 0
	PERF_EVENTS_WHY="kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid) and not root"
	return 1
}

# require_perf_events — skip the rest of the script, visibly, when perf events are forbidden.
require_perf_events()
{
	perf_events_ok && return 0
	skip "all" "perf events unavailable: $PERF_EVENTS_WHY"
	finish
}

# start_spin [MAX_SECONDS] — start the spin workload in the background; sets SPIN_PID once it has
# printed its pid (its own word for it, which is what a user would pass to -p).
start_spin()
{
	local out i
	out=$TMPD/spin.$$.$(date +%s%N)
	"$WL/spin" "${1:-30}" >"$out" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
	SPIN_PID=""
	i=0
	while [ $i -lt 50 ]; do
		SPIN_PID=$(head -n 1 "$out" 2>/dev/null)
		[ -n "$SPIN_PID" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# --- hand-made tmon.out files ---------------------------------------------------------------

# tmon_file FILE TICKS "ID PACKAGE NAME"... then marks on stdin: a Devel::DProf file with those
# subs, at 100 Hz, TICKS of run time.
tmon_file()
{
	local file=$1 ticks=$2
	shift 2
	{
		printf '#fOrTyTwO\n$hz=100;\n$XS_VERSION='"'"'DProf 20110802.00'"'"';\n'
		printf '# All values are given in HZ\n$over_utime=0; $over_stime=0; $over_rtime=0;\n'
		printf '$over_tests=1;\n$rrun_utime=%d; $rrun_stime=0; $rrun_rtime=%d;\n' "$ticks" "$ticks"
		printf '$total_marks=0\n\nPART2\n'
		for sub in "$@"; do printf '& %s\n' "$sub"; done
		cat
	} >"$file"
}

# known_diff_files OLD NEW — two profiles with known differences. OLD: phase_one 60, phase_two 30,
# gone_soon 10 (100 ticks); NEW, twice as long: phase_two 120 self and brand_new 40 under it,
# phase_one 40.
known_diff_files()
{
	tmon_file "$1" 100 "2 main phase_one" "3 main phase_two" "4 main gone_soon" <<'MARKS'
+ 2
@ 60 0 60
- 2
+ 3
@ 30 0 30
- 3
+ 4
@ 10 0 10
- 4
MARKS
	tmon_file "$2" 200 "2 main phase_two" "3 main phase_one" "4 main brand_new" <<'MARKS'
+ 2
@ 120 0 120
+ 4
@ 40 0 40
- 4
- 2
+ 3
@ 40 0 40
- 3
MARKS
}

# perf_switch_seconds DATA COMM — from `perf record --switch-events` data, the seconds COMM's
# threads spent switched out blocked and preempted (switched out while runnable): "B R".
perf_switch_seconds()
{
	perf script -i "$1" --show-switch-events -F comm,tid,time 2>/dev/null |
		awk -v comm="$2" '$1 == comm && $4 == "PERF_RECORD_SWITCH" { t = $3; sub(/:$/, "", t)
			if ($5 == "OUT") { out[$2] = t; preempted[$2] = $6 == "preempt" }
			else if ($2 in out) {
				if (preempted[$2]) r += t - out[$2]; else b += t - out[$2]
				delete out[$2] } }
			END { printf "%.3f %.3f\n", b, r }'
}

# perf_blocked_split DATA A_RE B_RE — from `perf record -e cs -c 1 --switch-events --call-graph
# dwarf` data: of the time threads spent switched out blocked on a stack with a frame matching
# A_RE or B_RE (awk regexes on the symbol), A's share in percent.
perf_blocked_split()
{
	perf script -i "$1" --show-switch-events -F tid,time,ip,sym 2>/dev/null |
		awk -v a_re=" ($2)" -v b_re=" ($3)" '
		/PERF_RECORD_SWITCH OUT/ { t = $2; sub(/:$/, "", t)
			out[$1] = /preempt/ ? 0 : t; next }
		/PERF_RECORD_SWITCH IN/ { t = $2; sub(/:$/, "", t)
			if (out[$1] && kind[$1] != "") sum[kind[$1]] += t - out[$1]
			out[$1] = 0; kind[$1] = ""; next }
		/^ *[0-9]+ +[0-9.]+: *$/ { tid = $1; kind[tid] = "other"; next }
		$0 ~ (a_re "$") { kind[tid] = "a" }
		$0 ~ (b_re "$") { kind[tid] = "b" }
		END { if (sum["a"] + sum["b"] > 0)
			printf "%.2f\n", 100 * sum["a"] / (sum["a"] + sum["b"]) }'
}

# first_total FILE FUNCTION — TOTAL% of FUNCTION's first row in the final table ("missing").
first_total()
{
	awk -v f="$2" '/^=== proftop final/ { on = 1; next }
		on && $4 == f { print $2; found = 1; exit }
		END { if (!found) print "missing" }' "$1"
}

# switches_allowed — whether context switches may be sampled here (root, or paranoid <= 1).
switches_allowed()
{
	[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]
}
