# results.sh — the one place that knows the results file the test runners share. Sourced by
# run_unit.sh, run_all.sh and integration/lib.sh.
#
# One line per record:  pass|fail|skip COUNT NAME
# COUNT lets a cmocka binary record all of its tests in one line; NAME has no spaces.

results_add()
{
	printf '%s %s %s\n' "$2" "$3" "$4" >>"$1"
}

# The summary line: "N passed, N failed", plus ", N skipped" when any were skipped.
results_summary()
{
	awk '{ n[$1] += $2 }
	     END {
		printf "%d passed, %d failed", n["pass"], n["fail"]
		if (n["skip"]) printf ", %d skipped", n["skip"]
		printf "\n"
	     }' "$1"
}

results_failed()
{
	awk '$1 == "fail" { n += $2 } END { print n + 0 }' "$1"
}
