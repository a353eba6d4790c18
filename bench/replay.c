/* replay.c — `replay COMMAND [ARG...]`: the collector's throughput, measured apart from sampling.
 *
 * It profiles COMMAND at 999 Hz with DWARF stacks, keeping every raw record the sampler produced
 * (registers, stack copies, maps), then feeds them to fresh collectors on this thread — unwind,
 * symbols, profile — and prints samples per second of thread CPU time. The first replay loads
 * every module (cold); the next ones reuse nothing, so they measure the same path again, with
 * the page cache warm.
 *
 * Replays alternate between source lookups on (lines and inlined frames, the default) and off
 * (functions only), so both meet the same machine. Each collector gets the recording twice: the
 * first pass ("fresh") loads modules and opens their DWARF, the second ("warm") finds them, and
 * the addresses, in its caches, as a long run does. */
#include "proftop/collector.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/target.h"
#include "proftop/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPLAYS 7

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
	for (int i = 0; i < 2 * REPLAYS; i++) {
		bool lines = i % 2 == 0;
		struct collector *collector;

		if (collector_new(&collector, ring, NULL, &config, NULL))
			fatal("cannot make a collector");
		collector_set_source(collector, lines ? COLLECTOR_SOURCE_INLINE : COLLECTOR_SOURCE_OFF);
		for (int pass = 0; pass < 2; pass++) {
			uint64_t before = collector_samples(collector);
			double t0 = thread_cpu_seconds(), t;

			feed(collector, &rec);
			t = thread_cpu_seconds() - t0;
			printf("replay %d %s %s (%s): %llu samples in %.3f s of CPU: %.0f samples/s\n",
			       i / 2 + 1, lines ? "lines" : "nolines", pass ? "warm" : "fresh",
			       i < 2 ? "cold" : "page cache warm",
			       (unsigned long long)(collector_samples(collector) - before), t,
			       (double)(collector_samples(collector) - before) / t);
		}
		collector_free(collector);
	}
	sampler_free(sampler);
	target_free(target);
	ring_destroy(ring);
	free(rec.data);
	return 0;
}
