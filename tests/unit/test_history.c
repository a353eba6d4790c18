/* Unit tests of the history (history.h): stretches a second each, closed ones summed per (leaf,
 * site), old ones merged so that their number stays bounded while every sample stays, ranges by
 * overlap, renumbering after a fold, and counting marked leaves. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proftop/history.h"

#include <stdlib.h>

struct sum {
	uint64_t samples;
	uint64_t per_node[8];
	size_t entries;
};

static void add_entry(void *arg, const struct history_entry *e)
{
	struct sum *s = arg;

	s->samples += e->count;
	s->per_node[e->node] += e->count;
	s->entries++;
}

static uint64_t span_sum(const struct snapshot_span *spans, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += spans[i].samples;
	return total;
}

/* A second's samples close into one entry per (node, site) when the next second begins. */
static void closed_seconds_sum_their_leaves(void **state)
{
	(void)state;
	struct history *h = history_new(10);
	struct sum s = { 0 };
	uint64_t first, end;

	for (int i = 0; i < 5; i++)
		history_add(h, 2, 1, 7);
	history_add(h, 2, 1, HISTORY_NO_SITE);
	history_add(h, 2, 3, 7);
	history_add(h, 5, 1, 7); /* closes second 2 */
	assert_int_equal(history_each(h, 0, 3, add_entry, &s, &first, &end), 7);
	assert_int_equal(s.entries, 3); /* (1, 7) x5, (1, none), (3, 7) */
	assert_int_equal(s.per_node[1], 6);
	assert_int_equal(first, 2);
	assert_int_equal(end, 3);
	s = (struct sum){ 0 };
	assert_int_equal(history_each(h, 3, 5, add_entry, &s, &first, &end), 0);
	assert_int_equal(end, 0);
	assert_int_equal(history_each(h, 3, 6, add_entry, &s, &first, &end), 1);
	assert_int_equal(first, 5);
	/* Weighted entries (an off-CPU wait's microseconds) sum as that many samples. */
	history_add_n(h, 5, 1, 7, 4000);
	history_add_n(h, 5, 2, HISTORY_NO_SITE, 250);
	history_add(h, 6, 1, 7); /* closes second 5 */
	s = (struct sum){ 0 };
	assert_int_equal(history_each(h, 5, 6, add_entry, &s, &first, &end), 4251);
	assert_int_equal(s.per_node[1], 4001);
	assert_int_equal(s.per_node[2], 250);
	history_free(h);
}

/* An hour of seconds with 10 kept: at most 10 + HISTORY_OLD_MAX + 1 stretches, in order, touching,
 * the older ones coarser, and every sample still there. */
static void old_stretches_merge_and_keep_every_sample(void **state)
{
	(void)state;
	struct history *h = history_new(10);
	struct snapshot_span *spans;
	struct sum s = { 0 };
	uint64_t first, end;
	size_t n;

	for (uint64_t second = 0; second < 3600; second++)
		for (uint32_t k = 0; k < 4; k++)
			history_add(h, second, k, HISTORY_NO_SITE);
	n = history_timeline(h, &spans);
	assert_true(n <= 10 + HISTORY_OLD_MAX + 1);
	assert_true(n >= 10 + HISTORY_OLD_MAX);
	assert_int_equal(span_sum(spans, n), 3600 * 4);
	assert_int_equal(spans[0].start_s, 0);
	assert_int_equal(spans[n - 1].end_s, 3600);
	for (size_t i = 1; i < n; i++)
		assert_int_equal(spans[i].start_s, spans[i - 1].end_s);
	for (size_t i = n - 10; i < n; i++) /* the newest seconds: a stretch each */
		assert_int_equal(spans[i].end_s - spans[i].start_s, 1);
	assert_true(spans[0].end_s - spans[0].start_s >= 32);
	/* Merged stretches keep one entry per leaf, not one per second. */
	assert_int_equal(history_each(h, 0, 1, add_entry, &s, &first, &end), spans[0].samples);
	assert_int_equal(s.entries, 4);
	assert_int_equal(first, 0);
	assert_int_equal(end, spans[0].end_s);
	assert_true(history_memory(h) < 64 * 1024);
	free(spans);
	history_free(h);
}

/* After a fold two leaves may become one: their counts add up under it, and once the stretch
 * merges with another it holds the pair once again; marked leaves count. */
static void renumbering_merges_and_marks_count(void **state)
{
	(void)state;
	struct history *h = history_new(10);
	const uint32_t to[] = { 0, 1, 1, 2 };
	const bool marked[] = { false, true, false, false };
	uint64_t counts[2], first, end;
	struct sum s = { 0 };

	history_add(h, 0, 1, HISTORY_NO_SITE);
	history_add(h, 0, 2, HISTORY_NO_SITE);
	history_add(h, 0, 2, HISTORY_NO_SITE);
	history_add(h, 1, 3, HISTORY_NO_SITE); /* open */
	history_renumber(h, to);
	assert_int_equal(history_each(h, 0, 1, add_entry, &s, &first, &end), 3);
	assert_int_equal(s.per_node[1], 3);
	history_count(h, marked, counts);
	assert_int_equal(counts[0], 3);
	assert_int_equal(counts[1], 0);
	history_free(h);

	/* One second kept: seconds 0 and 1 are old at second 2+HISTORY_OLD_MAX and merge. */
	h = history_new(1);
	history_add(h, 0, 1, HISTORY_NO_SITE);
	history_add(h, 0, 2, HISTORY_NO_SITE);
	history_add(h, 1, 1, HISTORY_NO_SITE);
	history_renumber(h, to);
	for (uint64_t second = 2; second < 2 + HISTORY_OLD_MAX + 1; second++)
		history_add(h, second, 3, HISTORY_NO_SITE);
	s = (struct sum){ 0 };
	assert_int_equal(history_each(h, 0, 1, add_entry, &s, &first, &end), 3);
	assert_int_equal(end, 2); /* seconds 0 and 1 are one stretch now */
	assert_int_equal(s.entries, 1);
	assert_int_equal(s.per_node[1], 3);
	history_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(closed_seconds_sum_their_leaves),
		cmocka_unit_test(old_stretches_merge_and_keep_every_sample),
		cmocka_unit_test(renumbering_merges_and_marks_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
