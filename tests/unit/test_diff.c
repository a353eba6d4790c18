/* Unit tests of a profile against a baseline: shares, not counts; functions matched by name and
 * module (not id, not address); one side only marked; the order of the rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/diff.h"
#include "proftop/profile.h"
#include "unit_profiles.h"

#include <stdlib.h>
#include <string.h>

static const struct diff_row *row(const struct diff_row *rows, size_t n, const char *name,
				  const char *module)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) && !strcmp(rows[i].module, module))
			return &rows[i];
	return NULL;
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
	struct diff_row *rows;
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

	n = diff_rows(old, new, &rows);
	assert_int_equal(n, 6);
	const struct diff_row *one = row(rows, n, "one", "prog"), *two = row(rows, n, "two", "prog");
	const struct diff_row *fresh = row(rows, n, "fresh", "prog");
	const struct diff_row *gone = row(rows, n, "gone", "prog");
	const struct diff_row *lib = row(rows, n, "one", "libone.so");
	const struct diff_row *m = row(rows, n, "main", "prog");

	assert_non_null(one);
	assert_true(one->old_self == 60.0 && one->self == 40.0);
	assert_true(two->old_self == 30.0 && two->self == 30.0);
	assert_true(two->old_total == 30.0 && two->total == 50.0);
	assert_true(fresh->only_new && !fresh->only_old && fresh->self == 20.0 && fresh->old_self == 0);
	assert_true(gone->only_old && !gone->only_new && gone->old_self == 10.0 && gone->self == 0);
	assert_true(lib->only_new && lib->self == 10.0);
	assert_true(m->old_total == 90.0 && m->total == 90.0 && !m->only_new && !m->only_old);
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
	n = diff_rows(new, new, &rows);
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].self == rows[i].old_self && rows[i].total == rows[i].old_total);
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
	struct diff_row *rows;

	(void)state;
	unit_add(p, 1, 5, 1, f);
	struct snapshot *empty = profile_snapshot(pe), *s = profile_snapshot(p);

	assert_int_equal(diff_rows(empty, s, &rows), 1);
	assert_true(rows[0].only_new && rows[0].self == 100.0);
	free(rows);
	assert_int_equal(diff_rows(s, empty, &rows), 1);
	assert_true(rows[0].only_old && rows[0].old_self == 100.0 && rows[0].self == 0.0);
	free(rows);
	assert_int_equal(diff_rows(empty, empty, &rows), 0);
	free(rows);
	snapshot_unref(empty);
	snapshot_unref(s);
	profile_free(pe);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shares_matched_by_name_and_module),
		cmocka_unit_test(empty_side),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
