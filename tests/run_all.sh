#!/bin/sh
# run_all.sh [BUILD_DIR] — every test: the unit-test binaries in BUILD_DIR/tests (default build),
# then every tests/integration/*.sh against ./proftop (or $PROFTOP_BIN) and BUILD_DIR/workloads.
#
# Each cmocka test and each integration check counts once. The last line printed is the summary,
# "N passed, N failed" (plus ", N skipped" when any were skipped), and the exit status is nonzero
# if anything failed. Integration scripts run one at a time: they measure CPU shares, so they must
# not compete with each other for the cores.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/results.sh"

build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
[ -d "$build" ] || echo "run_all: no build directory $build" >&2

results=$(mktemp) || exit 1
trap 'rm -f "$results"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export PROFTOP_RESULTS="$results" BUILD_DIR="$build"

sh "$here/run_unit.sh" "$build"

for script in "$here"/integration/*.sh; do
	name=$(basename "$script" .sh)
	case $name in lib | lib_*) continue ;; esac # sourced by the others
	before=$(results_failed "$results")
	# The scripts bound each proftop run; this limit only catches a script that wedges.
	timeout -k 10 "${PROFTOP_SCRIPT_TIMEOUT:-300}" sh "$script"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(results_failed "$results")" -eq "$before" ]; then
		echo "FAIL  $name: script exited with status $rc before recording a failure"
		results_add "$results" fail 1 "$name/script"
	fi
done

# A short run of every fuzz target, its seed corpus and 5 s of new inputs (make test builds
# them; PROFTOP_FUZZ_SECONDS=0 skips; make fuzz runs them for a minute each). 5, not 10: 28
# targets, and CI's whole run must stay within its 45 minutes.
if [ -n "${PROFTOP_FUZZ_TARGETS:-}" ] && [ "${PROFTOP_FUZZ_SECONDS:-5}" -gt 0 ]; then
	sh "$here/run_fuzz.sh" "${PROFTOP_FUZZ_SECONDS:-5}" $PROFTOP_FUZZ_TARGETS
fi

results_summary "$results"
[ "$(results_failed "$results")" -eq 0 ]
