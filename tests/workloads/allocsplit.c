/* allocsplit.c — `allocsplit [fork]`: allocations of known sizes for --mode alloc.
 * alloc_seventy allocates 700 MB and alloc_thirty 300 MB, interleaved, in blocks of 16 to 8207
 * bytes, each written whole and freed at once; alloc_leak allocates 2000 blocks of 10000 bytes
 * and 20 of 4 MiB (103,886,080 bytes) it never frees; a SIGPROF handler (every millisecond of
 * CPU time, and over a last 0.1 s of CPU spent computing) allocates and frees 1 MiB blocks in
 * signal_alloc, when the signal did not stop
 * the program inside malloc or free (glibc's allocator is not async-signal-safe: the handler
 * would corrupt its heap, with or without proftop). With "fork", a child made first
 * execs "allocsplit child", whose child_alloc allocates 10 MB (freed), and is waited for.
 * Prints the bytes of each site. */
#include "burn.h"

#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB 1000000ull

#define LEAKS 2000
#define BIG_LEAKS 20
#define BIG (4u << 20)

char *leaks[LEAKS + BIG_LEAKS]; /* not static: the compiler may not take the leaks away */
static volatile sig_atomic_t signal_allocs, in_allocator;

HOT static void signal_alloc(void)
{
	char *p = malloc(1 << 20);

	if (p)
		p[0] = 1;
	free(p);
	signal_allocs++;
}

static void on_prof(int sig)
{
	(void)sig;
	if (!in_allocator)
		signal_alloc();
}

/* A block of size bytes, written whole and freed; a macro, so that each function is the caller
 * of malloc (a helper would be, inlined or not). */
#define USE_BLOCK(size)                                                                            \
	do {                                                                                       \
		char *p_;                                                                          \
                                                                                                   \
		in_allocator = 1;                                                                  \
		p_ = malloc(size);                                                                 \
		in_allocator = 0;                                                                  \
		memset(p_, 1, size);                                                               \
		__asm__ volatile("" : : "r"(p_) : "memory");                                       \
		in_allocator = 1;                                                                  \
		free(p_);                                                                          \
		in_allocator = 0;                                                                  \
	} while (0)

HOT static void alloc_seventy(size_t size)
{
	USE_BLOCK(size);
}

HOT static void alloc_thirty(size_t size)
{
	USE_BLOCK(size);
}

HOT static void alloc_leak(int i, size_t size)
{
	leaks[i] = malloc(size);
	leaks[i][0] = 1;
	__asm__ volatile("" : : "r"(leaks[i]) : "memory");
}

HOT static void child_alloc(void)
{
	for (uint64_t done = 0; done < 10 * MB; done += 1000) {
		char *p = malloc(1000);

		p[0] = 1;
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

int main(int argc, char **argv)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, seventy = 0, thirty = 0;
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } };
	pid_t child = -1;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		child_alloc();
		printf("child 10000000\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		child = fork();
		if (child == 0) {
			execl(argv[0], argv[0], "child", (char *)NULL);
			_exit(127);
		}
	}
	in_allocator = 1; /* printf, fork and exec allocate */
	signal(SIGPROF, on_prof);
	setitimer(ITIMER_PROF, &every, NULL);
	in_allocator = 0;
	/* 7 bytes to seventy for every 3 to thirty, block sizes drawn alike for both. */
	while (seventy < 700 * MB || thirty < 300 * MB) {
		size_t size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size = 16 + (size_t)(x % 8192);
		if (seventy * 3 <= thirty * 7 && seventy < 700 * MB) {
			alloc_seventy(size);
			seventy += size;
		} else {
			alloc_thirty(size);
			thirty += size;
		}
	}
	/* Work that allocates nothing, for the signals to come. */
	for (uint64_t start = thread_cpu_ns(); thread_cpu_ns() - start < 100000000ull;)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	in_allocator = 1;
	for (int i = 0; i < LEAKS + BIG_LEAKS; i++)
		alloc_leak(i, i < LEAKS ? 10000 : BIG);
	setitimer(ITIMER_PROF, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
	signal(SIGPROF, SIG_IGN);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (!x)
		puts("");
	printf("seventy %llu\nthirty %llu\nleak %llu\nsignal %d\n", (unsigned long long)seventy,
	       (unsigned long long)thirty, LEAKS * 10000ull + BIG_LEAKS * (unsigned long long)BIG,
	       (int)signal_allocs);
	return 0;
}
