/* publication.h — what the collector thread publishes and what readers ask of it: the newest
 * snapshot (and its selected stretch's), requests for the next one, stretches of the run made on
 * request, and the run's end.
 *
 * The collector thread publishes; readers (the session's thread, the HTTP endpoint's) take
 * references. One lock, publication's own, guards it all: the collector thread and the readers
 * take it, never the sampler or a worker. A reader that asks for the next snapshot is told by
 * the eventfd given to publication_new() when it is there (the screen's frame loop never waits
 * on the engine); publication_wait() is for readers that want one fresh and may wait. */
#ifndef PROFTOP_PUBLICATION_H
#define PROFTOP_PUBLICATION_H

#include "proftop/sample.h"
#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stdint.h>

struct publication;

/* wake_fd: the collector thread's (util_wake()); published_fd: written at each publication
 * (-1: none). */
struct publication *publication_new(int wake_fd, int published_fd);
void publication_free(struct publication *p);

/* --- the collector thread ---------------------------------------------------------------- */
/* Whether the thread runs and answers requests (readers make stretches themselves when not). */
void publication_set_live(struct publication *p, bool live);
bool publication_requested(struct publication *p);
/* The selected stretch, if one is (into *range). */
bool publication_selected(struct publication *p, struct snapshot_range *range);
/* Publish s and range (NULL: none), taking the caller's references. */
void publication_put(struct publication *p, struct snapshot *s, struct snapshot *range);
typedef struct snapshot *publication_make_fn(void *arg, enum sample_mode mode, uint64_t from_s,
					     uint64_t to_s);
/* Make every stretch readers asked for with make(). */
void publication_make_stretches(struct publication *p, publication_make_fn *make, void *arg);
/* When the run ended (0: not yet); set once, by the thread that ends it. */
uint64_t publication_end(struct publication *p);
void publication_set_end(struct publication *p, uint64_t end_ns);

/* --- making them (the collector thread, or after the end whoever holds the collector's
 * late lock), with the profiles locked --------------------------------------------------- */
struct profiles;
struct source_set;
/* What the collector knows of a snapshot of s->mode made at now_ns (counters, clocks, cost). */
typedef void publication_stamp_fn(void *arg, struct snapshot *s, uint64_t now_ns);
struct publication_maker {
	struct profiles *profiles;
	const struct source_set *sources;
	publication_stamp_fn *stamp;
	void *arg;
	uint64_t start_ns;         /* the run's */
};
/* The sources are told (unless ended: they were at the end), then the cumulative snapshot of
 * mode (its source's, with its siblings, or its profile's) is made, traced counting on its
 * timeline, and the selected stretch's when one is (into *range, else NULL): for
 * publication_put() once the profiles are unlocked. */
struct snapshot *publication_make(struct publication *p, const struct publication_maker *m,
				  enum sample_mode mode, uint32_t traced, uint64_t now_ns, bool ended,
				  struct snapshot **range);
/* The snapshot of the run's seconds [from_s, to_s) in mode. */
struct snapshot *publication_stretch(const struct publication_maker *m, enum sample_mode mode,
				     uint64_t from_s, uint64_t to_s, uint64_t now_ns);
/* The sources are told the run ended at now_ns. */
void publication_ending(const struct publication_maker *m, uint64_t now_ns);

/* --- readers ------------------------------------------------------------------------------ */
/* The newest published and its stretch's (NULL when none) into *range, with references. */
struct snapshot *publication_get(struct publication *p, struct snapshot **range);
/* Ask the thread for the next publication; do not wait. */
void publication_request(struct publication *p);
/* Ask, and wait until the next publication, at most wait_ns (none once the thread ended). */
void publication_wait(struct publication *p, uint64_t wait_ns);
void publication_select(struct publication *p, const struct snapshot_range *range);
/* A stretch made by the thread for this call; false when the thread is not live (or ended
 * before it made it): the caller makes it. */
bool publication_ask_stretch(struct publication *p, enum sample_mode mode, uint64_t from_s,
			     uint64_t to_s, struct snapshot **made);

#endif
