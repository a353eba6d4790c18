/* diff.h — one profile against a baseline: per function, its share of the samples now and in the
 * baseline, matched by name and module. Shares, not counts, so that runs of different lengths
 * compare. `proftop report --diff` prints these rows; no curses, no printing here. */
#ifndef PROFTOP_DIFF_H
#define PROFTOP_DIFF_H

#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>

struct diff_row {
	const char *name;          /* in the snapshot it came from (the newer one if in both) */
	const char *module;
	double self, total;        /* percent of the profile's samples, now */
	double old_self, old_total; /* the same in the baseline */
	bool only_new, only_old;   /* no samples on the other side */
};

/* A row per function with samples in old or new (by name and module: ids differ between
 * profiles), sorted by how much its self share changed (the largest change first, either way),
 * then its total share's change, then by name. *rows is malloc'd and the caller's; returns how
 * many. The rows point into both snapshots' names. */
size_t diff_rows(const struct snapshot *old, const struct snapshot *new, struct diff_row **rows);

#endif
