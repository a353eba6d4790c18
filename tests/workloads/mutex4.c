/* mutex4.c — `mutex4 [SECONDS]`: four threads (main and three it starts) contend on one mutex
 * for about SECONDS (default 3) of wall time: each in turn holds it while burning 1 ms of CPU
 * (hold_the_lock), so at any time one thread works and the others wait in pthread_mutex_lock()
 * called from contend(). */
#define _GNU_SOURCE
#include <pthread.h>

#include "burn.h"

#define HOLD_NS 1000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t start_ns, total_ns;

HOT void hold_the_lock(void)
{
	burn_until(thread_cpu_ns() + HOLD_NS, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void *contend(void *arg)
{
	(void)arg;
	while (monotonic_ns() - start_ns < total_ns) {
		pthread_mutex_lock(&lock);
		hold_the_lock();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[3];

	total_ns = workload_total_ns(argc, argv, "mutex4", 3.0);
	start_ns = monotonic_ns();
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&threads[i], NULL, contend, NULL)) {
			fprintf(stderr, "mutex4: cannot start a thread\n");
			return 1;
		}
	}
	contend(NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
