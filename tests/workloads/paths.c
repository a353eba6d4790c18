/* paths.c — `paths [SECONDS]`: one thread burns SECONDS (default 3) of CPU time along three call
 * paths with known shares:
 *
 *     main → path_a → burn            60%
 *     main → path_b → mid_b → burn    30%
 *     main → solo                     10%
 *
 * burn is ONE function reached by two paths: its self share is 90%, and only the stacks tell how
 * that splits between path_a and path_b. path_a, path_b and mid_b do no work of their own, so
 * without a complete stack they vanish from the profile.
 *
 * The timing is split.c's: cycles of thread CPU time split 60/30/10 (see burn.h). */
#include "burn.h"

/* Written after each call, so that call is not the function's last act: -O2 would otherwise turn
 * it into a jump (a sibling call) and the caller's frame would leave the stack before burn runs. */
volatile unsigned calls;

HOT void burn(uint64_t until_ns)
{
	burn_until(until_ns, 6364136223846793005ull, 1442695040888963407ull);
}

/* The same work as burn, with other constants so the two bodies differ. */
HOT void solo(uint64_t until_ns)
{
	burn_until(until_ns, 3935559000370003845ull, 2691343689449507681ull);
}

HOT void path_a(uint64_t until_ns)
{
	burn(until_ns);
	calls++;
}

HOT void mid_b(uint64_t until_ns)
{
	burn(until_ns);
	calls++;
}

HOT void path_b(uint64_t until_ns)
{
	mid_b(until_ns);
	calls++;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "paths", 3.0), t = 0, rng = CYCLE_SEED;
	uint64_t start = thread_cpu_ns();

	while (t < total) {
		uint64_t cycle = next_cycle_ns(&rng);

		path_a(start + t + cycle * 6 / 10);
		path_b(start + t + cycle * 9 / 10);
		solo(start + t + cycle);
		t += cycle;
	}
	return 0;
}
