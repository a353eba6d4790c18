/* collector.h — the consumer of the sampler's ring: records → call stacks → symbols → profile.
 *
 * The collector owns the profiles; the unwinding (with the symbolizer and the unwinder) is
 * done by config->collectors workers: the collector thread itself when there is one, else that
 * many threads, each a reader of the ring (collector.c says who owns what and in which order
 * records are seen). It makes an immutable snapshot when a reader asks for one (and a final one
 * at the end); readers take a reference under a mutex that only the collector and the readers
 * use (never the sampler), so a slow reader delays nothing but its own frame. */
#ifndef PROFTOP_COLLECTOR_H
#define PROFTOP_COLLECTOR_H

#include "proftop/snapshot.h"
#include "proftop/sample.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct collector;
struct counters;
struct diag;
struct ring;
struct sampler;

/* The most workers (--collectors); -a's default is source_default_workers(). */
#define COLLECTOR_MAX_WORKERS 64

/* A collector of ring's records, reporting what goes wrong to diag. sampler may be NULL (a replay:
 * no counters). The ring has one reader per worker (config->collectors, 0 meaning 1); more than
 * one worker is refused (-EINVAL) in the allocation modes. Returns 0 or -errno. */
int collector_new(struct collector **out, struct ring *ring, struct sampler *sampler,
		  const struct sample_config *config, struct diag *diag);
void collector_free(struct collector *collector);
/* The eventfd the sampler signals when it pushed records. */
int collector_wake_fd(const struct collector *collector);
/* Before collector_start(): process pid, running exe (or about to exec it), is profiled by the
 * sources that follow processes from their start (coverage's probes). Returns 0 or -errno with
 * *message (malloc'd); a warning is reported. */
int collector_watch(struct collector *collector, pid_t pid, const char *exe, char **message);
/* Start the thread; processes already running (attach mode) have their maps read first. */
int collector_start(struct collector *collector, const pid_t *pids, size_t npids);
/* Call after sampler_stop(): consume everything left in the ring, publish a final snapshot and
 * end the thread. */
void collector_finish(struct collector *collector);
/* The target's CPU time so far (user, system ns), for the snapshots published from now on. Any
 * thread. */
void collector_set_cpu_times(struct collector *collector, uint64_t user_ns, uint64_t system_ns);
/* A snapshot made for this call (while the thread runs: it is asked for one, and waited for at
 * most half a second; else the final one), with a reference the caller drops with
 * snapshot_unref(). Never NULL. For readers that may wait (batch tables, HTTP requests); a
 * frame loop never does: collector_newest() and collector_ask(). */
struct snapshot *collector_snapshot(struct collector *collector);
/* The newest published, and its selected stretch's (NULL when none) into *range, with
 * references; no waiting. */
struct snapshot *collector_newest(struct collector *collector, struct snapshot **range);
/* Ask for the next publication, without waiting: collector_published_fd() is written when it
 * is there (and at every other publication; a non-blocking eventfd, -1 when none could be
 * made). */
void collector_ask(struct collector *collector);
int collector_published_fd(const struct collector *collector);

/* Nanoseconds since profiling began (to its end once it ended, *ended then true). Any thread. */
uint64_t collector_elapsed(struct collector *collector, bool *ended);
/* Whether collector_stretch() can make stretches of mode: it is one of this run's profiles,
 * with history kept, and not an in-use one (those are of now). Any thread. */
bool collector_keeps_stretches(const struct collector *collector, enum sample_mode mode);
/* A snapshot of the run's seconds [from_s, to_s) in mode (collector_elapsed()'s clock), made
 * for this call, with a reference for the caller. Any thread: while the collector thread runs
 * it makes it (the caller waits until it does), after that the caller does. NULL when
 * collector_keeps_stretches() says no. */
struct snapshot *collector_stretch(struct collector *collector, enum sample_mode mode,
				   uint64_t from_s, uint64_t to_s);

/* Process one ring record synchronously, as the thread would: for replaying recorded records
 * (benchmarks, tests) on a collector of one worker whose thread was never started. */
void collector_process(struct collector *collector, const void *record, size_t len);
/* Samples that reached the profile so far (same caveat). */
uint64_t collector_samples(const struct collector *collector);

/* Before collector_start(): keep the run's history, its newest seconds a second each
 * (profile_set_history(); 0, the default: none). */
void collector_set_history(struct collector *collector, unsigned seconds);
/* Before collector_start(): the memory budget (0: none) of what the collector holds that grows
 * with the run: the call trees (profile_set_max_memory()) take all of it but a
 * 1/COLLECTOR_SOURCES_SHARE part, which the DWARF the workers read for source lines and inlined
 * frames takes (symbolizer_trim_sources(): split between the workers, each reading its own). */
#define COLLECTOR_SOURCES_SHARE 4
void collector_set_max_memory(struct collector *collector, size_t bytes);
/* What the collector reads of each frame's source (DWARF, through module_source()). */
enum collector_source {
	COLLECTOR_SOURCE_INLINE,   /* lines, and inlined functions as frames of their own (default) */
	COLLECTOR_SOURCE_LINES,    /* lines only: inlined code counts in the function it is in */
	COLLECTOR_SOURCE_OFF,      /* functions only: no sites, no DWARF read */
};
/* Before collector_start(): when DEBUGINFOD_URLS names servers, fetch the debug files of modules
 * without symbols or DWARF from them in the background (fetch.h) and name their functions and
 * lines when they arrive. Returns whether it will. */
bool collector_use_debuginfod(struct collector *collector);
/* Before collector_start(): every snapshot's counters also get what count(arg, counters) adds,
 * called on the collector's thread (the OTLP pusher's). */
void collector_count_also(struct collector *collector,
			  void (*count)(void *arg, struct counters *counters), void *arg);
/* Before collector_start(): unwind by cached CFI rows where they can be (true, the default) or by
 * libunwind alone (unwinder_set_rules(); benchmarks and tests compare the two). */
void collector_set_unwind_rules(struct collector *collector, bool rules);
/* Before collector_start(). */
void collector_set_source(struct collector *collector, enum collector_source source);
/* Select a stretch of the run (NULL: none): while one is, each publication also makes a snapshot
 * of it. False, selecting nothing, when no history is kept. */
bool collector_select(struct collector *collector, const struct snapshot_range *range);
/* The function whose samples the timeline counts too (snapshot_span's traced; 0: none), from
 * the next publication on (at once once profiling ended). */
void collector_trace(struct collector *collector, uint32_t func);
/* Publish the profile of mode from now on (the next snapshot is of it). False: this run keeps
 * no such profile (a cpu run samples no context switches). */
bool collector_show(struct collector *collector, enum sample_mode mode);
enum sample_mode collector_shown(struct collector *collector);
/* Both from one publication, for one request: the selected stretch's snapshot (NULL when none)
 * into *range, the cumulative one made with it returned. */
struct snapshot *collector_snapshots(struct collector *collector, struct snapshot **range);

#endif
