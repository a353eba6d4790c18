/* Unit tests of a profile against a baseline: shares, not counts; functions matched by name and
 * module (not id, not address), or by id in snapshots of one profile; one side only marked; the
 * order of the rows; call paths matched for the trees; a thread's scope. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/diff.h"
#include "proftop/profile.h"
#include "proftop/view.h"
#include "unit_profiles.h"

#include <stdlib.h>
#include <string.h>

static const struct view_row *row(const struct view_row *rows, size_t n, const char *name,
				  const char *module)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) && !strcmp(rows[i].module, module))
			return &rows[i];
	return NULL;
}

/* The function table of now against old in thread tid's scope (0: all), by the change of SELF%. */
static size_t diff_top(struct snapshot *old, const struct snapshot *now, pid_t tid,
		       struct view_row **rows)
{
	struct diff_base *base = diff_base_new(old, "old");
	uint32_t scope = SNAPSHOT_NO_NODE;
	size_t n;

	for (size_t i = 0; tid && i < now->nthreads; i++)
		if (now->threads[i].tid == tid)
			scope = now->threads[i].root;
	struct view_top_query q = { VIEW_SORT_DELTA_SELF, NULL, scope, base };

	diff_base_match(base, now, tid);
	n = view_top(now, &q, rows);
	diff_base_free(base); /* the rows point into the snapshots, not the base */
	return n;
}

/* old: main → one 60, main → two 30, gone 10 (100 samples); new, 4 times longer and with other
 * ids and addresses: main → two 200 (→ fresh 80 of them), main → one 160, and a "one" of
 * another module 40 (400 samples). */
static void shares_matched_by_name_and_module(void **state)
{
	struct profile *po = profile_new(NULL), *pn = profile_new(NULL);
	uint32_t om = profile_func(po, "prog", "main", 0x10);
	uint32_t o1 = profile_func(po, "prog", "one", 0x20);
	uint32_t o2 = profile_func(po, "prog", "two", 0x30);
	uint32_t og = profile_func(po, "prog", "gone", 0x40);
	uint32_t nf = profile_func(pn, "prog", "fresh", 0x99);
	uint32_t n2 = profile_func(pn, "prog", "two", 0x88);
	uint32_t n1 = profile_func(pn, "prog", "one", 0x77);
	uint32_t nm = profile_func(pn, "prog", "main", 0x66);
	uint32_t nl = profile_func(pn, "libone.so", "one", 0x55);
	struct view_row *rows;
	size_t n;

	(void)state;
	unit_add(po, 1, 60, 2, om, o1);
	unit_add(po, 1, 30, 2, om, o2);
	unit_add(po, 1, 10, 1, og);
	unit_add(pn, 1, 120, 2, nm, n2);
	unit_add(pn, 1, 80, 3, nm, n2, nf);
	unit_add(pn, 1, 160, 2, nm, n1);
	unit_add(pn, 1, 40, 1, nl);
	struct snapshot *old = profile_snapshot(po), *new = profile_snapshot(pn);

	n = diff_top(old, new, 0, &rows);
	assert_int_equal(n, 6);
	const struct view_row *one = row(rows, n, "one", "prog"), *two = row(rows, n, "two", "prog");
	const struct view_row *fresh = row(rows, n, "fresh", "prog");
	const struct view_row *gone = row(rows, n, "gone", "prog");
	const struct view_row *lib = row(rows, n, "one", "libone.so");
	const struct view_row *m = row(rows, n, "main", "prog");

	assert_non_null(one);
	assert_true(one->old_self_pct == 60.0 && one->self_pct == 40.0);
	assert_true(two->old_self_pct == 30.0 && two->self_pct == 30.0);
	assert_true(two->old_total_pct == 30.0 && two->total_pct == 50.0);
	assert_true(fresh->only_new && !fresh->only_old);
	assert_true(fresh->self_pct == 20.0 && fresh->old_self_pct == 0);
	assert_true(gone->only_old && !gone->only_new && gone->func == SNAPSHOT_ROOT_FUNC);
	assert_true(gone->old_self_pct == 10.0 && gone->self_pct == 0 && gone->total == 0);
	assert_true(lib->only_new && lib->self_pct == 10.0);
	assert_true(m->old_total_pct == 90.0 && m->total_pct == 90.0 && !m->only_new && !m->only_old);
	/* The largest change of SELF% first: one (-20), fresh (+20; its name after), then lib and
	 * gone (10: by name), then two (0, total +20), main (0, 0). */
	assert_ptr_equal(&rows[0], fresh);
	assert_ptr_equal(&rows[1], one);
	assert_ptr_equal(&rows[2], gone);
	assert_ptr_equal(&rows[3], lib);
	assert_ptr_equal(&rows[4], two);
	assert_ptr_equal(&rows[5], m);
	free(rows);

	/* Against itself: every change is zero. */
	n = diff_top(new, new, 0, &rows);
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].self_pct == rows[i].old_self_pct);
		assert_true(rows[i].total_pct == rows[i].old_total_pct);
		assert_false(rows[i].only_new || rows[i].only_old);
	}
	free(rows);
	snapshot_unref(old);
	snapshot_unref(new);
	profile_free(po);
	profile_free(pn);
}

/* An empty side: every function of the other is new (or gone), no division by zero. */
static void empty_side(void **state)
{
	struct profile *pe = profile_new(NULL), *p = profile_new(NULL);
	uint32_t f = profile_func(p, "prog", "only", 0x10);
	struct view_row *rows;

	(void)state;
	unit_add(p, 1, 5, 1, f);
	struct snapshot *empty = profile_snapshot(pe), *s = profile_snapshot(p);

	assert_int_equal(diff_top(empty, s, 0, &rows), 1);
	assert_true(rows[0].only_new && rows[0].self_pct == 100.0);
	free(rows);
	assert_int_equal(diff_top(s, empty, 0, &rows), 1);
	assert_true(rows[0].only_old && rows[0].old_self_pct == 100.0 && rows[0].self_pct == 0.0);
	free(rows);
	assert_int_equal(diff_top(empty, empty, 0, &rows), 0);
	free(rows);
	snapshot_unref(empty);
	snapshot_unref(s);
	profile_free(pe);
	profile_free(p);
}

/* Paths: the tree's rows carry the same path's shares in the baseline, relative to the node at
 * the tree's root there too; a path the baseline lacks is new even when its function is not. */
static void paths_matched(void **state)
{
	struct profile *po = profile_new(NULL), *pn = profile_new(NULL);
	uint32_t om = profile_func(po, "prog", "main", 1), oa = profile_func(po, "prog", "a", 2);
	uint32_t ob = profile_func(po, "prog", "b", 3);
	uint32_t nb = profile_func(pn, "prog", "b", 9), na = profile_func(pn, "prog", "a", 8);
	uint32_t nm = profile_func(pn, "prog", "main", 7);
	struct view_tree_row *rows = NULL;
	struct view_tree tree;
	size_t cap = 0, n;

	(void)state;
	unit_add(po, 1, 75, 3, om, oa, ob); /* main → a → b 75, main → b 25 */
	unit_add(po, 1, 25, 2, om, ob);
	unit_add(pn, 1, 50, 3, nm, na, nb); /* main → a → b 50, main → a 30, b → a 20 */
	unit_add(pn, 1, 30, 2, nm, na);
	unit_add(pn, 1, 20, 2, nb, na);
	struct snapshot *old = profile_snapshot(po), *now = profile_snapshot(pn);
	struct diff_base *base = diff_base_new(old, "old");
	struct view_tree_query q = { .baseline = base };

	diff_base_match(base, now, 0);
	assert_int_equal(diff_base_samples(base), 100);
	view_tree_of(&tree, now, SNAPSHOT_NO_NODE);
	n = view_tree(&tree, &q, &rows, &cap);
	for (size_t i = 0; i < n; i++) {
		const struct view_tree_row *r = &rows[i];
		const char *parent = r->depth ? rows[i - 1].name : ""; /* (each has one child) */

		if (!strcmp(r->name, "main")) {
			assert_true(r->total_pct == 80.0 && r->old_total_pct == 100.0 && !r->only_new);
		} else if (!strcmp(r->name, "a") && !strcmp(parent, "main")) {
			assert_true(r->total_pct == 80.0 && r->old_total_pct == 75.0);
			assert_true(r->self_pct == 30.0 && r->old_self_pct == 0.0 && !r->only_new);
		} else if (!strcmp(r->name, "b") && r->depth == 2) {
			assert_true(r->total_pct == 50.0 && r->old_total_pct == 75.0);
		} else if (!strcmp(r->name, "b") && r->depth == 0) {
			assert_true(r->only_new && r->old_total_pct == 0.0); /* b at the top is new */
		} else {
			assert_true(!strcmp(r->name, "a") && !strcmp(parent, "b") && r->only_new);
		}
	}
	assert_int_equal(n, 5);
	/* Relative to main → a (the Tree's %): b under it was all of a's then, 62.5% now. */
	uint32_t funcs[2] = { nm, na };
	tree.root = view_tree_find(&tree, funcs, 2);
	tree.root_path = snapshot_path_child(snapshot_path_child(SNAPSHOT_ROOT_PATH, nm), na);
	q.show_root = true;
	n = view_tree(&tree, &q, &rows, &cap);
	assert_true(n >= 2 && !strcmp(rows[1].name, "b"));
	assert_true(rows[0].total_pct == 100.0 && rows[0].old_total_pct == 100.0);
	assert_true(rows[1].total_pct == 62.5 && rows[1].old_total_pct == 100.0);
	free(rows);
	diff_base_free(base);
	snapshot_unref(old);
	snapshot_unref(now);
	profile_free(po);
	profile_free(pn);
}

/* Snapshots of one profile (a baseline taken with b on the screen) match by id; a thread scope
 * counts the baseline's thread of the same tid, and all of it when it has none. */
static void same_profile_and_threads(void **state)
{
	struct profile *p = profile_new(NULL);
	uint32_t m = profile_func(p, "prog", "main", 1), one = profile_func(p, "prog", "one", 2);
	uint32_t two = profile_func(p, "prog", "two", 3);
	struct view_row *rows;
	size_t n;

	(void)state;
	unit_add(p, 1, 40, 2, m, one);  /* thread 1: one 40 */
	unit_add(p, 2, 60, 2, m, two);  /* thread 2: two 60 */
	struct snapshot *before = profile_snapshot(p);
	unit_add(p, 1, 100, 2, m, two); /* then thread 1 turns to two: 40/100 one, 100/... */
	uint32_t late = profile_func(p, "prog", "late", 4);
	unit_add(p, 3, 50, 2, m, late);
	struct snapshot *after = profile_snapshot(p);

	n = diff_top(before, after, 0, &rows);
	const struct view_row *r1 = row(rows, n, "one", "prog"), *r2 = row(rows, n, "two", "prog");
	const struct view_row *rl = row(rows, n, "late", "prog");
	assert_true(r1->old_self_pct == 40.0 && r1->self_pct == 16.0);
	assert_true(r2->old_self_pct == 60.0 && r2->self_pct == 64.0);
	assert_true(rl->only_new && rl->self_pct == 20.0);
	free(rows);
	/* Thread 1: one was all of its samples, now 40 of 140. */
	n = diff_top(before, after, 1, &rows);
	r1 = row(rows, n, "one", "prog");
	r2 = row(rows, n, "two", "prog");
	assert_true(r1->old_self_pct == 100.0 && r2->only_new && r2->old_self_pct == 0.0);
	assert_true(row(rows, n, "late", "prog") == NULL);
	free(rows);
	/* Thread 3 is not in the baseline: all of it is. */
	n = diff_top(before, after, 3, &rows);
	rl = row(rows, n, "late", "prog");
	r1 = row(rows, n, "one", "prog");
	assert_true(rl->self_pct == 100.0 && rl->only_new);
	assert_true(r1->only_old && r1->old_self_pct == 40.0 && r1->func == one);
	free(rows);
	(void)two;
	snapshot_unref(before);
	snapshot_unref(after);
	profile_free(p);
}

/* Matched again as the profile shown grows: a function that appears later is found then. */
static void functions_that_come_later(void **state)
{
	struct profile *po = profile_new(NULL), *pn = profile_new(NULL);
	uint32_t oa = profile_func(po, "prog", "a", 1), ob = profile_func(po, "prog", "b", 2);
	uint32_t na = profile_func(pn, "prog", "a", 5);
	uint64_t self, total;

	(void)state;
	unit_add(po, 1, 50, 1, oa);
	unit_add(po, 1, 50, 1, ob);
	unit_add(pn, 1, 10, 1, na);
	struct snapshot *old = profile_snapshot(po), *first = profile_snapshot(pn);
	struct diff_base *base = diff_base_new(old, "old");
	const struct diff_unmatched *unmatched;

	diff_base_match(base, first, 0);
	assert_int_equal(diff_base_unmatched(base, &unmatched), 1);
	assert_string_equal(old->funcs[unmatched[0].func].name, "b");
	assert_true(unmatched[0].self == 50 && unmatched[0].total == 50);
	uint32_t nb = profile_func(pn, "prog", "b", 6);
	unit_add(pn, 1, 10, 1, nb);
	struct snapshot *second = profile_snapshot(pn);

	diff_base_match(base, second, 0);
	assert_int_equal(diff_base_unmatched(base, &unmatched), 0);
	diff_base_func(base, nb, &self, &total);
	assert_true(self == 50 && total == 50);
	assert_true(diff_base_node(base, snapshot_path_child(SNAPSHOT_ROOT_PATH, nb), &self, &total));
	assert_true(total == 50);
	diff_base_free(base);
	snapshot_unref(old);
	snapshot_unref(first);
	snapshot_unref(second);
	profile_free(po);
	profile_free(pn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shares_matched_by_name_and_module),
		cmocka_unit_test(empty_side),
		cmocka_unit_test(paths_matched),
		cmocka_unit_test(same_profile_and_threads),
		cmocka_unit_test(functions_that_come_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
