/* forker.c — `forker [SECONDS]`: a parent and two forked children share the CPU 50/50 by function.
 *
 * The parent burns SECONDS (default 2) of CPU time in parent_work; each child burns SECONDS/2 in
 * child_work and exits. A profiler that follows forks and aggregates rows across processes shows
 * parent_work and child_work at 50% each, one row apiece. The parent exits 0 when both children
 * exited 0. */
#define _POSIX_C_SOURCE 200809L
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

HOT void parent_work(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 6364136223846793005ull, 1442695040888963407ull);
}

HOT void child_work(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 2862933555777941757ull, 3037000493ull);
}

int main(int argc, char **argv)
{
	double secs = 2.0;
	uint64_t budget;
	pid_t kids[2];
	int rc = 0;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: forker [SECONDS]\n");
			return 2;
		}
	}
	budget = (uint64_t)(secs * 1e9);
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("forker: fork");
			return 1;
		}
		if (kids[i] == 0) {
			child_work(budget / 2);
			_exit(0);
		}
	}
	parent_work(budget);
	for (int i = 0; i < 2; i++) {
		int status;

		while (waitpid(kids[i], &status, 0) < 0)
			if (errno != EINTR) {
				perror("forker: waitpid");
				return 1;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = 1;
	}
	return rc;
}
