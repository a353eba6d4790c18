/* publication.c — the collector's publications and its readers' requests (publication.h).
 *
 * A stretch request lives on its reader's stack: the reader waits on `cond` until the thread
 * set done (or ended), so the list never holds a request whose reader left. */
#include "proftop/publication.h"

#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/source.h"
#include "proftop/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct stretch_request {
	enum sample_mode mode;
	uint64_t from_s, to_s;
	struct snapshot *made;
	bool done;
	struct stretch_request *next;
};

struct publication {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int wake_fd, published_fd;
	uint64_t publications;     /* snapshots published so far */
	bool requested;            /* a reader asked for the next one */
	bool live;                 /* the thread runs and will answer requests */
	struct snapshot *published;
	struct snapshot *published_range; /* NULL unless ranged */
	struct snapshot_range range; /* what a reader selected, when ranged */
	bool ranged;
	struct stretch_request *stretches; /* asked for, not yet taken by the thread */
	uint64_t end_ns;
};

struct publication *publication_new(int wake_fd, int published_fd)
{
	struct publication *p = xcalloc(1, sizeof(*p));
	pthread_condattr_t cond_clock;

	p->wake_fd = wake_fd;
	p->published_fd = published_fd;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&cond_clock);
	pthread_condattr_setclock(&cond_clock, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &cond_clock);
	pthread_condattr_destroy(&cond_clock);
	return p;
}

void publication_free(struct publication *p)
{
	if (!p)
		return;
	snapshot_unref(p->published);
	snapshot_unref(p->published_range);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

void publication_set_live(struct publication *p, bool live)
{
	pthread_mutex_lock(&p->lock);
	p->live = live;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

bool publication_requested(struct publication *p)
{
	bool requested;

	pthread_mutex_lock(&p->lock);
	requested = p->requested;
	pthread_mutex_unlock(&p->lock);
	return requested;
}

bool publication_selected(struct publication *p, struct snapshot_range *range)
{
	bool ranged;

	pthread_mutex_lock(&p->lock);
	ranged = p->ranged;
	*range = p->range;
	pthread_mutex_unlock(&p->lock);
	return ranged;
}

void publication_put(struct publication *p, struct snapshot *s, struct snapshot *range)
{
	struct snapshot *old, *old_range;

	pthread_mutex_lock(&p->lock);
	old = p->published;
	p->published = s;
	old_range = p->published_range;
	p->published_range = range;
	p->publications++;
	p->requested = false;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->published_fd >= 0)
		util_wake(p->published_fd);
	snapshot_unref(old);
	snapshot_unref(old_range);
}

void publication_make_stretches(struct publication *p, publication_make_fn *make, void *arg)
{
	struct stretch_request *list, *r;

	pthread_mutex_lock(&p->lock);
	list = p->stretches;
	p->stretches = NULL;
	pthread_mutex_unlock(&p->lock);
	if (!list)
		return;
	for (r = list; r; r = r->next)
		r->made = make(arg, r->mode, r->from_s, r->to_s);
	pthread_mutex_lock(&p->lock);
	for (r = list; r; r = r->next)
		r->done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

uint64_t publication_end(struct publication *p)
{
	uint64_t end;

	pthread_mutex_lock(&p->lock);
	end = p->end_ns;
	pthread_mutex_unlock(&p->lock);
	return end;
}

void publication_set_end(struct publication *p, uint64_t end_ns)
{
	pthread_mutex_lock(&p->lock);
	p->end_ns = end_ns;
	pthread_mutex_unlock(&p->lock);
}

struct snapshot *publication_get(struct publication *p, struct snapshot **range)
{
	struct snapshot *s;

	pthread_mutex_lock(&p->lock);
	s = snapshot_ref(p->published);
	*range = p->published_range ? snapshot_ref(p->published_range) : NULL;
	pthread_mutex_unlock(&p->lock);
	return s;
}

/* With the lock held. */
static void request(struct publication *p)
{
	if (p->live && !p->requested) {
		p->requested = true;
		util_wake(p->wake_fd);
	}
}

void publication_request(struct publication *p)
{
	pthread_mutex_lock(&p->lock);
	request(p);
	pthread_mutex_unlock(&p->lock);
}

void publication_wait(struct publication *p, uint64_t wait_ns)
{
	uint64_t deadline = util_now_ns() + wait_ns, seen;
	struct timespec until = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };

	pthread_mutex_lock(&p->lock);
	seen = p->publications;
	request(p);
	while (p->live && p->publications == seen && util_now_ns() < deadline)
		pthread_cond_timedwait(&p->cond, &p->lock, &until);
	pthread_mutex_unlock(&p->lock);
}

void publication_select(struct publication *p, const struct snapshot_range *range)
{
	pthread_mutex_lock(&p->lock);
	p->ranged = range != NULL;
	if (range)
		p->range = *range;
	pthread_mutex_unlock(&p->lock);
}

bool publication_ask_stretch(struct publication *p, enum sample_mode mode, uint64_t from_s,
			     uint64_t to_s, struct snapshot **made)
{
	struct stretch_request req = { .mode = mode, .from_s = from_s, .to_s = to_s };

	pthread_mutex_lock(&p->lock);
	if (p->live) {
		req.next = p->stretches;
		p->stretches = &req;
		util_wake(p->wake_fd);
		while (!req.done && p->live)
			pthread_cond_wait(&p->cond, &p->lock);
		/* The thread ended before taking it: take it back. */
		for (struct stretch_request **r = &p->stretches; !req.done && *r; r = &(*r)->next)
			if (*r == &req) {
				*r = req.next;
				break;
			}
	}
	pthread_mutex_unlock(&p->lock);
	*made = req.made;
	return req.done;
}

/* --- making them ------------------------------------------------------------------------------ */

struct stamping {
	const struct publication_maker *m;
	uint64_t now;
};

/* The collector's part, then what the source of its kind knows. */
static void stamp(void *arg, struct snapshot *s)
{
	struct stamping *st = arg;
	const struct source_set *set = st->m->sources;
	size_t at;
	const struct source *owner = source_set_owner(set, s->mode, &at);

	st->m->stamp(st->m->arg, s, st->now);
	if (owner && owner->stamp)
		owner->stamp(set->states[at], set->nworkers, s);
}

static void stamp_as(const struct publication_maker *m, struct snapshot *s, enum sample_mode mode,
		     uint64_t now)
{
	struct stamping st = { m, now };

	s->mode = mode;
	stamp(&st, s);
}

static void sources_publishing(const struct publication_maker *m, uint64_t now, bool ended)
{
	const struct source_set *set = m->sources;

	for (size_t i = 0; i < set->n; i++)
		if (set->sources[i]->publishing)
			set->sources[i]->publishing(set->states[i], set->nworkers, now, ended);
}

void publication_ending(const struct publication_maker *m, uint64_t now_ns)
{
	sources_publishing(m, now_ns, true);
}

/* The cumulative snapshot of the kind shown: its source's, or its profile's. */
static struct snapshot *shown_snapshot(const struct publication_maker *m, enum sample_mode mode,
				       uint32_t traced, uint64_t now)
{
	struct stamping st = { m, now };
	size_t at;
	const struct source *owner = source_set_owner(m->sources, mode, &at);
	struct profile *p = profiles_get(m->profiles, mode);
	struct snapshot *s;

	if (owner && owner->snapshot)
		return owner->snapshot(m->sources->states[at], m->sources->nworkers, mode, traced,
				       now, stamp, &st);
	profile_trace(p, traced);
	s = profile_snapshot(p);
	stamp_as(m, s, mode, now);
	return s;
}

/* The snapshot of the selected stretch: a window's ends move with the run. Once profiling ended
 * the clock stops at its end, so a window made later still shows its last seconds. */
static struct snapshot *range_snapshot(const struct publication_maker *m, enum sample_mode mode,
				       const struct snapshot_range *r, uint64_t now)
{
	uint64_t elapsed = now - m->start_ns, from_s = r->from_s, to_s = r->to_s;
	struct snapshot *s;

	if (r->last_ns) {
		from_s = elapsed > r->last_ns ? (elapsed - r->last_ns) / 1000000000u : 0;
		to_s = UINT64_MAX;
	}
	s = profile_range_snapshot(profiles_get(m->profiles, mode), from_s, to_s);
	s->window_ns = r->last_ns;
	stamp_as(m, s, mode, now);
	return s;
}

struct snapshot *publication_make(struct publication *p, const struct publication_maker *m,
				  enum sample_mode mode, uint32_t traced, uint64_t now_ns, bool ended,
				  struct snapshot **range)
{
	struct snapshot_range selected;
	bool ranged = publication_selected(p, &selected);
	struct snapshot *s;

	if (!ended)
		sources_publishing(m, now_ns, false);
	s = shown_snapshot(m, mode, traced, now_ns);
	*range = NULL;
	if (ranged && profiles_rebuilt(m->profiles, mode)) /* no stretches: it is of now */
		*range = snapshot_ref(s);
	else if (ranged)
		*range = range_snapshot(m, mode, &selected, now_ns);
	return s;
}

struct snapshot *publication_stretch(const struct publication_maker *m, enum sample_mode mode,
				     uint64_t from_s, uint64_t to_s, uint64_t now_ns)
{
	struct snapshot *s = profile_range_snapshot(profiles_get(m->profiles, mode), from_s, to_s);

	stamp_as(m, s, mode, now_ns);
	return s;
}
