/* prefork.c — `prefork [MAX_SECONDS]`: a pre-forking server in miniature (PostgreSQL's postmaster
 * and its backends), the target of children.sh. The parent forks two workers, the first of which
 * forks a helper of its own, then prints "PID ready" (its pid) and waits, idle, for SIGTERM or
 * SIGINT. The workers burn CPU in worker_burn, the helper in helper_burn, until they are killed or
 * their parent is gone (PR_SET_PDEATHSIG). On the signal the parent kills its workers, reaps them
 * and exits 0. MAX_SECONDS (wall time, default 60) is a safety net: past it all of them exit, the
 * parent with status 3, so a test can tell it was not stopped in time. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

HOT void worker_burn(uint64_t deadline_ns)
{
	while (monotonic_ns() < deadline_ns)
		burn_until(thread_cpu_ns() + 10000000ull, 6364136223846793005ull,
			   1442695040888963407ull);
}

HOT void helper_burn(uint64_t deadline_ns)
{
	while (monotonic_ns() < deadline_ns)
		burn_until(thread_cpu_ns() + 10000000ull, 2862933555777941757ull, 3037000493ull);
}

/* A child that dies with its parent and burns in work until the deadline. */
static pid_t start(void (*work)(uint64_t), uint64_t deadline_ns, pid_t parent)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	work(deadline_ns);
	_exit(0);
}

/* The first worker starts its helper, then works. */
static void worker_with_helper(uint64_t deadline_ns)
{
	if (start(helper_burn, deadline_ns, getpid()) < 0)
		_exit(1);
	worker_burn(deadline_ns);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	double max = 60;
	uint64_t deadline;
	pid_t workers[2];

	if (argc > 1) {
		char *end;

		max = strtod(argv[1], &end);
		if (end == argv[1] || *end || !(max > 0) || max > 86400) {
			fprintf(stderr, "usage: prefork [MAX_SECONDS]\n");
			return 2;
		}
	}
	deadline = monotonic_ns() + (uint64_t)(max * 1e9);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	workers[0] = start(worker_with_helper, deadline, getpid());
	workers[1] = start(worker_burn, deadline, getpid());
	if (workers[0] < 0 || workers[1] < 0) {
		perror("prefork: fork");
		return 1;
	}
	printf("%d ready\n", (int)getpid());
	fflush(stdout);
	while (!stop && monotonic_ns() < deadline) {
		struct timespec ts = { 0, 50000000 };

		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 2; i++) {
		kill(workers[i], SIGKILL);
		waitpid(workers[i], NULL, 0);
	}
	return stop ? 0 : 3;
}
