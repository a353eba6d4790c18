/* graceful.c — `graceful`: spins until SIGINT, then takes 0.3 s to "save" and exits 3, the way a
 * program with its own Ctrl-C handling does. SIGTERM keeps its default (death). */
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;
volatile uint64_t sink;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

__attribute__((noinline)) void graceful_spin(void)
{
	while (!interrupted)
		sink++;
}

int main(void)
{
	struct timespec saving = { 0, 300000000L };

	signal(SIGINT, on_sigint);
	graceful_spin();
	nanosleep(&saving, NULL);
	return 3;
}
