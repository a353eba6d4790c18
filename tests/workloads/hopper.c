/* hopper.c — `hopper CPU`: moves itself to CPU, burns about 5 ms of CPU time in hop_burn and
 * exits. Run many times from a shell on another CPU, its exec and mmap records land in one
 * CPU's kernel buffer and its samples in another's: a profiler must order them by time. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void hop_burn(uint64_t until_ns)
{
	uint64_t x = sink;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < 10000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[1]), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	hop_burn(thread_cpu_ns() + 5000000ull);
	return 0;
}
