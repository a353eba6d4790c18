/* threads4.c — `threads4 [SECONDS]`: four threads, each spinning in its own function
 * (worker_one .. worker_four) for about SECONDS (default 3) of wall time; main only joins them.
 *
 * Each thread stops after the same budget of its own CPU time, SECONDS x min(cpus, 4) / 4, so the
 * four get exactly equal CPU even when they share fewer than four cores (on two cores each gets
 * about half a core and the run still lasts about SECONDS). Each thread is named after its function,
 * so a test can read what CPU each one got from /proc/PID/task. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "burn.h"

HOT void worker_one(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void worker_two(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 2862933555777941757ull, 3037000493ull);
}

HOT void worker_three(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 3935559000370003845ull, 2691343689449507681ull);
}

HOT void worker_four(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 3202034522624059733ull, 4354685564936845319ull);
}

struct job {
	const char *name;
	void (*fn)(uint64_t);
	uint64_t budget_ns;
};

static void *run(void *arg)
{
	struct job *job = arg;

	pthread_setname_np(pthread_self(), job->name);
	job->fn(job->budget_ns);
	return NULL;
}

static int usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return 1;
}

int main(int argc, char **argv)
{
	void (*fns[4])(uint64_t) = { worker_one, worker_two, worker_three, worker_four };
	const char *names[4] = { "worker_one", "worker_two", "worker_three", "worker_four" };
	struct job jobs[4];
	pthread_t tids[4];
	double secs = 3.0;
	int cpus = usable_cpus(), rc = 0;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: threads4 [SECONDS]\n");
			return 2;
		}
	}
	for (int i = 0; i < 4; i++) {
		jobs[i].name = names[i];
		jobs[i].fn = fns[i];
		jobs[i].budget_ns = (uint64_t)(secs * 1e9 * (cpus < 4 ? cpus : 4) / 4);
		if ((errno = pthread_create(&tids[i], NULL, run, &jobs[i]))) {
			perror("threads4: pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < 4; i++)
		if (pthread_join(tids[i], NULL))
			rc = 1;
	return rc;
}
