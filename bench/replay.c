/* replay.c — `replay COMMAND [ARG...]`: the collector's throughput, measured apart from sampling.
 *
 * It profiles COMMAND at 999 Hz with DWARF stacks, keeping every raw record the sampler produced
 * (registers, stack copies, maps), then feeds them to fresh collectors on this thread — unwind,
 * symbols, profile — and prints samples per second of thread CPU time. The first replay loads
 * every module (cold); the next ones reuse nothing, so they measure the same path again, with
 * the page cache warm.
 *
 * Replays take turns between source lookups on (lines and inlined frames, the default), off
 * (functions only), and on with frames unwound by libunwind alone instead of by cached CFI rows
 * ("libunwind"), so all three meet the same machine. Each collector gets the recording twice: the
 * first pass ("fresh") loads modules and opens their DWARF, the second ("warm") finds them, and
 * the addresses, in its caches, as a long run does.
 *
 * Then the collector's threads (--collectors): the recording is put into a ring that holds it
 * many times over (at least THREADED_WARM_SAMPLES samples after the first copy), and collectors
 * of 1 and 2 workers (taking turns) read it on their own threads: the time from their start until
 * every worker read the first copy is "fresh", the rest "warm", in samples per second of
 * wall-clock time. Where the machine has fewer idle CPUs than workers, they share them.
 *
 * Last, the profiles of the recording unwound both ways are compared as folded stacks: the rows
 * must give the stacks libunwind gives. */
#include "proftop/collector.h"
#include "proftop/export.h"
#include "proftop/export_writers.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/target.h"
#include "proftop/util.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPLAYS 7
#define THREADED_ROUNDS 3
#define THREADED_WARM_SAMPLES 100000
#define THREADED_MAX_RING (1ull << 30)

enum kind { LINES, NOLINES, LIBUNWIND, NKINDS };
static const char *const kind_names[NKINDS] = { "lines", "nolines", "libunwind" };

struct recording {
	unsigned char *data;
	size_t len, cap;
	size_t records;
};

static void keep(struct recording *rec, struct ring *ring)
{
	const void *record;
	size_t len;

	while ((record = ring_peek(ring, &len))) {
		xgrow((void **)&rec->data, &rec->cap, rec->len + len + sizeof(len), 1);
		memcpy(rec->data + rec->len, &len, sizeof(len));
		memcpy(rec->data + rec->len + sizeof(len), record, len);
		rec->len += sizeof(len) + len;
		rec->records++;
		ring_release(ring);
	}
}

static void feed(struct collector *collector, const struct recording *rec)
{
	for (size_t off = 0; off < rec->len;) {
		size_t len;

		memcpy(&len, rec->data + off, sizeof(len));
		collector_process(collector, rec->data + off + sizeof(len), len);
		off += sizeof(len) + len;
	}
}

/* The recording's profile as folded stacks (malloc'd), unwound by rows or by libunwind alone. */
static char *folded(struct ring *ring, const struct sample_config *config,
		    const struct recording *rec, bool rules)
{
	struct collector *collector;
	struct export_scope scope;
	struct snapshot *snapshot;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (collector_new(&collector, ring, NULL, config, NULL))
		fatal("cannot make a collector");
	collector_set_unwind_rules(collector, rules);
	feed(collector, rec);
	collector_finish(collector);
	snapshot = collector_snapshot(collector);
	export_scope_merged(&scope, snapshot);
	out = open_memstream(&text, &len);
	if (!out || export_folded(out, snapshot, &scope) || fclose(out))
		fatal("cannot write folded stacks");
	snapshot_unref(snapshot);
	collector_free(collector);
	return text;
}

/* Stacks (folded lines) one way has that the other has not, or with another count. */
static size_t missing_from(const char *text, const char *other)
{
	size_t n = 0;

	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		bool found = false;

		for (const char *o = other; *o && !found;) {
			const char *oend = strchr(o, '\n');
			size_t olen = oend ? (size_t)(oend - o + 1) : strlen(o);

			found = olen == len && memcmp(o, line, len) == 0;
			o += olen;
		}
		n += !found;
		line += len;
	}
	return n;
}

/* The recording's CPU samples. */
static uint64_t samples_in(const struct recording *rec)
{
	uint64_t n = 0;

	for (size_t off = 0; off < rec->len;) {
		size_t len;
		struct perf_event_header h;

		memcpy(&len, rec->data + off, sizeof(len));
		memcpy(&h, rec->data + off + sizeof(len), sizeof(h));
		n += h.type == PERF_RECORD_SAMPLE;
		off += sizeof(len) + len;
	}
	return n;
}

static void put(struct ring *ring, const struct recording *rec)
{
	for (size_t off = 0; off < rec->len;) {
		size_t len;
		void *dst;

		memcpy(&len, rec->data + off, sizeof(len));
		dst = ring_reserve(ring, len);
		if (!dst)
			fatal("the threaded replay's ring is too small");
		memcpy(dst, rec->data + off + sizeof(len), len);
		ring_commit(ring);
		off += sizeof(len) + len;
	}
}

/* One threaded replay: the recording copies times, read by a collector of workers threads. */
static void threaded(const struct sample_config *base, const struct recording *rec, unsigned workers,
		     int round)
{
	struct sample_config config = *base;
	uint64_t samples = samples_in(rec), start, fresh_ns = 0, warm_ns;
	uint64_t copies = samples ? 1 + (THREADED_WARM_SAMPLES + samples - 1) / samples : 2;
	uint64_t size = 1, bytes = rec->len + rec->records * 8;
	struct collector *collector;
	struct ring *ring;
	size_t rest; /* bytes of the copies after the first */

	if (copies * bytes > THREADED_MAX_RING / 2)
		copies = THREADED_MAX_RING / 2 / bytes > 2 ? THREADED_MAX_RING / 2 / bytes : 2;
	while (size < copies * bytes + (1u << 20))
		size <<= 1;
	ring = ring_create_readers(size, workers);
	if (!ring)
		fatal("cannot make a ring of %llu bytes", (unsigned long long)size);
	put(ring, rec);
	rest = ring_used(ring);
	for (uint64_t i = 1; i < copies; i++)
		put(ring, rec);
	rest = ring_used(ring) - rest;
	config.collectors = workers;
	if (collector_new(&collector, ring, NULL, &config, NULL))
		fatal("cannot make a collector");
	start = util_now_ns();
	if (collector_start(collector, NULL, 0))
		fatal("cannot start a collector");
	if (write(collector_wake_fd(collector), &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		fatal("cannot wake the collector");
	for (size_t used; (used = ring_used(ring));) {
		if (!fresh_ns && used <= rest)
			fresh_ns = util_now_ns() - start;
		usleep(200);
	}
	if (!fresh_ns) /* both read between two looks: no telling them apart */
		fresh_ns = util_now_ns() - start;
	warm_ns = util_now_ns() - start - fresh_ns;
	if (!warm_ns)
		warm_ns = 1;
	collector_finish(collector);
	printf("replay threads %d: %u collector(s) fresh: %llu samples in %.3f s: %.0f samples/s\n",
	       round, workers, (unsigned long long)samples, fresh_ns / 1e9, samples * 1e9 / fresh_ns);
	printf("replay threads %d: %u collector(s) warm: %llu samples in %.3f s: %.0f samples/s\n",
	       round, workers, (unsigned long long)((copies - 1) * samples), warm_ns / 1e9,
	       (copies - 1) * samples * 1e9 / warm_ns);
	if (collector_samples(collector) != copies * samples)
		fatal("%u collectors counted %llu samples of %llu", workers,
		      (unsigned long long)collector_samples(collector),
		      (unsigned long long)(copies * samples));
	collector_free(collector);
	ring_destroy(ring);
}

static void compare(struct ring *ring, const struct sample_config *config,
		    const struct recording *rec)
{
	char *by_rules = folded(ring, config, rec, true);
	char *by_libunwind = folded(ring, config, rec, false);
	size_t stacks = 0;

	for (const char *p = by_libunwind; *p; p++)
		stacks += *p == '\n';
	printf("replay: stacks unwound by rows and by libunwind alone: %zu of %zu differ, %zu only "
	       "by rows\n", missing_from(by_libunwind, by_rules), stacks,
	       missing_from(by_rules, by_libunwind));
	free(by_rules);
	free(by_libunwind);
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sample_config config = { 999, false, CALLGRAPH_DWARF, 16384 };
	struct recording rec = { 0 };
	struct target *target;
	struct sampler *sampler;
	const pid_t *pids;
	size_t npids;
	struct ring *ring;
	const char *what;
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: replay COMMAND [ARG...]\n");
		return 2;
	}
	ring = ring_create(64u << 20);
	if (target_launch(&target, argv + 1, -1, NULL) < 0)
		fatal("cannot start %s", argv[1]);
	pids = target_pids(target, &npids);
	err = sampler_open(&sampler, &config, pids, npids, true, ring, NULL, &what);
	if (err)
		fatal("%s: %s", what, sampler_advice(err, what, &config, false));
	if (sampler_start(sampler, -1) < 0 || target_start(target))
		fatal("cannot run %s", argv[1]);
	while (!target_poll(target)) {
		keep(&rec, ring);
		usleep(5000);
	}
	sampler_stop(sampler);
	keep(&rec, ring);
	printf("replay: %zu records (%.1f MiB) from %s\n", rec.records,
	       (double)rec.len / (1 << 20), argv[1]);
	{
		struct counters c;

		sampler_counters(sampler, &c);
		printf("replay: sampler counters: samples %llu overflow %llu dropped %llu\n",
		       (unsigned long long)c.samples, (unsigned long long)c.overflow,
		       (unsigned long long)c.dropped);
	}
	for (int i = 0; i < NKINDS * REPLAYS; i++) {
		enum kind kind = (enum kind)(i % NKINDS);
		struct collector *collector;

		if (collector_new(&collector, ring, NULL, &config, NULL))
			fatal("cannot make a collector");
		collector_set_source(collector, kind == NOLINES ? COLLECTOR_SOURCE_OFF
								: COLLECTOR_SOURCE_INLINE);
		collector_set_unwind_rules(collector, kind != LIBUNWIND);
		for (int pass = 0; pass < 2; pass++) {
			uint64_t before = collector_samples(collector);
			double t0 = thread_cpu_seconds(), t;

			feed(collector, &rec);
			t = thread_cpu_seconds() - t0;
			printf("replay %d %s %s (%s): %llu samples in %.3f s of CPU: %.0f samples/s\n",
			       i / NKINDS + 1, kind_names[kind], pass ? "warm" : "fresh",
			       i < NKINDS ? "cold" : "page cache warm",
			       (unsigned long long)(collector_samples(collector) - before), t,
			       (double)(collector_samples(collector) - before) / t);
		}
		collector_free(collector);
	}
	for (int i = 0; i < 2 * THREADED_ROUNDS; i++)
		threaded(&config, &rec, 1 + (unsigned)(i % 2), i / 2 + 1);
	compare(ring, &config, &rec);
	sampler_free(sampler);
	target_free(target);
	ring_destroy(ring);
	free(rec.data);
	return 0;
}
