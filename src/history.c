/* history.c — the samples of each second, as stretches of counted leaves (history.h).
 *
 * The newest stretch is open: its samples are appended one entry each, unsorted, as they come.
 * When a sample of a later second arrives the open stretch closes: its entries are sorted by
 * (node, site) and those of one pair summed into one, so a closed stretch holds each pair once,
 * in order, and two closed ones merge in one pass. Closing is also when old stretches merge.
 * A fold renumbers the nodes, which leaves a stretch unsorted (and maybe with a pair twice): it
 * is sorted again only when it merges, so that a fold costs one pass over the entries. */
#include "proftop/history.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct stretch {
	uint64_t start_s, end_s;   /* the seconds [start_s, end_s) of the run */
	uint64_t samples;
	struct history_entry *entries;
	size_t n, cap;
	bool sorted;               /* each (node, site) once, in order */
};

struct history {
	unsigned seconds;          /* the newest seconds kept a stretch each */
	struct stretch *stretches; /* oldest first; the last one is open when `open` */
	size_t n, cap;
	bool open;
};

struct history *history_new(unsigned seconds)
{
	struct history *h = xcalloc(1, sizeof(*h));

	h->seconds = seconds ? seconds : 1;
	return h;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->stretches[i].entries);
	free(h->stretches);
	free(h);
}

static int entry_order(const void *a, const void *b)
{
	const struct history_entry *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Sort a stretch's entries and sum those of one (node, site) pair into one. */
static void compact(struct stretch *s)
{
	size_t kept = 0;

	s->sorted = true;
	if (!s->n)
		return;
	qsort(s->entries, s->n, sizeof(*s->entries), entry_order);
	for (size_t i = 1; i < s->n; i++) {
		if (!entry_order(&s->entries[kept], &s->entries[i]))
			s->entries[kept].count += s->entries[i].count;
		else
			s->entries[++kept] = s->entries[i];
	}
	s->n = kept + 1;
	/* A closed stretch never grows again: give back what the appends reserved. */
	s->entries = xrealloc(s->entries, s->n * sizeof(*s->entries));
	s->cap = s->n;
}

/* Stretch a and the one after it become one (both closed). */
static void merge_pair(struct history *h, size_t a)
{
	struct stretch *x = &h->stretches[a], *y = &h->stretches[a + 1];
	struct history_entry *out;
	size_t i = 0, j = 0, n = 0;

	if (!x->sorted)
		compact(x);
	if (!y->sorted)
		compact(y);
	out = xmalloc((x->n + y->n ? x->n + y->n : 1) * sizeof(*out));

	while (i < x->n || j < y->n) {
		int order = i == x->n ? 1 : j == y->n ? -1 : entry_order(&x->entries[i], &y->entries[j]);

		if (order < 0) {
			out[n++] = x->entries[i++];
		} else if (order > 0) {
			out[n++] = y->entries[j++];
		} else {
			out[n] = x->entries[i++];
			out[n++].count += y->entries[j++].count;
		}
	}
	free(x->entries);
	free(y->entries);
	x->entries = out;
	x->n = x->cap = n;
	x->end_s = y->end_s;
	x->samples += y->samples;
	memmove(y, y + 1, (h->n - a - 2) * sizeof(*y));
	h->n--;
}

/* Keep at most HISTORY_OLD_MAX stretches older than the newest `seconds` seconds (newest is the
 * second the open stretch is about): the adjacent old pair with the shortest span merges first,
 * the oldest of equals, so old stretches coarsen evenly instead of one growing without end. */
static void coarsen(struct history *h, uint64_t newest)
{
	for (;;) {
		size_t old = 0, best = 0;
		uint64_t best_span = UINT64_MAX;

		while (old < h->n && h->stretches[old].end_s + h->seconds <= newest)
			old++;
		if (old <= HISTORY_OLD_MAX)
			return;
		for (size_t i = 0; i + 1 < old; i++) {
			uint64_t span = h->stretches[i + 1].end_s - h->stretches[i].start_s;

			if (span < best_span) {
				best_span = span;
				best = i;
			}
		}
		merge_pair(h, best);
	}
}

void history_add(struct history *h, uint64_t second, uint32_t node, uint32_t site)
{
	history_add_n(h, second, node, site, 1);
}

void history_add_n(struct history *h, uint64_t second, uint32_t node, uint32_t site,
		   uint64_t count)
{
	struct stretch *s = h->n ? &h->stretches[h->n - 1] : NULL;

	if (!h->open || second >= s->end_s) {
		if (h->open) {
			compact(s);
			h->open = false;
			coarsen(h, second);
		}
		if (h->n == h->cap)
			xgrow((void **)&h->stretches, &h->cap, h->n + 1, sizeof(*h->stretches));
		s = &h->stretches[h->n++];
		*s = (struct stretch){ .start_s = second, .end_s = second + 1 };
		h->open = true;
	}
	if (s->n == s->cap)
		xgrow((void **)&s->entries, &s->cap, s->n + 1, sizeof(*s->entries));
	s->entries[s->n++] = (struct history_entry){ node, site, count };
	s->samples += count;
}

void history_renumber(struct history *h, const uint32_t *to)
{
	for (size_t i = 0; i < h->n; i++) {
		struct stretch *s = &h->stretches[i];

		for (size_t k = 0; k < s->n; k++)
			s->entries[k].node = to[s->entries[k].node];
		s->sorted = false;
	}
}

uint64_t history_each(const struct history *h, uint64_t from_s, uint64_t to_s, history_entry_fn *fn,
		      void *arg, uint64_t *first_s, uint64_t *end_s)
{
	uint64_t samples = 0;

	*first_s = *end_s = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct stretch *s = &h->stretches[i];

		if (s->end_s <= from_s || s->start_s >= to_s)
			continue;
		if (!*end_s)
			*first_s = s->start_s;
		*end_s = s->end_s;
		samples += s->samples;
		for (size_t k = 0; k < s->n; k++)
			fn(arg, &s->entries[k]);
	}
	return samples;
}

size_t history_timeline(const struct history *h, struct snapshot_span **out)
{
	struct snapshot_span *spans = h->n ? xmalloc(h->n * sizeof(*spans)) : NULL;

	for (size_t i = 0; i < h->n; i++)
		spans[i] = (struct snapshot_span){ h->stretches[i].start_s, h->stretches[i].end_s,
						   h->stretches[i].samples };
	*out = spans;
	return h->n;
}

void history_count(const struct history *h, const bool *marked, uint64_t *counts)
{
	for (size_t i = 0; i < h->n; i++) {
		const struct stretch *s = &h->stretches[i];

		counts[i] = 0;
		for (size_t k = 0; k < s->n; k++)
			if (marked[s->entries[k].node])
				counts[i] += s->entries[k].count;
	}
}

size_t history_memory(const struct history *h)
{
	size_t bytes = sizeof(*h) + h->cap * sizeof(*h->stretches);

	for (size_t i = 0; i < h->n; i++)
		bytes += h->stretches[i].cap * sizeof(struct history_entry);
	return bytes;
}
