/* source.h — a source of profile data: one kind of record the sampler delivers, turned into
 * counts on call stacks in some of the run's profiles.
 *
 * The collector (collector.c) knows no kind of data: it opens the sources a run's config asks
 * for (source_table), gives each worker one state per source, shows every record to every
 * source of every worker (each takes its share, source_env_owns()), and asks the sources what
 * a snapshot of their profiles is. What a source needs opened by the sampler (perf events,
 * switch records, the allocation library's ring) is in sample_attr_for() and sampler.c, chosen by
 * the same config.
 *
 * A new kind of data: a source_X.c with its `const struct source source_X`, a line in
 * source_table (source.c), its kinds of profile in sample.h's enum and sample.c's table (their
 * names, units and what they measure, which the frontends show), and what it needs opened in
 * sample.c/sampler.c. */
#ifndef PROFTOP_SOURCE_H
#define PROFTOP_SOURCE_H

#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct profiles;
struct resolver;
struct snapshot;
struct diag;

/* A worker's, handed to its sources' states (which keep the pointer: it stays put). */
struct source_env {
	struct profiles *profiles;  /* the run's, shared by every worker */
	struct resolver *resolver;  /* the worker's own */
	const struct sample_config *config;
	struct diag *diag;         /* the run's warnings */
	uint64_t sample_type, regs_mask; /* to parse records (sample_parse()) */
	unsigned index, nworkers;
	bool sites;                /* the profiles count sites (source lines are read) */
	uint64_t record_ns;        /* when the record being handled was read */
	uint64_t start_ns;         /* the run's start (moves once, at collector_start()) */
};

/* Is the record of thread (or process) id this worker's share? A thread's records all go to
 * one worker. */
static inline bool source_env_owns(const struct source_env *env, uint32_t id)
{
	return id % env->nworkers == env->index;
}

struct source {
	const char *name;
	/* The kinds of profile it adds to (PROFILES_MODE() bits), of those the ones it owns (their
	 * snapshots are its), and of those the ones made again at each publication. */
	uint32_t feeds, owns, rebuilt;
	/* Its records must be read in order by one worker (--collectors above 1 is refused). */
	bool one_worker;
	/* Whether a run of config has it. */
	bool (*in_run)(const struct sample_config *config);
	void *(*worker_new)(struct source_env *env);
	void (*worker_free)(void *state);
	/* A record every worker reads, in ring order: true when it was of this source (handled,
	 * or another worker's share), so that no other source looks at it. */
	bool (*record)(void *state, const void *data, size_t len);
	/* Optional: thread tid exited (its worker's share only). */
	void (*thread_exited)(void *state, pid_t tid);
	/* Optional: the end of a worker's round (the samples it holds go to the profiles). */
	void (*flush)(void *state);
	/* Optional, with the profiles locked: a publication at now_ns (ended: the run's end). */
	void (*publishing)(void *const *states, unsigned nworkers, uint64_t now_ns, bool ended);
	/* Optional, with the profiles locked: the snapshot of its kind shown (its siblings with it),
	 * traced counting on the timeline; stamp() fills what the collector knows. NULL: the
	 * profile's own snapshot. */
	struct snapshot *(*snapshot)(void *const *states, unsigned nworkers, enum sample_mode shown,
				     uint32_t traced, uint64_t now_ns,
				     void (*stamp)(void *arg, struct snapshot *s), void *arg);
	/* Optional: what it knows of a snapshot of one of its kinds (counters, unit of freq). */
	void (*stamp)(void *const *states, unsigned nworkers, struct snapshot *s);
	/* Optional, before the collector starts: process pid, whose executable is exe, is
	 * profiled from now on (the command before its exec; each of -p's). Returns 0 or -errno
	 * with *message (malloc'd). */
	int (*watch)(void *const *states, pid_t pid, const char *exe, char **message);
};

/* The run's sources (in source_table's order) and their states, one per worker each. */
#define SOURCE_MAX 8
#define SOURCE_MAX_WORKERS 64
struct source_set {
	const struct source *sources[SOURCE_MAX];
	void *states[SOURCE_MAX][SOURCE_MAX_WORKERS];
	size_t n;
	unsigned nworkers;
};

/* Whether a run of config can have nworkers workers (a source whose records need one worker,
 * the allocations' or coverage's, says no to more). */
bool source_workers_allowed(const struct sample_config *config, unsigned nworkers);
/* -a's default number of workers when proftop may run on cpus CPUs: one per this many CPUs, up
 * to a cap. */
#define SOURCE_CPUS_PER_WORKER 16
#define SOURCE_DEFAULT_MAX_WORKERS 8
unsigned source_default_workers(long cpus);
/* Process pid (running exe, or about to exec it) given to the set's sources that watch
 * processes (source.watch), their warnings reported to diag. Returns 0 or the first -errno,
 * with *message (malloc'd). */
int source_set_watch(const struct source_set *set, pid_t pid, const char *exe, struct diag *diag,
		     char **message);
/* The source of the set that owns the kind mode, its index into *at; NULL: none. */
const struct source *source_set_owner(const struct source_set *set, enum sample_mode mode,
				      size_t *at);

extern const struct source source_cpu, source_switches, source_alloc, source_coverage;

/* The sources, NULL-terminated. */
extern const struct source *const source_table[];

#endif
