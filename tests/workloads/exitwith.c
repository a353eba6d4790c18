/* exitwith.c — `exitwith CODE` burns about 0.2 s of CPU in busy, then exits with CODE;
 * `exitwith -SIG` burns the same, then kills itself with signal SIG (e.g. -9, -15). It checks that
 * a launcher reports the command's own exit status (128+SIG for a signal). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <unistd.h>

#include "burn.h"

HOT void busy(uint64_t budget_ns)
{
	burn_until(thread_cpu_ns() + budget_ns, 6364136223846793005ull, 1442695040888963407ull);
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
