#!/bin/sh
# debuginfod.sh — debug files fetched from debuginfod servers while proftop runs (DEBUGINFOD_URLS):
#   - a real `debuginfod` serving the debug file of a stripped copy of the lines workload: the
#     profile, its lines and every row known before by its address alone are named, as with the
#     unstripped binary; libdebuginfod's cache then serves a second run without the server, and
#     a third with three collectors;
#   - servers that are down (a closed port), answer garbage (with escapes in it), send the debug
#     file of another build, or never answer: the run ends as it would without them, rows stay
#     module+0x..., one warning says what happened, and nothing from the server reaches stderr raw;
#   - a server that never answers does not hold proftop at its end, and the fetch it cancelled is
#     not remembered in the cache as "no server has it";
#   - the screen's title says what is being fetched.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"
for program in debuginfod curl python3 objcopy strip readelf; do
	command -v $program >/dev/null || { fail "setup" "$program is not installed (make deps)"; finish; }
done
require_perf_events
PROFTOP_TIMEOUT=${PROFTOP_TIMEOUT:-30}
. "$(dirname "$0")/lib_tmux.sh"

# The stripped workload and its debug file, as a distribution splits them.
cp "$ROOT/tests/workloads/lines.c" "$ROOT/tests/workloads/burn.h" "$TMPD/" &&
	${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$TMPD/lines" "$TMPD/lines.c" &&
	mkdir "$TMPD/served" && objcopy --only-keep-debug "$TMPD/lines" "$TMPD/served/lines.debug" &&
	strip --strip-all -o "$TMPD/stripped" "$TMPD/lines" ||
	{ fail "build" "cannot build and split the lines workload"; finish; }
BUILD_ID=$(readelf -n "$TMPD/stripped" | awk '/Build ID:/ { print $3 }')
HOT_LINE=$(grep -n '/\* hot line \*/' "$TMPD/lines.c" | cut -d: -f1)
# Another build's debug file: the same source and one more variable.
mkdir "$TMPD/other-src" && cp "$TMPD/lines.c" "$TMPD/burn.h" "$TMPD/other-src/" &&
	echo 'int other_build = 1;' >>"$TMPD/other-src/lines.c" &&
	${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$TMPD/other" "$TMPD/other-src/lines.c" &&
	objcopy --only-keep-debug "$TMPD/other" "$TMPD/other.debug" ||
	{ fail "build-other" "cannot build another lines"; finish; }

# free_port — a TCP port nobody listens on now.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve_python NAME MODE — a fake server on a free port (PORT): "garbage" answers every request
# with 200 and bytes that are not ELF (escapes among them), "file:PATH" with that file, "hang"
# accepts connections and never answers. Each request is counted in $TMPD/NAME.requests.
serve_python()
{
	PORT=$(free_port)
	python3 - "$PORT" "$2" "$TMPD/$1.requests" >"$TMPD/$1.log" 2>&1 <<'PY' &
import http.server, socket, sys, time
port, mode, counted = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def count():
    with open(counted, "a") as f:
        f.write("request\n")
if mode == "hang":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)
        count()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        count()
        if mode == "garbage":
            body = b"\x7fELF\x1b]0;owned\x07\x1b[2J not a debug file\n" * 64
        else:
            body = open(mode[5:], "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
PY
	BG_PIDS="$BG_PIDS $!"
	wait_port "$PORT"
}

# wait_port PORT — until something listens there (10 s at most).
wait_port()
{
	local i=0
	while [ $i -lt 50 ]; do
		python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
			"$1" 2>/dev/null && return 0
		sleep 0.2
		i=$((i + 1))
	done
	fail "server-listens-$1" "nothing listens on port $1"
}

# fetched_run TAG URLS CACHE ARG... — proftop ARG... with DEBUGINFOD_URLS and a cache of its own.
fetched_run()
{
	local tag urls cache
	tag=$1 urls=$2 cache=$3
	shift 3
	DEBUGINFOD_URLS=$urls DEBUGINFOD_CACHE_PATH=$cache run_proftop "$tag" "$@"
}

# hot_line FILE — SELF% of the hot line in the last annotation of FILE; "missing" without one.
hot_line()
{
	awk -v want="lines.c:$HOT_LINE" '$4 == want { v = $1 } END { print v == "" ? "missing" : v }' "$1"
}

# no_address_rows FILE — no final row names the stripped module by address, but for the PLT's
# stubs, which no symbol names, debug file or not (a sample of CI's caught the lazy binder's
# stub at .plt's start).
no_address_rows()
{
	set -- "$1" $(readelf -SW "$TMPD/stripped" | awk '$2 == ".plt" { print $4, $6 }')
	final_table "$1" | awk '$4 ~ /^stripped\+0x/ { print substr($4, 12) }' | {
		bad=0
		while read -r addr; do
			if [ $# -lt 3 ] || [ $((0x$addr)) -lt $((0x$2)) ] ||
				[ $((0x$addr)) -ge $((0x$2 + 0x$3)) ]; then
				echo "stripped+0x$addr is no PLT stub"
				bad=1
			fi
		done
		return $bad
	}
}

# no_raw_controls FILE — no byte but newline is a control character.
no_raw_controls()
{
	! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1"
}

# --- a real debuginfod -------------------------------------------------------------------------------
DPORT=$(free_port)
debuginfod -F -p "$DPORT" -d "$TMPD/index.sqlite" -t 0 -g 0 "$TMPD/served" >"$TMPD/debuginfod.log" 2>&1 &
DPID=$!
BG_PIDS="$BG_PIDS $DPID"
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$DPORT/buildid/$BUILD_ID/debuginfo"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { fail "debuginfod-serves" "$(tail -n 5 "$TMPD/debuginfod.log")"; finish; }
	sleep 0.2
done
pass "debuginfod-serves"

run_proftop unstripped -b -n 0 --annotate two_lines -- "$TMPD/lines" 1
fetched_run fetched "http://127.0.0.1:$DPORT" "$TMPD/cache" -b -n 0 --annotate two_lines -- \
	"$TMPD/stripped" 1
check "fetched-exit-0" status $RC 0 "$ERR"
check "fetched-says-asked" has "$ERR" "no symbols for $TMPD/stripped: .* until debuginfod sends its debug file"
check "fetched-says-arrived" has "$ERR" '^proftop: debuginfod sent the debug file of stripped: its functions and lines are named$'
check "fetched-named" approx "$(self_pct "$OUT" two_lines stripped)" "$(self_pct "$TMPD/unstripped.out" two_lines lines)" 3
check "fetched-start-named" approx "$(total_pct "$OUT" _start stripped)" 100 1
check "fetched-main-named" approx "$(total_pct "$OUT" main stripped)" 100 1
check "fetched-no-address-rows" no_address_rows "$OUT"
check "fetched-hot-line" approx "$(hot_line "$OUT")" "$(hot_line "$TMPD/unstripped.out")" 8
check "fetched-source-text" has "$OUT" "^ +[0-9.]+ +[0-9.]+ +[0-9]+  lines\\.c:$HOT_LINE  .*/\\* hot line \\*/\$"
check "fetched-in-cache" test -s "$TMPD/cache/$BUILD_ID/debuginfo"

# The cache serves the next run, with the server gone.
kill "$DPID" 2>/dev/null
wait "$DPID" 2>/dev/null
fetched_run cached "http://127.0.0.1:$DPORT" "$TMPD/cache" -b -n 0 --annotate two_lines -- \
	"$TMPD/stripped" 1
check "cached-exit-0" status $RC 0 "$ERR"
check "cached-named" approx "$(self_pct "$OUT" two_lines stripped)" 100 2
check "cached-hot-line" approx "$(hot_line "$OUT")" 75 10
# Three collectors, each with its own symbolizer: every one names the stripped file's functions,
# whether it loaded the file before its debug file came or after.
fetched_run cached-collectors "http://127.0.0.1:$DPORT" "$TMPD/cache" -b -n 0 --collectors 3 \
	--annotate two_lines -- "$TMPD/stripped" 1
check "cached-collectors-exit-0" status $RC 0 "$ERR"
check "cached-collectors-named" approx "$(self_pct "$OUT" two_lines stripped)" 100 2
check "cached-collectors-no-address-rows" no_address_rows "$OUT"
check "cached-collectors-hot-line" approx "$(hot_line "$OUT")" 75 10

# Without DEBUGINFOD_URLS nothing is asked.
run_proftop unset -b -n 3 -- "$TMPD/stripped" 0.3
check "unset-exit-0" status $RC 0 "$ERR"
check "unset-not-asked" sh -c "! grep -Eq 'debuginfod( |:)' '$ERR'"
check "unset-address-rows" has "$OUT" 'stripped\+0x[0-9a-f]+ +stripped$'

# --- servers that do not help --------------------------------------------------------------------
CLOSED=$(free_port)
fetched_run closed "http://127.0.0.1:$CLOSED" "$TMPD/cache-closed" -b -n 3 -- "$TMPD/stripped" 0.5
check "closed-exit-0" status $RC 0 "$ERR"
check "closed-warning" has "$ERR" "^proftop: warning: debuginfod: no debug file could be fetched from http://127.0.0.1:$CLOSED: Connection refused"
check "closed-address-rows" has "$OUT" 'stripped\+0x[0-9a-f]+ +stripped$'

serve_python garbage garbage
fetched_run garbage "http://127.0.0.1:$PORT" "$TMPD/cache-garbage" -b -n 3 -- "$TMPD/stripped" 0.5
check "garbage-exit-0" status $RC 0 "$ERR"
check "garbage-asked" test -s "$TMPD/garbage.requests"
check "garbage-warning" has "$ERR" "^proftop: warning: debuginfod sent for stripped: .*/debuginfo is not its debug file \\(not an ELF file\\); not used\$"
check "garbage-address-rows" has "$OUT" 'stripped\+0x[0-9a-f]+ +stripped$'
check "garbage-no-raw-controls" no_raw_controls "$ERR"
# A program with its DWARF is not asked for (its libraries may be).
fetched_run garbage-dwarf "http://127.0.0.1:$PORT" "$TMPD/cache-garbage" -b -n 3 -- "$TMPD/lines" 0.3
check "garbage-dwarf-exit-0" status $RC 0 "$ERR"
check "garbage-dwarf-not-asked" sh -c "! grep -q 'for lines:' '$ERR'"
check "garbage-dwarf-named" has "$OUT" ' two_lines +lines$'

serve_python other "file:$TMPD/other.debug"
fetched_run other "http://127.0.0.1:$PORT" "$TMPD/cache-other" -b -n 3 -- "$TMPD/stripped" 0.5
check "other-exit-0" status $RC 0 "$ERR"
check "other-warning" has "$ERR" "^proftop: warning: debuginfod sent for stripped: .* is not its debug file \\(its build-id differs: another build\\); not used\$"
check "other-address-rows" has "$OUT" 'stripped\+0x[0-9a-f]+ +stripped$'
check "other-no-wrong-names" sh -c "! grep -q two_lines '$OUT'"

serve_python hang hang
HANG=$PORT
fetched_run hang "http://127.0.0.1:$HANG" "$TMPD/cache-hang" -b -n 3 -- "$TMPD/stripped" 0.5
check "hang-exit-0" status $RC 0 "$ERR"
check "hang-warning" has "$ERR" '^proftop: warning: debuginfod was still fetching the debug file of stripped when profiling ended( \(more were waiting\))?: not used$'
check "hang-not-cached-as-missing" test ! -e "$TMPD/cache-hang/$BUILD_ID/debuginfo"
fetched_run hang-again "http://127.0.0.1:$HANG" "$TMPD/cache-hang" -b -n 3 -- "$TMPD/stripped" 0.5
check "hang-asked-again" sh -c "[ \$(wc -l <'$TMPD/hang.requests') -ge 2 ]"
check "hang-again-not-missing" sh -c "! grep -q 'has no debug file' '$ERR'"

# The screen says what is being fetched, and q does not wait for the server.
# The pane's tmux server starts here, with these in its environment.
export DEBUGINFOD_URLS="http://127.0.0.1:$HANG" DEBUGINFOD_CACHE_PATH="$TMPD/cache-tui"
pane tui 120 24 -t mono -- "$TMPD/stripped" 30
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
check "tui-title-fetching" wait_screen tui '^ proftop .*  debuginfod: stripped( \(\+[0-9]+\))?$'
tm send-keys -t tui q
check "tui-quits" sh -c "i=0; until [ -e '$TMPD/tui.status' ]; do i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done"
check "tui-status-of-command" exit_status tui 143 # the command ended by SIGTERM
check "tui-restored" restored tui
finish
