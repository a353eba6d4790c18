// cxxthrow N REPORT — N C++ exceptions thrown and caught, with allocations around them, as a
// program under proftop --mode alloc must still throw them: at the speed of libgcc_s's unwinder
// (an allocation library that brings libunwind.so interposes its _Unwind_* functions, 13 to 25
// times slower). REPORT gets what the program can see (the exceptions caught, which object
// defines _Unwind_RaiseException, whether libunwind is mapped); stderr the CPU seconds the
// throwing took, for the test to compare with and without proftop.
#include <dlfcn.h>
#include <stdexcept>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <time.h>

__attribute__((noinline)) static void deep(int depth, int i)
{
	if (depth == 0)
		throw std::runtime_error("thrown " + std::to_string(i));
	deep(depth - 1, i);
	asm volatile("" ::: "memory");
}

static double cpu_seconds()
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[1]), caught = 0;
	FILE *report = fopen(argv[2], "w");
	Dl_info info;
	void *raise = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	char line[4096];
	int libunwind = 0;
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!report || !maps)
		return 3;
	while (fgets(line, sizeof(line), maps))
		libunwind |= strstr(line, "libunwind") != NULL;
	fclose(maps);
	const char *base = raise && dladdr(raise, &info) && info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
	fprintf(report, "_Unwind_RaiseException from %s\nlibunwind mapped: %s\n", base ? base + 1 : "?",
		libunwind ? "yes" : "no");
	double start = cpu_seconds();
	for (long i = 0; i < n; i++) {
		char *block = static_cast<char *>(malloc(200000));

		block[0] = 1;
		try {
			deep(8, (int)i);
		} catch (const std::exception &e) {
			caught += e.what()[0] == 't';
		}
		free(block);
	}
	fprintf(stderr, "cpu %.3f\n", cpu_seconds() - start);
	fprintf(report, "caught %ld of %ld\n", caught, n);
	fclose(report);
	return 0;
}
