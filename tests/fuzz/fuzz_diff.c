/* libFuzzer target: baseline matching (diff.c), a saved profile matched against the one shown, the
 * names of both from hostile files. The input is two tmon.out files (tmon_read.c): a 2-byte
 * little-endian length, the baseline's bytes, then the current profile's. Each that parses is a
 * snapshot; the baseline is matched against the other (functions by name and module), against
 * itself (a snapshot of the same profile: by id), and against the other again, each in every
 * thread's scope and in all threads'. After each match:
 *  - the baseline's samples are all somewhere: the self and total counts it gives now's functions
 *    plus those of its unmatched functions add up to its own, in the scope;
 *  - an unmatched function has no function of its name and module now; every function now with
 *    baseline counts has one there;
 *  - the root's path holds the scope's samples;
 *  - the function table and the call tree with the baseline's shares (view_top(), view_tree(),
 *    what every frontend shows) have percentages between 0 and 100;
 *  - matching again against a snapshot matched before gives the same answers.
 *
 * Seeds in corpus/fuzz_diff: pairs of the fuzz_tmon_read seeds (proftop's and Devel::DProf's
 * tmon.out), a file against itself, and two profiles with names alike but for their modules. */
#include "proftop/diff.h"
#include "proftop/snapshot.h"
#include "proftop/tmon_read.h"
#include "proftop/view.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct snapshot *read_snapshot(const uint8_t *data, size_t size, struct tmon **tm)
{
	struct tmon_read_options o = { 0 };
	char *message = NULL;

	*tm = NULL;
	if (tmon_read((const char *)data, size, &o, NULL, tm, &message)) {
		free(message);
		return NULL;
	}
	return tmon_snapshot(*tm);
}

static bool same_name(const struct snapshot_func *a, const struct snapshot_func *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->module, b->module);
}

static void check_pct(double pct)
{
	if (!isfinite(pct) || pct < 0 || pct > 100.0 + 1e-9)
		abort();
}

/* The baseline's node of tid's scope, as diff.h says it is chosen. */
static uint32_t scope_root(const struct snapshot *old, pid_t tid)
{
	for (size_t i = 0; tid && i < old->nthreads; i++)
		if (old->threads[i].tid == tid)
			return old->threads[i].root;
	return old->merged_root;
}

static void check_sums(const struct diff_base *base, const struct snapshot *old,
		       const struct snapshot *now, pid_t tid)
{
	uint64_t *self = calloc(old->nfuncs + 1, sizeof(*self));
	uint64_t *total = calloc(old->nfuncs + 1, sizeof(*total));
	uint64_t want_self = 0, want_total = 0, got_self = 0, got_total = 0, s, t;
	const struct diff_unmatched *un;
	size_t nun = diff_base_unmatched(base, &un);
	uint32_t root = scope_root(old, tid);

	if (old->nnodes)
		snapshot_flat(old, root, self, total);
	for (size_t f = 1; f < old->nfuncs; f++) {
		want_self += self[f];
		want_total += total[f];
	}
	for (uint32_t f = 1; f < now->nfuncs; f++) {
		diff_base_func(base, f, &s, &t);
		got_self += s;
		got_total += t;
		if (t || s) { /* some baseline function of its name and module */
			bool found = false;

			for (size_t g = 1; g < old->nfuncs && !found; g++)
				found = same_name(&old->funcs[g], &now->funcs[f]);
			if (!found)
				abort();
		}
	}
	for (size_t i = 0; i < nun; i++) {
		if (un[i].func == 0 || un[i].func >= old->nfuncs || !un[i].total ||
		    un[i].self != self[un[i].func] || un[i].total != total[un[i].func])
			abort();
		for (uint32_t f = 1; f < now->nfuncs; f++)
			if (same_name(&old->funcs[un[i].func], &now->funcs[f]))
				abort();
		got_self += un[i].self;
		got_total += un[i].total;
	}
	if (got_self != want_self || got_total != want_total)
		abort();
	if (diff_base_samples(base) != (old->nnodes ? old->nodes[root].total : 0))
		abort();
	if (diff_base_node(base, SNAPSHOT_ROOT_PATH, &s, &t) != (old->nnodes != 0) ||
	    t != diff_base_samples(base))
		abort();
	free(self);
	free(total);
}

static void check_views(const struct diff_base *base, const struct snapshot *now, pid_t tid)
{
	uint32_t scope = SNAPSHOT_NO_NODE;
	struct view_row *rows;
	struct view_tree_row *trows = NULL;
	struct view_tree tree;
	size_t n, cap = 0;

	for (size_t i = 0; tid && i < now->nthreads; i++)
		if (now->threads[i].tid == tid)
			scope = now->threads[i].root;
	struct view_top_query q = { VIEW_SORT_DELTA_SELF, NULL, scope, base };

	n = view_top(now, &q, &rows);
	for (size_t i = 0; i < n; i++) {
		check_pct(rows[i].self_pct);
		check_pct(rows[i].total_pct);
		check_pct(rows[i].old_self_pct);
		check_pct(rows[i].old_total_pct);
		if (strlen(rows[i].name) > (1u << 30) || strlen(rows[i].module) > (1u << 30))
			abort();
	}
	free(rows);
	if (!now->nnodes)
		return;
	view_tree_of(&tree, now, scope);
	struct view_tree_query tq = { .baseline = base };

	n = view_tree(&tree, &tq, &trows, &cap);
	for (size_t i = 0; i < n; i++) {
		check_pct(trows[i].self_pct);
		check_pct(trows[i].total_pct);
		check_pct(trows[i].old_self_pct);
		check_pct(trows[i].old_total_pct);
	}
	free(trows);
	view_tree_free(&tree);
}

/* Every function's baseline counts, for comparing two matches. */
static uint64_t *answers(const struct diff_base *base, const struct snapshot *now)
{
	uint64_t *a = calloc(2 * now->nfuncs + 1, sizeof(*a));

	for (uint32_t f = 0; f < now->nfuncs; f++)
		diff_base_func(base, f, &a[2 * f], &a[2 * f + 1]);
	return a;
}

static void match(struct diff_base *base, const struct snapshot *old, const struct snapshot *now,
		  pid_t tid)
{
	diff_base_match(base, now, tid);
	check_sums(base, old, now, tid);
	check_views(base, now, tid);
}

/* The tids to match in: all threads, each of either side's threads, one neither has. */
static void match_all(struct diff_base *base, const struct snapshot *old,
		      const struct snapshot *now)
{
	match(base, old, now, 0);
	for (size_t i = 0; i < old->nthreads; i++)
		match(base, old, now, old->threads[i].tid);
	for (size_t i = 0; i < now->nthreads; i++)
		match(base, old, now, now->threads[i].tid);
	match(base, old, now, 424242);
	match(base, old, now, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tmon *tm_old, *tm_now = NULL;
	struct snapshot *old, *now;
	struct diff_base *base;
	uint64_t *first, *again;
	size_t len;

	if (size < 2)
		return 0;
	len = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	len = len < size ? len : size;
	old = read_snapshot(data, len, &tm_old);
	if (!old)
		goto out;
	now = read_snapshot(data + len, size - len, &tm_now);
	base = diff_base_new(old, "fuzz");
	if (now) {
		match_all(base, old, now);
		first = answers(base, now);
		match_all(base, old, old);
		match_all(base, old, now);
		again = answers(base, now);
		if (memcmp(first, again, 2 * now->nfuncs * sizeof(*first)))
			abort();
		free(first);
		free(again);
		snapshot_unref(now);
	} else {
		match_all(base, old, old);
	}
	diff_base_free(base);
	snapshot_unref(old);
out:
	tmon_free(tm_old);
	tmon_free(tm_now);
	return 0;
}
