/* exitwith.c — `exitwith CODE` burns about 0.2 s of CPU in busy, then exits with CODE;
 * `exitwith -SIG` burns the same, then kills itself with signal SIG (e.g. -9, -15). It checks that
 * a launcher reports the command's own exit status (128+SIG for a signal). */
#define _POSIX_C_SOURCE 200809L
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

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

HOT void busy(uint64_t budget_ns)
{
	uint64_t x = sink, until = thread_cpu_ns() + budget_ns;

	while (thread_cpu_ns() < until)
		for (int i = 0; i < 50000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	sink = x;
}

/* Die by sig with its default action, whatever the inherited disposition and mask. */
static void die_by(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), sig);
	_exit(128 + sig); /* only for a signal whose default action is to ignore */
}

int main(int argc, char **argv)
{
	char *end;
	long code;

	if (argc != 2)
		goto usage;
	code = strtol(argv[1], &end, 10);
	if (end == argv[1] || *end)
		goto usage;
	if (argv[1][0] == '-' ? code >= 0 || -code > SIGRTMAX : code > 255)
		goto usage;
	busy(200000000ull);
	if (code < 0)
		die_by((int)-code);
	return (int)code;
usage:
	fprintf(stderr, "usage: exitwith CODE | exitwith -SIGNAL\n");
	return 2;
}
