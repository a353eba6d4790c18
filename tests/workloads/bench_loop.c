/* bench_loop.c — `bench_loop [ITERATIONS]`: a fixed, deterministic amount of CPU work for the
 * overhead benchmark. It prints nothing; compare its run time alone and under proftop.
 *
 * The work is a three-deep chain of real calls (bench_outer -> bench_middle -> bench_inner) so
 * the profiler pays for unwinding a realistic stack on every sample. The default iteration count
 * runs for about 2 s on the 2-core development VM. With BENCH_REPORT set it prints its own wall
 * time on stderr, so a benchmark can leave the profiler's start-up and shutdown out. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa))
#endif

#define DEFAULT_ITERATIONS 1600000ull
#define INNER 1000 /* multiply-chain steps per bench_inner call */

volatile uint64_t sink;

HOT uint64_t bench_inner(uint64_t x)
{
	for (int i = 0; i < INNER; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

HOT uint64_t bench_middle(uint64_t x)
{
	x = bench_inner(x);
	return x ^ (x >> 29);
}

HOT uint64_t bench_outer(uint64_t x, uint64_t iterations)
{
	for (uint64_t i = 0; i < iterations; i++)
		x = bench_middle(x + i);
	return x;
}

int main(int argc, char **argv)
{
	uint64_t iterations = DEFAULT_ITERATIONS;

	if (argc > 1) {
		char *end;

		errno = 0;
		iterations = strtoull(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || argv[1][0] == '-') {
			fprintf(stderr, "usage: bench_loop [ITERATIONS]\n");
			return 2;
		}
	}
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	sink = bench_outer(1, iterations);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("BENCH_REPORT"))
		fprintf(stderr, "bench_loop %.6f\n",
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
