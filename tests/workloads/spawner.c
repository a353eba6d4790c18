/* spawner — threads created one after another while a profiler attaches, each of which later
 * burns a known amount of CPU and says how much it used.
 *
 *     spawner THREADS INTERVAL_US BURN_AT_MS BURN_MS
 *
 * The main thread creates THREADS threads, one every INTERVAL_US microseconds. From BURN_AT_MS
 * after the start they take turns (one at a time, so the profiler is not starved of CPU) to burn
 * BURN_MS of their own CPU time in spawned_burn(), print "TID CPU_NS" (the thread's CPU clock
 * when done) on standard output and sleep until the process is killed. A profiler that attaches
 * while the threads are being created must count each thread's samples once. */
#include "burn.h"

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t start_ns, burn_at_ns, burn_ns;
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t when)
{
	struct timespec ts = { (time_t)(when / 1000000000ull), (long)(when % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

HOT static void spawned_burn(void)
{
	burn_until(thread_cpu_ns() + burn_ns, 6364136223846793005ull, 1442695040888963407ull);
}

static void *thread_main(void *arg)
{
	(void)arg;
	sleep_until(start_ns + burn_at_ns);
	pthread_mutex_lock(&turn);
	spawned_burn();
	printf("%ld %llu\n", (long)syscall(SYS_gettid), (unsigned long long)thread_cpu_ns());
	fflush(stdout);
	pthread_mutex_unlock(&turn);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, interval_us;
	pthread_attr_t attr;

	if (argc != 5) {
		fprintf(stderr, "usage: spawner THREADS INTERVAL_US BURN_AT_MS BURN_MS\n");
		return 2;
	}
	threads = atol(argv[1]);
	interval_us = atol(argv[2]);
	burn_at_ns = (uint64_t)atol(argv[3]) * 1000000ull;
	burn_ns = (uint64_t)atol(argv[4]) * 1000000ull;
	start_ns = now_ns();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, thread_main, NULL)) {
			fprintf(stderr, "spawner: pthread_create: %s\n", strerror(errno));
			return 1;
		}
		sleep_until(start_ns + (uint64_t)(i + 1) * (uint64_t)interval_us * 1000ull);
	}
	for (;;)
		pause();
}
