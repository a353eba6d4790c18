/* switches.c — `switches [SECONDS [RATE [PAIRS]]]`: context switches at a controlled rate, for
 * about SECONDS (default 3) of wall time: PAIRS (default 4) pairs of threads bounce a byte over
 * two pipes, each thread blocking in read() until the other writes, so that the whole program
 * switches about RATE (default 10000) times a second. Each pair's leader paces itself in ticks of
 * 10 ms: a tick's round trips (two switches each: each thread blocks once), then a sleep to the
 * next tick (one more switch); a late tick is not made up.
 *
 * Prints, when done, what the kernel counted for the whole process (getrusage(): every thread's
 * voluntary and involuntary switches) over the wall time, the figure a profiler's switch count
 * is compared with: "switches N in S s: R/s". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#include "burn.h"

#define TICK_NS 10000000ull
#define MAX_PAIRS 64

struct pair {
	int ping[2], pong[2];
	unsigned trips_per_tick;
	uint64_t until_ns;
	pthread_t leader, follower;
};

static void sleep_until(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Writes back every byte it reads, until the leader closes its pipe. */
HOT void *follow(void *arg)
{
	struct pair *p = arg;
	char byte;

	while (read(p->ping[0], &byte, 1) == 1)
		if (write(p->pong[1], &byte, 1) != 1)
			break;
	return NULL;
}

HOT void round_trip(struct pair *p)
{
	char byte = 'x';

	if (write(p->ping[1], &byte, 1) != 1 || read(p->pong[0], &byte, 1) != 1)
		_exit(1);
}

HOT void *lead(void *arg)
{
	struct pair *p = arg;
	uint64_t tick = monotonic_ns();

	while (tick < p->until_ns) {
		for (unsigned i = 0; i < p->trips_per_tick; i++)
			round_trip(p);
		tick += TICK_NS;
		if (monotonic_ns() < tick)
			sleep_until(tick);
		else
			tick = monotonic_ns(); /* late: the next tick starts now */
	}
	close(p->ping[1]);
	return NULL;
}

/* argv[i] as a number in [min, max], or exit 2. */
static double number(int argc, char **argv, int i, double def, double min, double max)
{
	char *end;
	double v;

	if (argc <= i)
		return def;
	errno = 0;
	v = strtod(argv[i], &end);
	if (errno || end == argv[i] || *end || !isfinite(v) || v < min || v > max) {
		fprintf(stderr, "usage: switches [SECONDS [RATE [PAIRS]]]\n");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static struct pair pairs[MAX_PAIRS];
	uint64_t total = workload_total_ns(argc > 2 ? 2 : argc, argv, "switches", 3.0), start;
	double rate = number(argc, argv, 2, 10000, 100, 1e6);
	unsigned npairs = (unsigned)number(argc, argv, 3, 4, 1, MAX_PAIRS);
	/* Per pair and tick: 2 switches a round trip, 1 for the sleep. */
	double per_tick = rate / npairs * (double)TICK_NS / 1e9;
	unsigned trips = per_tick > 3 ? (unsigned)((per_tick - 1) / 2 + 0.5) : 1;
	struct rusage ru;

	start = monotonic_ns();
	for (unsigned i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		p->trips_per_tick = trips;
		p->until_ns = start + total;
		if (pipe(p->ping) || pipe(p->pong)) {
			perror("pipe");
			return 1;
		}
		if (pthread_create(&p->follower, NULL, follow, p) ||
		    pthread_create(&p->leader, NULL, lead, p)) {
			fprintf(stderr, "switches: cannot start a thread\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < npairs; i++) {
		pthread_join(pairs[i].leader, NULL);
		pthread_join(pairs[i].follower, NULL);
	}
	getrusage(RUSAGE_SELF, &ru);
	double secs = (double)(monotonic_ns() - start) / 1e9;
	long n = ru.ru_nvcsw + ru.ru_nivcsw;

	printf("switches %ld in %.3f s: %.0f/s\n", n, secs, (double)n / secs);
	return 0;
}
