/* Unit tests of the call-tree profile, its snapshots and the view rows over them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/view.h"

#include <stdlib.h>
#include <string.h>

static uint32_t func(struct profile *p, const char *module, const char *name)
{
	return profile_func(p, module, name, 0);
}

static const struct view_row *find_row(const struct view_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static void interning_is_stable(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	static const char module[] = "prog", a[] = "a", b[] = "b";
	uint32_t fa = func(p, module, a), fb = func(p, module, b);

	assert_int_not_equal(fa, fb);
	assert_int_not_equal(fa, SNAPSHOT_ROOT_FUNC);
	assert_int_equal(func(p, module, a), fa);
	uint32_t fu = profile_func(p, module, NULL, 0x1234);
	assert_int_equal(profile_func(p, module, NULL, 0x1234), fu);
	struct snapshot *s = profile_snapshot(p);
	assert_string_equal(s->funcs[fu].name, "prog+0x1234");
	assert_string_equal(s->funcs[fu].module, "prog");
	snapshot_unref(s);
	profile_free(p);
}

/* main → path_a → burn 60, main → path_b → mid_b → burn 30, main → solo 10. */
static void tree_self_and_total(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), pa = func(p, m, "path_a"), pb = func(p, m, "path_b");
	uint32_t mid = func(p, m, "mid_b"), burn = func(p, m, "burn"), solo = func(p, m, "solo");
	uint32_t s1[] = { main_, pa, burn }, s2[] = { main_, pb, mid, burn }, s3[] = { main_, solo };

	for (int i = 0; i < 60; i++)
		profile_add(p, 1, 1, s1, 3);
	for (int i = 0; i < 30; i++)
		profile_add(p, 1, 1, s2, 4);
	for (int i = 0; i < 10; i++)
		profile_add(p, 1, 1, s3, 2);
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->samples, 100);
	assert_int_equal(s->func_self[burn], 90);
	assert_int_equal(s->func_total[burn], 90);
	assert_int_equal(s->func_self[main_], 0);
	assert_int_equal(s->func_total[main_], 100);
	assert_int_equal(s->func_total[pb], 30);
	assert_int_equal(s->func_total[mid], 30);
	assert_int_equal(s->func_self[solo], 10);

	/* The merged root has main as its only child. */
	const struct snapshot_node *root = &s->nodes[s->merged_root];
	assert_int_equal(root->total, 100);
	const struct snapshot_node *child = &s->nodes[root->first_child];
	assert_int_equal(child->func, main_);
	assert_int_equal(child->next_sibling, SNAPSHOT_NO_NODE);

	struct view_top_query q = { VIEW_SORT_SELF, NULL, SNAPSHOT_NO_NODE };
	struct view_row *rows;
	size_t n = view_top(s, &q, &rows);
	assert_int_equal(n, 6);
	assert_string_equal(rows[0].name, "burn");
	assert_true(rows[0].self_pct > 89.9 && rows[0].self_pct < 90.1);
	free(rows);
	q.sort = VIEW_SORT_TOTAL;
	n = view_top(s, &q, &rows);
	assert_string_equal(rows[0].name, "main");
	free(rows);
	q.filter = "PATH_";
	n = view_top(s, &q, &rows);
	assert_int_equal(n, 2);
	free(rows);
	snapshot_unref(s);
	profile_free(p);
}

/* A function that recurses counts once per sample in TOTAL. */
static void recursion_counts_once(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), rec = func(p, m, "rec"), leaf = func(p, m, "leaf");
	uint32_t stack[62];

	stack[0] = main_;
	for (int i = 1; i <= 60; i++)
		stack[i] = rec;
	stack[61] = leaf;
	for (int i = 0; i < 5; i++)
		profile_add(p, 1, 1, stack, 62);
	profile_add(p, 1, 1, stack, 30); /* self in rec, 29 deep */
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->func_total[rec], 6);
	assert_int_equal(s->func_self[rec], 1);
	assert_int_equal(s->func_total[leaf], 5);
	assert_int_equal(s->func_total[main_], 6);
	snapshot_unref(s);
	profile_free(p);
}

/* Threads have their own tries; the merged tree sums them; a thread scope sees only its own. */
static void threads_merge_and_scope(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), w1 = func(p, m, "worker_one"), w2 = func(p, m, "worker_two");
	uint32_t s1[] = { main_, w1 }, s2[] = { main_, w2 };

	for (int i = 0; i < 30; i++)
		profile_add(p, 10, 11, s1, 2);
	for (int i = 0; i < 10; i++)
		profile_add(p, 10, 12, s2, 2);
	profile_set_comm(p, 10, 11, "one");
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->nthreads, 2);
	assert_int_equal(s->func_total[main_], 40);
	assert_string_equal(s->threads[0].comm, "one");
	assert_int_equal(s->threads[0].samples, 30);

	struct view_top_query q = { VIEW_SORT_SELF, NULL, s->threads[1].root };
	struct view_row *rows;
	size_t n = view_top(s, &q, &rows);
	const struct view_row *r = find_row(rows, n, "worker_two");
	assert_non_null(r);
	assert_null(find_row(rows, n, "worker_one"));
	assert_true(r->self_pct > 99.9);
	free(rows);

	/* The snapshot is immutable: more samples do not change it. */
	profile_add(p, 10, 11, s1, 2);
	assert_int_equal(s->func_total[main_], 40);
	snapshot_unref(s);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interning_is_stable),
		cmocka_unit_test(tree_self_and_total),
		cmocka_unit_test(recursion_counts_once),
		cmocka_unit_test(threads_merge_and_scope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
