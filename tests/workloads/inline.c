/* inline.c — `inline [SECONDS]`: a static inline helper, step(), that the compiler inlines into
 * two callers: caller_a runs it for two thirds of the CPU time and caller_b for one third, in
 * cycles (burn.h). So `step (inlined)` has about all the samples, two thirds of them under
 * caller_a and one third under caller_b, and each caller's samples are on the line of its call
 * (marked "call a" and "call b"); step's own are on its line marked "step line". */
#include "burn.h"

static inline __attribute__((always_inline)) uint64_t step(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; __asm__ volatile("" : "+r"(x)); } /* step line */
	return x;
}

HOT void caller_a(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		x = step(x, BURN_CHUNK); /* call a */
	sink = x;
}

HOT void caller_b(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		x = step(x, BURN_CHUNK); /* call b */
	sink = x;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "inline", 3.0), rng = CYCLE_SEED;
	uint64_t start = thread_cpu_ns(), now = start;

	while (now - start < total) {
		uint64_t cycle = next_cycle_ns(&rng);

		caller_a(now + cycle * 2 / 3);
		caller_b(now + cycle);
		now += cycle;
	}
	return 0;
}
