/* Unit tests of selfcost.c: proftop's own figures are measured and sane (CPU time that grows as
 * this process burns some, resident memory that grows as it touches some), and the share and the
 * header's and files' texts come out of given figures as documented, with nothing for a snapshot
 * that has none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/selfcost.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024ull * 1024ull)

/* Some CPU time: a loop the compiler cannot drop (its sum is read, for clang's sake). */
static uint64_t burn(void)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < 20000000; i++)
		x += i * 3;
	return x;
}

static void measured(void **state)
{
	struct selfcost a, b;
	char *block;

	(void)state;
	selfcost_measure(&a);
	assert_true(selfcost_known(&a));
	assert_true(a.rss > 0);
	assert_true(a.peak_rss >= a.rss);
	(void)burn();
	block = malloc(16 * MIB);
	assert_non_null(block);
	memset(block, 1, 16 * MIB); /* resident now, page by page */
	selfcost_measure(&b);
	assert_true(b.cpu_ns > a.cpu_ns);
	assert_true(b.wall_ns > a.wall_ns);
	assert_true(b.rss >= a.rss + 8 * MIB);
	assert_true(b.peak_rss >= b.rss);
	assert_true(selfcost_share(&b, &a) > 0);
	assert_true(selfcost_share(&b, NULL) > 0);
	free(block);
}

static void share(void **state)
{
	struct selfcost now = { .cpu_ns = 2000000000, .wall_ns = 10000000000, .rss = 35 * MIB };
	struct selfcost before = { .cpu_ns = 1500000000, .wall_ns = 9000000000 };
	struct selfcost later = { .cpu_ns = 3000000000, .wall_ns = 11000000000 };
	struct selfcost none = { 0 };

	(void)state;
	assert_float_equal(selfcost_share(&now, NULL), 20.0, 1e-9);
	assert_float_equal(selfcost_share(&now, &before), 50.0, 1e-9);
	/* Nothing earlier to compare with: the whole run. */
	assert_float_equal(selfcost_share(&now, &none), 20.0, 1e-9);
	assert_float_equal(selfcost_share(&now, &later), 20.0, 1e-9);
	assert_float_equal(selfcost_share(&now, &now), 20.0, 1e-9);
	assert_true(selfcost_share(&none, NULL) < 0);
	assert_false(selfcost_known(&none));
	assert_false(selfcost_known(NULL));
}

static void texts(void **state)
{
	struct selfcost now = { .cpu_ns = 146000000, .wall_ns = 11204000000, .rss = 35 * MIB,
				.peak_rss = 41 * MIB };
	struct selfcost before = { .cpu_ns = 46000000, .wall_ns = 10204000000 };
	struct selfcost none = { 0 };
	char text[128];

	(void)state;
	assert_string_equal(selfcost_text(text, sizeof(text), &now, &before), "proftop 10.0% CPU 35.0M");
	assert_string_equal(selfcost_text(text, sizeof(text), &now, NULL), "proftop 1.3% CPU 35.0M");
	assert_string_equal(selfcost_summary(text, sizeof(text), &now),
			    "proftop itself: cpu 0.146s of 11.204s (1.30%), rss 35.0M, peak 41.0M");
	/* A profile read back from a file: no figures, not zeros. */
	assert_string_equal(selfcost_text(text, sizeof(text), &none, NULL), "");
	assert_string_equal(selfcost_summary(text, sizeof(text), &none), "");
}

/* What the collector holds of its budget, by part: "of" only where there is a limit, the closes
 * and the history only when there are some; nothing for a profile read back. */
static void memory_parts(void **state)
{
	struct selfcost c = { .cpu_ns = 1, .wall_ns = 1, .rss = 35 * MIB, .trees = 20 * MIB,
			      .trees_budget = 24 * MIB, .sources = 1229, .sources_budget = 8 * MIB };
	struct selfcost none = { .trees = 20 * MIB };
	char text[160];

	(void)state;
	assert_string_equal(selfcost_memory_text(text, sizeof(text), &c),
			    "call trees 20.0M of 24.0M, DWARF 1.2K of 8.0M");
	c.sources_closed = 1;
	assert_string_equal(selfcost_memory_text(text, sizeof(text), &c),
			    "call trees 20.0M of 24.0M, DWARF 1.2K of 8.0M, closed 1 time");
	c.sources_closed = 3;
	c.history = 4 * MIB;
	c.trees_budget = c.sources_budget = 0;
	assert_string_equal(selfcost_memory_text(text, sizeof(text), &c),
			    "call trees 20.0M, DWARF 1.2K, closed 3 times, history 4.0M");
	/* Cut to the room given, never past it. */
	assert_string_equal(selfcost_memory_text(text, 12, &c), "call trees ");
	assert_string_equal(selfcost_memory_text(text, sizeof(text), &none), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(measured),
		cmocka_unit_test(share),
		cmocka_unit_test(texts),
		cmocka_unit_test(memory_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
