/* covhot.c — coverage mode's cost (bench/run_coverage.sh): a hot loop over a few lines, ITERATIONS
 * times (argv[1]), timed by the program itself, which prints the seconds its loop took (proftop's
 * start and end are not the program's slowdown). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) static unsigned long step(unsigned long i)
{
	unsigned long x = i * 2654435761u;
	if (x & 1)
		x ^= x >> 7;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sink += step((unsigned long)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("loop %.6f s\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
