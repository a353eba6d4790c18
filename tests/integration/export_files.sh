#!/bin/sh
# export_files.sh — how snapshot files are written, through the real binary: -i converts a saved
# tmon.out to the other formats (and shows it as the final table); a directory proftop may not
# write to, and a full disk, give an error that says so and leave the previous file as it was, with
# no temporary file left behind. No perf events needed: the profiles come from files.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"

# A saved profile: main → work 300 ticks, main → other 100, main 50, at 1000 Hz.
T=$TMPD/saved.tmon
cat >"$T" <<'EOF'
#fOrTyTwO
$hz=1000;
$XS_VERSION='proftop 0.1.0';
# All values are given in HZ
$over_utime=0; $over_stime=0; $over_rtime=0;
$over_tests=1;
$rrun_utime=440; $rrun_stime=10; $rrun_rtime=500;
$total_marks=6;
# proftop: samples 450 overflow 0 dropped 0 throttled 0 truncated 0

PART2
& 1 prog main
+ 1
@ 50 0 50
& 2 prog work
+ 2
@ 300 0 300
- 2
& 3 libc.so.6 other
+ 3
@ 100 0 100
- 3
- 1
EOF

# --- -i: the table, and conversions -----------------------------------------------------------------
run_proftop table -i "$T" -b
check "table-exit-status-0" status $RC 0 "$ERR"
check "table-work" approx "$(self_pct "$OUT" work prog)" 66.67 0.01
check "table-main-total" approx "$(total_pct "$OUT" main prog)" 100 0
check "table-samples" approx "$(header_value "$OUT" samples)" 450 0
check "table-freq" approx "$(header_value "$OUT" freq)" 1000 0

run_proftop to-folded -i "$T" -o "$TMPD/saved.folded"
check "to-folded-exit-status-0" status $RC 0 "$ERR"
check "to-folded-lines" sh -c "printf 'main 50\nmain;work 300\nmain;other 100\n' | cmp -s - '$TMPD/saved.folded'"
run_proftop to-stdout -i "$T" -f callgrind -o -
check "to-callgrind-stdout" has "$OUT" '^cfn=\([0-9]+\) work$'
run_proftop round-trip -i "$T" -o "$TMPD/again.tmon"
check "round-trip-identical" cmp "$T" "$TMPD/again.tmon"
run_proftop to-pprof -i "$T" -o "$TMPD/saved.pb.gz"
check "to-pprof-gzip" sh -c "gzip -t '$TMPD/saved.pb.gz'"

echo "#fOrTyTwO" >"$TMPD/broken.tmon"
run_proftop broken -i "$TMPD/broken.tmon" -b
check "broken-exit-status-1" status $RC 1 "$ERR"
check "broken-message" has "$ERR" "^proftop: .*broken\.tmon: line 1: the file ends in its header"
run_proftop usage -i "$T" -- /bin/true
check "input-with-command-exit-2" status $RC 2 "$ERR"

# no_leftovers DIR — no temporary file (".NAME.PID.XXXXXX.tmp") left in DIR.
no_leftovers()
{
	local left
	left=$(find "$1" -maxdepth 1 -name '.*.tmp' | head -n 3)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# --- a directory proftop may not write to ----------------------------------------------------------
mkdir -p "$TMPD/ro"
echo "previous" >"$TMPD/ro/tmon.out"
if [ "$(id -u)" -eq 0 ]; then
	# Root writes anywhere: run as nobody, in a directory only root may write to.
	if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
		chmod 755 "$TMPD" "$TMPD/ro"
		chmod 644 "$T"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		    "$PROFTOP_BIN" -i "$T" -o "$TMPD/ro/tmon.out" >"$TMPD/ro.out" 2>"$TMPD/ro.err" </dev/null
		rc=$?
	else
		rc=skip
	fi
else
	chmod 555 "$TMPD/ro"
	"$PROFTOP_BIN" -i "$T" -o "$TMPD/ro/tmon.out" >"$TMPD/ro.out" 2>"$TMPD/ro.err" </dev/null
	rc=$?
	chmod 755 "$TMPD/ro"
fi
if [ "$rc" = skip ]; then
	skip "unwritable-dir" "needs the user nobody and setpriv to drop root"
elif [ "$(id -u)" -eq 0 ] && grep -q 'setpriv' "$TMPD/ro.err"; then
	skip "unwritable-dir" "setpriv cannot drop to nobody here: $(head -n 1 "$TMPD/ro.err")"
else
	check "unwritable-dir-exit-status-1" status "$rc" 1 "$TMPD/ro.err"
	check "unwritable-dir-message" has "$TMPD/ro.err" \
		"^proftop: cannot write .*/ro/tmon\.out: cannot create a file in .*/ro: Permission denied$"
	check "unwritable-dir-previous-intact" has "$TMPD/ro/tmon.out" '^previous$'
	check "unwritable-dir-no-leftovers" no_leftovers "$TMPD/ro"
fi

# --- a full disk: a 16 KiB tmpfs in a mount namespace of its own ------------------------------------
# A profile of 2000 distinct stacks does not fit.
perl -e 'print "#fOrTyTwO\n\$hz=100;\n\$rrun_utime=2000;\nPART2\n";
	 for $i (1 .. 2000) { print "& $i prog function_number_$i\n+ $i\n\@ 1 0 1\n- $i\n" }' >"$TMPD/big.tmon"
full_disk()
{
	unshare -m sh -c '
		d=$1; mount -t tmpfs -o size=16k tmpfs "$d" || exit 77
		echo previous >"$d/tmon.out"
		"$2" -i "$3" -o "$d/tmon.out" 2>"$4/full.err"
		echo "rc $?"
		cat "$d/tmon.out"
		ls -a "$d"' sh "$TMPD/mnt" "$PROFTOP_BIN" "$TMPD/big.tmon" "$TMPD"
}
mkdir -p "$TMPD/mnt"
if ! command -v unshare >/dev/null 2>&1; then
	skip "full-disk" "unshare(1) is not installed"
else
	full_disk >"$TMPD/full.out" 2>&1
	if [ $? -eq 77 ] || grep -q 'Operation not permitted\|cannot mount\|unshare failed' "$TMPD/full.out"; then
		skip "full-disk" "cannot mount a small tmpfs here: $(head -n 1 "$TMPD/full.out")"
	else
		check "full-disk-exit-status-1" has "$TMPD/full.out" '^rc 1$'
		check "full-disk-message" has "$TMPD/full.err" \
			"^proftop: cannot write .*/tmon\.out: .*No space left on device$"
		check "full-disk-previous-intact" has "$TMPD/full.out" '^previous$'
		check "full-disk-no-leftovers" sh -c "! grep -q '\.tmp$' '$TMPD/full.out'"
	fi
fi
finish
