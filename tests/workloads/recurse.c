/* recurse.c — `recurse [SECONDS]`: one thread burns SECONDS (default 3) of CPU time, 70% at the
 * bottom of a 60-frame recursion and 30% just under main:
 *
 *     main → recurse → recurse → ... (60 frames of recurse) → leaf    70%
 *     main → shallow                                                  30%
 *
 * A profiler must unwind all 64 frames (with _start and libc's two) to see main, and count
 * recurse once per sample in its total (70%, not 60 x 70%).
 *
 * The timing is split.c's: cycles of thread CPU time, 5 to 15 ms long, split 70/30 by absolute
 * CPU-time deadlines, so the split is exact whatever the CPU speed or the load. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa)) /* no inlining, cloning or folding: real frames, real names */
#endif

#define DEPTH 60
#define CYCLE_MIN_NS 5000000ull
#define CYCLE_SPREAD_NS 10000000ull
#define CHUNK 50000 /* iterations between clock reads: the syscall costs under 2% */

volatile uint64_t sink;
volatile unsigned frames; /* written after the recursive call: see recurse */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

HOT void leaf(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

HOT void shallow(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < CHUNK; i++) {
			x = x * 2862933555777941757ull + 3037000493ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
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
	double secs = 3.0;
	uint64_t start, total, t = 0, rng = 88172645463325252ull;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: recurse [SECONDS]\n");
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
		recurse(DEPTH, start + t + cycle * 7 / 10);
		shallow(start + t + cycle);
		t += cycle;
	}
	return 0;
}
