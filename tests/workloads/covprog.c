/* covprog.c — coverage mode's proof (tests/integration/coverage.sh): lines with known execution
 * counts, one statement a line, built -O0 (covprog.flags). A branch taken 1000 of 3000 times, a
 * loop body run 12345 times, a function never called; then, with an argument, it sleeps that
 * many seconds in steps (so that proftop can be stopped mid-run) and prints a line each. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

void never_called(void)
{
	sink = -1;
}

long every_third(int n)
{
	long taken = 0;
	for (int i = 0; i < n; i++) {
		if (i % 3 == 0)
			taken++;
	}
	return taken;
}

void spin(int n)
{
	for (int j = 0; j < n; j++)
		sink += j;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 0;
	long taken = every_third(3000);
	spin(12345);
	if (argc > 5)
		never_called();
	printf("taken %ld sink %ld\n", taken, (long)sink);
	fflush(stdout);
	for (int s = 0; s < seconds * 10; s++) {
		usleep(100000);
		if (s % 10 == 9)
			printf("second %d\n", s / 10 + 1);
		fflush(stdout);
	}
	return 0;
}
