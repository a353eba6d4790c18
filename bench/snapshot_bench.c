/* snapshot_bench.c — `snapshot_bench [SAMPLES]`: what a snapshot costs as the profile grows.
 *
 * Random stacks of 16 functions, 4 to 13 deep (randtree's shape: nearly every sample is a new
 * path), go into a profile with no memory budget. Every 1,000 samples a reader takes a snapshot
 * and drops the previous one, as the screen does each refresh: the profile updates a pooled
 * snapshot with what changed. Beside it, the same stream goes into a second profile whose reader
 * keeps its last three snapshots (as many as the profile pools), so each is a full copy. Prints the
 * median time of each kind at a few profile sizes: the first should stay flat, the second grows
 * with the tree. Four of the 16 functions are inlined ones, and the last column is what folding
 * them into their callers costs (the screen's `i`, once per refresh), on the newest snapshot.
 *
 * Prints figures; asserts nothing about them. */
#include "proftop/profile.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include "bench_random.h"

#include <stdio.h>
#include <stdlib.h>

#define PER_SNAPSHOT 1000
#define ROWS 6

static uint64_t timed_snapshot(struct profile *p, struct snapshot **keep)
{
	uint64_t t0 = util_now_ns();

	*keep = profile_snapshot(p);
	return util_now_ns() - t0;
}

int main(int argc, char **argv)
{
	long samples = argc > 1 ? atol(argv[1]) : 1000000;
	struct profile *pooled = profile_new(NULL), *copied = profile_new(NULL);
	uint32_t fa[16], fb[16], stack[13];
	size_t nsnaps = (size_t)(samples / PER_SNAPSHOT) + 1, n = 0;
	struct snapshot *last = NULL, *kept[3] = { NULL };
	uint64_t *inc = xcalloc(nsnaps, sizeof(*inc)), *full = xcalloc(nsnaps, sizeof(*full));
	char name[16];

	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fa[i] = i < 12 ? profile_func(pooled, "randtree", name, 0)
			       : profile_inlined_func(pooled, "randtree", name);
		fb[i] = profile_func(copied, "randtree", name, 0);
	}
	printf("%10s %10s %14s %14s %14s\n", "samples", "nodes", "update (us)", "full copy (us)",
	       "fold inl. (us)");
	for (long i = 1; i <= samples; i++) {
		size_t depth = 4 + next_random() % 10;

		for (size_t d = 0; d < depth; d++)
			stack[d] = fa[next_random() % 16];
		profile_add(pooled, 1, 1, stack, depth);
		for (size_t d = 0; d < depth; d++)
			stack[d] = fb[stack[d] - fa[0]];
		profile_add(copied, 1, 1, stack, depth);
		if (i % PER_SNAPSHOT)
			continue;
		struct snapshot *s;

		inc[n] = timed_snapshot(pooled, &s);
		snapshot_unref(last);
		last = s;
		struct snapshot *oldest = kept[n % 3];

		full[n] = timed_snapshot(copied, &kept[n % 3]); /* while the pooled three are held */
		snapshot_unref(oldest);
		if (++n % (nsnaps / ROWS + 1) == 0 || i == samples) {
			size_t from = n > 20 ? n - 20 : 0; /* the median of the last 20 */
			uint64_t t0 = util_now_ns();
			struct snapshot *folded = snapshot_fold_inlined(last);
			uint64_t fold_ns = util_now_ns() - t0;

			snapshot_unref(folded);

			qsort(inc + from, n - from, sizeof(*inc), by_value);
			qsort(full + from, n - from, sizeof(*full), by_value);
			printf("%10ld %10zu %14.1f %14.1f %14.1f\n", i, last->nnodes,
			       (double)inc[from + (n - from) / 2] / 1e3,
			       (double)full[from + (n - from) / 2] / 1e3, (double)fold_ns / 1e3);
		}
	}
	for (size_t i = 0; i < 3; i++)
		snapshot_unref(kept[i]);
	snapshot_unref(last);
	free(inc);
	free(full);
	profile_free(pooled);
	profile_free(copied);
	return 0;
}
