/* qsortcb.c — `qsortcb [SECONDS]`: the hot loop runs inside a shared library and calls back into
 * the program. One thread sorts an array of 20,000 keys with libc's qsort again and again, for
 * SECONDS (default 3) of CPU time; the comparator hashes both keys before comparing them, so most
 * of the time is its own:
 *
 *     main → sort_once → qsort (libc.so.6: qsort_r, msort_with_tmp ...) → compare
 *
 * The unwinder must go from the program into libc (whose code has no frame pointers) and back out
 * to the program's sort_once and main. glibc 2.36's qsort is a merge sort (msort_with_tmp, which
 * recurses about log2(n) = 15 deep) into a malloc'ed buffer; 80 KB stays under malloc's mmap
 * threshold, so no system call shows up in the loop. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa)) /* no inlining, cloning or folding: real frames, real names */
#endif

#define N 20000

static uint32_t keys[N];
volatile uint32_t sink;
volatile unsigned sorts; /* written after qsort returns, so that call is not a tail call */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A few rounds of multiply-xorshift: enough work that compare, not the merge loop, holds most of
 * the self time. A macro, so that the work is compare's own code, not an inlined function (which
 * DWARF, proftop and perf report --inline show as a frame of its own). */
#define mix(v)                                                                                     \
	({                                                                                         \
		uint64_t x_ = (v);                                                                 \
		for (int i_ = 0; i_ < 4; i_++) {                                                   \
			x_ ^= x_ >> 31;                                                            \
			x_ *= 0x9e3779b97f4a7c15ull;                                               \
		}                                                                                  \
		x_ ^ (x_ >> 29);                                                                   \
	})

HOT int compare(const void *pa, const void *pb)
{
	uint64_t a = mix(*(const uint32_t *)pa), b = mix(*(const uint32_t *)pb);

	return (a > b) - (a < b);
}

HOT void sort_once(uint64_t *rng)
{
	for (int i = 0; i < N; i++) {
		*rng ^= *rng << 13; /* xorshift64: the same arrays on every run */
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		keys[i] = (uint32_t)*rng;
	}
	qsort(keys, N, sizeof(keys[0]), compare);
	sorts++;
}

int main(int argc, char **argv)
{
	double secs = 3.0;
	uint64_t until, rng = 88172645463325252ull;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !isfinite(secs) || secs <= 0 || secs > 86400) {
			fprintf(stderr, "usage: qsortcb [SECONDS]\n");
			return 2;
		}
	}
	until = thread_cpu_ns() + (uint64_t)(secs * 1e9);
	while (thread_cpu_ns() < until)
		sort_once(&rng);
	sink = keys[N / 2];
	return 0;
}
