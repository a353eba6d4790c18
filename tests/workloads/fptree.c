/* fptree.c — `fptree [SECONDS]`: a known call tree, built with frame pointers (fptree.flags) so
 * `-g fp` sees whole stacks. For SECONDS of CPU time (default 3):
 *
 *     main → run → work_hot                70%
 *     main → run → helper → work_cold      30%
 *
 * Like split.c, the time is cut into short cycles of thread CPU time split 70/30, so any window of
 * the profile shows the same tree. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t until_ns, uint64_t mul)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < 20000; i++) {
			x = x * mul + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

KEEP void work_hot(uint64_t until_ns)
{
	spin_until(until_ns, 6364136223846793005ull);
}

KEEP void work_cold(uint64_t until_ns)
{
	spin_until(until_ns, 2862933555777941757ull);
}

KEEP void helper(uint64_t until_ns)
{
	work_cold(until_ns);
	__asm__ volatile("");
}

KEEP void run(uint64_t total_ns)
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
