/* stretches.c — a snapshot's timeline for the writers that keep time order (stretches.h). */
#include "proftop/stretches.h"

#include "proftop/collector.h"
#include "proftop/util.h"

#include <stdlib.h>

static struct snapshot *make_stretch(void *arg, size_t i)
{
	const struct stretches *st = arg;

	return collector_stretch(st->collector, st->mode, st->spans[i].start_s, st->spans[i].end_s);
}

void stretches_open(struct stretches *st, struct collector *collector, const struct snapshot *snap)
{
	*st = (struct stretches){ { 0, make_stretch, st }, collector, snap->mode, NULL };
	if (!collector || !collector_keeps_stretches(collector, snap->mode))
		return;
	st->spans = xcalloc(snap->nspans ? snap->nspans : 1, sizeof(*st->spans));
	for (size_t i = 0; i < snap->nspans; i++) {
		const struct snapshot_span *span = &snap->spans[i];

		if (!snap->ranged ||
		    (span->end_s > snap->range_start_s && span->start_s < snap->range_end_s))
			st->spans[st->timeline.count++] = *span;
	}
}

void stretches_close(struct stretches *st)
{
	free(st->spans);
	st->spans = NULL;
	st->timeline.count = 0;
}
