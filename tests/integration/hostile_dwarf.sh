#!/bin/sh
# hostile_dwarf.sh — debug information and sources that are not what proftop expects, through
# the real binary (--annotate, --asm, --histogram, --no-inline) on copies of the real workloads
# built here as the Makefile builds them:
#   - corrupt .debug_line, .debug_info, .debug_abbrev, .debug_str, sections past the end of a
#     file cut short: the profile still names functions from .symtab, the lines are unknown, and
#     a warning on stderr names the file and what libdw refused; names with control characters
#     from a corrupt .debug_str or a build directory never reach the terminal raw;
#   - a separate debug file (.gnu_debuglink, or /usr/lib/debug/.build-id in a private mount
#     namespace) of another build: never used, and named in a warning and in the annotation;
#   - source files changed since the build (lines added at the top, cut short), or that are a
#     directory, a FIFO, a symlink loop, unreadable: --annotate says which and why, shows no
#     wrong text and never waits on the FIFO;
#   - a binary without debug information: --annotate says so, and how to get it;
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

# build NAME SOURCE [CFLAGS...] — compile a copy of SOURCE (with burn.h beside it) in $TMPD as
# NAME, as the Makefile builds the workloads.
build()
{
	local name src
	name=$1
	src=$2
	shift 2
	cp "$SRC/burn.h" "$TMPD/" && cp "$src" "$TMPD/$name.c" &&
		$CC $WL_CFLAGS "$@" -o "$TMPD/$name" "$TMPD/$name.c" 2>"$TMPD/$name.cc-err" ||
		{ fail "build-$name" "$(cat "$TMPD/$name.cc-err")"; finish; }
}

# section FILE NAME — "OFFSET SIZE" (hex, as readelf prints them) of section NAME of FILE.
section()
{
	readelf -SW "$1" 2>/dev/null | awk -v s="$2" '{ sub(/^ *\[ *[0-9]+\] /, "") } $1 == s { print $4, $5 }'
}

# overwrite FILE NAME PATTERN — fill section NAME of FILE in place with PATTERN (a Perl string
# literal's body: "\xff", "\e]0;x\a\0") repeated.
overwrite()
{
	set -- "$1" "$2" "$3" $(section "$1" "$2")
	[ $# -eq 5 ] || { fail "no-section-$2" "$1 has no section $2"; return 1; }
	perl -e 'my ($f, $p, $off, $size) = @ARGV; $p = eval "\"$p\""; $size = hex $size;
		open(my $h, "+<", $f) or die "$f: $!"; binmode $h; seek($h, hex $off, 0);
		print $h substr($p x ($size / length($p) + 1), 0, $size); close $h or die "$f: $!"' \
		"$1" "$3" "$4" "$5"
}

# shdr_set FILE NAME FIELD VALUE — set sh_offset or sh_size (FIELD offset or size) of section NAME
# of the ELF64 little-endian FILE to VALUE.
shdr_set()
{
	python3 - "$@" <<'PY'
import struct, sys
path, name, field, value = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0)
b = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
entsize, num, strndx = struct.unpack_from("<HHH", b, 0x3a)
strtab, = struct.unpack_from("<Q", b, shoff + strndx * entsize + 0x18)
for i in range(num):
    at = shoff + i * entsize
    n, = struct.unpack_from("<I", b, at)
    if b[strtab + n:b.index(0, strtab + n)] == name.encode():
        struct.pack_into("<Q", b, at + {"offset": 0x18, "size": 0x20}[field], value)
open(path, "wb").write(b)
PY
}

# no_raw_controls FILE... — no byte of the files is a control character but newline (and none
# is ESC or BEL in particular): what proftop printed cannot act on a terminal.
no_raw_controls()
{
	if LC_ALL=C grep -n "$(printf '[\001-\011\013-\037\177]')" "$@" | head -n 3 | grep .; then
		echo "raw control characters above"
		return 1
	fi
}

line_of()
{
	grep -n "/\* $2 \*/" "$1" | cut -d: -f1
}
HOT_LINE=$(line_of "$SRC/lines.c" "hot line")
# The hot line has about 75 % of two_lines' samples and the cold line 25 % (lines.sh measures how
# closely, against perf). Here the runs are half a second, on shared machines: a check allows 75 ± 10,
# still far from the 25 or 0 of counts put on the wrong line.

# annotated FILE FILE:LINE FIELD — FIELD (1 SELF%, 2 TOTAL%, 3 SAMPLES) of that line's row in
# the last annotation in FILE; "missing" when it has none.
annotated()
{
	awk -v at="$2" -v k="$3" '
	/^--- annotate/ { v = "missing" }
	$4 == at { v = $k }
	END { print v == "" ? "missing" : v }' "$1"
}

build lines "$SRC/lines.c"
build inline "$SRC/inline.c"

# --- corrupt DWARF ------------------------------------------------------------------------------
# Each section overwritten whole, in a copy of lines: the function is still named (from .symtab),
# its samples are on no line, and stderr says which file and what libdw refused.
for sec in debug_line debug_info debug_abbrev; do
	for fill in ff 00; do
		bin=$TMPD/$sec-$fill
		cp "$TMPD/lines" "$bin"
		overwrite "$bin" ".$sec" "\\x$fill" || continue
		run_proftop "$sec-$fill" -b -n 0 --annotate two_lines --histogram -- "$bin" 0.5
		check "$sec-$fill-exit-0" status $RC 0 "$ERR"
		check "$sec-$fill-named-from-symtab" between "$(self_pct "$OUT" two_lines)" 90 100
		check "$sec-$fill-warning" has "$ERR" \
			"^proftop: warning: $bin: its DWARF is corrupt: .*: .+; lines that need it show as unknown\$"
		check "$sec-$fill-one-warning" test "$(grep -c 'DWARF is corrupt' "$ERR")" -eq 1
		check "$sec-$fill-annotation-says-why" has "$OUT" \
			"^no source lines: $bin: its DWARF is corrupt: "
		check "$sec-$fill-no-line" approx "$(annotated "$OUT" "[no" 1)" 100 0.01
		check "$sec-$fill-histogram" has "$OUT" "^--- histogram  $sec-$fill\$"
	done
done

# .debug_str of escape sequences, BEL and newlines: inline's inlined function gets its name there.
bin=$TMPD/escapes
cp "$TMPD/inline" "$bin"
overwrite "$bin" .debug_str '\e]0;pwned\a\n\e[2J\0'
for mode in inline no-inline; do
	flag=""
	[ $mode = no-inline ] && flag=--no-inline
	run_proftop "debug_str-$mode" -b -n 0 $flag -- "$bin" 0.5
	check "debug_str-$mode-exit-0" status $RC 0 "$ERR"
	check "debug_str-$mode-shown-visibly" no_raw_controls "$OUT" "$ERR"
	check "debug_str-$mode-rows" rows_well_formed "$OUT"
done
check "debug_str-inline-named-visibly" has "$TMPD/debug_str-inline.out" 'pwned\^G\^J\^\[\[2J \(inlined\)  escapes$'

# A build directory whose name holds ESC, a newline and a tab: the file names of the DWARF, the
# binary's path in messages, its name in the tables are all shown in visible form.
EVIL=$TMPD/$(printf 'evil\033[31m\n\tdir')
mkdir "$EVIL"
cp "$SRC/burn.h" "$SRC/lines.c" "$EVIL/"
if ! (cd "$EVIL" && $CC $WL_CFLAGS -o lines lines.c) 2>"$TMPD/evil-cc.err"; then
	fail "evil-build" "$(cat "$TMPD/evil-cc.err")"
else
	run_proftop evil -b -n 0 --annotate two_lines --asm -- "$EVIL/lines" 0.5
	check "evil-exit-0" status $RC 0 "$ERR"
	check "evil-shown-visibly" no_raw_controls "$OUT" "$ERR"
	check "evil-file-heading" has "$OUT" '^file .*/evil\^\[\[31m\^J\^Idir/lines\.c$'
	check "evil-hot-line" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 10
	# The same in a saved profile's messages: its debug file is corrupt.
	objcopy --only-keep-debug "$EVIL/lines" "$EVIL/lines.debug"
	objcopy --strip-debug --add-gnu-debuglink="$EVIL/lines.debug" "$EVIL/lines"
	overwrite "$EVIL/lines.debug" .debug_line '\\xff'
	run_proftop evil-debug -b -n 0 --annotate two_lines -- "$EVIL/lines" 0.5
	check "evil-debug-exit-0" status $RC 0 "$ERR"
	check "evil-debug-shown-visibly" no_raw_controls "$OUT" "$ERR"
	check "evil-debug-warning" has "$ERR" \
		'^proftop: warning: .*/evil\^\[\[31m\^J\^Idir/lines: the DWARF of its debug file .*/evil\^\[\[31m\^J\^Idir/lines\.debug is corrupt: '
fi

# --- files cut short ------------------------------------------------------------------------------
# Cut inside .debug_info: the code still runs, the section headers are gone.
set -- $(section "$TMPD/lines" .debug_info)
bin=$TMPD/cut
head -c $((0x$1 + 0x$2 / 2)) "$TMPD/lines" >"$bin"
chmod +x "$bin"
run_proftop cut -b -n 0 --annotate two_lines --histogram -- "$bin" 0.5
check "cut-exit-0" status $RC 0 "$ERR"
check "cut-symbols-warning" has "$ERR" \
	"^proftop: warning: no symbols for $bin: its section headers lie past the end of the file \\(cut short\\?\\); its functions show as cut\\+0x\\.\\.\\.\$"
check "cut-lines-warning" has "$ERR" \
	"^proftop: warning: $bin: its section headers lie past the end of the file \\(cut short\\?\\); no source lines for it\$"
check "cut-functions-by-fde" has "$OUT" '^ +[0-9.]+ +[0-9.]+ +[0-9]+  cut\+0x[0-9a-f]+  cut$'
# A section header that claims more than the file has.
for sec in debug_info debug_line; do
	bin=$TMPD/long-$sec
	cp "$TMPD/lines" "$bin"
	shdr_set "$bin" ".$sec" size 0x10000000
	run_proftop "long-$sec" -b -n 0 --annotate two_lines -- "$bin" 0.5
	check "long-$sec-exit-0" status $RC 0 "$ERR"
	check "long-$sec-named-from-symtab" between "$(self_pct "$OUT" two_lines)" 90 100
	check "long-$sec-warning" has "$ERR" \
		"^proftop: warning: $bin: its DWARF cannot be read: its \\.$sec section reaches past the end of the file \\(cut short\\?\\); no source lines for it\$"
	check "long-$sec-annotation-says-why" has "$OUT" "^no source lines: $bin: its DWARF cannot be read: "
done

# --- debug files of another build -------------------------------------------------------------------
# split NAME — NAME's DWARF moved to NAME.debug, linked by .gnu_debuglink.
split()
{
	objcopy --only-keep-debug "$TMPD/$1" "$TMPD/$1.debug" &&
		objcopy --strip-debug --add-gnu-debuglink="$TMPD/$1.debug" "$TMPD/$1"
}
# other NAME [CFLAGS...] — the debug file of a build of lines.c one line longer, as NAME.debug.
other()
{
	local name
	name=$1
	shift
	sed 's|^\tsink = x + y;|\tsink = x + y + 1;|' "$SRC/lines.c" >"$TMPD/other.c"
	$CC $WL_CFLAGS "$@" -o "$TMPD/other" "$TMPD/other.c" &&
		objcopy --only-keep-debug "$TMPD/other" "$TMPD/$name.debug"
}

build linked "$SRC/lines.c"
split linked
run_proftop linked -b -n 0 --annotate two_lines -- "$TMPD/linked" 1
check "linked-exit-0" status $RC 0 "$ERR"
check "linked-lines-from-debug-file" approx "$(annotated "$OUT" "linked.c:$HOT_LINE" 1)" 75 10
check "linked-no-warning" sh -c "! grep -n 'debug file' '$ERR'"

other linked
run_proftop mismatch -b -n 0 --annotate two_lines -- "$TMPD/linked" 0.5
check "mismatch-exit-0" status $RC 0 "$ERR"
check "mismatch-named-from-symtab" between "$(self_pct "$OUT" two_lines)" 90 100
check "mismatch-warning" has "$ERR" \
	"^proftop: warning: $TMPD/linked: $TMPD/linked\\.debug is not its debug file \\(its build-id differs: another build\\); not used: no source lines for it\$"
check "mismatch-annotation-says-why" has "$OUT" \
	"^no source lines: $TMPD/linked: $TMPD/linked\\.debug is not its debug file "
check "mismatch-not-used" approx "$(annotated "$OUT" "[no" 1)" 100 0.01

# Fully stripped: its functions would come from the debug file too.
build stripped "$SRC/lines.c"
split stripped
strip "$TMPD/stripped"
other stripped
run_proftop mismatch-stripped -b -n 0 -- "$TMPD/stripped" 0.5
check "mismatch-stripped-exit-0" status $RC 0 "$ERR"
check "mismatch-stripped-symbols-warning" has "$ERR" \
	"^proftop: warning: no symbols for $TMPD/stripped: $TMPD/stripped\\.debug is not its debug file \\(its build-id differs: another build\\); its functions show as stripped\\+0x\\.\\.\\.\$"
check "mismatch-stripped-no-names" sh -c "! grep -q '  two_lines  ' '$OUT'"

# Without build-ids only the CRC-32 of .gnu_debuglink tells.
build nobuildid "$SRC/lines.c" -Wl,--build-id=none
split nobuildid
other nobuildid -Wl,--build-id=none
run_proftop crc -b -n 0 --annotate two_lines -- "$TMPD/nobuildid" 0.5
check "crc-exit-0" status $RC 0 "$ERR"
check "crc-warning" has "$ERR" \
	"^proftop: warning: $TMPD/nobuildid: $TMPD/nobuildid\\.debug is not its debug file \\(its CRC-32 is not the one \\.gnu_debuglink names: another build\\); not used"
check "crc-not-used" approx "$(annotated "$OUT" "[no" 1)" 100 0.01

# /usr/lib/debug/.build-id/xx/yyyy.debug, in a mount namespace of the test's own (root only):
# the right file there gives the lines, another build's file under that name is refused.
if [ "$(id -u)" -ne 0 ] || ! [ -d /usr/lib/debug ] || ! unshare -m true 2>/dev/null; then
	skip "build-id-dir" "needs root, /usr/lib/debug and unshare(1) for a private mount namespace"
else
	build byid "$SRC/lines.c"
	id=$(readelf -n "$TMPD/byid" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	mkdir -p "$TMPD/debugroot/.build-id/$(echo "$id" | cut -c1-2)"
	BYID=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	objcopy --only-keep-debug "$TMPD/byid" "$TMPD/debugroot/${BYID#/usr/lib/debug/}"
	objcopy --strip-debug "$TMPD/byid"
	# in_namespace TAG ARG... — run_proftop with $TMPD/debugroot as /usr/lib/debug.
	in_namespace()
	{
		PROFTOP_BIN_REAL=$PROFTOP_BIN
		PROFTOP_BIN=$TMPD/in-namespace
		printf '#!/bin/sh\nmount --make-rprivate / && mount --bind "%s" /usr/lib/debug && exec "%s" "$@"\n' \
			"$TMPD/debugroot" "$PROFTOP_BIN_REAL" >"$PROFTOP_BIN"
		chmod +x "$PROFTOP_BIN"
		PROFTOP_BIN="unshare" run_proftop "$@"
		PROFTOP_BIN=$PROFTOP_BIN_REAL
	}
	in_namespace byid -m "$TMPD/in-namespace" -b -n 0 --annotate two_lines -- "$TMPD/byid" 1
	check "build-id-dir-exit-0" status $RC 0 "$ERR"
	check "build-id-dir-lines" approx "$(annotated "$OUT" "byid.c:$HOT_LINE" 1)" 75 10
	other byid
	cp "$TMPD/byid.debug" "$TMPD/debugroot/${BYID#/usr/lib/debug/}"
	in_namespace byid-other -m "$TMPD/in-namespace" -b -n 0 --annotate two_lines -- "$TMPD/byid" 0.5
	check "build-id-dir-other-exit-0" status $RC 0 "$ERR"
	check "build-id-dir-other-warning" has "$ERR" \
		"^proftop: warning: $TMPD/byid: $BYID is not its debug file \\(its build-id differs: another build\\); not used: no source lines for it\$"
	check "build-id-dir-other-not-used" approx "$(annotated "$OUT" "[no" 1)" 100 0.01
	check "build-id-dir-system-untouched" test ! -e "$BYID"
fi

# --- source files that are not what the binary was built from ------------------------------------
# in_dir NAME — a copy of lines built in $TMPD/NAME/ from $TMPD/NAME/lines.c; sets BIN and SOURCE.
in_dir()
{
	mkdir "$TMPD/$1"
	cp "$SRC/lines.c" "$SRC/burn.h" "$TMPD/$1/"
	BIN=$TMPD/$1/lines
	SOURCE=$TMPD/$1/lines.c
	$CC $WL_CFLAGS -o "$BIN" "$SOURCE" 2>"$TMPD/$1.cc-err" || fail "build-$1" "$(cat "$TMPD/$1.cc-err")"
}
# source_case NAME WHY — annotate two_lines of $BIN: no text shown, the file heading says WHY
# (an ERE), the counts are still on the lines the binary has.
source_case()
{
	run_proftop "source-$1" -b -n 0 --annotate two_lines --asm -- "$BIN" 0.5
	check "source-$1-exit-0" status $RC 0 "$ERR"
	check "source-$1-says-why" has "$OUT" "^file $SOURCE  \\(text not shown: $2\\)\$"
	check "source-$1-no-text" sh -c "! grep -En '^ +[0-9.]+ +[0-9.]+ +[0-9]+  lines\\.c:[0-9]+  ' '$OUT'"
	check "source-$1-counts-kept" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 10
	check "source-$1-instructions-kept" has "$OUT" '^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  imul '
}

# Five lines added at the top: every line number of the binary now names other text.
in_dir top
touch -d '1 hour ago' "$BIN"
sed -i '1i /* five lines added after the build */\n\n\n\n' "$SOURCE"
source_case top "newer than $BIN: it changed since the build"

# Cut before the hot line, and older than the binary (a checkout of an older version): the
# lines it still has show, the others say why they do not.
in_dir short
head -n $((HOT_LINE - 1)) "$SOURCE" >"$SOURCE.new" && mv "$SOURCE.new" "$SOURCE"
touch -d '2 hours ago' "$SOURCE"
run_proftop source-short -b -n 0 --annotate two_lines --asm -- "$BIN" 0.5
check "source-short-exit-0" status $RC 0 "$ERR"
check "source-short-heading" has "$OUT" "^file $SOURCE\$"
check "source-short-hot-says-why" has "$OUT" \
	"^ +[0-9.]+ +[0-9.]+ +[0-9]+  lines\\.c:$HOT_LINE  \\(text not shown: no such line: the file changed since the build\\)\$"
check "source-short-earlier-text" has "$OUT" '^ +[0-9.]+ +[0-9.]+ +[0-9]+  lines\.c:[0-9]+  +while '
check "source-short-counts-kept" approx "$(annotated "$OUT" "lines.c:$HOT_LINE" 1)" 75 10

in_dir dir
rm "$SOURCE" && mkdir "$SOURCE"
source_case dir "not a regular file"

# A FIFO nobody writes to: opening it would wait for ever.
in_dir fifo
rm "$SOURCE" && mkfifo "$SOURCE"
source_case fifo "not a regular file"

in_dir loop
rm "$SOURCE" && ln -s lines.c "$SOURCE"
source_case loop "cannot be opened: Too many levels of symbolic links"

# Unreadable: root reads anything, so proftop runs as nobody; the source stays root's, mode 0600.
in_dir unreadable
chmod 0600 "$SOURCE"
chmod 0711 "$TMPD"
if ! setpriv --reuid=65534 --regid=65534 --clear-groups "$PROFTOP_BIN" --version >/dev/null 2>&1; then
	skip "source-unreadable" "cannot run $PROFTOP_BIN as nobody (setpriv, or its directory's mode)"
else
	PROFTOP_BIN_REAL=$PROFTOP_BIN
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups "%s" "$@"\n' \
		"$PROFTOP_BIN_REAL" >"$TMPD/as-nobody"
	chmod 0755 "$TMPD/as-nobody"
	PROFTOP_BIN=$TMPD/as-nobody
	source_case unreadable "cannot be opened: Permission denied"
	PROFTOP_BIN=$PROFTOP_BIN_REAL
fi

# --- no debug information at all ----------------------------------------------------------------------
build nodebug "$SRC/lines.c"
objcopy --strip-debug "$TMPD/nodebug"
run_proftop nodebug -b -n 0 --annotate two_lines --asm -- "$TMPD/nodebug" 0.5
check "nodebug-exit-0" status $RC 0 "$ERR"
check "nodebug-says-how" has "$OUT" \
	'^no source lines: its file has no DWARF line table, nor a debug file with one \(build with -g, or install its debug package\)$'
check "nodebug-nothing-wrong" sh -c "! grep -n 'DWARF\\|debug file' '$ERR'"
check "nodebug-instructions-still" has "$OUT" '^ +([0-9.]+ +[0-9.]+ +[0-9]+)? +0x[0-9a-f]+  imul '

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
