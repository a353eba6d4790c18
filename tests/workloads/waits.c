/* waits.c — `waits [SECONDS]`: a thread that is off the CPU nearly all the time, for about
 * SECONDS (default 3) of wall time: in cycles of 10 ms it blocks 7 ms in read() on a pipe
 * (wait_on_pipe) and sleeps 3 ms in nanosleep() (take_a_nap). Another thread (feed_the_pipe),
 * asked through a second pipe, writes the byte read() waits for 7 ms after it was asked; it
 * waits too, so a test compares the reader's two waits with each other (70/30), not with the
 * whole profile.
 *
 * Both waits are timed from their own start, so a late wakeup (a loaded machine, a profiler's
 * overhead) lengthens both instead of eating into the nap; a late wakeup still moves the split a
 * little (1 ms late each: 8 to 4), so when done the reader prints the seconds it spent in each,
 * timed around them: "read R s nap N s". */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "burn.h"

#define READ_NS 7000000ull
#define NAP_NS 3000000ull

static int ask[2], answer[2];

static void sleep_for(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

HOT void wait_on_pipe(void)
{
	char byte;

	if (write(ask[1], "?", 1) != 1)
		return;
	while (read(answer[0], &byte, 1) < 0 && errno == EINTR)
		;
}

HOT void take_a_nap(void)
{
	sleep_for(NAP_NS);
}

/* Each question answered READ_NS later, until the reader closes its end. */
HOT void *feed_the_pipe(void *arg)
{
	char byte;

	(void)arg;
	while (read(ask[0], &byte, 1) == 1) {
		sleep_for(READ_NS);
		if (write(answer[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t total = workload_total_ns(argc, argv, "waits", 3.0), start, in_read = 0, in_nap = 0;
	pthread_t feeder;

	if (pipe(ask) || pipe(answer)) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&feeder, NULL, feed_the_pipe, NULL)) {
		fprintf(stderr, "waits: cannot start a thread\n");
		return 1;
	}
	start = monotonic_ns();
	while (monotonic_ns() - start < total) {
		uint64_t t0 = monotonic_ns(), t1;

		wait_on_pipe();
		t1 = monotonic_ns();
		take_a_nap();
		in_read += t1 - t0;
		in_nap += monotonic_ns() - t1;
	}
	close(ask[1]);
	pthread_join(feeder, NULL);
	printf("read %.3f s nap %.3f s\n", (double)in_read / 1e9, (double)in_nap / 1e9);
	return 0;
}
