/* mainexit.c — `mainexit [SECONDS]`: main starts a worker that spends SECONDS (default 3) of CPU
 * time in exit_work, then calls pthread_exit(): the process runs on with a zombie leader, and
 * a profiler must not take the main thread's exit for the process's. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;
static double seconds = 3;

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void exit_work(void)
{
	uint64_t x = sink;

	while (thread_cpu_seconds() < seconds)
		for (int i = 0; i < 100000; i++) {
			x = x * 2862933555777941757ull + 3037000493ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	exit_work();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&thread, NULL, worker, NULL))
		return 1;
	pthread_exit(NULL);
}
