/* split.c — `split [SECONDS]`: one thread burns SECONDS (default 3) of CPU time, 60% in burn_a,
 * 30% in burn_b and 10% in burn_c.
 *
 * The burn is cut into cycles of thread CPU time, each split 60/30/10, so any window of a profile
 * shows the same split. Cycle lengths vary pseudo-randomly between 5 and 15 ms: with a fixed length
 * a sampling period that divides it (5 ms at -F 200) would hit the same phases of every cycle and
 * see a wrong split. Each burn ends at an absolute CPU-time deadline: overshooting one deadline
 * shortens the next burn instead of accumulating, so the split is exact whatever the CPU speed or
 * the load. The duration is CPU time too, so the sample count is SECONDS x frequency. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa (GCC) keeps each burn_* a real, separately named function: no inlining, no .constprop
 * clone and no identical-code folding of the three bodies into one symbol. */
#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa))
#endif

#define CYCLE_MIN_NS 5000000ull
#define CYCLE_SPREAD_NS 10000000ull
/* Iterations between clock reads: tens of microseconds of work, so the clock_gettime() syscall
 * costs under 2% and the samples land in the burn functions themselves. */
#define CHUNK 50000

volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Each body is a dependent multiply chain the compiler must keep (the empty asm claims to read and
 * change x); the constants differ so the three functions are not identical code. */
HOT void burn_a(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

HOT void burn_b(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 2862933555777941757ull + 3037000493ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

HOT void burn_c(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 3935559000370003845ull + 2691343689449507681ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

int main(int argc, char **argv)
{
	double secs = 3.0;
	uint64_t start, total, t = 0, rng = 88172645463325252ull;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: split [SECONDS]\n");
			return 2;
		}
	}
	total = (uint64_t)(secs * 1e9);
	start = thread_cpu_ns();
	while (t < total) {
		uint64_t cycle;

		rng ^= rng << 13; /* xorshift64: the same cycle lengths on every run */
		rng ^= rng >> 7;
		rng ^= rng << 17;
		cycle = CYCLE_MIN_NS + rng % CYCLE_SPREAD_NS;
		burn_a(start + t + cycle * 6 / 10);
		burn_b(start + t + cycle * 9 / 10);
		burn_c(start + t + cycle);
		t += cycle;
	}
	return 0;
}
