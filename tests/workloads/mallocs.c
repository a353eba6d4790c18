/* mallocs.c — `mallocs [SECONDS [fill]]`: a malloc-heavy program for --mode alloc's cost: four
 * threads each allocate blocks of 16 to 1024 bytes (random) and free them in a window of 64 live
 * ones, for about SECONDS (default 2) of wall time; with "fill", each block is written whole, as
 * programs use what they allocate (without, only its first byte: the allocator alone). Prints
 * the allocations per second, all threads, and the process's CPU time per allocation (what the
 * program itself spends: the time a reader of the allocation library's ring takes, or the
 * machine's other load, is not in it). */
#include "burn.h"

#include <pthread.h>
#include <string.h>

#define THREADS 4
#define WINDOW 64

static uint64_t deadline_ns;
static int fill;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

HOT static void *churn(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, n = 0;
	void *live[WINDOW] = { 0 };

	while (n % 4096 || now_ns() < deadline_ns) {
		unsigned k = (unsigned)(n % WINDOW);
		size_t size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = 16 + (size_t)(x % 1009);
		free(live[k]);
		live[k] = malloc(size);
		if (fill)
			memset(live[k], (int)n, size);
		*(volatile char *)live[k] = 1;
		n++;
	}
	for (unsigned k = 0; k < WINDOW; k++)
		free(live[k]);
	return (void *)(uintptr_t)n;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "mallocs", 2.0), start = now_ns(), n = 0;
	pthread_t t[THREADS];

	deadline_ns = start + total;
	fill = argc > 2 && !strcmp(argv[2], "fill");
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, (void *)(i + 1));
	for (int i = 0; i < THREADS; i++) {
		void *got;

		pthread_join(t[i], &got);
		n += (uint64_t)(uintptr_t)got;
	}
	printf("%.0f allocations/s\n", (double)n / ((double)(now_ns() - start) / 1e9));
	{
		struct timespec cpu;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		printf("%.1f ns of CPU per allocation\n",
		       ((double)cpu.tv_sec * 1e9 + (double)cpu.tv_nsec) / (double)n);
	}
	return 0;
}
