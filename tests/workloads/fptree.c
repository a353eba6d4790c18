/* fptree.c — `fptree [SECONDS]`: a known call tree, built with frame pointers (fptree.flags) so
 * `-g fp` sees whole stacks. For SECONDS of CPU time (default 3):
 *
 *     main → run → work_hot                70%
 *     main → run → helper → work_cold      30%
 *
 * Like split.c, the time is cut into short cycles of thread CPU time split 70/30, so any window of
 * the profile shows the same tree. */
#include "burn.h"

HOT void work_hot(uint64_t until_ns)
{
	burn_until(until_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void work_cold(uint64_t until_ns)
{
	burn_until(until_ns, 2862933555777941757ull, 1442695040888963407ull);
}

HOT void helper(uint64_t until_ns)
{
	work_cold(until_ns);
	__asm__ volatile("");
}

HOT void run(uint64_t total_ns)
{
	uint64_t start = thread_cpu_ns();

	for (uint64_t t = 0; t < total_ns; t += 10000000ull) {
		work_hot(start + t + 7000000ull);
		helper(start + t + 10000000ull);
	}
}

int main(int argc, char **argv)
{
	double secs = 3.0;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: fptree [SECONDS]\n");
			return 2;
		}
	}
	run((uint64_t)(secs * 1e9));
	return 0;
}
