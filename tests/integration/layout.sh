#!/bin/sh
# layout.sh — the source tree keeps the shape issue 27 gave it: no include cycles between
# modules, no .c file over 1,000 lines (collector.c at most 700: it routes and runs threads,
# the rest is in modules of their own), the engine includes no frontend header (src/ui/ is the
# frontends'), and frontends and exporters name no mode (no SAMPLE_MODE_*, sample_mode_*(), enum
# sample_mode nor a snapshot's ->mode): they ask a snapshot, the session or kinds.h by kind name.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

# The module of a file: its base name without .c/.h ("tui_screen" for src/ui/tui_screen.c); a
# module's private header (X_internal.h) is the module's.
module_of() { basename "$1" | sed 's/\.[ch]$//; s/_internal$//'; }

# edges — "module included-module" for every proftop include between two modules.
edges()
{
	for f in $(find src include -name '*.[ch]'); do
		m=$(module_of "$f")
		grep -o '#include "proftop/[a-z_0-9/]*\.h"' "$f" | sed 's|.*proftop/||;s|.*/||;s|\.h"||;s|_internal$||' |
			while read -r d; do [ "$d" != "$m" ] && echo "$m $d"; done
	done | sort -u
}

no_cycles()
{
	local loops
	loops=$(edges | tsort 2>&1 >/dev/null)
	[ -z "$loops" ] && return 0
	echo "include cycles (tsort):"
	echo "$loops"
	return 1
}

short_files()
{
	local long
	long=$(find src -name '*.c' | xargs wc -l | awk '$2 != "total" && $1 > 1000 { print }')
	[ -z "$long" ] && return 0
	echo "over 1,000 lines:"
	echo "$long"
	return 1
}

collector_short()
{
	local n
	n=$(wc -l < src/collector.c)
	[ "$n" -le 700 ] && return 0
	echo "src/collector.c has $n lines (at most 700: give a new concern its own module)"
	return 1
}

# The frontends' headers are theirs: under src/ui/ their sources (the screen, batch tables,
# themes), under include/proftop/ui/ their headers; nothing else includes those but the wiring:
# main.c, which picks a frontend, and the options, parsed into each frontend's.
engine_without_frontends()
{
	local bad
	[ -d src/ui ] && [ -d include/proftop/ui ] || { echo "no src/ui or include/proftop/ui"; return 1; }
	bad=$(grep -ln '#include "proftop/ui/' $(find src include -name '*.[ch]' |
		grep -v -e '^src/ui/' -e '^include/proftop/ui/' -e '^src/main\.c$' -e 'options'))
	[ -z "$bad" ] && return 0
	echo "engine files including a frontend header:"
	echo "$bad"
	return 1
}

frontends_name_no_mode()
{
	local bad
	bad=$(grep -n 'SAMPLE_MODE_\|sample_mode\|->mode\b' src/ui/*.c src/serve.c src/export*.c \
		include/proftop/ui/*.h include/proftop/serve.h include/proftop/export*.h)
	[ -z "$bad" ] && return 0
	echo "frontends and exporters ask the snapshot, the session or kinds.h by kind name; they name no mode:"
	echo "$bad"
	return 1
}

check no-include-cycles no_cycles
check no-file-over-1000-lines short_files
check collector-at-most-700-lines collector_short
check engine-includes-no-frontend engine_without_frontends
check frontends-name-no-mode frontends_name_no_mode
finish
