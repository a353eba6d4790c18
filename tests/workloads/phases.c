/* phases.c — `phases [SECONDS] [signal]`: one thread burns SECONDS (default 2) of CPU time, the
 * first half in phase_one, the second half in phase_two. With "signal" it sends SIGUSR1 to its
 * parent after each phase (proftop, which launched it, then saves a snapshot: one of phase one,
 * a baseline for the next, of the whole run), waiting a little for each to be taken. */
#include "burn.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

HOT void phase_one(uint64_t until_ns)
{
	burn_until(until_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void phase_two(uint64_t until_ns)
{
	burn_until(until_ns, 2862933555777941757ull, 3037000493ull);
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc > 2 ? 2 : argc, argv, "phases", 2.0);
	uint64_t start = thread_cpu_ns();

	bool signal = argc > 2 && !strcmp(argv[2], "signal");

	phase_one(start + total / 2);
	if (signal && !kill(getppid(), SIGUSR1))
		usleep(300000);
	phase_two(start + total);
	if (signal && !kill(getppid(), SIGUSR1))
		usleep(300000);
	return 0;
}
