/* randtree.c — `randtree [SECONDS]`: 16 functions that call each other at random, 4 to 13 deep,
 * for SECONDS (default 3) of CPU time.
 *
 * Each call picks its callee and the chain's depth from a fixed-seed generator, so the number of
 * distinct call stacks keeps growing for as long as it runs (hundreds of thousands in a few
 * minutes at 999 Hz): the workload of proftop's long-run benchmark, where a profile that cost in
 * proportion to its size would show. Every function does a little work before and after its
 * call, so samples land in all of them and no call becomes a jump. */
#include "burn.h"

static uint64_t rng_state = CYCLE_SEED;

static unsigned next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)rng_state;
}

static void call_random(unsigned depth, unsigned until);

static inline __attribute__((always_inline)) void work(unsigned seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 150; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink += x;
}

#define RANDTREE_FUNC(n)                                        \
	HOT void f##n(unsigned depth, unsigned until)             \
	{                                                         \
		work(n);                                          \
		if (depth < until)                                \
			call_random(depth + 1, until);            \
		work(n + 16);                                     \
	}

RANDTREE_FUNC(0) RANDTREE_FUNC(1) RANDTREE_FUNC(2) RANDTREE_FUNC(3)
RANDTREE_FUNC(4) RANDTREE_FUNC(5) RANDTREE_FUNC(6) RANDTREE_FUNC(7)
RANDTREE_FUNC(8) RANDTREE_FUNC(9) RANDTREE_FUNC(10) RANDTREE_FUNC(11)
RANDTREE_FUNC(12) RANDTREE_FUNC(13) RANDTREE_FUNC(14) RANDTREE_FUNC(15)

static void (*const funcs[16])(unsigned, unsigned) = {
	f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15,
};

HOT static void call_random(unsigned depth, unsigned until)
{
	funcs[next_random() % 16](depth, until);
	sink++;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "randtree", 3.0);
	uint64_t start = thread_cpu_ns();

	while (thread_cpu_ns() - start < total)
		for (int i = 0; i < 100; i++)
			call_random(1, 4 + next_random() % 10);
	return 0;
}
