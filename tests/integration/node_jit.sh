#!/bin/sh
# node_jit.sh — JavaScript under node --perf-basic-prof: V8's compiled code has no CFI, only its
# frame pointers and the names in /tmp/perf-PID.map. proftop steps over such frames (and V8's
# builtins between them) by rbp: the stacks reach _start (under 10% truncated, 97% before), the
# hot function is named from the map, and the folded export roots it in node's own frames. Then
# --perf-prof: the names from the jitdump node maps in its working directory.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
require_perf_events
if ! command -v node >/dev/null 2>&1; then
	fail "setup" "node is not installed (make deps installs nodejs)"
	finish
fi
js=$(cd "$(dirname "$0")/../workloads" && pwd)/hot.js

# (node writes a log of its own with the map: into the test's directory, not the tree)
run_proftop node -b -n 0 -o "$TMPD/node.folded" -- node --perf-basic-prof \
	--logfile="$TMPD/v8.log" --no-logfile-per-isolate "$js" 3
check "exit-status-0" status "$RC" 0 "$ERR"
samples=$(sed -n 's/^=== proftop final .* samples \([0-9]*\) .*/\1/p' "$OUT" | tail -n 1)
truncated=$(sed -n 's/^=== proftop final .* truncated \([0-9]*\) .*/\1/p' "$OUT" | tail -n 1)
check "truncated-under-10-percent" sh -c "[ -n '$samples' ] && [ '$samples' -gt 0 ] &&
	[ \$(( ${truncated:-0} * 10 )) -lt '$samples' ] ||
	{ echo 'truncated ${truncated:-?} of ${samples:-?} samples'; exit 1; }"
check "hot-function-named" sh -c "grep -Eq 'JS:\\*?hotLoop .*\\[jit\\]' '$OUT' ||
	{ echo 'no JS hotLoop row:'; head -n 8 '$OUT'; exit 1; }"
check "rooted-at-start" sh -c "grep -E '^_start;.*hotLoop' '$TMPD/node.folded' >/dev/null ||
	{ echo 'no stack from _start to hotLoop:'; grep hotLoop '$TMPD/node.folded' | head -n 2 | cut -c1-300; exit 1; }"

# --perf-prof: a jitdump, written into node's working directory (not /tmp) and mapped there so
# that perf finds it; V8 buffers it (2 MiB), so most of it is read as node exits.
mkdir "$TMPD/cwd"
(cd "$TMPD/cwd" && exec "$PROFTOP_BIN" -b -n 0 -o "$TMPD/dump.folded" -- node --perf-prof \
	--logfile="$TMPD/v8-dump.log" --no-logfile-per-isolate "$js" 3) >"$TMPD/dump.out" 2>&1
check "perf-prof-exit-status-0" status "$?" 0 "$TMPD/dump.out"
check "perf-prof-dump-in-cwd" sh -c "ls '$TMPD/cwd' | grep -Eq '^jit-[0-9]+\.dump$' ||
	{ echo 'node wrote no jitdump in its working directory:'; ls -la '$TMPD/cwd'; exit 1; }"
check "perf-prof-hot-function-named" sh -c "grep -Eq 'JS:\*?hotLoop .*\[jit\]' '$TMPD/dump.out' ||
	{ echo 'no JS hotLoop row:'; head -n 8 '$TMPD/dump.out'; exit 1; }"
check "perf-prof-rooted-at-start" sh -c "grep -E '^_start;.*hotLoop' '$TMPD/dump.folded' >/dev/null ||
	{ echo 'no stack from _start to hotLoop:'; head -n 3 '$TMPD/dump.folded' | cut -c1-300; exit 1; }"
finish
