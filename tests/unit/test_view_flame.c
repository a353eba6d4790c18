/* Unit tests of the flame graph layout: widths within one cell of each frame's share, children in
 * name order, frames too narrow for a cell left out with what is above them, the depth limit,
 * zoom (another top), the search's marks and share. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/view_flame.h"
#include "unit_profiles.h"

#include <stdlib.h>
#include <string.h>

/* main → zeta 60, main → alpha 30 (→ leaf 20 of them), main → tiny 1, other 9. */
struct fixture {
	struct profile *p;
	struct snapshot *s;
	struct view_tree tree;
	struct view_flame_frame *frames;
	size_t n, cap;
	uint64_t matched;
};

static void build(struct fixture *f)
{
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0x10);
	uint32_t zeta = profile_func(p, "prog", "zeta", 0x20);
	uint32_t alpha = profile_func(p, "prog", "alpha", 0x30);
	uint32_t leaf = profile_func(p, "libm.so", "leaf", 0x40);
	uint32_t tiny = profile_func(p, "prog", "tiny", 0x50);
	uint32_t other = profile_func(p, "prog", "other", 0x60);

	memset(f, 0, sizeof(*f));
	unit_add(p, 1, 60, 2, main_, zeta);
	unit_add(p, 1, 10, 2, main_, alpha);
	unit_add(p, 1, 20, 3, main_, alpha, leaf);
	unit_add(p, 1, 1, 2, main_, tiny);
	unit_add(p, 1, 9, 1, other);
	f->p = p;
	f->s = profile_snapshot(p);
	view_tree_of(&f->tree, f->s, SNAPSHOT_NO_NODE);
}

static void layout(struct fixture *f, uint32_t top, int width, unsigned depth, const char *filter)
{
	struct view_flame_query q = { top, width, depth, filter };

	f->n = view_flame(&f->tree, &q, &f->frames, &f->cap, &f->matched);
}

static void drop(struct fixture *f)
{
	free(f->frames);
	view_tree_free(&f->tree);
	snapshot_unref(f->s);
	profile_free(f->p);
}

static const struct view_flame_frame *named(const struct fixture *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->frames[i].name, name))
			return &f->frames[i];
	return NULL;
}

static void widths_follow_shares(void **state)
{
	struct fixture f;

	(void)state;
	build(&f);
	layout(&f, f.tree.root, 100, 10, NULL);
	const struct view_flame_frame *root = &f.frames[0], *m = named(&f, "main"),
		*a = named(&f, "alpha"), *z = named(&f, "zeta"), *l = named(&f, "leaf"),
		*o = named(&f, "other"), *t = named(&f, "tiny");

	assert_int_equal(root->depth, 0);
	assert_int_equal(root->width, 100);
	assert_int_equal(root->total, 100);
	assert_int_equal(root->parent, UINT32_MAX);
	assert_non_null(m);
	assert_non_null(t);
	/* Children by name: main before other; alpha, tiny, zeta under main. */
	assert_int_equal(m->x, 0);
	assert_int_equal(m->width, 91);
	assert_int_equal(o->x, 91);
	assert_int_equal(o->width, 9);
	assert_int_equal(a->x, 0);
	assert_int_equal(a->width, 30);
	assert_int_equal(t->x, 30);
	assert_int_equal(t->width, 1);
	assert_int_equal(z->x, 31);
	assert_int_equal(z->width, 60);
	assert_int_equal(l->depth, 3);
	assert_int_equal(l->x, 0);
	assert_int_equal(l->width, 20);
	assert_string_equal(l->module, "libm.so");
	assert_int_equal(l->self, 20);
	assert_ptr_equal(&f.frames[f.frames[l - f.frames].parent], a);
	assert_int_equal(l->path, snapshot_path_child(a->path, l->func));
	assert_int_equal(a->path, view_tree_path(&f.tree, a->node));
	/* Depth by depth, left to right. */
	for (size_t i = 1; i < f.n; i++)
		assert_true(f.frames[i].depth > f.frames[i - 1].depth ||
			    (f.frames[i].depth == f.frames[i - 1].depth &&
			     f.frames[i].x >= f.frames[i - 1].x + f.frames[i - 1].width));
	assert_int_equal(view_flame_at(f.frames, f.n, 2, 45), (size_t)(z - f.frames));
	assert_int_equal(view_flame_at(f.frames, f.n, 3, 25), SIZE_MAX);
	drop(&f);
}

/* At 40 cells tiny (1 %) gets none; every frame stays within one cell of its share. */
static void narrow_frames_left_out(void **state)
{
	struct fixture f;

	(void)state;
	build(&f);
	layout(&f, f.tree.root, 40, 10, NULL);
	assert_null(named(&f, "tiny"));
	for (size_t i = 0; i < f.n; i++) {
		double exact = (double)f.frames[i].total * 40 / 100;

		assert_true(f.frames[i].width >= 1);
		assert_true((double)f.frames[i].width > exact - 1 && (double)f.frames[i].width < exact + 1);
	}
	assert_int_equal(named(&f, "zeta")->x, 12);
	layout(&f, f.tree.root, 100, 1, NULL);
	assert_non_null(named(&f, "main"));
	assert_null(named(&f, "alpha"));
	layout(&f, f.tree.root, 0, 10, NULL);
	assert_int_equal(f.n, 0);
	drop(&f);
}

/* A sliver sorting last under the top: rounding down gave it the last cell, whatever its share. */
static void sliver_at_right_edge_left_out(void **state)
{
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0x10);
	uint32_t big = profile_func(p, "prog", "big", 0x20);
	uint32_t sliver = profile_func(p, "prog", "sliver", 0x30);
	struct fixture f = { .p = p };

	(void)state;
	unit_add(p, 1, 999, 2, main_, big);
	unit_add(p, 1, 1, 2, main_, sliver);
	f.s = profile_snapshot(p);
	view_tree_of(&f.tree, f.s, SNAPSHOT_NO_NODE);
	layout(&f, f.tree.root, 80, 10, NULL);
	assert_null(named(&f, "sliver"));
	assert_int_equal(named(&f, "big")->width, 80);
	drop(&f);
}

/* A snapshot read from a file holds up to 2^62 samples: samples × cells must not overflow. */
static void huge_counts(void **state)
{
	struct profile *p = profile_new(NULL);
	uint32_t a[] = { profile_func(p, "prog", "main", 0x10), profile_func(p, "prog", "a", 0x20) };
	uint32_t b[] = { a[0], profile_func(p, "prog", "b", 0x30) };
	struct fixture f = { .p = p };

	(void)state;
	profile_add_n(p, 7, 1, a, 2, 3ull << 59);
	profile_add_n(p, 7, 1, b, 2, 1ull << 59);
	f.s = profile_snapshot(p);
	view_tree_of(&f.tree, f.s, SNAPSHOT_NO_NODE);
	layout(&f, f.tree.root, 200, 10, NULL);
	assert_int_equal(named(&f, "a")->width, 150);
	assert_int_equal(named(&f, "b")->x, 150);
	assert_int_equal(named(&f, "b")->width, 50);
	drop(&f);
}

static void zoom_and_search(void **state)
{
	struct fixture f;

	(void)state;
	build(&f);
	layout(&f, f.tree.root, 100, 10, NULL);
	uint32_t alpha = named(&f, "alpha")->node;

	layout(&f, alpha, 80, 10, NULL);
	assert_string_equal(f.frames[0].name, "alpha");
	assert_int_equal(f.frames[0].width, 80);
	assert_int_equal(f.frames[0].total, 30);
	assert_int_equal(named(&f, "leaf")->width, 53); /* 20 of 30 in 80 cells */
	assert_null(named(&f, "zeta"));
	assert_int_equal(f.matched, 0);

	/* "a" matches alpha, zeta and main: under the root only main counts (it holds the rest). */
	layout(&f, f.tree.root, 100, 10, "ZETA");
	assert_true(named(&f, "zeta")->match);
	assert_false(named(&f, "alpha")->match);
	assert_int_equal(f.matched, 60);
	layout(&f, f.tree.root, 100, 10, "a");
	assert_int_equal(f.matched, 91);
	layout(&f, f.tree.root, 100, 10, "libm");
	assert_true(named(&f, "leaf")->match);
	assert_int_equal(f.matched, 20);
	layout(&f, alpha, 100, 10, "alpha");
	assert_true(f.frames[0].match);
	assert_int_equal(f.matched, 30);
	layout(&f, f.tree.root, 100, 10, "");
	assert_int_equal(f.matched, 0);
	assert_false(named(&f, "zeta")->match);
	drop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(widths_follow_shares),
		cmocka_unit_test(sliver_at_right_edge_left_out),
		cmocka_unit_test(huge_counts),
		cmocka_unit_test(narrow_frames_left_out),
		cmocka_unit_test(zoom_and_search),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
