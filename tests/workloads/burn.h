/* burn.h — what the CPU-time workloads share: functions that keep their own frame and name,
 * the thread's CPU clock, work the compiler cannot remove, and the cycles that split a run into
 * exact shares.
 *
 * Shares are exact because each burn ends at an absolute CPU-time deadline: overshooting one
 * deadline shortens the next burn instead of accumulating, whatever the CPU speed or the load.
 * Cycle lengths vary pseudo-randomly between 5 and 15 ms: with a fixed length a sampling period
 * that divides it (5 ms at -F 200) would hit the same phases of every cycle. */
#ifndef WORKLOADS_BURN_H
#define WORKLOADS_BURN_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa (GCC): no inlining, no .constprop clone and no identical-code folding, so every HOT
 * function is a real, separately named frame. */
#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa))
#endif

#define CYCLE_MIN_NS 5000000ull
#define CYCLE_SPREAD_NS 10000000ull
/* Iterations between clock reads: tens of microseconds of work, so the clock_gettime() call
 * costs under 2% and the samples land in the burning functions themselves. */
#define BURN_CHUNK 50000

static volatile uint64_t sink;

/* The thread's CPU time in ns. This and burn_until() are macros, not inline functions: the
 * compiler's inlined copies of functions are frames of their own in DWARF (and in proftop and
 * `perf report --inline`), and these workloads want each HOT function to be the frame that
 * burns. inline.c is the workload for inlined frames. */
#define thread_cpu_ns()                                                                            \
	({                                                                                         \
		struct timespec ts_;                                                               \
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts_);                                      \
		(uint64_t)ts_.tv_sec * 1000000000ull + (uint64_t)ts_.tv_nsec;                      \
	})

/* CLOCK_MONOTONIC in ns: the wall-clock workloads' clock (a macro for the same reason). */
#define monotonic_ns()                                                                             \
	({                                                                                         \
		struct timespec mts_;                                                              \
		clock_gettime(CLOCK_MONOTONIC, &mts_);                                             \
		(uint64_t)mts_.tv_sec * 1000000000ull + (uint64_t)mts_.tv_nsec;                    \
	})

/* A dependent multiply chain (the empty asm reads and changes x) until the thread has used
 * until_ns of CPU time. Expanded in each HOT caller, whose own constants keep its body apart
 * from the others'. */
#define burn_until(until_ns, mul, inc)                                                             \
	do {                                                                                       \
		uint64_t until_ = (until_ns), x_ = sink;                                           \
		while (thread_cpu_ns() < until_)                                                   \
			for (int i_ = 0; i_ < BURN_CHUNK; i_++) {                                  \
				x_ = x_ * (mul) + (inc);                                           \
				__asm__ volatile("" : "+r"(x_));                                   \
			}                                                                          \
		sink = x_;                                                                         \
	} while (0)

/* The CPU seconds to run from argv[1] (default def), or exit 2 with a usage line. */
static inline uint64_t workload_total_ns(int argc, char **argv, const char *name, double def)
{
	double secs = def;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: %s [SECONDS]\n", name);
			exit(2);
		}
	}
	return (uint64_t)(secs * 1e9);
}

/* The next cycle's length: xorshift64, so the same lengths on every run. */
static inline uint64_t next_cycle_ns(uint64_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return CYCLE_MIN_NS + *rng % CYCLE_SPREAD_NS;
}

#define CYCLE_SEED 88172645463325252ull

#endif
