/* stretches.h — a snapshot's timeline as the writers that keep time order read it
 * (export_timeline): the stretches of the run it spans (those in its range, when it is a stretch
 * itself), oldest first, each made by the collector (collector_stretch()) only when the writer
 * asks for it, so a format that keeps no time order costs nothing and a long run's stretches
 * are never all held at once. */
#ifndef PROFTOP_STRETCHES_H
#define PROFTOP_STRETCHES_H

#include "proftop/export.h"
#include "proftop/snapshot.h"

struct collector;

struct stretches {
	struct export_timeline timeline; /* what the writer reads: count 0 when there is none */
	struct collector *collector;
	enum sample_mode mode;
	struct snapshot_span *spans;     /* the stretches' seconds (malloc'd) */
};

/* The stretches of snapshot's timeline, as collector makes them; none (timeline.count 0) when
 * collector is NULL (a profile read from a file) or keeps no history of snapshot's kind. Valid
 * while collector is, and where it was opened (timeline's arg points to it: no copies);
 * stretches_close() frees it. */
void stretches_open(struct stretches *stretches, struct collector *collector,
		    const struct snapshot *snapshot);
void stretches_close(struct stretches *stretches);

#endif
