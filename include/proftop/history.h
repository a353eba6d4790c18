/* history.h — where the samples of each second of the run ended, for snapshots of any stretch of
 * it (the timeline) and of its last seconds (the window).
 *
 * A history is a list of stretches of the run, oldest first, each with the (trie leaf, leaf site,
 * count) entries of the samples taken in it. The newest `seconds` seconds are a stretch each; an
 * older stretch merges with a neighbour (the adjacent pair with the shortest span together, the
 * oldest such) so that at most HISTORY_OLD_MAX older ones stay. So its memory follows the seconds
 * kept at full resolution and the distinct leaves sampled in them, not the run's length, and no
 * sample ever leaves it: the stretches always add up to the whole run.
 *
 * Only the profile's owner (the collector thread) touches one. */
#ifndef PROFTOP_HISTORY_H
#define PROFTOP_HISTORY_H

#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_OLD_MAX 64
#define HISTORY_NO_SITE UINT32_MAX

struct history_entry {
	uint32_t node;         /* a thread trie's leaf */
	uint32_t site;         /* the leaf's site; HISTORY_NO_SITE: none */
	uint64_t count;
};

struct history;

/* A history keeping the newest seconds (at least 1) one second each. */
struct history *history_new(unsigned seconds);
void history_free(struct history *history);

/* One sample taken in second (of the run; never earlier than the last one added) ended at node,
 * at site. */
void history_add(struct history *history, uint64_t second, uint32_t node, uint32_t site);
/* count of them at once (an off-CPU wait's microseconds). */
void history_add_n(struct history *history, uint64_t second, uint32_t node, uint32_t site,
		   uint64_t count);

/* The profile's nodes were renumbered (a fold): node n is now to[n]. */
void history_renumber(struct history *history, const uint32_t *to);

/* The entries of every stretch that overlaps seconds [from_s, to_s), each passed to fn (a leaf
 * may come more than once, from different stretches). The seconds those stretches span go to
 * *first_s and *end_s (both 0 when none does). Returns the samples they count. */
typedef void history_entry_fn(void *arg, const struct history_entry *entry);
uint64_t history_each(const struct history *history, uint64_t from_s, uint64_t to_s,
		      history_entry_fn *fn, void *arg, uint64_t *first_s, uint64_t *end_s);

/* Per stretch, oldest first, the samples that ended at a node marked[] says (counts[], as many as
 * history_timeline() gives). */
void history_count(const struct history *history, const bool *marked, uint64_t *counts);

/* The timeline: a span per stretch, oldest first, in a new array (*out; NULL when empty).
 * Returns how many. */
size_t history_timeline(const struct history *history, struct snapshot_span **out);

/* Bytes it holds. */
size_t history_memory(const struct history *history);

#endif
