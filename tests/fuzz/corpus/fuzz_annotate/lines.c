/* lines.c — `lines [SECONDS]`: one function, two loops on two source lines, the first doing three
 * times the work of the second: about 75% of the function's samples are on the line marked
 * "hot line", 25% on the one marked "cold line" (the clock reads between them cost under 2%). The
 * tests find the lines by their marks. */
#include "burn.h"

#define CHUNK 20000

HOT void two_lines(uint64_t until_ns)
{
	uint64_t x = sink, y = sink + 1;

	while (thread_cpu_ns() < until_ns) {
		for (int i = 0; i < 3 * CHUNK; i++) { x = x * 6364136223846793005ull + 1; __asm__ volatile("" : "+r"(x)); } /* hot line */
		for (int i = 0; i < CHUNK; i++) { y = y * 2862933555777941757ull + 3; __asm__ volatile("" : "+r"(y)); } /* cold line */
	}
	sink = x + y;
}

int main(int argc, char **argv)
{
	two_lines(thread_cpu_ns() + workload_total_ns(argc, argv, "lines", 3.0));
	return 0;
}
