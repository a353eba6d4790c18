#!/bin/sh
# tui_alloc.sh — the screen in --mode alloc on allocsplit (which ends in a moment, leaving its
# leak): the title says the bytes allocated, per second, and in use; Top counts BYTES with the
# OBJECTS beside them; m goes through inuse (the leak at 100%), alloc-objects and inuse-objects
# and back, keeping the view; the timeline is there.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/allocsplit"
. "$(dirname "$0")/lib_tmux.sh"

pane al 180 24 --mode alloc -- "$WL/allocsplit"
check "title-alloc" wait_screen al '^ proftop .*\[exited with status 0\]  [0-9.]+s  alloc: [0-9.]+[KMG] allocated \([0-9.]+[BKMG]/s\), [0-9.]+M in use  cumulative'
check "bytes-and-objects" wait_screen al '^  SELF%  TOTAL%    BYTES    OBJECTS +FUNCTION'
check "seventy-row" wait_screen al '^ +[5-7][0-9]\.[0-9]+ +[0-9.]+ +[0-9.]+M +[0-9]+ +alloc_seventy'
check "timeline" wait_screen al '^ [▁▂▃▄▅▆▇█]+ *'
tm send-keys -t al m
check "mode-inuse" wait_screen al '  inuse: [0-9.]+[KMG] allocated'
check "inuse-says" wait_screen al 'mode inuse: bytes in use \(allocated, not freed\)'
check "leak-at-100" wait_screen al '^ +(9[0-9]\.[0-9]+|100\.00) +[0-9.]+ +[0-9.]+M +[0-9]+ +alloc_leak'
tm send-keys -t al m
check "mode-alloc-objects" wait_screen al '^  SELF%  TOTAL%  OBJECTS  FUNCTION'
tm send-keys -t al m
check "mode-inuse-objects" wait_screen al '  inuse-objects: '
tm send-keys -t al 2 m
check "back-to-alloc-in-tree" wait_screen al '^ +TOTAL% +SELF% +BYTES +FUNCTION'
tm send-keys -t al q
check "quit" ended al
check "restored" restored al
check "no-sanitizer-report" no_sanitizer_report al
finish
