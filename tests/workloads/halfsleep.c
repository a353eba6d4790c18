/* halfsleep.c — `halfsleep [SECONDS]`: one thread, for about SECONDS (default 3) of wall time,
 * in cycles of 10 ms burns 5 ms of CPU (burn_half) and sleeps the other 5 ms (sleep_half): its
 * wall-clock time half on the CPU, half off it (less off it when other work delays its burning).
 * Prints the seconds it slept, timed around each sleep, when done. */
#include "burn.h"

#define CYCLE_NS 10000000ull

HOT void burn_half(uint64_t cpu_ns)
{
	burn_until(thread_cpu_ns() + cpu_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void sleep_half(uint64_t until_ns)
{
	struct timespec ts = { (time_t)(until_ns / 1000000000ull), (long)(until_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "halfsleep", 3.0), start = monotonic_ns();
	uint64_t slept = 0;

	for (uint64_t cycle = start; cycle < start + total; cycle += CYCLE_NS) {
		uint64_t t0;

		burn_half(CYCLE_NS / 2);
		t0 = monotonic_ns();
		sleep_half(cycle + CYCLE_NS);
		slept += monotonic_ns() - t0;
	}
	printf("slept %.3f s\n", (double)slept / 1e9);
	return 0;
}
