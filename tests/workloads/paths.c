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
 * The timing is split.c's: cycles of thread CPU time, 5 to 15 ms long (pseudo-random, so no
 * sampling period can lock onto a phase), each split 60/30/10 by absolute CPU-time deadlines, so
 * the split is exact whatever the CPU speed or the load. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa (GCC): no inlining, cloning or identical-code folding, so each function keeps its frame
 * and its name. */
#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa))
#endif

#define CYCLE_MIN_NS 5000000ull
#define CYCLE_SPREAD_NS 10000000ull
#define CHUNK 50000 /* iterations between clock reads: the syscall costs under 2% */

volatile uint64_t sink;
/* Written after each call, so that call is not the function's last act: -O2 would otherwise turn
 * it into a jump (a sibling call) and the caller's frame would leave the stack before burn runs. */
volatile unsigned calls;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A dependent multiply chain the compiler must keep (the empty asm reads and changes x). */
HOT void burn(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

/* The same work as burn, with other constants so the two bodies differ. */
HOT void solo(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 3935559000370003845ull + 2691343689449507681ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
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
	double secs = 3.0;
	uint64_t start, total, t = 0, rng = 88172645463325252ull;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: paths [SECONDS]\n");
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
		path_a(start + t + cycle * 6 / 10);
		path_b(start + t + cycle * 9 / 10);
		solo(start + t + cycle);
		t += cycle;
	}
	return 0;
}
