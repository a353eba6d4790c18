/* spin.c — `spin [MAX_SECONDS]`: the target for attach tests. Prints its pid on the first line of
 * stdout, then spins in spin_forever until SIGTERM or SIGINT, and exits 0. Last it prints the
 * seconds it waited for a CPU while runnable, by the kernel's count ("waited 1.234567 s": the run
 * delay of /proc/self/schedstat), when the kernel keeps that count.
 *
 * MAX_SECONDS (wall time, default: none) is a safety net so a test harness that dies cannot leave
 * a spinner behind; on reaching it spin exits 3, so a test can tell it was not stopped in time. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa))
#endif

volatile uint64_t sink;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Returns 0 when stopped by a signal, -1 when the deadline passed first. */
HOT int spin_forever(double deadline)
{
	uint64_t x = sink;

	while (!stop) {
		for (int i = 0; i < 50000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
		if (deadline > 0 && monotonic_s() > deadline)
			break;
	}
	sink = x;
	return stop ? 0 : -1;
}

/* "waited S s": the time this thread spent runnable on a run queue, not running. */
static void print_waited(void)
{
	unsigned long long run_ns, wait_ns;
	FILE *f = fopen("/proc/self/schedstat", "r");

	if (f && fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2)
		printf("waited %.6f s\n", wait_ns / 1e9);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	double max = 0;
	int status;

	if (argc > 1) {
		char *end;

		errno = 0;
		max = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(max) || max <= 0) {
			fprintf(stderr, "usage: spin [MAX_SECONDS]\n");
			return 2;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("%ld\n", (long)getpid());
	fflush(stdout);
	status = spin_forever(max > 0 ? monotonic_s() + max : 0) == 0 ? 0 : 3;
	print_waited();
	return status;
}
