/* recurse.c — `recurse [SECONDS]`: one thread burns SECONDS (default 3) of CPU time, 70% at the
 * bottom of a 60-frame recursion and 30% just under main:
 *
 *     main → recurse → recurse → ... (60 frames of recurse) → leaf    70%
 *     main → shallow                                                  30%
 *
 * A profiler must unwind all 64 frames (with _start and libc's two) to see main, and count
 * recurse once per sample in its total (70%, not 60 x 70%).
 *
 * The timing is split.c's: cycles of thread CPU time split 70/30 (see burn.h). */
#include "burn.h"

#define DEPTH 60

volatile unsigned frames; /* written after the recursive call: see recurse */

HOT void leaf(uint64_t until_ns)
{
	burn_until(until_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void shallow(uint64_t until_ns)
{
	burn_until(until_ns, 2862933555777941757ull, 3037000493ull);
}

/* recurse(n) is n frames of recurse above leaf. The volatile store after the call keeps it from
 * being a tail call, which GCC would turn into a loop (one frame) at -O2. */
HOT void recurse(int n, uint64_t until_ns)
{
	if (n <= 1)
		leaf(until_ns);
	else
		recurse(n - 1, until_ns);
	frames++;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "recurse", 3.0), t = 0, rng = CYCLE_SEED;
	uint64_t start = thread_cpu_ns();

	while (t < total) {
		uint64_t cycle = next_cycle_ns(&rng);

		recurse(DEPTH, start + t + cycle * 7 / 10);
		shallow(start + t + cycle);
		t += cycle;
	}
	return 0;
}
