/* dlopener.c — `dlopener [SECONDS]`: loads libm.so.6 with dlopen() after starting (so only the
 * kernel's MMAP2 record tells a profiler it is there), spends SECONDS of CPU time (default 1)
 * calling its cos() through a pointer, then dlclose()s it and exits. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, acc = 0, x = 0.5;
	double (*cosine)(double);
	void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);

	if (!libm) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	*(void **)&cosine = dlsym(libm, "cos");
	if (!cosine)
		return 1;
	while (thread_cpu_seconds() < secs)
		for (int i = 0; i < 10000; i++) {
			acc += cosine(x);
			x += 1e-7;
		}
	dlclose(libm);
	return acc == 12345.0; /* keep acc alive */
}
