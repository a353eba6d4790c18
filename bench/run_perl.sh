#!/bin/bash
# bench/run_perl.sh — what reading Perl's subs costs proftop, and proftop beside Devel::DProf. On
# tests/workloads/plsplit.pl (30% digest_blocks, 70% sort_numbers by the clock, printing the work
# it did) under Debian's perl, PERL_SECONDS (default 6) each, PERL_REPEAT rounds (default 2):
# the program alone; proftop with --perl=off (native frames only) and with its subs (default);
# and `perl -d:DProf` with `dprofpp -I`. For each: the program's slowdown (the work it did
# against the program alone in the same time), the two subs' inclusive shares, and for proftop
# its CPU time per sample (its own CPU share over the run, from its final table, times the
# elapsed time, divided by the samples). plsplit.pl's work varies by several percent from run to
# run: its slowdowns are rough; a fixed work of 5 million sub calls, timed alone, under proftop
# and under DProf, measures each one's slowdown where calls are the work. Figures only; nothing
# here fails on them.
set -u
cd "$(dirname "$0")/.." || exit 1
proftop=${PERL_PROFTOP:-./proftop}
secs=${PERL_SECONDS:-6}
reps=${PERL_REPEAT:-2}
wl=tests/workloads/plsplit.pl
if ! command -v perl >/dev/null || ! [ -x "$proftop" ]; then
	echo "== Perl: no perl or no $proftop"
	exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# work FILE — the program's digests + sorts, weighted by their time per item alone.
work() { awk '/^digests/ { print $2 " " $4 }' "$1"; }

# alone — the program alone, twice (its work varies by some percent from run to run): the mean.
alone()
{
	local d1 s1 d2 s2
	perl "$wl" "$secs" >"$tmp/alone.out"
	read -r d1 s1 < <(work "$tmp/alone.out")
	perl "$wl" "$secs" >"$tmp/alone.out"
	read -r d2 s2 < <(work "$tmp/alone.out")
	base_d=$(( (d1 + d2) / 2 )) base_s=$(( (s1 + s2) / 2 ))
	printf "  %-22s digests %d sorts %d in %d s (mean of %d/%d and %d/%d)\n" "perl alone" \
		"$base_d" "$base_s" "$secs" "$d1" "$s1" "$d2" "$s2"
}

# slowdown FILE — the work done, against the program alone (per kind, then averaged).
slowdown()
{
	local d s
	read -r d s < <(work "$1")
	awk -v d="$d" -v s="$s" -v bd="$base_d" -v bs="$base_s" \
	    'BEGIN { if (d && s) printf "%.2fx", (bd / d + bs / s) / 2; else printf "?" }'
}

proftop_run()
{
	local label=$1
	shift
	"$proftop" -b -n 0 --max-rows 400 "$@" -- perl "$wl" "$secs" >"$tmp/out" 2>"$tmp/err"
	awk -v label="$label" -v slow="$(slowdown "$tmp/out")" '
	/^=== proftop final/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "elapsed") elapsed = $(i + 1) + 0
			if ($i == "samples") samples = $(i + 1) + 0
			if ($i == "proftop") cpu = $(i + 1) + 0
		}
	}
	$NF == "main" && $(NF - 1) == "digest_blocks" { d = $2 }
	$NF == "main" && $(NF - 1) == "sort_numbers" { s = $2 }
	$NF == "main" && $(NF - 1) == "by_number" { b = $2 }
	$NF == "Digest::MD5" && $(NF - 1) == "md5_hex" { x = $2 }
	END {
		printf "  %-22s slowdown %s  %6.1f us CPU per sample (%.1f%% CPU, %d samples)\n", label, slow,
		       samples ? cpu / 100 * elapsed / samples * 1e6 : 0, cpu, samples
		printf "  %-22s digest_blocks %5.2f%%  sort_numbers %5.2f%%  md5_hex %5.2f%%  by_number %5.2f%%\n",
		       "", d, s, x, b
	}' "$tmp/out"
}

dprof_run()
{
	if ! (cd "$tmp" && perl -d:DProf -e 1 2>/dev/null); then
		echo "  perl -d:DProf: Devel::DProf is not installed (make deps: libdevel-dprof-perl)"
		return
	fi
	( cd "$tmp" && rm -f tmon.out && perl -d:DProf "$OLDPWD/$wl" "$secs" >dprof.out &&
	  dprofpp -O 100 -I tmon.out >dprof.txt 2>&1 )
	awk -v slow="$(slowdown "$tmp/dprof.out")" '
	$NF == "main::digest_blocks" { d = $1 }
	$NF == "main::sort_numbers" { s = $1 }
	$NF == "main::by_number" { b = $1 }
	$NF == "Digest::MD5::md5_hex" { x = $1 }
	END { printf "  %-22s slowdown %s (dprofpp -I:)\n", "perl -d:DProf", slow
	      printf "  %-22s digest_blocks %s%%  sort_numbers %s%%  md5_hex %s%%  by_number %s\n", "",
		     d, s, x, b == "" ? "- (a sort comparator: DProf sees no call)" : b "%" }' "$tmp/dprof.txt"
}

# calls_run — a fixed amount of work made of sub calls (5 million calls of a one-line sub), its
# elapsed time alone, under proftop and under DProf (which instruments every call): the slowdown
# each causes where the calls are the work.
calls_run()
{
	local prog='use Time::HiRes qw(time); my $t = time; sub inc { $_[0] + 1 } my $x = 0;
		$x = inc($x) for 1 .. 5_000_000; printf "%.3f\n", time - $t'
	local t_alone t_proftop t_dprof
	# (the program times itself: proftop's own start and end are not the program's slowdown;
	# the fastest of three runs, the machine's noise being all on one side)
	t_alone=$(for i in 1 2 3; do perl -e "$prog" 2>/dev/null; done | sort -n | head -n 1)
	t_proftop=$(for i in 1 2 3; do "$proftop" -b -n 0 -- perl -e "$prog" 2>/dev/null | head -n 1
		    done | sort -n | head -n 1)
	t_dprof=$(cd "$tmp" && for i in 1 2 3; do perl -d:DProf -e "$prog" 2>/dev/null; done |
		  sort -n | head -n 1)
	awk -v a="$t_alone" -v p="$t_proftop" -v d="$t_dprof" 'BEGIN {
		printf "  5M calls of a sub:     alone %.2f s, under proftop %.2f s (%.2fx), under perl -d:DProf %.2f s (%.2fx)\n",
		       a, p, p / a, d, d / a }'
}

echo "== Perl subs: $(perl -e 'printf "perl %vd", $^V'), plsplit.pl ${secs}s (truth: digest_blocks 30%, sort_numbers 70%)"
for r in $(seq 1 "$reps"); do
	echo " round $r"
	alone
	proftop_run "proftop --perl=off" --perl=off
	proftop_run "proftop (Perl subs)"
	dprof_run
	calls_run
done
