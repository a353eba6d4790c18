#!/bin/sh
# export_report.sh — `proftop report` against dprofpp on the same files: proftop's own tmon.out,
# files perl -d:DProf wrote (die, goto &sub and recursion included), random well-formed files with
# DProf's overhead figures, and truncated and corrupted files. Where dprofpp prints a table or a
# tree, report prints the same bytes; where the file is broken, report fails with the line.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN"

if ! command -v dprofpp >/dev/null 2>&1 ||
    ! perl -e 'exit !grep { -f "$_/Devel/DProf.pm" } @INC' 2>/dev/null; then
	skip "all" "dprofpp / Devel::DProf not installed (Debian libdevel-dprof-perl; make deps)"
	finish
fi

OPTS_LIST="none -T -t -I -I_-l -l -u -s -r -O_3 -O_-1 -F"

# same_as_dprofpp FILE OPTIONS — report and dprofpp print the same, and both succeed.
same_as_dprofpp()
{
	local opts
	opts=$(echo "$2" | sed 's/^none$//; s/_/ /g')
	# shellcheck disable=SC2086
	dprofpp $opts "$1" >"$TMPD/d.out" 2>"$TMPD/d.err" || { echo "dprofpp failed:"; head -3 "$TMPD/d.err"; return 1; }
	# shellcheck disable=SC2086
	"$PROFTOP_BIN" report $opts "$1" >"$TMPD/r.out" 2>"$TMPD/r.err" || { echo "report failed:"; head -3 "$TMPD/r.err"; return 1; }
	cmp -s "$TMPD/d.out" "$TMPD/r.out" && return 0
	echo "report $opts differs from dprofpp $opts:"
	diff "$TMPD/d.out" "$TMPD/r.out" | head -n 12
	return 1
}

# --- proftop's own files ---------------------------------------------------------------------------
if perf_events_ok; then
	need "$WL/paths" "$WL/split"
	run_proftop own -b -n 0 -o "$TMPD/paths.tmon" -- "$WL/paths" 1
	check "own-exit-status-0" status $RC 0 "$ERR"
	# The header's comment of proftop's own cost, which both must read past.
	check "own-cost-comment" has "$TMPD/paths.tmon" '^# proftop itself: cpu '
	for o in $OPTS_LIST; do
		check "own-$o" same_as_dprofpp "$TMPD/paths.tmon" "$o"
	done
else
	skip "own" "perf events unavailable: $PERF_EVENTS_WHY"
fi

# --- files Devel::DProf wrote --------------------------------------------------------------------
cat >"$TMPD/split.pl" <<'EOF'
# Three subs burning about 60/30/10 % of the CPU time, called from two levels.
sub burn { my $n = shift; my $x = 0; $x += $_ * 3 for 1 .. $n; $x }
sub burn_a { burn(6 * $_[0]) }
sub burn_b { burn(3 * $_[0]) }
sub burn_c { burn($_[0]) }
sub outer { burn_a($_[0]); burn_b($_[0]) }
for (1 .. 40) { outer(20000); burn_c(20000) }
EOF
cat >"$TMPD/odd.pl" <<'EOF'
# die out of nested subs, goto &sub, deep recursion, an anonymous sub, an AUTOLOAD.
sub thrower { die "x\n" }
sub mid { thrower() }
sub target { my $x = 0; $x += $_ for 1 .. 2000; $x }
sub jumper { goto &target }
sub rec { my $n = shift; return 0 unless $n; rec($n - 1) + 1 }
our $AUTOLOAD;
sub AUTOLOAD { return if $AUTOLOAD =~ /DESTROY/; target() }
my $anon = sub { target() };
for (1 .. 30) { eval { mid() }; jumper(); rec(25); $anon->(); undefined_sub() }
EOF
for pl in split odd; do
	(cd "$TMPD" && perl -d:DProf "$pl.pl" >/dev/null 2>&1 && mv tmon.out "$pl.dprof")
	if ! [ -s "$TMPD/$pl.dprof" ]; then
		fail "dprof-$pl-setup" "perl -d:DProf $pl.pl wrote no tmon.out"
		continue
	fi
	for o in $OPTS_LIST; do
		check "dprof-$pl-$o" same_as_dprofpp "$TMPD/$pl.dprof" "$o"
	done
done

# --- random well-formed files: overhead figures, old-style marks, long names, many subs ----------
cat >"$TMPD/gen.pl" <<'EOF'
# gen.pl SEED — a random, well-formed tmon.out on stdout.
use strict;
srand(shift);
sub r { int(rand($_[0])) }
my $hz = (100, 999, 1000, 10000, 7)[r(5)];
my @names = map { ("a" .. "z")[r(26)] x (1 + r(3)) . "_$_" } 1 .. (2 + r(80));
push @names, "a_very_long-name-with-dashes_and_more_text_that_goes_on_and_on_$_" for 1 .. r(3);
my @pk = ("main", "Foo::Bar", "split", "libc.so.6");
printf("#fOrTyTwO\n\$hz=%d;\n\$XS_VERSION='DProf 20110802.00';\n# All values are given in HZ\n", $hz);
printf("\$over_utime=%d; \$over_stime=%d; \$over_rtime=%d;\n\$over_tests=%d;\n", r(5), r(3), r(5),
       (1, 10000, 3)[r(3)]);
printf("\$rrun_utime=%d; \$rrun_stime=%d; \$rrun_rtime=%d;\n\$total_marks=0\n\nPART2\n",
       r(5000), r(500), r(8000));
my (%id, @stack);
my $next = 2;
for (1 .. 50 + r(3000)) {
	my $x = rand();
	if ($x < 0.25) { printf("\@ %d %d %d\n", r(20), r(3), r(30)); next }
	if ($x < 0.6 || !@stack) {
		if (rand() < 0.05) {
			printf("+ & Devel::DProf::write\n\@ %d 0 %d\n- & Devel::DProf::write\n", r(3), r(3));
			next;
		}
		my $k = $pk[r(scalar @pk)] . " " . $names[r(scalar @names)];
		unless ($id{$k}) { $id{$k} = $next++; print "& $id{$k} $k\n" }
		if (@stack && rand() < 0.05) { print "* $id{$k}\n"; $stack[-1] = $id{$k}; next }
		print "+ $id{$k}\n";
		push @stack, $id{$k};
		next;
	}
	my $top = pop @stack;
	if (rand() < 0.1) { print "/ $top\n" } else { print "- $top\n" }
}
print "- ", pop(@stack), "\n" while @stack;
EOF
random_files()
{
	local seed o
	for seed in $(seq 1 12); do
		perl "$TMPD/gen.pl" $seed >"$TMPD/rand.tmon" || return 1
		for o in none -I -l -u -r -O_-1 -t; do
			same_as_dprofpp "$TMPD/rand.tmon" $o >"$TMPD/rand.why" ||
				{ echo "seed $seed, $o:"; cat "$TMPD/rand.why"; return 1; }
		done
	done
}
check "random-files" random_files

# --- truncated files: the same as dprofpp where it copes, an error naming the line elsewhere ----
# truncated FILE — cut FILE at every line boundary of its last 30 lines and at 30 byte offsets.
truncated()
{
	local size lines cut n rc
	size=$(wc -c <"$1")
	lines=$(wc -l <"$1")
	for cut in $(awk -v n="$lines" 'BEGIN { for (i = n - 30; i < n; i++) if (i > 0) print "l" i }') \
		   $(awk -v s="$size" 'BEGIN { srand(7); for (i = 0; i < 30; i++) print "b" int(rand() * s) }'); do
		case $cut in
		l*) head -n "${cut#l}" "$1" >"$TMPD/cut.tmon" ;;
		b*) head -c "${cut#b}" "$1" >"$TMPD/cut.tmon" ;;
		esac
		"$PROFTOP_BIN" report "$TMPD/cut.tmon" >"$TMPD/cut.r" 2>"$TMPD/cut.err"
		rc=$?
		dprofpp "$TMPD/cut.tmon" >"$TMPD/cut.d" 2>/dev/null
		n=$?
		if [ $rc -gt 1 ]; then
			echo "cut at $cut: report exited $rc"; head -3 "$TMPD/cut.err"; return 1
		fi
		if [ $rc -eq 1 ] && ! grep -Eq '^proftop report: .*: line [0-9]+: ' "$TMPD/cut.err"; then
			echo "cut at $cut: the error names no line:"; cat "$TMPD/cut.err"; return 1
		fi
		# At a line boundary, where dprofpp prints a table, report prints the same one (a file
		# cut inside its header is an error for report, an empty table for dprofpp).
		case $cut in l*) ;; *) continue ;; esac
		if [ $n -eq 0 ] && ! grep -q 'ends in its header' "$TMPD/cut.err"; then
			[ $rc -eq 0 ] && cmp -s "$TMPD/cut.d" "$TMPD/cut.r" ||
				{ echo "cut at $cut: dprofpp copes, report differs or fails:"; cat "$TMPD/cut.err"; return 1; }
		fi
		if [ $n -ne 0 ] && [ $rc -eq 0 ]; then
			echo "cut at $cut: dprofpp fails, report printed a table"; return 1
		fi
	done
}
[ -s "$TMPD/paths.tmon" ] && check "truncated-own" truncated "$TMPD/paths.tmon"
[ -s "$TMPD/odd.dprof" ] && check "truncated-dprof" truncated "$TMPD/odd.dprof"

# corrupted FILE — bytes overwritten at random: report succeeds or names the line, never crashes.
corrupted()
{
	local seed rc
	for seed in $(seq 1 40); do
		perl -e 'srand($ARGV[0]); local $/; open my $f, "<", $ARGV[1] or die; my $d = <$f>;
			 for (1 .. 1 + int(rand(4))) { substr($d, int(rand(length $d)), 1) = chr(int(rand(256))) }
			 print $d' "$seed" "$1" >"$TMPD/bad.tmon"
		"$PROFTOP_BIN" report -F "$TMPD/bad.tmon" >/dev/null 2>"$TMPD/bad.err"
		rc=$?
		[ $rc -le 1 ] || { echo "seed $seed: report exited $rc"; head -3 "$TMPD/bad.err"; return 1; }
		if [ $rc -eq 1 ] && ! grep -Eq ': line [0-9]+: ' "$TMPD/bad.err"; then
			echo "seed $seed: the error names no line:"; cat "$TMPD/bad.err"; return 1
		fi
		if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMPD/bad.err"; then
			echo "seed $seed:"; head -20 "$TMPD/bad.err"; return 1
		fi
	done
}
[ -s "$TMPD/paths.tmon" ] && check "corrupted-own" corrupted "$TMPD/paths.tmon"
[ -s "$TMPD/odd.dprof" ] && check "corrupted-dprof" corrupted "$TMPD/odd.dprof"

# --- the CLI -------------------------------------------------------------------------------------
"$PROFTOP_BIN" report "$TMPD/missing.tmon" >/dev/null 2>"$TMPD/missing.err"
check "missing-file-exit-1" status $? 1 "$TMPD/missing.err"
check "missing-file-message" has "$TMPD/missing.err" "^proftop report: cannot read .*missing\.tmon: No such file"
"$PROFTOP_BIN" report -Z >/dev/null 2>"$TMPD/usage.err"
check "usage-exit-2" status $? 2 "$TMPD/usage.err"
# Without a file name, ./tmon.out, as dprofpp.
if [ -s "$TMPD/split.dprof" ]; then
	(cd "$TMPD" && cp split.dprof tmon.out && "$PROFTOP_BIN" report >default.out 2>&1)
	check "default-file" has "$TMPD/default.out" 'main::burn$'
fi
finish
