/* collector.c — the collector: drains the ring, keeps the address spaces current, hands each
 * record to the sources of profile data (source.h), and publishes snapshots of the run's
 * profiles (profiles.h) when readers ask (publication.h). Snapshots are made on request only,
 * so a run nobody looks at makes none until the end; their cost follows what changed since the
 * last one (profile.c).
 *
 * Workers (--collectors N). Each owns a resolver (resolver.h) and one state per source, and is
 * one reader of the ring: it reads every record in ring order, applies every address-space
 * record (mmap, fork, exec, exit) itself, and hands the rest to its sources, which take their
 * share (the CPU samples by sequence number, a thread's switches to worker tid % N). So a sample
 * is unwound against the maps of its own moment, with no lock on the way, and one busy process
 * is spread over every worker; the price is N copies of the modules (libdw's handles are not
 * shared between threads). With one worker (the default; always when a source needs one) the
 * collector thread is that worker and nothing is locked. With more, the collector thread only
 * coordinates (wakes the workers, takes debuginfod's files, publishes, makes stretches), and the
 * profiles' lock guards what the workers add; a snapshot then misses their current round
 * (milliseconds), the final one nothing.
 *
 * Threads. A struct worker belongs to its worker's thread; the rest of struct collector to the
 * collector thread while it runs, but for what is locked (the profiles; the hand-off of debug
 * files and the publication, their own) and the atomics (`stop`, `shown`, `traced_func`, the
 * CPU times). Once the threads ended everything belongs to whoever holds late_lock: the
 * session's thread, or a reader's (the HTTP endpoint's) making a stretch itself. */
#include "proftop/collector.h"

#include "proftop/diag.h"
#include "proftop/handoff.h"
#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/publication.h"
#include "proftop/resolver.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/source.h"
#include "proftop/symbols.h"
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long a reader that wants a fresh snapshot (collector_snapshot()) waits for it before it
 * takes the newest there is. */
#define REQUEST_WAIT_NS 500000000ull
/* How long a thread sleeps when nothing wakes it. */
#define ROUND_MS 50

/* One unwinding thread's: see the file comment. */
struct worker {
	struct collector *c;
	struct source_env env;
	int wake_fd;               /* its own thread's (-1 for the collector thread's worker) */
	pthread_t thread;
	bool running;
};

struct collector {
	struct ring *ring;
	struct sampler *sampler;
	struct sample_config config;
	struct diag *diag;
	struct worker *workers;
	unsigned nworkers;
	struct source_set sources; /* the run's, and each worker's states of them */
	struct publication_maker maker;
	struct profiles *profiles;
	_Atomic int shown;         /* the kind whose snapshots are published */
	_Atomic uint32_t traced_func; /* the function the timeline follows; 0: none */
	size_t trees_budget;       /* the call trees' part of --max-memory (0: no limit) */
	size_t sources_budget;     /* each worker's part for its modules' DWARF (0: no limit) */
	struct handoff *handoff;   /* debuginfod's files; NULL: not asked */
	void (*count_also)(void *arg, struct counters *counters); /* and its arg; NULL: none */
	void *count_also_arg;
	uint64_t start_ns;
	uint64_t end_ns;           /* when collector_finish() first ran; 0 before */
	pthread_mutex_t late_lock; /* everything once the threads ended */
	struct publication *publication;
	int wake_fd;
	int published_fd;          /* written at each publication (collector_published_fd()) */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	_Atomic uint64_t cpu_user_ns, cpu_system_ns; /* the target's, set by the session */
	struct selfcost cost;      /* proftop's own, measured once per publication */
};

static publication_stamp_fn stamp;

static void worker_init(struct collector *c, struct worker *w, unsigned index)
{
	w->c = c;
	w->env = (struct source_env){
		.profiles = c->profiles,
		.resolver = resolver_new(c->profiles, &c->config, c->diag),
		.config = &c->config,
		.diag = c->diag,
		.sample_type = sample_type_for(&c->config),
		.regs_mask = c->config.callgraph == CALLGRAPH_DWARF ? sample_regs_mask() : 0,
		.index = index,
		.nworkers = c->nworkers,
		.sites = true,
	};
	for (size_t i = 0; i < c->sources.n; i++)
		c->sources.states[i][index] = c->sources.sources[i]->worker_new(&w->env);
	w->wake_fd = -1;
}

static void worker_free(struct collector *c, struct worker *w)
{
	for (size_t i = 0; i < c->sources.n; i++)
		c->sources.sources[i]->worker_free(c->sources.states[i][w->env.index]);
	resolver_free(w->env.resolver);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
}

/* The sources a run of config has, and the kinds of profile they feed; -EINVAL when one needs
 * one worker and there are more. */
static int open_sources(struct collector *c, unsigned nworkers, uint32_t *feeds, uint32_t *rebuilt)
{
	*feeds = *rebuilt = 0;
	for (const struct source *const *s = source_table; *s; s++) {
		if (!(*s)->in_run(&c->config))
			continue;
		if ((*s)->one_worker && nworkers > 1)
			return -EINVAL;
		c->sources.sources[c->sources.n++] = *s;
		*feeds |= (*s)->feeds;
		*rebuilt |= (*s)->rebuilt;
	}
	return 0;
}

int collector_new(struct collector **out, struct ring *ring, struct sampler *sampler,
		  const struct sample_config *config, struct diag *diag)
{
	struct collector *c;
	unsigned nworkers = config->collectors ? config->collectors : 1;
	uint32_t feeds, rebuilt;
	int err;

	*out = NULL;
	/* Each worker reads the ring. */
	if (nworkers != ring_readers(ring) || nworkers > COLLECTOR_MAX_WORKERS)
		return -EINVAL;
	c = xcalloc(1, sizeof(*c));
	c->config = *config;
	err = open_sources(c, nworkers, &feeds, &rebuilt);
	c->wake_fd = err ? err : util_wake_new();
	if (c->wake_fd < 0) {
		err = c->wake_fd;
		free(c);
		return err;
	}
	c->ring = ring;
	c->sampler = sampler;
	c->diag = diag;
	c->nworkers = nworkers;
	c->sources.nworkers = nworkers;
	c->profiles = profiles_new(feeds, rebuilt, config->system_wide, nworkers > 1, diag);
	c->workers = xcalloc(nworkers, sizeof(*c->workers));
	for (unsigned i = 0; i < nworkers; i++)
		worker_init(c, &c->workers[i], i);
	atomic_init(&c->shown, (int)config->mode);
	pthread_mutex_init(&c->late_lock, NULL);
	c->published_fd = util_wake_new();
	c->publication = publication_new(c->wake_fd, c->published_fd);
	c->start_ns = util_now_ns();
	c->maker = (struct publication_maker){ c->profiles, &c->sources, stamp, c, c->start_ns };
	*out = c;
	return 0;
}

int collector_wake_fd(const struct collector *c)
{
	return c->wake_fd;
}

void collector_set_unwind_rules(struct collector *c, bool rules)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		resolver_set_rules(c->workers[i].env.resolver, rules);
}

void collector_set_source(struct collector *c, enum collector_source source)
{
	_Static_assert((int)COLLECTOR_SOURCE_LINES == (int)RESOLVER_LINES_ONLY &&
		       (int)COLLECTOR_SOURCE_OFF == (int)RESOLVER_LINES_OFF, "one meaning each");

	for (unsigned i = 0; i < c->nworkers; i++) {
		resolver_set_lines(c->workers[i].env.resolver, (enum resolver_lines)source);
		c->workers[i].env.sites = source != COLLECTOR_SOURCE_OFF;
	}
}

/* --- debuginfod's files ----------------------------------------------------------------------- */

bool collector_use_debuginfod(struct collector *c)
{
	c->handoff = handoff_new(c->wake_fd, c->diag);
	for (unsigned i = 0; c->handoff && i < c->nworkers; i++)
		resolver_use_handoff(c->workers[i].env.resolver, c->handoff);
	return c->handoff != NULL;
}

static void wake_workers(struct collector *c)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		if (c->workers[i].wake_fd >= 0)
			util_wake(c->workers[i].wake_fd);
}

/* The files debuginfod sent go to every worker (resolver_take_debug_files()). */
static void take_fetched(struct collector *c)
{
	if (c->handoff && handoff_take(c->handoff))
		wake_workers(c);
}

/* Profiling is over: nothing would take what arrives from now on. */
static void stop_fetching(struct collector *c)
{
	if (!c->handoff)
		return;
	handoff_stop(c->handoff);
	for (unsigned i = 0; i < c->nworkers; i++)
		resolver_use_handoff(c->workers[i].env.resolver, NULL);
}

/* --- records ---------------------------------------------------------------------------------- */

/* One record, in ring order: an address-space record for the resolver (and a thread's exit
 * for its sources), else the first source it is of. */
static void handle_record(struct worker *w, const void *data, size_t len)
{
	struct collector *c = w->c;
	const struct perf_event_header *h = data;
	struct sample_record r;

	if (len < sizeof(*h))
		return;
	for (size_t i = 0; i < c->sources.n; i++)
		if (c->sources.sources[i]->record(c->sources.states[i][w->env.index], data, len))
			return;
	if (sample_parse(data, len, w->env.sample_type, w->env.regs_mask, &r) < 0)
		return;
	resolver_address_record(w->env.resolver, &r, w->env.record_ns);
	if (r.kind == SAMPLE_KIND_COMM && source_env_owns(&w->env, r.pid)) {
		profiles_lock(c->profiles);
		profiles_comm(c->profiles, (pid_t)r.pid, (pid_t)r.tid, r.comm.comm, r.comm.exec);
		profiles_unlock(c->profiles);
	}
	if (r.kind == SAMPLE_KIND_EXIT && source_env_owns(&w->env, r.tid))
		for (size_t i = 0; i < c->sources.n; i++)
			if (c->sources.sources[i]->thread_exited)
				c->sources.sources[i]->thread_exited(c->sources.states[i][w->env.index],
								     (pid_t)r.tid);
}

static void flush_sources(struct worker *w)
{
	const struct source_set *set = &w->c->sources;

	for (size_t i = 0; i < set->n; i++)
		if (set->sources[i]->flush)
			set->sources[i]->flush(set->states[i][w->env.index]);
}

void collector_process(struct collector *c, const void *record, size_t len)
{
	uint64_t now = util_now_ns();

	for (unsigned i = 0; i < c->nworkers; i++) {
		c->workers[i].env.record_ns = now;
		handle_record(&c->workers[i], record, len);
		flush_sources(&c->workers[i]);
	}
}

uint64_t collector_samples(const struct collector *c)
{
	return profile_samples(profiles_get(c->profiles, profiles_first(c->profiles)));
}

/* The worker reads what the ring holds now. */
static void drain(struct worker *w)
{
	const void *data;
	size_t len;

	while ((data = ring_peek_reader(w->c->ring, w->env.index, &len))) {
		/* A file sent while this worker was busy, or one a module it loaded since wants:
		 * taken before the next record, so that few of its addresses are interned unnamed
		 * after another worker named them. */
		resolver_take_debug_files(w->env.resolver, true);
		w->env.record_ns = util_now_ns(); /* (the profiles' clock, where they are added to) */
		handle_record(w, data, len);
		ring_release_reader(w->c->ring, w->env.index);
	}
	flush_sources(w);
}

/* --- publication ------------------------------------------------------------------------------ */

/* What the collector knows of a snapshot made at now (publication_stamp_fn). */
static void stamp(void *arg, struct snapshot *s, uint64_t now)
{
	struct collector *c = arg;

	if (c->sampler) /* a replaying collector has none */
		sampler_counters(c->sampler, &s->counters);
	s->counters.truncated = s->counters.unread = 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		s->counters.truncated += resolver_truncated(c->workers[i].env.resolver);
		s->counters.unread += resolver_unread_frames(c->workers[i].env.resolver);
	}
	s->elapsed_ns = now - c->start_ns;
	s->freq = c->sampler ? sampler_freq(c->sampler) : c->config.freq;
	s->user_ns = atomic_load_explicit(&c->cpu_user_ns, memory_order_relaxed);
	s->system_ns = atomic_load_explicit(&c->cpu_system_ns, memory_order_relaxed);
	s->cost = c->cost;
	if (c->handoff)
		handoff_status(c->handoff, s->fetching, sizeof(s->fetching));
	if (c->count_also)
		c->count_also(c->count_also_arg, &s->counters);
}

void collector_count_also(struct collector *c, void (*count)(void *arg, struct counters *counters),
			  void *arg)
{
	c->count_also = count;
	c->count_also_arg = arg;
}

void collector_set_cpu_times(struct collector *c, uint64_t user_ns, uint64_t system_ns)
{
	atomic_store_explicit(&c->cpu_user_ns, user_ns, memory_order_relaxed);
	atomic_store_explicit(&c->cpu_system_ns, system_ns, memory_order_relaxed);
}

/* What the collector holds by part of the budget, into its cost; with the profiles locked. */
static void measure_parts(struct collector *c)
{
	profiles_memory(c->profiles, &c->cost.trees, &c->cost.history);
	c->cost.trees_budget = c->trees_budget;
	c->cost.sources = 0;
	c->cost.sources_closed = 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		c->cost.sources += resolver_sources_held(c->workers[i].env.resolver);
		c->cost.sources_closed += resolver_sources_closed(c->workers[i].env.resolver);
	}
	c->cost.sources_budget = c->sources_budget * c->nworkers;
}

/* The cumulative snapshot, and the one of the selected stretch while a reader selected one. */
static void publish(struct collector *c)
{
	uint64_t now = c->end_ns ? c->end_ns : util_now_ns();
	struct snapshot *s, *range;

	selfcost_measure(&c->cost);
	profiles_lock(c->profiles);
	measure_parts(c);
	s = publication_make(c->publication, &c->maker,
			     atomic_load_explicit(&c->shown, memory_order_relaxed),
			     atomic_load_explicit(&c->traced_func, memory_order_relaxed), now,
			     c->end_ns != 0, &range);
	profiles_unlock(c->profiles);
	publication_put(c->publication, s, range);
}

/* A stretch of the run in mode: on the collector thread, or after the end under late_lock. */
static struct snapshot *make_stretch(void *arg, enum sample_mode mode, uint64_t from_s,
				     uint64_t to_s)
{
	struct collector *c = arg;
	struct snapshot *s;

	/* Its cost is of now: nothing may have published since the first seconds (a server's
	 * batch run without periodic tables publishes only at the end). */
	selfcost_measure(&c->cost);
	profiles_lock(c->profiles);
	measure_parts(c);
	s = publication_stretch(&c->maker, mode, from_s, to_s, c->end_ns ? c->end_ns : util_now_ns());
	profiles_unlock(c->profiles);
	return s;
}

/* --- threads ---------------------------------------------------------------------------------- */

/* A worker's round: the debug files sent, the records, the processes gone, the DWARF held. */
static void work(void *arg)
{
	struct worker *w = arg;

	resolver_take_debug_files(w->env.resolver, false);
	drain(w);
	resolver_tick(w->env.resolver, util_now_ns(), w->c->sources_budget);
}

/* The collector thread's round. With one worker it is that worker too; with several it wakes
 * theirs (the sampler woke it). Either way it takes debuginfod's files, makes the stretches
 * asked for and publishes. */
static void coordinate(void *arg)
{
	struct collector *c = arg;

	take_fetched(c);
	if (c->nworkers == 1)
		work(&c->workers[0]);
	else
		wake_workers(c);
	publication_make_stretches(c->publication, make_stretch, c);
	if (publication_requested(c->publication))
		publish(c);
}

/* A thread's loop, the collector's or a worker's: a round each time fd is signalled (or
 * ROUND_MS passed), until the collector stops; a worker then reads the ring to its end. */
static void run_rounds(struct collector *c, int fd, void (*round)(void *arg), void *arg)
{
	while (!atomic_load_explicit(&c->stop, memory_order_acquire)) {
		util_wake_wait(fd, ROUND_MS);
		round(arg);
	}
}

/* A worker's thread (several workers). It owns its struct worker, reads the ring as reader
 * index, and takes the profiles' lock for what it adds. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	run_rounds(w->c, w->wake_fd, work, w);
	work(w);
	return NULL;
}

static void *collector_main(void *arg)
{
	struct collector *c = arg;

	run_rounds(c, c->wake_fd, coordinate, c);
	return NULL;
}

/* Stop and join the workers' threads (they read the ring to its end first). */
static void stop_workers(struct collector *c)
{
	wake_workers(c);
	for (unsigned i = 0; i < c->nworkers; i++)
		if (c->workers[i].running) {
			util_join(c->workers[i].thread);
			c->workers[i].running = false;
		}
}

/* Several workers: a thread for each (one worker is the collector thread itself). */
static int start_workers(struct collector *c)
{
	if (c->nworkers == 1)
		return 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];
		int err;

		w->wake_fd = util_wake_new();
		err = w->wake_fd < 0 ? -w->wake_fd : pthread_create(&w->thread, NULL, worker_main, w);
		if (err) {
			atomic_store_explicit(&c->stop, true, memory_order_release);
			stop_workers(c);
			return -err;
		}
		w->running = true;
	}
	return 0;
}

int collector_watch(struct collector *c, pid_t pid, const char *exe, char **message)
{
	return source_set_watch(&c->sources, pid, exe, c->diag, message);
}

int collector_start(struct collector *c, const pid_t *pids, size_t npids)
{
	int err;

	for (size_t i = 0; i < npids; i++) {
		for (unsigned k = 0; k < c->nworkers; k++) {
			err = symbolizer_load_proc(resolver_symbolizer(c->workers[k].env.resolver),
						   pids[i]);
			/* -a lists every process: some end meanwhile, kernel threads have no maps. */
			if (err && !k && !c->config.system_wide)
				diag_report(c->diag, DIAG_WARNING, "cannot read /proc/%d/maps: %s; its "
					    "functions are named from the mappings it makes from now on",
					    (int)pids[i], strerror(-err));
		}
	}
	/* The run's clock starts now, after the maps were read (under -a, every process's): the
	 * history's seconds count from here too, as collector_elapsed() does. */
	c->start_ns = util_now_ns();
	for (unsigned k = 0; k < c->nworkers; k++)
		c->workers[k].env.start_ns = c->start_ns;
	c->maker.start_ns = c->start_ns;
	profiles_set_origin(c->profiles, c->start_ns);
	publish(c);
	err = start_workers(c);
	if (err)
		return err;
	publication_set_live(c->publication, true);
	err = pthread_create(&c->thread, NULL, collector_main, c);
	if (err) {
		publication_set_live(c->publication, false);
		atomic_store_explicit(&c->stop, true, memory_order_release);
		stop_workers(c);
		return -err;
	}
	c->running = true;
	return 0;
}

void collector_finish(struct collector *c)
{
	if (c->running) {
		atomic_store_explicit(&c->stop, true, memory_order_release);
		util_wake(c->wake_fd);
		util_join(c->thread);
		c->running = false;
		stop_workers(c);
		/* Readers waiting for a stretch make it themselves, under late_lock: after the
		 * final drain below. */
		pthread_mutex_lock(&c->late_lock);
		publication_set_live(c->publication, false);
	} else {
		pthread_mutex_lock(&c->late_lock);
	}
	/* The threads have ended: every worker is this thread's now. */
	for (unsigned i = 0; i < c->nworkers; i++)
		drain(&c->workers[i]);
	if (!c->end_ns) {
		c->end_ns = util_now_ns();
		publication_set_end(c->publication, c->end_ns);
		profiles_lock(c->profiles);
		publication_ending(&c->maker, c->end_ns);
		profiles_unlock(c->profiles);
		/* A JIT may have written its map as its process ended: what it names is named
		 * before the last publication. */
		for (unsigned i = 0; i < c->nworkers; i++)
			symbolizer_jit_final(resolver_symbolizer(c->workers[i].env.resolver));
	}
	take_fetched(c);
	for (unsigned i = 0; i < c->nworkers; i++)
		resolver_take_debug_files(c->workers[i].env.resolver, false);
	stop_fetching(c);
	publish(c);
	pthread_mutex_unlock(&c->late_lock);
}

uint64_t collector_elapsed(struct collector *c, bool *ended)
{
	uint64_t end = publication_end(c->publication);

	*ended = end != 0;
	return (end ? end : util_now_ns()) - c->start_ns;
}

bool collector_keeps_stretches(const struct collector *c, enum sample_mode mode)
{
	struct profile *p = profiles_get(c->profiles, mode);

	return p && !profiles_rebuilt(c->profiles, mode) && profile_has_history(p);
}

struct snapshot *collector_stretch(struct collector *c, enum sample_mode mode, uint64_t from_s,
				   uint64_t to_s)
{
	struct snapshot *made;

	if (!collector_keeps_stretches(c, mode))
		return NULL;
	if (publication_ask_stretch(c->publication, mode, from_s, to_s, &made))
		return made;
	pthread_mutex_lock(&c->late_lock);
	made = make_stretch(c, mode, from_s, to_s);
	pthread_mutex_unlock(&c->late_lock);
	return made;
}

void collector_set_history(struct collector *c, unsigned seconds)
{
	profiles_set_history(c->profiles, seconds, c->start_ns);
}

void collector_set_max_memory(struct collector *c, size_t bytes)
{
	c->sources_budget = bytes / COLLECTOR_SOURCES_SHARE;
	c->trees_budget = bytes - c->sources_budget;
	profiles_set_max_memory(c->profiles, c->trees_budget);
	/* Each worker reads its own copy of the DWARF it needs. */
	c->sources_budget /= c->nworkers;
	if (bytes && !c->sources_budget)
		c->sources_budget = 1;
}

/* After the end, on the caller's thread: a reader may be making a stretch. */
static void publish_late(struct collector *c)
{
	pthread_mutex_lock(&c->late_lock);
	publish(c);
	pthread_mutex_unlock(&c->late_lock);
}

bool collector_select(struct collector *c, const struct snapshot_range *range)
{
	if (range && !profiles_have_history(c->profiles))
		return false;
	publication_select(c->publication, range);
	/* After the end nobody else publishes: make the stretch now, on the caller's thread. */
	if (range && c->end_ns && !c->running)
		publish_late(c);
	return true;
}

bool collector_show(struct collector *c, enum sample_mode mode)
{
	int was;

	if (!profiles_get(c->profiles, mode))
		return false;
	was = atomic_exchange_explicit(&c->shown, (int)mode, memory_order_relaxed);
	/* After the end nobody else publishes: make it now, on the caller's thread. */
	if (was != (int)mode && c->end_ns && !c->running)
		publish_late(c);
	return true;
}

enum sample_mode collector_shown(struct collector *c)
{
	return (enum sample_mode)atomic_load_explicit(&c->shown, memory_order_relaxed);
}

void collector_trace(struct collector *c, uint32_t func)
{
	uint32_t was = atomic_exchange_explicit(&c->traced_func, func, memory_order_relaxed);

	/* After the end nobody else publishes: count it now, on the caller's thread. */
	if (was != func && c->end_ns && !c->running)
		publish_late(c);
}

struct snapshot *collector_snapshots(struct collector *c, struct snapshot **range)
{
	publication_wait(c->publication, REQUEST_WAIT_NS);
	return publication_get(c->publication, range);
}

struct snapshot *collector_snapshot(struct collector *c)
{
	struct snapshot *range, *s = collector_snapshots(c, &range);

	snapshot_unref(range);
	return s;
}

struct snapshot *collector_newest(struct collector *c, struct snapshot **range)
{
	return publication_get(c->publication, range);
}

void collector_ask(struct collector *c)
{
	publication_request(c->publication);
}

int collector_published_fd(const struct collector *c)
{
	return c->published_fd;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	collector_finish(c);
	publication_free(c->publication);
	for (unsigned i = 0; i < c->nworkers; i++)
		worker_free(c, &c->workers[i]);
	free(c->workers);
	profiles_free(c->profiles);
	handoff_free(c->handoff);
	close(c->wake_fd);
	if (c->published_fd >= 0)
		close(c->published_fd);
	pthread_mutex_destroy(&c->late_lock);
	free(c);
}
