/* Unit tests of the view rows the TUI and batch mode show: sorting, filtering, call trees
 * flattened with expansion kept across snapshots, callers trees, threads, and stretches of the
 * run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char module[] = "prog";

static uint32_t func(struct profile *p, const char *name)
{
	return profile_func(p, module, name, 0);
}

static void add_n(struct profile *p, pid_t tid, const uint32_t *stack, size_t depth, int n)
{
	for (int i = 0; i < n; i++)
		profile_add(p, 1, tid, stack, depth);
}

struct fixture {
	struct profile *p;
	uint32_t main_, pa, pb, mid, burn, solo;
};

/* main → path_a → burn 60, main → path_b → mid_b → burn 30, main → solo 10. */
static void build(struct fixture *f)
{
	f->p = profile_new(NULL);
	f->main_ = func(f->p, "main");
	f->pa = func(f->p, "path_a");
	f->pb = func(f->p, "path_b");
	f->mid = func(f->p, "mid_b");
	f->burn = func(f->p, "burn");
	f->solo = func(f->p, "solo");
	uint32_t s1[] = { f->main_, f->pa, f->burn }, s2[] = { f->main_, f->pb, f->mid, f->burn };
	uint32_t s3[] = { f->main_, f->solo };

	/* The cold path first, so node order differs from hotness order. */
	add_n(f->p, 1, s3, 2, 10);
	add_n(f->p, 1, s2, 4, 30);
	add_n(f->p, 1, s1, 3, 60);
}

/* The rows as "depth:name" joined by spaces, for compact assertions. */
static char *outline(const struct view_tree_row *rows, size_t n)
{
	static char buf[1024];
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%u:%s", i ? " " : "",
				       rows[i].depth, rows[i].name);
	return buf;
}

static size_t flatten(const struct snapshot *s, const struct view_tree_query *q,
		      struct view_tree_row **rows, size_t *cap)
{
	struct view_tree t;

	view_tree_of(&t, s, SNAPSHOT_NO_NODE);
	return view_tree(&t, q, rows, cap);
}

static const struct view_tree_row *row_named(const struct view_tree_row *rows, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static void tree_opens_the_hottest_path(void **state)
{
	(void)state;
	struct fixture f;
	struct view_expansion e;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	build(&f);
	view_expansion_init(&e);
	struct snapshot *s = profile_snapshot(f.p);
	struct view_tree_query q = { 0, NULL, &e, false, 0 };

	n = flatten(s, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:main 1:path_a 2:burn 1:path_b 1:solo");
	assert_true(rows[0].open && rows[0].has_children);
	assert_true(rows[1].open);
	assert_false(rows[2].has_children);
	assert_false(rows[3].open);
	assert_true(rows[3].has_children);
	assert_true(rows[4].last);
	assert_false(rows[3].last);
	assert_int_equal(rows[0].total, 100);
	assert_true(rows[1].total_pct > 59.9 && rows[1].total_pct < 60.1);
	assert_int_equal(rows[2].self, 60);
	assert_true(rows[2].self_pct > 59.9 && rows[2].self_pct < 60.1);
	assert_int_equal(rows[4].self, 10);

	/* everything open, then pruned below 15% */
	q.expansion = NULL;
	n = flatten(s, &q, &rows, &cap);
	assert_string_equal(outline(rows, n),
			    "0:main 1:path_a 2:burn 1:path_b 2:mid_b 3:burn 1:solo");
	q.min_pct = 15;
	n = flatten(s, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:main 1:path_a 2:burn 1:path_b 2:mid_b 3:burn");
	free(rows);
	view_expansion_free(&e);
	snapshot_unref(s);
	profile_free(f.p);
}

/* Node indices change between snapshots (a new thread's trie comes first in the merged tree's
 * sources); expansion and lookups by path must not. */
static void expansion_survives_snapshots(void **state)
{
	(void)state;
	struct fixture f;
	struct view_expansion e;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	build(&f);
	view_expansion_init(&e);
	struct snapshot *s1 = profile_snapshot(f.p);
	struct view_tree_query q = { 0, NULL, &e, false, 0 };

	n = flatten(s1, &q, &rows, &cap);
	const struct view_tree_row *pb = row_named(rows, n, "path_b");
	assert_non_null(pb);
	view_expansion_set(&e, pb->path, true);
	view_expansion_set(&e, rows[1].path, false); /* close path_a */
	view_expansion_set(&e, rows[0].path, true);  /* main stays open when no longer hottest */
	uint32_t funcs[8];
	struct view_tree t1;
	view_tree_of(&t1, s1, SNAPSHOT_NO_NODE);
	size_t depth = view_tree_funcs(&t1, pb->node, funcs, 8);
	assert_int_equal(depth, 2);
	assert_int_equal(funcs[0], f.main_);
	assert_int_equal(funcs[1], f.pb);
	assert_true(view_tree_path(&t1, pb->node) == pb->path);

	/* Another thread and new paths shift every merged node. */
	uint32_t other = func(f.p, "other");
	uint32_t s4[] = { other, f.mid };
	add_n(f.p, 2, s4, 2, 200);
	struct snapshot *s2 = profile_snapshot(f.p);
	struct view_tree t2;
	view_tree_of(&t2, s2, SNAPSHOT_NO_NODE);
	uint32_t node = view_tree_find(&t2, funcs, depth);
	assert_int_not_equal(node, SNAPSHOT_NO_NODE);
	assert_int_equal(s2->nodes[node].func, f.pb);
	assert_int_equal(s2->nodes[node].total, 30);

	n = flatten(s2, &q, &rows, &cap);
	assert_string_equal(outline(rows, n),
			    "0:other 1:mid_b 0:main 1:path_a 1:path_b 2:mid_b 3:burn 1:solo");
	assert_true(rows[0].total_pct > 66.6 && rows[0].total_pct < 66.7);

	/* Closing the top closes everything below it. */
	view_expansion_set(&e, rows[2].path, false);
	n = flatten(s2, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:other 1:mid_b 0:main");
	view_expansion_reset(&e, true);
	n = flatten(s2, &q, &rows, &cap);
	assert_int_equal(n, 9);
	free(rows);
	view_expansion_free(&e);
	snapshot_unref(s1);
	snapshot_unref(s2);
	profile_free(f.p);
}

static void tree_filter_shows_paths_to_matches(void **state)
{
	(void)state;
	struct fixture f;
	struct view_expansion e;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	build(&f);
	view_expansion_init(&e);
	struct snapshot *s = profile_snapshot(f.p);
	struct view_tree_query q = { 0, "MID", &e, false, 0 };

	n = flatten(s, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:main 1:path_b 2:mid_b");
	q.filter = "burn";
	n = flatten(s, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:main 1:path_a 2:burn 1:path_b 2:mid_b 3:burn");
	q.filter = "no such function";
	n = flatten(s, &q, &rows, &cap);
	assert_int_equal(n, 0);
	q.filter = "prog"; /* the module matches every function */
	q.expansion = NULL;
	n = flatten(s, &q, &rows, &cap);
	assert_int_equal(n, 7);
	free(rows);
	view_expansion_free(&e);
	snapshot_unref(s);
	profile_free(f.p);
}

/* A subtree shown from its own root, with percentages of it: the TUI's "relative" mode. */
static void subtree_relative_percentages(void **state)
{
	(void)state;
	struct fixture f;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	build(&f);
	struct snapshot *s = profile_snapshot(f.p);
	struct view_tree whole, sub;
	uint32_t path[] = { f.main_, f.pb };

	view_tree_of(&whole, s, SNAPSHOT_NO_NODE);
	sub = whole;
	sub.root = view_tree_find(&whole, path, 2);
	sub.root_path = view_tree_path(&whole, sub.root);
	struct view_tree_query q = { 0, NULL, NULL, true, 0 };
	n = view_tree(&sub, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:path_b 1:mid_b 2:burn");
	assert_true(rows[0].total_pct > 99.9);
	assert_true(rows[2].self_pct > 99.9);
	/* The same node has the same path in the whole tree and in the subtree. */
	struct view_tree_row *all = NULL;
	size_t all_cap = 0;
	q.show_root = false;
	size_t m = view_tree(&whole, &q, &all, &all_cap);
	assert_non_null(row_named(all, m, "mid_b"));
	assert_true(row_named(all, m, "mid_b")->path == rows[1].path);
	/* Or percentages of the whole. */
	q.show_root = true;
	q.base = s->samples;
	n = view_tree(&sub, &q, &rows, &cap);
	assert_true(rows[0].total_pct > 29.9 && rows[0].total_pct < 30.1);
	free(all);
	free(rows);
	snapshot_unref(s);
	profile_free(f.p);
}

static void callers_invert_the_tree(void **state)
{
	(void)state;
	struct fixture f;
	struct view_tree t;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	build(&f);
	struct snapshot *s = profile_snapshot(f.p);
	view_callers(&t, s, SNAPSHOT_NO_NODE, f.burn);
	struct view_tree_query q = { 0, NULL, NULL, true, s->samples };
	n = view_tree(&t, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:burn 1:path_a 2:main 1:mid_b 2:path_b 3:main");
	assert_int_equal(rows[0].total, 90);
	assert_true(rows[0].total_pct > 89.9 && rows[0].total_pct < 90.1);
	assert_int_equal(rows[1].total, 60);
	assert_int_equal(rows[2].self, 60); /* the stacks start at main */
	assert_int_equal(rows[5].self, 30);
	assert_int_equal(rows[1].self, 0);
	view_tree_free(&t);

	/* A function called from the root directly (leaf-only stacks) has no callers. */
	view_callers(&t, s, SNAPSHOT_NO_NODE, f.main_);
	n = view_tree(&t, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:main");
	assert_int_equal(rows[0].self, 100);
	assert_false(rows[0].has_children);
	view_tree_free(&t);
	free(rows);
	snapshot_unref(s);
	profile_free(f.p);
}

static void callers_count_recursion_once(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, "main"), rec = func(p, "rec"), leaf = func(p, "leaf");
	uint32_t deep[] = { main_, rec, rec, rec, leaf }, shallow[] = { main_, rec };
	struct view_tree t;
	struct view_tree_row *rows = NULL;
	size_t cap = 0, n;

	add_n(p, 1, deep, 5, 4);
	add_n(p, 1, shallow, 2, 2);
	struct snapshot *s = profile_snapshot(p);
	view_callers(&t, s, SNAPSHOT_NO_NODE, rec);
	struct view_tree_query q = { 0, NULL, NULL, true, 0 };
	n = view_tree(&t, &q, &rows, &cap);
	assert_string_equal(outline(rows, n), "0:rec 1:main");
	assert_int_equal(rows[0].total, 6);
	assert_int_equal(rows[1].total, 6);
	view_tree_free(&t);
	free(rows);
	snapshot_unref(s);
	profile_free(p);
}

static void threads_rows(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, "main"), w1 = func(p, "worker_one"), w2 = func(p, "worker_two");
	uint32_t idle = func(p, "idle");
	uint32_t s1[] = { main_, w1 }, s2[] = { main_, w2 }, s3[] = { main_, idle };
	struct view_thread_row *rows;

	add_n(p, 11, s1, 2, 30);
	add_n(p, 11, s3, 2, 5);
	add_n(p, 12, s2, 2, 60);
	add_n(p, 12, s1, 2, 5);
	profile_set_comm(p, 1, 11, "one");
	profile_set_comm(p, 1, 12, "two");
	profile_set_comm(p, 1, 13, "silent"); /* no samples: no row */
	profile_set_comm(p, 20, 20, "proc");  /* a process whose other thread has no name */
	profile_add(p, 20, 20, s3, 2);
	profile_add(p, 20, 21, s3, 2);
	struct snapshot *s = profile_snapshot(p);
	size_t n = view_threads(s, NULL, &rows);
	assert_int_equal(n, 4);
	assert_int_equal(rows[3].tid, 21);
	assert_string_equal(rows[3].comm, "proc");
	free(rows);
	n = view_threads(s, "PROC", &rows); /* the unnamed thread matches by its process's name */
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].tid, 20);
	assert_int_equal(rows[1].tid, 21);
	free(rows);
	n = view_threads(s, NULL, &rows);
	assert_int_equal(rows[0].tid, 12);
	assert_string_equal(rows[0].comm, "two");
	assert_int_equal(rows[0].samples, 65);
	assert_string_equal(rows[0].hot_name, "worker_two");
	assert_true(rows[0].hot_pct > 92.3 && rows[0].hot_pct < 92.4);
	assert_true(rows[0].pct > 100.0 * 65 / 102 - 0.01 && rows[0].pct < 100.0 * 65 / 102 + 0.01);
	assert_string_equal(rows[1].hot_name, "worker_one");
	assert_int_equal(s->nodes[rows[1].root].total, 35);
	free(rows);
	n = view_threads(s, "ONE", &rows); /* thread 11's name; thread 12's hottest is worker_two */
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].tid, 11);
	free(rows);
	n = view_threads(s, "worker_two", &rows);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].tid, 12);
	free(rows);
	snapshot_unref(s);
	profile_free(p);
}

static void top_sorts_and_filters(void **state)
{
	(void)state;
	struct fixture f;
	struct view_row *rows;

	build(&f);
	struct snapshot *s = profile_snapshot(f.p);
	struct view_top_query q = { VIEW_SORT_NAME, NULL, SNAPSHOT_NO_NODE };
	size_t n = view_top(s, &q, &rows);
	assert_int_equal(n, 6);
	assert_string_equal(rows[0].name, "burn");
	assert_string_equal(rows[5].name, "solo");
	free(rows);
	q.sort = VIEW_SORT_TOTAL;
	n = view_top(s, &q, &rows);
	assert_string_equal(rows[0].name, "main");
	assert_string_equal(rows[1].name, "burn");
	free(rows);
	q.sort = VIEW_SORT_SELF;
	q.filter = "path";
	n = view_top(s, &q, &rows);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].name, "path_a"); /* both 0 self: by total */
	free(rows);
	snapshot_unref(s);
	profile_free(f.p);
}

static const uint64_t SEC = 1000000000ull;

static void stretch_counts_its_samples(void **state)
{
	(void)state;
	struct fixture f;
	struct view_row *rows;

	build(&f); /* no history yet: these 100 samples are in no stretch */
	profile_set_history(f.p, 600, 0);
	uint32_t s1[] = { f.main_, f.pa, f.burn }, s3[] = { f.main_, f.solo };
	profile_set_time(f.p, 10 * SEC);
	add_n(f.p, 1, s1, 3, 7);     /* at 10 s */
	profile_set_time(f.p, 11 * SEC + SEC / 2);
	add_n(f.p, 1, s3, 2, 3);     /* at 11.5 s */
	add_n(f.p, 2, s3, 2, 5);     /* another thread */

	struct snapshot *w = profile_range_snapshot(f.p, 0, UINT64_MAX);
	assert_true(w->ranged);
	assert_int_equal(w->range_start_s, 10);
	assert_int_equal(w->range_end_s, 12);
	assert_int_equal(w->samples, 15);
	assert_int_equal(w->func_self[f.burn], 7);
	assert_int_equal(w->func_total[f.main_], 15);
	assert_int_equal(w->func_self[f.solo], 8);
	assert_int_equal(w->func_total[f.pb], 0);
	assert_int_equal(w->nodes[w->merged_root].total, 15);
	assert_int_equal(w->threads[0].samples, 10);
	assert_int_equal(w->threads[1].samples, 5);
	struct view_top_query q = { VIEW_SORT_SELF, NULL, SNAPSHOT_NO_NODE };
	size_t n = view_top(w, &q, &rows);
	assert_int_equal(n, 4); /* burn, solo, main, path_a: none from before the history */
	assert_string_equal(rows[0].name, "solo");
	free(rows);
	snapshot_unref(w);

	/* The cumulative snapshot still has everything, and the timeline: seconds 10 and 11. */
	struct snapshot *all = profile_snapshot(f.p);
	assert_int_equal(all->samples, 115);
	assert_false(all->ranged);
	assert_int_equal(all->nspans, 2);
	assert_int_equal(all->spans[0].start_s, 10);
	assert_int_equal(all->spans[0].samples, 7);
	assert_int_equal(all->spans[1].end_s, 12);
	assert_int_equal(all->spans[1].samples, 8);
	snapshot_unref(all);

	/* Second 11 alone: the samples of second 10 are not in it. */
	w = profile_range_snapshot(f.p, 11, 12);
	assert_int_equal(w->samples, 8);
	assert_int_equal(w->range_start_s, 11);
	assert_int_equal(w->func_self[f.burn], 0);
	struct view_tree_row *trows = NULL;
	size_t cap = 0;
	struct view_tree_query tq = { 0, NULL, NULL, false, 0 };
	n = flatten(w, &tq, &trows, &cap);
	assert_string_equal(outline(trows, n), "0:main 1:solo");
	free(trows);
	snapshot_unref(w);
	w = profile_range_snapshot(f.p, 20, UINT64_MAX);
	assert_int_equal(w->samples, 0);
	assert_int_equal(w->range_end_s, 0);
	assert_int_equal(w->nodes[w->merged_root].total, 0);
	snapshot_unref(w);
	profile_free(f.p);
}

/* The timeline follows a function: per stretch, the samples whose stack passed through it. */
static void timeline_traces_a_function(void **state)
{
	(void)state;
	struct fixture f;

	build(&f);
	profile_set_history(f.p, 600, 0);
	uint32_t s1[] = { f.main_, f.pa, f.burn }, s3[] = { f.main_, f.solo };
	profile_set_time(f.p, 3 * SEC);
	add_n(f.p, 1, s1, 3, 4);
	add_n(f.p, 2, s3, 2, 2);
	profile_set_time(f.p, 4 * SEC);
	add_n(f.p, 1, s3, 2, 6);
	profile_trace(f.p, f.pa);
	struct snapshot *s = profile_snapshot(f.p);
	assert_int_equal(s->traced_func, f.pa);
	assert_int_equal(s->nspans, 2);
	assert_int_equal(s->spans[0].samples, 6);
	assert_int_equal(s->spans[0].traced, 4);
	assert_int_equal(s->spans[1].traced, 0);
	snapshot_unref(s);
	profile_trace(f.p, f.main_);
	s = profile_snapshot(f.p);
	assert_int_equal(s->spans[0].traced, 6);
	assert_int_equal(s->spans[1].traced, 6);
	snapshot_unref(s);
	profile_trace(f.p, 0);
	s = profile_snapshot(f.p);
	assert_int_equal(s->traced_func, 0);
	assert_int_equal(s->spans[0].traced, 0);
	snapshot_unref(s);
	profile_free(f.p);
}

/* A tree row's depth before its mark: indented two columns a level within room, then its depth as
 * a number ending a column before the mark, which stays at the last indented level's column. Every
 * depth reads differently from every other, the number never overwrites the room's end. */
static void tree_indent_shows_every_depth(void **state)
{
	struct view_indent in;

	(void)state;
	view_tree_indent(&in, 0, 15, true);
	assert_int_equal(in.columns, 0);
	assert_string_equal(in.mark, "");
	view_tree_indent(&in, 7, 15, true);
	assert_int_equal(in.columns, 14);
	assert_string_equal(in.mark, "");
	view_tree_indent(&in, 8, 15, true);
	assert_int_equal(in.columns, 14);
	assert_string_equal(in.mark, "·8");
	assert_int_equal(in.mark_x, 11); /* "·8" in columns 11-12, a blank, the mark at 14 */
	view_tree_indent(&in, 27, 15, false);
	assert_string_equal(in.mark, ":27");
	assert_int_equal(in.mark_x, 10);
	assert_int_equal(in.columns, 14);
	/* No room: the number makes its own. */
	view_tree_indent(&in, 1234, 1, true);
	assert_string_equal(in.mark, "·1234");
	assert_int_equal(in.mark_x, 0);
	assert_int_equal(in.columns, 6);
	view_tree_indent(&in, 1, 0, false);
	assert_string_equal(in.mark, ":1");
	assert_int_equal(in.columns, 3);
	/* Distinct at every depth and room: by columns while indented, by the number after. */
	for (int room = 0; room < 40; room++)
		for (unsigned a = 0; a < 200; a++)
			for (unsigned b = a + 1; b < 200; b++) {
				struct view_indent ia, ib;

				view_tree_indent(&ia, a, room, true);
				view_tree_indent(&ib, b, room, true);
				assert_true(ia.columns != ib.columns || strcmp(ia.mark, ib.mark));
				assert_true(ib.columns >= ia.columns);
				if (ib.mark[0]) /* "·N": strlen - 1 columns, then a blank */
					assert_int_equal(ib.mark_x + (int)strlen(ib.mark) - 1,
							 ib.columns - 1);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_opens_the_hottest_path),
		cmocka_unit_test(expansion_survives_snapshots),
		cmocka_unit_test(tree_filter_shows_paths_to_matches),
		cmocka_unit_test(subtree_relative_percentages),
		cmocka_unit_test(callers_invert_the_tree),
		cmocka_unit_test(callers_count_recursion_once),
		cmocka_unit_test(threads_rows),
		cmocka_unit_test(top_sorts_and_filters),
		cmocka_unit_test(stretch_counts_its_samples),
		cmocka_unit_test(timeline_traces_a_function),
		cmocka_unit_test(tree_indent_shows_every_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
