/* bench_random.h — what the benchmarks share: a fixed xorshift stream, so every run and every
 * profiler in one sees the same "random" stacks, and the comparison qsort() takes for medians. */
#ifndef PROFTOP_BENCH_RANDOM_H
#define PROFTOP_BENCH_RANDOM_H

#include <stdint.h>

#define BENCH_RANDOM_SEED 88172645463325252ull

static uint64_t bench_rng = BENCH_RANDOM_SEED;

static inline uint32_t next_random(void)
{
	bench_rng ^= bench_rng << 13;
	bench_rng ^= bench_rng >> 7;
	bench_rng ^= bench_rng << 17;
	return (uint32_t)bench_rng;
}

static inline int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
