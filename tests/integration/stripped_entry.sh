#!/bin/sh
# stripped_entry.sh — a program stripped of its symbols still names its entry point (issue 26,
# item 9): the outermost frame of its main thread's stacks is _start, where the ELF header's
# e_entry points, not PROGRAM+0xENTRY; nothing else is named for it (its functions stay
# PROGRAM+0x..., and the warning that it has no symbols is still given). On a copy of split
# stripped here, and on Debian's gzip as installed (stripped, no debug file).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/split"
require_perf_events

# entry_of FILE — FILE's entry point as readelf prints it (0x1290).
entry_of()
{
	readelf -h "$1" | awk '/Entry point address:/ { print $4 }'
}

# roots FOLDED — the samples of each outermost frame of a folded file, "COUNT ROOT" per line.
roots()
{
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); c[f[1]] += n }
	     END { for (r in c) print c[r], r }' "$1"
}

# root_share FOLDED ROOT — percent of the samples whose outermost frame is ROOT.
root_share()
{
	roots "$1" | awk -v r="$2" '{ t += $1; if (substr($0, index($0, " ") + 1) == r) n += $1 }
		END { printf "%.1f\n", t ? 100 * n / t : 0 }'
}

# no_root FOLDED ROOT — no stack starts at ROOT.
no_root()
{
	! grep -q "^$2[; ]" "$1" || { echo "stacks start at $2:"; roots "$1"; return 1; }
}

if ! command -v objcopy >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
	skip "all" "objcopy or readelf is missing (binutils: make deps installs build-essential)"
	finish
fi

objcopy --strip-all "$WL/split" "$TMPD/split-stripped"
ENTRY=$(entry_of "$TMPD/split-stripped")
run_proftop split -b -n 0 -o "$TMPD/split.folded" -f folded -- "$TMPD/split-stripped" 1
check "split-status-0" status "$RC" 0 "$ERR"
check "split-roots-start" between "$(root_share "$TMPD/split.folded" _start)" 99 100
check "split-entry-not-unnamed" no_root "$TMPD/split.folded" "split-stripped+$ENTRY"
check "split-functions-still-unnamed" has "$TMPD/split.folded" ";split-stripped\+0x[0-9a-f]+ [0-9]+$"
check "split-still-said-stripped" has "$ERR" "no symbols for .*split-stripped: no function symbols"

# gzip, as Debian installs it; its output is of no interest.
head -c 30000000 /dev/urandom >"$TMPD/random.bin"
GZIP_BIN=$(command -v gzip)
ENTRY=$(entry_of "$GZIP_BIN")
run_proftop gzip -b -n 0 -o "$TMPD/gzip.folded" -f folded -- \
	sh -c 'exec "$0" -9 -c "$1" >/dev/null' "$GZIP_BIN" "$TMPD/random.bin"
check "gzip-status-0" status "$RC" 0 "$ERR"
check "gzip-roots-start" between "$(root_share "$TMPD/gzip.folded" _start)" 95 100
check "gzip-entry-not-unnamed" no_root "$TMPD/gzip.folded" "gzip+$ENTRY"
finish
