/* exit_latency — how long proftop takes to start a command and to exit after the command ends.
 *
 *     exit_latency PROFTOP RUNS
 *
 * Runs `PROFTOP -b -n 0 -- exit_latency --child FILE` RUNS times. The child writes the monotonic
 * clock when its main() starts and just before it exits; the parent notes when it started proftop
 * and when waitpid() returned. Prints the medians of start (proftop started → command's main) and
 * exit (command's exit → proftop gone), and the same for the command run alone as the reference. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int child(const char *path)
{
	uint64_t start = now_ns();
	FILE *f = fopen(path, "w");

	if (!f)
		return 1;
	fprintf(f, "%llu %llu\n", (unsigned long long)start, (unsigned long long)now_ns());
	fclose(f);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return v[n / 2];
}

/* One run of argv; the command's start and exit times relative to the fork and the wait. */
static int run_once(char **argv, const char *path, double *start_ms, double *exit_ms)
{
	unsigned long long started, exiting;
	uint64_t t0 = now_ns(), t1;
	pid_t pid = fork();
	int status;
	FILE *f;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	t1 = now_ns();
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu %llu", &started, &exiting) != 2) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	unlink(path);
	*start_ms = (double)(started - t0) / 1e6;
	*exit_ms = (double)(t1 - exiting) / 1e6;
	return 0;
}

int main(int argc, char **argv)
{
	char self[4096], path[64];
	int runs;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(argv[2]);
	if (argc != 3 || readlink("/proc/self/exe", self, sizeof(self) - 1) < 0) {
		fprintf(stderr, "usage: exit_latency PROFTOP RUNS\n");
		return 2;
	}
	self[readlink("/proc/self/exe", self, sizeof(self) - 1)] = 0;
	runs = atoi(argv[2]);
	if (runs < 1 || runs > 1000)
		runs = 20;
	snprintf(path, sizeof(path), "/tmp/exit_latency.%d", (int)getpid());
	{
		char *alone[] = { self, "--child", path, NULL };
		char *profiled[] = { argv[1], "-b", "-n", "0", "--", self, "--child", path, NULL };
		char **cmds[2] = { alone, profiled };
		const char *names[2] = { "the command alone", "under proftop" };
		double *start = calloc((size_t)runs, sizeof(double));
		double *end = calloc((size_t)runs, sizeof(double));

		for (int c = 0; c < 2; c++) {
			for (int i = 0; i < runs; i++)
				if (run_once(cmds[c], path, &start[i], &end[i]) < 0) {
					fprintf(stderr, "exit_latency: run failed\n");
					return 1;
				}
			printf("  %-18s start %6.2f ms   exit %6.2f ms   (medians of %d runs)\n", names[c],
			       median(start, runs), median(end, runs), runs);
		}
		free(start);
		free(end);
	}
	return 0;
}
