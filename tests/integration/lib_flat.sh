# lib_flat.sh — flat self profiles side by side: proftop's final table and `perf report`'s, and the
# total variation distance between two of them. Sourced after lib.sh (run_all.sh runs no lib_*).
#
# A flat profile here is lines "PERCENT<TAB>NAME", one per function name: the share of the
# samples whose leaf it was. Names are compared as printed (a JIT's names come from the same
# perf map for both tools); one name in several modules or at several starts counts once.

# proftop_flat FILE — the final table of proftop's batch output FILE as a flat profile.
proftop_flat()
{
	final_table "$1" | awk '
	{
		name = $0
		sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		sub(/ +[^ ]+ *$/, "", name)
		pct[name] += $1
	}
	END { for (n in pct) printf "%.4f\t%s\n", pct[n], n }'
}

# perf_flat REPORT — `perf report --stdio --no-children --sort sym -g none` output as a flat
# profile of user code: kernel rows ([k]) are left out, as proftop without --kernel counts such
# samples where the thread entered the kernel.
perf_flat()
{
	awk '
	$1 ~ /^[0-9.]+%$/ && $2 == "[.]" {
		v = $1; sub(/%$/, "", v)
		name = $0; sub(/^ *[0-9.]+% +\[\.\] +/, "", name); sub(/ +$/, "", name)
		pct[name] += v
	}
	END { for (n in pct) printf "%.4f\t%s\n", pct[n], n }' "$1"
}

# tvd A B — the total variation distance between flat profiles A and B (files), in points: each
# scaled to 100 first, half the sum over every name of the difference of its shares. 0: the same
# profile; 100: no function in common.
tvd()
{
	awk -F '\t' '
	FNR == 1 { f++ }
	{ share[f, $2] = $1; sum[f] += $1; names[$2] = 1 }
	END {
		if (!sum[1] || !sum[2]) { print "missing"; exit }
		for (n in names) {
			d = share[1, n] * 100 / sum[1] - share[2, n] * 100 / sum[2]
			t += d < 0 ? -d : d
		}
		printf "%.1f\n", t / 2
	}' "$1" "$2"
}
