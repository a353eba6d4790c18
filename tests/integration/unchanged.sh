#!/bin/sh
# unchanged.sh — proftop never changes the program it profiles: programs that look at what an
# allocation library could change (tests/workloads/unchanged.c, cxxthrow.cpp) write what they see
# to a report, run bare and under proftop --mode alloc in the same way; the reports, the files
# they write and their exit statuses must be the same, and proftop must have sampled them. The
# cases: descriptors closed with close_range() and reopened (an input and an output on 3 and 4),
# errno across successful calls (threads, a signal handler), sizes near SIZE_MAX and odd
# alignments, usable sizes, fork without exec, vfork, posix_spawn, signals and a death by
# SIGTERM, threads, the environment (the program's and its children's, through execv, execve
# with its own environment, one with its own LD_PRELOAD, and execlp; the children sampled too),
# jemalloc and tcmalloc preloaded (the blocks still theirs), C++ exceptions (libgcc_s's
# unwinder, as fast).
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/unchanged" "$WL/cxxthrow"
require_perf_events
lib=$BUILD_DIR/libproftop-alloc.so
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

seq 1 30000 >"$TMPD/input"

# same TAG RATE PRELOAD CASE ARG... — CASE run bare and under proftop at --alloc-rate RATE (both
# with PRELOAD, when not empty, in LD_PRELOAD, and without the shell's $_): the reports
# ($TMPD/TAG.bare, $TMPD/TAG.prof) and exit statuses the same; sets BARE_RC, OUT, ERR and RC.
# An ARG of @ stands for the run's own output file ($TMPD/TAG.bare.out or .prof.out).
same()
{
	local tag rate pre c a args_bare args_prof
	tag=$1 rate=$2 pre=$3 c=$4
	shift 4
	args_bare="" args_prof=""
	for a in "$@"; do
		if [ "$a" = @ ]; then
			args_bare="$args_bare $TMPD/$tag.bare.out" args_prof="$args_prof $TMPD/$tag.prof.out"
		else
			args_bare="$args_bare $a" args_prof="$args_prof $a"
		fi
	done
	# shellcheck disable=SC2086
	env -u _ ${pre:+LD_PRELOAD=$pre} "$WL/unchanged" "$c" "$TMPD/$tag.bare" $args_bare \
		>"$TMPD/$tag.bare.stdout" 2>&1 </dev/null
	BARE_RC=$?
	# shellcheck disable=SC2086
	run_proftop "$tag" -b -n 0 --mode alloc --alloc-rate "$rate" -- \
		env -u _ ${pre:+LD_PRELOAD=$pre} "$WL/unchanged" "$c" "$TMPD/$tag.prof" $args_prof
	check "$tag-same-report" diff "$TMPD/$tag.bare" "$TMPD/$tag.prof"
	check "$tag-same-status" status "$RC" "$BARE_RC" "$ERR"
	check "$tag-sampled" sh -c "[ '$(header_value "$OUT" samples)' -gt 10 ] || { grep '^=== proftop final' '$OUT'; exit 1; }"
}

# bytes_under FILE FUNCTION — the bytes allocated under FUNCTION: its TOTAL% (the final table's
# rows are SELF% TOTAL% BYTES OBJECTS FUNCTION MODULE) of the bytes the final header says were
# allocated.
bytes_under()
{
	awk -v f="$2" '/^=== proftop final/ { on = 1
			for (i = 1; i < NF; i++) if ($i == "allocated" && $(i + 1) ~ /^[0-9]+$/) a = $(i + 1)
			next }
		/^===/ { on = 0 }
		on && $(NF - 1) == f { p = $2 }
		END { printf "%.0f\n", p * a / 100 }' "$1"
}

# --- descriptors: closed, then reopened on the numbers the library's own once took ----------------
for c in fds fds-reversed; do
	same "$c" 64K "" "$c" "$TMPD/input" @
	check "$c-copied" cmp "$TMPD/input" "$TMPD/$c.prof.out"
	check "$c-copied-bare" cmp "$TMPD/input" "$TMPD/$c.bare.out"
	check "$c-numbers" has "$TMPD/$c.prof" '^in [34] out [34] read 0 next 5$'
	check "$c-none-more" has "$TMPD/$c.prof" '^fds: 0 1 2 3 4 $'
done

# --- errno, limits, threads -----------------------------------------------------------------------
same errno 4K "" errno
check "errno-kept" has "$TMPD/errno.prof" '^errno changed by successful calls: 0; in the handler: 0 of 50 runs$'
check "errno-no-fp-flags" has "$TMPD/errno.prof" '^threads that saw floating-point exception flags raised: 0$'
check "errno-fp-traps" has "$TMPD/errno.prof" '^allocated with inexact results trapped$'
# Threads whose first allocation is inside pthread_getattr_np(), which holds the thread's lock
# (every allocation sampled, at 1 byte): none deadlocks.
same getattr 1 "" getattr
check "getattr-all" has "$TMPD/getattr.prof" '^threads that read their attributes: 256 of 256$'
# exec from a handler on an 8 KiB alternate stack: the wrapper builds the environment in it.
same altstack 64K "" altstack
check "altstack-executed" has "$TMPD/altstack.prof" '^executed from a handler on its alternate stack$'
same limits 1 "" limits
check "limits-enomem" has "$TMPD/limits.prof" '^malloc\(SIZE_MAX\) +NULL errno ENOMEM$'
check "limits-usable" sh -c "! grep -q ': NO' '$TMPD/limits.prof'"
same threads 4K "" threads

# --- processes: fork, vfork, posix_spawn, signals, death by SIGTERM ------------------------------
same processes 64K "" processes
check "processes-killed" status "$RC" 143 "$ERR"
check "processes-child-file" cmp "$TMPD/processes.bare.child" "$TMPD/processes.prof.child"
check "processes-reported" has "$TMPD/processes.prof" '^SIGUSR1 handled 30 times$'

# --- the environment: the program's own, and its children's, sampled --------------------------
same env 64K "" env
check "env-no-preload" sh -c "! grep -Eq '^[a-z-]+: (LD_PRELOAD=.*alloc|PROFTOP_ALLOC)' '$TMPD/env.prof'"
check "env-custom" has "$TMPD/env.prof" '^execve-custom: A=1$'
check "env-own-preload" has "$TMPD/env.prof" '^execve-preload: LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6$'
# Four children, each 20 blocks of 300 KB: all sampled at 64K, the four preloaded.
check "env-children-sampled" between "$(bytes_under "$OUT" env_child_allocates)" 22000000 26000000

# --- a proftop that file capabilities made non-dumpable: the command still sampled ------------
# (The programs it executes cannot open proftop's /proc/PID/fd then; the command itself inherits
# the ring's descriptor.)
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setcap >/dev/null &&
    command -v setpriv >/dev/null; then
	caps=$TMPD/caps
	mkdir -p "$caps" && chmod 711 "$TMPD" && chmod 755 "$caps" &&
		cp "$PROFTOP_BIN" "$lib" "$WL/allocsplit" "$caps/" && chmod 755 "$caps"/* &&
		setcap cap_perfmon+ep "$caps/proftop"
	check "caps-set" sh -c "getcap '$caps/proftop' | grep -q perfmon"
	setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
		"$caps/proftop" -b -n 0 --mode alloc --alloc-rate 64K -- "$caps/allocsplit" \
		>"$TMPD/caps.out" 2>"$TMPD/caps.err" </dev/null
	check "caps-exit-0" status "$?" 0 "$TMPD/caps.err"
	check "caps-sampled" has "$TMPD/caps.out" ' alloc_leak  allocsplit$'
else
	fail "caps" "needs root, the user nobody, setcap and setpriv (libcap2-bin and util-linux)"
fi

# --- another allocator preloaded: its blocks stay its own ---------------------------------------
for a in jemalloc tcmalloc; do
	eval "path=\$$a"
	[ -e "$path" ] || { fail "$a-installed" "$path is missing (make deps installs it)"; continue; }
	same "$a" 1 "$path" allocator # (every block sampled: its usable size is the allocator's)
	check "$a-counts" has "$TMPD/$a.prof" "^allocator $a counts the 64 MiB: yes$"
done
same glibc 64K "" allocator
check "glibc-counts" has "$TMPD/glibc.prof" '^allocator glibc counts the 64 MiB: yes$'

# --- C++ exceptions: libgcc_s unwinds them, as fast -------------------------------------------------
env -u _ "$WL/cxxthrow" 60000 "$TMPD/throw.bare" >"$TMPD/throw.bare.out" 2>&1 </dev/null
bare_rc=$?
run_proftop throw -b -n 0 --mode alloc -- env -u _ "$WL/cxxthrow" 60000 "$TMPD/throw.prof"
check "throw-same-report" diff "$TMPD/throw.bare" "$TMPD/throw.prof"
check "throw-same-status" status "$RC" "$bare_rc" "$ERR"
check "throw-libgcc" has "$TMPD/throw.prof" '^_Unwind_RaiseException from libgcc_s'
check "throw-no-libunwind" has "$TMPD/throw.prof" '^libunwind mapped: no$'
# CPU seconds of the throwing, against the bare run's in this run (the library once made them
# 13-25 times slower): within twice, and a tenth of a second.
cpu_bare=$(awk '/^cpu / { print $2 }' "$TMPD/throw.bare.out")
cpu_prof=$(awk '/^cpu / { print $2 }' "$ERR" "$OUT" | head -n 1)
check "throw-as-fast" sh -c "awk -v b='$cpu_bare' -v p='$cpu_prof' 'BEGIN { exit !(b > 0 && p > 0 && p <= 2 * b + 0.1) }' || echo 'cpu $cpu_prof s under proftop, $cpu_bare s bare'"
check "library-no-libunwind" sh -c "! ldd '$lib' | grep -q libunwind"
check "library-no-unwind-symbols" sh -c "! nm -D --defined-only '$lib' | grep -q ' _Unwind_'"

finish
