#!/bin/sh
# speedscope.sh — -f speedscope through the real binary and the real viewer. `phases 4` burns
# 2 s in phase_one, then 2 s in phase_two: the file (named by its .speedscope.json suffix) must
# be speedscope's schema, one profile for the thread named as the Threads view names it (the
# program's name holds a quote, a backslash and an escape: JSON must still parse), its samples in
# time order (phase_one's all early, phase_two's all late), in nanoseconds adding up to the CPU
# time. offcpu's file counts its blocked time in nanoseconds too.
#
# Then speedscope's own web app (its npm package's build, served on 127.0.0.1) opens the file in
# headless Chromium, and the folded and pprof files of `split` too. speedscope draws its flame
# graphs on a canvas, which --dump-dom cannot read; its Sandwich view (#view=sandwich) is a DOM
# table of every function with its times, and the toolbar names the profile: those are checked.
# A screenshot of the Time Order view is kept with the outputs (PROFTOP_KEEP_TMP=1 keeps them).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/phases" "$WL/split" "$WL/halfsleep"
require_perf_events
CHROMIUM=$(command -v chromium || command -v chromium-browser || echo /usr/bin/chromium)
need "$CHROMIUM" "$(command -v python3 || echo /usr/bin/python3)"
APP=$(npm root -g 2>/dev/null)/speedscope/dist/release
if [ ! -f "$APP/index.html" ]; then
	fail "setup" "no speedscope web app at $APP: make deps installs it (npm install -g speedscope)"
	finish
fi

# A checker of the files, by Python's JSON parser (nothing of proftop's).
cat >"$TMPD/check.py" <<'EOF'
import json, sys

def load(path):
    with open(path, 'rb') as f:
        return json.loads(f.read().decode('utf-8'))

def schema(path):
    d = load(path)
    assert d['$schema'] == 'https://www.speedscope.app/file-format-schema.json', d['$schema']
    assert d['exporter'].startswith('proftop@'), d['exporter']
    frames = d['shared']['frames']
    for f in frames:
        assert isinstance(f['name'], str) and f['name'], f
        assert isinstance(f.get('file', ''), str), f
        assert isinstance(f.get('line', 1), int) and f.get('line', 1) > 0, f
    assert d['profiles'], 'no profile'
    assert 0 <= d['activeProfileIndex'] < len(d['profiles'])
    for p in d['profiles']:
        assert p['type'] == 'sampled', p['type']
        assert p['unit'] in ('none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes')
        assert len(p['samples']) == len(p['weights']) > 0, p['name']
        for s in p['samples']:
            assert s and all(isinstance(i, int) and 0 <= i < len(frames) for i in s), s
        assert all(isinstance(w, int) and w > 0 for w in p['weights'])
        assert p['endValue'] - p['startValue'] == sum(p['weights']), p['name']

# The profile named name (its unit) and its samples as (leaf frame names, weight).
def profile(path, name):
    d = load(path)
    frames = d['shared']['frames']
    names = [p['name'] for p in d['profiles']]
    p = [p for p in d['profiles'] if p['name'] == name]
    assert p, '%r not in %r' % (name, names)
    return p[0]['unit'], [([frames[i]['name'] for i in s], w) for s, w in zip(p[0]['samples'], p[0]['weights'])]

# first's phase before second's: they overlap in one stretch at most (a second of the timeline,
# where the stacks come hottest first), so neither has more than 1.2 s of its weight on the
# other's side of that stretch; a sum (hottest first) or the reverse order has a whole phase there.
def order(path, name, first, second):
    unit, samples = profile(path, name)
    assert unit == 'nanoseconds', unit
    firsts = [i for i, (s, _) in enumerate(samples) if first in s]
    seconds = [i for i, (s, _) in enumerate(samples) if second in s]
    assert firsts and seconds, 'no %s or no %s' % (first, second)
    late = sum(samples[i][1] for i in firsts if i > seconds[0]) / 1e9
    early = sum(samples[i][1] for i in seconds if i < firsts[-1]) / 1e9
    assert late <= 1.2 and early <= 1.2, \
        '%.2f s of %s after %s began, %.2f s of %s before %s ended' % (late, first, second, early, second, first)

# The profile names (one a line) matching pattern, else an error.
def named(path, pattern):
    import re
    names = [p['name'] for p in load(path)['profiles']]
    hits = [n for n in names if re.fullmatch(pattern, n)]
    assert hits, 'no profile named /%s/ in %r' % (pattern, names)
    print('\n'.join(hits))

def seconds(path, name, unit_wanted):
    unit, samples = profile(path, name)
    assert unit == unit_wanted, unit
    print('%.3f' % (sum(w for _, w in samples) / 1e9))

cmd = sys.argv[1]
if cmd == 'schema':
    schema(sys.argv[2])
elif cmd == 'order':
    order(*sys.argv[2:6])
elif cmd == 'named':
    named(*sys.argv[2:4])
elif cmd == 'seconds':
    seconds(*sys.argv[2:5])
EOF
check_file() { python3 "$TMPD/check.py" "$@"; }

# --- the file --------------------------------------------------------------------------------
# comm is the program's file name (its first 15 bytes): a quote, a backslash and an ESC.
ODD=$(printf 'ph"a\\se\033x')
cp "$WL/phases" "$TMPD/$ODD"
P=$TMPD/phases.speedscope.json
run_proftop phases -b -n 0 -o "$P" -- "$TMPD/$ODD" 4
check "phases-exit-status-0" status $RC 0 "$ERR"
check "phases-schema" check_file schema "$P"
# The name as the screen shows it: the escape in caret notation.
NAMED='ph"a\\se\^\[x \(tid [0-9]+\)'
check "phases-profile-named-comm-tid" check_file named "$P" "$NAMED"
PID_NAME=$(check_file named "$P" "$NAMED" 2>/dev/null | head -n 1)
check "phases-time-order" check_file order "$P" "$PID_NAME" phase_one phase_two
SECS=$(check_file seconds "$P" "$PID_NAME" nanoseconds 2>&1)
check "phases-nanoseconds-add-up-to-4s" between "$SECS" 3.2 4.4

O=$TMPD/halfsleep.speedscope.json
run_proftop offcpu --mode offcpu -b -n 0 -f speedscope -o "$O" -- "$WL/halfsleep" 2
check "offcpu-exit-status-0" status $RC 0 "$ERR"
check "offcpu-schema" check_file schema "$O"
OSECS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["profiles"][d["activeProfileIndex"]]; assert p["unit"]=="nanoseconds"; print("%.3f" % (sum(p["weights"])/1e9))' "$O" 2>&1)
check "offcpu-blocked-about-1s" between "$OSECS" 0.6 1.4

# The same run as folded and pprof, for speedscope's importers.
run_proftop folded -b -n 0 -o "$TMPD/split.folded" -- "$WL/split" 1
check "folded-exit-status-0" status $RC 0 "$ERR"
run_proftop pprof -b -n 0 -o "$TMPD/split.pb.gz" -- "$WL/split" 1
check "pprof-exit-status-0" status $RC 0 "$ERR"

# A save on SIGUSR1 while it runs (-f speedscope, the numbered name from $PROFTOP_OUT_FILE) is
# in time order too: the run's history is kept for it in batch mode.
PROFTOP_OUT_FILE=$TMPD/usr1.speedscope.json "$PROFTOP_BIN" -b -n 0 -f speedscope -- \
    "$WL/phases" 4 >"$TMPD/usr1.out" 2>"$TMPD/usr1.err" </dev/null &
USR1_PID=$!
BG_PIDS="$BG_PIDS $USR1_PID"
sleep 3.3
kill -USR1 "$USR1_PID"
wait "$USR1_PID"
RC=$?
check "sigusr1-exit-status-0" status $RC 0 "$TMPD/usr1.err"
check "sigusr1-save-said" has "$TMPD/usr1.err" "saved .*usr1\.speedscope\.json"
check "sigusr1-no-sanitizer-report" sh -c \
    "! grep -E -A12 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$TMPD/usr1.err'"
check "sigusr1-save-time-order" check_file order "$TMPD/usr1.speedscope.json" \
    "$(check_file named "$TMPD/usr1.speedscope.json" 'phases \(tid [0-9]+\)' 2>&1)" phase_one phase_two

# --- speedscope in Chromium ------------------------------------------------------------------
WWW=$TMPD/www
mkdir -p "$WWW"
ln -s "$APP"/* "$WWW"/
cp "$P" "$WWW/phases.speedscope.json"
cp "$TMPD/split.folded" "$TMPD/split.pb.gz" "$WWW"/
cat >"$TMPD/serve.py" <<'EOF'
import functools, http.server, sys

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=sys.argv[1]))
with open(sys.argv[2] + '.new', 'w') as f:
    f.write(str(server.server_address[1]))
import os
os.rename(sys.argv[2] + '.new', sys.argv[2])
server.serve_forever()
EOF
python3 "$TMPD/serve.py" "$WWW" "$TMPD/port" &
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -s "$TMPD/port" ] && break; sleep 0.1; done
URL=http://127.0.0.1:$(cat "$TMPD/port" 2>/dev/null)

# browse TAG HASH [--screenshot=FILE] — speedscope at index.html#HASH; the page's DOM into
# $TMPD/TAG.dom.out once its scripts ran (virtual time: no waiting on the wall clock).
browse()
{
	local tag hash
	tag=$1
	hash=$2
	shift 2
	timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
	    --user-data-dir="$TMPD/chromium" --window-size=1400,900 --virtual-time-budget=15000 \
	    "$@" "$URL/index.html#$hash" >"$TMPD/$tag.dom.out" 2>"$TMPD/$tag.chromium.err"
}

# dom_has FILE TEXT... — each TEXT is in the page (as a table cell's or the toolbar's text).
dom_has()
{
	local f t
	f=$1
	shift
	for t in "$@"; do
		[ -n "$t" ] || { echo "no text to look for"; return 1; }
		grep -qF -- ">$t<" "$f" || { echo "'$t' not on the page ($f):"; \
			sed 's/<[^>]*>/ /g' "$f" | tr -s ' \n' ' ' | tail -c 600; return 1; }
	done
}

# browse_has TAG HASH TEXT... — the page at HASH shows each TEXT. speedscope fills the Sandwich
# table in a later frame than it loads the file, which a busy machine's headless Chromium may
# not have drawn by the end of its budget: three tries (a broken file fails all three).
browse_has()
{
	local tag hash try
	tag=$1
	hash=$2
	shift 2
	for try in 1 2; do
		browse "$tag" "$hash" --dump-dom && dom_has "$TMPD/$tag.dom.out" "$@" >/dev/null &&
			return 0
	done
	browse "$tag" "$hash" --dump-dom
	dom_has "$TMPD/$tag.dom.out" "$@"
}

check "speedscope-sandwich-functions" browse_has sandwich \
    "profileURL=$URL/phases.speedscope.json&view=sandwich" phase_one phase_two main
check "speedscope-profile-named" dom_has "$TMPD/sandwich.dom.out" "$PID_NAME"
browse time-order "profileURL=$URL/phases.speedscope.json&view=time-ordered" \
    --screenshot="$TMPD/phases-time-order.png"
check "speedscope-screenshot" sh -c "[ \$(stat -c %s '$TMPD/phases-time-order.png' 2>/dev/null || echo 0) -gt 10000 ]"

check "speedscope-reads-folded" browse_has folded "profileURL=$URL/split.folded&view=sandwich" \
    burn_a burn_b burn_c main
check "speedscope-reads-pprof" browse_has pprof "profileURL=$URL/split.pb.gz&view=sandwich" \
    burn_a burn_b burn_c main

finish
