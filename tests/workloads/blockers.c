/* blockers.c — `blockers [SECONDS]`: a process whose threads wait nearly all the time, in the ways
 * servers wait, for about SECONDS (default 30) of wall time, for a profiler to attach to in the
 * middle:
 * - wait_on_pipe: read() of a pipe nobody writes to before the end;
 * - wait_on_cond: pthread_cond_wait() until the end;
 * - wait_on_mutex: pthread_mutex_lock() of a mutex the main thread holds until the end;
 * - wait_in_sleep: one nanosleep() of the whole time;
 * - keep_busy: 5 ms of CPU, then a 5 ms nanosleep(), over and over (runs and waits by turns);
 * - the main thread: nanosleep() until the end (wait_for_the_end).
 * First it prints its pid, then "tid TID FUNCTION" for each thread (the main one too) once all
 * are started; at the end it releases them, joins them and exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.h"

static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int the_end;
static uint64_t end_ns;

static void sleep_for(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void say_tid(const char *name)
{
	printf("tid %ld %s\n", (long)syscall(SYS_gettid), name);
}

HOT void *wait_on_pipe(void *arg)
{
	char byte;

	(void)arg;
	say_tid("wait_on_pipe");
	while (read(pipe_fds[0], &byte, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

HOT void *wait_on_cond(void *arg)
{
	(void)arg;
	say_tid("wait_on_cond");
	pthread_mutex_lock(&cond_lock);
	while (!the_end)
		pthread_cond_wait(&cond, &cond_lock);
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

HOT void *wait_on_mutex(void *arg)
{
	(void)arg;
	say_tid("wait_on_mutex");
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

HOT void *wait_in_sleep(void *arg)
{
	uint64_t now = monotonic_ns();

	(void)arg;
	say_tid("wait_in_sleep");
	if (now < end_ns)
		sleep_for(end_ns - now);
	return NULL;
}

HOT void *keep_busy(void *arg)
{
	(void)arg;
	say_tid("keep_busy");
	while (monotonic_ns() < end_ns) {
		burn_until(thread_cpu_ns() + 5000000ull, 2862933555777941757ull, 3037000493ull);
		sleep_for(5000000ull);
	}
	return NULL;
}

HOT void wait_for_the_end(void)
{
	uint64_t now = monotonic_ns();

	if (now < end_ns)
		sleep_for(end_ns - now);
}

int main(int argc, char **argv)
{
	void *(*const fns[])(void *) = { wait_on_pipe, wait_on_cond, wait_on_mutex, wait_in_sleep,
					keep_busy };
	pthread_t threads[sizeof(fns) / sizeof(fns[0])];
	size_t n = sizeof(fns) / sizeof(fns[0]);

	end_ns = monotonic_ns() + workload_total_ns(argc, argv, "blockers", 30.0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%d\n", (int)getpid());
	if (pipe(pipe_fds)) {
		perror("pipe");
		return 1;
	}
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, fns[i], NULL)) {
			fprintf(stderr, "blockers: cannot start a thread\n");
			return 1;
		}
	say_tid("wait_for_the_end");
	wait_for_the_end();
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&cond_lock);
	the_end = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&cond_lock);
	if (write(pipe_fds[1], "x", 1) != 1)
		return 1;
	for (size_t i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
