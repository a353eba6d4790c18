#!/bin/sh
# go.sh — a Go program's stacks (gochurn, built by `go build`: goroutines, maps, sorting, the
# garbage collector marking on the threads' g0 stacks). Go's runtime switches stacks in assembly
# that its DWARF CFI does not describe; a DWARF unwind past such a switch read what the other
# stack left behind, and rooted stacks in runtime.etext (a marker at the end of .text, typed FUNC
# with size 0, that named every address past the code) and in unnamed addresses (ASCII). Now every
# stack starts where Go's own unwinder starts it: a goroutine's runtime.goexit, a thread's
# runtime.mstart or runtime.rt0_go, the signal handler's runtime.sigtramp, or the switch itself
# (runtime.systemstack, mcall, morestack, ...: the other stack is not in the sample's copy).
# With -g fp the kernel follows Go's frame pointers across the switches but mcall's (which
# clears the frame pointer) and morestack's (whose callers' stack newstack copies away and
# frees): its stacks start at the first four or at those two, with nothing above them.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/gochurn"
require_perf_events

TOP='runtime\.(goexit|mstart|rt0_go|sigtramp|cgoSigtramp|morestack|mcall)(\.abi0)?'
SWITCH='(runtime\.(systemstack|asmcgocall|asmcgocall_no_g|gogo|cgocallback|nanotime1|walltime1?|callCgoMmap|callCgoMunmap|callCgoSigaction|sigfwd)|time\.now)(\.abi0)?'

# roots_only FOLDED ERE — every stack of FOLDED starts with a frame matching ERE (whole name).
roots_only()
{
	awk -v re="^($2)\$" '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); all += n
		if (f[1] !~ re) { bad += n; what[f[1]] += n } }
		END { if (!all) { print "no stacks"; exit 1 }
			if (!bad) exit 0
			printf "%d of %d samples start elsewhere:", bad, all
			for (w in what) printf " %s (%d)", w, what[w]; print ""; exit 1 }' "$1"
}

# lone_frames_at_most FOLDED PERMILLE — stacks of a single frame are at most PERMILLE/1000 of
# the samples.
lone_frames_at_most()
{
	awk -v max="$2" '{ n = $NF; all += n; if ($0 !~ /;/) lone += n }
		END { if (!all) { print "no stacks"; exit 1 }
			if (lone * 1000 <= all * max) exit 0
			printf "%d of %d samples are a lone frame\n", lone, all; exit 1 }' "$1"
}

# rooted_at FOLDED ERE — the samples whose stack starts with a frame matching ERE.
rooted_at()
{
	awk -v re="^($2)\$" '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";")
		if (f[1] ~ re) s += n } END { print s + 0 }' "$1"
}

run_proftop dwarf -b -n 0 -o "$TMPD/dwarf.folded" -- "$WL/gochurn" 3
check "dwarf-exit-status-0" status "$RC" 0 "$ERR"
check "dwarf-no-etext" sh -c "! grep -n 'etext' '$TMPD/dwarf.folded' '$OUT' | head -n 5 | grep ."
check "dwarf-roots-are-go-roots" roots_only "$TMPD/dwarf.folded" "$TOP|$SWITCH"
# The case this is about happened: the collector ran on the g0 stacks.
check "dwarf-some-at-systemstack" between "$(rooted_at "$TMPD/dwarf.folded" 'runtime\.systemstack(\.abi0)?')" 1 1000000
check "dwarf-most-at-goexit" between "$(rooted_at "$TMPD/dwarf.folded" 'runtime\.goexit(\.abi0)?')" \
	"$(awk '{ s += $NF } END { print int(s / 2) }' "$TMPD/dwarf.folded")" 1000000
check "dwarf-none-truncated" has "$OUT" '^=== proftop final .* truncated 0 '

run_proftop fp -b -n 0 -g fp -o "$TMPD/fp.folded" -- "$WL/gochurn" 3
check "fp-exit-status-0" status "$RC" 0 "$ERR"
# A sample in a function's first instructions, before it saves the frame pointer, while the
# register still holds a new goroutine's 0 (goexit1 called from goexit, a goroutine's function
# entered from gogo), is a stack of that one frame: the kernel's frame-pointer walk has no caller
# to read. A CI run saw it once in 2,856 samples (runtime.goexit1 alone). Such lone frames are
# set aside, at most 1% of the samples; every deeper stack must start at a Go root.
check "fp-lone-frames-rare" lone_frames_at_most "$TMPD/fp.folded" 10
grep ';' "$TMPD/fp.folded" > "$TMPD/fp-deep.folded"
check "fp-roots-are-go-roots" roots_only "$TMPD/fp-deep.folded" "$TOP"
check "fp-main-reached" has "$TMPD/fp.folded" '^runtime\.goexit(\.abi0)?;(main\.main\.func[0-9]+;)+main\.churn[; ]'
finish
