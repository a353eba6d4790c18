/* diff.h — one profile against a baseline: for the functions and call paths of a profile shown
 * now, what share of its samples each had in the baseline. Functions are matched by name and
 * module (their ids differ between profiles; snapshots of one profile share them), paths by the
 * view's path hashes (view.h) made from the matched functions. Shares, not counts, so that runs
 * of different lengths compare. The views put the baseline's numbers beside their rows
 * (view_top(), view_tree()); no curses, no printing here.
 *
 * A baseline is matched against one snapshot at a time, in one thread's scope: the thread of the
 * same tid in the baseline when it has one (a stretch of the same run), else all of it (a file). */
#ifndef PROFTOP_DIFF_H
#define PROFTOP_DIFF_H

#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A change in points the screen colours as growth or shrinkage. */
#define DIFF_SIGNIFICANT_POINTS 0.5

struct diff_base;

/* A baseline of the snapshot old (the base takes a reference of its own); label says what it is
 * ("old.out", "seconds 0-12"), for headers. */
struct diff_base *diff_base_new(struct snapshot *old, const char *label);
void diff_base_free(struct diff_base *base);
const struct snapshot *diff_base_snapshot(const struct diff_base *base);
const char *diff_base_label(const struct diff_base *base);

/* Match the baseline against now in the scope of thread tid (0: all threads). Costs a pass over
 * the baseline's functions and nodes; nothing when now is of the profile and the scope it was
 * matched against last, short of the functions now has that the last had not. The base keeps
 * no reference to now: the answers below are about the snapshot it was matched against last. */
void diff_base_match(struct diff_base *base, const struct snapshot *now, pid_t tid);

/* The samples in the baseline's scope: what its shares are of. */
uint64_t diff_base_samples(const struct diff_base *base);
/* The baseline's self and total samples of now's function func (0 and 0: none). */
void diff_base_func(const struct diff_base *base, uint32_t func, uint64_t *self, uint64_t *total);
/* The baseline's samples of the node at path (a path hash of now's functions from a tree's
 * root, view.h); false when the baseline has no such path. The root's path is SNAPSHOT_ROOT_PATH. */
bool diff_base_node(const struct diff_base *base, uint64_t path, uint64_t *self, uint64_t *total);
/* The baseline's functions with samples in its scope that now has no function of (by name and
 * module): their ids in the baseline's snapshot and their samples there. */
struct diff_unmatched {
	uint32_t func;
	uint64_t self, total;
};

size_t diff_base_unmatched(const struct diff_base *base, const struct diff_unmatched **funcs);

/* count of samples as percent (0 when samples is). */
double diff_share(uint64_t count, uint64_t samples);

#endif
