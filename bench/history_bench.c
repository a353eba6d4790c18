/* history_bench.c — `history_bench [SECONDS]`: what the screen's history costs the collector.
 *
 * Random stacks of 16 functions, 4 to 13 deep (randtree's shape: nearly every sample a new
 * path), 1,000 samples a second for SECONDS (default 600) of profile time, into two profiles
 * under the default 24 MiB budget: one keeping a 600-second history, one keeping none. Prints
 * the time per sample added to each, then on the one with a history: the history's bytes, a
 * snapshot with its timeline and with the timeline following a function too (the screen does
 * one per refresh), and snapshots of the last 10 seconds (the window) and of the whole run
 * (medians of 21). Figures only. */
#include "proftop/profile.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include "bench_random.h"

#include <stdio.h>
#include <stdlib.h>

#define PER_SECOND 1000
#define REPEAT 21

/* Fill both profiles with the same seconds of samples, each sample added to one then the other
 * so that both see the same machine; the ns spent in profile_add() go to spent[0] and [1]. */
static void fill(struct profile *p[2], long seconds, uint64_t spent[2])
{
	uint32_t f[2][16], stack[13];
	char name[16];

	bench_rng = BENCH_RANDOM_SEED;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 16; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			f[k][i] = profile_func(p[k], "randtree", name, 0);
		}
	spent[0] = spent[1] = 0;
	for (long s = 0; s < seconds; s++) {
		for (int i = 0; i < PER_SECOND; i++) {
			size_t depth = 4 + next_random() % 10;
			uint32_t pick[13];

			for (size_t d = 0; d < depth; d++)
				pick[d] = next_random() % 16;
			for (int k = 0; k < 2; k++) {
				uint64_t t0;

				for (size_t d = 0; d < depth; d++)
					stack[d] = f[k][pick[d]];
				profile_set_time(p[k], (uint64_t)s * 1000000000u + (uint64_t)i * 1000000u);
				t0 = util_now_ns();
				profile_add(p[k], 1, 1, stack, depth);
				spent[k] += util_now_ns() - t0;
			}
		}
		/* A refresh a second, as the screen asks, so the pool works as it does there. */
		for (int k = 0; k < 2; k++)
			snapshot_unref(profile_snapshot(p[k]));
	}
}

/* The median ns of REPEAT snapshots made by make(p). */
static double median_us(struct profile *p, struct snapshot *(*make)(struct profile *))
{
	uint64_t t[REPEAT];

	for (int i = 0; i < REPEAT; i++) {
		uint64_t t0 = util_now_ns();

		snapshot_unref(make(p));
		t[i] = util_now_ns() - t0;
	}
	qsort(t, REPEAT, sizeof(*t), by_value);
	return (double)t[REPEAT / 2] / 1e3;
}

static long run_seconds;

static struct snapshot *last_ten(struct profile *p)
{
	return profile_range_snapshot(p, (uint64_t)run_seconds - 10, UINT64_MAX);
}

static struct snapshot *whole(struct profile *p)
{
	return profile_range_snapshot(p, 0, UINT64_MAX);
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? atol(argv[1]) : 600;
	struct profile *with = profile_new(NULL), *without = profile_new(NULL);
	struct profile *both[2] = { with, without };
	uint64_t spent[2];
	double plain, traced;

	run_seconds = seconds > 10 ? seconds : 10;
	profile_set_max_memory(with, 24u << 20);
	profile_set_max_memory(without, 24u << 20);
	profile_set_history(with, 600, 0);
	fill(both, run_seconds, spent);
	printf("%ld s at %d samples/s, randtree's shape, 24 MiB budget\n", run_seconds, PER_SECOND);
	printf("  adding a sample:       %.3f us with the history, %.3f us without (+%.1f %%)\n",
	       (double)spent[0] / 1e3 / (double)(run_seconds * PER_SECOND),
	       (double)spent[1] / 1e3 / (double)(run_seconds * PER_SECOND),
	       ((double)spent[0] / (double)spent[1] - 1) * 100);
	printf("  history:               %.1f MiB\n", (double)profile_history_memory(with) / 1048576);
	plain = median_us(with, profile_snapshot);
	profile_trace(with, 2); /* f1: on about half the stacks */
	traced = median_us(with, profile_snapshot);
	profile_trace(with, 0);
	printf("  snapshot + timeline:   %.1f us; following a function too: %.1f us\n", plain, traced);
	printf("  last 10 s snapshot:    %.1f us\n", median_us(with, last_ten));
	printf("  whole-run snapshot:    %.1f us\n", median_us(with, whole));
	profile_free(with);
	profile_free(without);
	return 0;
}
