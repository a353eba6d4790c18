/* split.c — `split [SECONDS]`: one thread burns SECONDS (default 3) of CPU time, 60% in burn_a,
 * 30% in burn_b and 10% in burn_c.
 *
 * The burn is cut into cycles of thread CPU time, each split 60/30/10 (see burn.h), so any
 * window of a profile shows the same split. The duration is CPU time too, so the sample count is
 * SECONDS x frequency. */
#include "burn.h"

HOT void burn_a(uint64_t until_ns)
{
	burn_until(until_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void burn_b(uint64_t until_ns)
{
	burn_until(until_ns, 2862933555777941757ull, 3037000493ull);
}

HOT void burn_c(uint64_t until_ns)
{
	burn_until(until_ns, 3935559000370003845ull, 2691343689449507681ull);
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "split", 3.0), t = 0, rng = CYCLE_SEED;
	uint64_t start = thread_cpu_ns();

	while (t < total) {
		uint64_t cycle = next_cycle_ns(&rng);

		burn_a(start + t + cycle * 6 / 10);
		burn_b(start + t + cycle * 9 / 10);
		burn_c(start + t + cycle);
		t += cycle;
	}
	return 0;
}
