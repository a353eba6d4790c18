/* pingpong.c — `pingpong [SECONDS]`: two threads bounce a byte over two pipes for about SECONDS
 * (default 3) of wall time, each blocking in read() until the other writes: tens of thousands
 * of context switches a second. Prints the round trips per second when done, so a benchmark can
 * tell how much a profiler slows it down. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "burn.h"

static int ping[2], pong[2];
static atomic_bool done;

HOT void *bounce_back(void *arg)
{
	char byte;

	(void)arg;
	while (read(ping[0], &byte, 1) == 1)
		if (write(pong[1], &byte, 1) != 1)
			break;
	return NULL;
}

HOT uint64_t serve(uint64_t until_ns)
{
	uint64_t trips = 0;
	char byte = 'x';

	while (!atomic_load(&done) && monotonic_ns() < until_ns) {
		if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1)
			break;
		trips++;
	}
	return trips;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "pingpong", 3.0), start, trips;
	pthread_t other;

	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&other, NULL, bounce_back, NULL)) {
		fprintf(stderr, "pingpong: cannot start a thread\n");
		return 1;
	}
	start = monotonic_ns();
	trips = serve(start + total);
	close(ping[1]);
	pthread_join(other, NULL);
	printf("%.0f round trips/s\n", (double)trips * 1e9 / (double)(monotonic_ns() - start));
	return 0;
}
