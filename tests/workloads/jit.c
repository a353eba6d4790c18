/* jit.c — `jit [SECONDS]`: a tiny JIT. It writes x86-64 code for a counting loop into anonymous
 * executable memory, describes it in /tmp/perf-PID.map (the format node --perf-basic-prof and
 * others write) as jit_hot_loop, and spends SECONDS of CPU time (default 1) calling it. The map
 * file is removed at exit. With JIT_MAP_UID set, the map file is given to that user, which a
 * profiler must not trust for this process; JIT_MAP_NAME names the code instead (a hostile name,
 * say, that a terminal would obey). With JIT_MAP_JUNK set, the map goes on after that line with
 * what no profiler should hold in memory: a line with a 16 MiB name, then 1.1 million functions
 * that are never called; and one call in ten then goes to a copy of the loop that the map does
 * not name, so that a profiler keeps going back to the map (a named address is named once and
 * for all; an unnamed one is looked up again), and reads it to its end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_junk(FILE *map)
{
	fputs("10000 10 ", map);
	for (long i = 0; i < 16l << 20; i++)
		putc('x', map);
	putc('\n', map);
	for (long i = 0; i < 1100000; i++)
		fprintf(map, "%lx 10 never_called_%ld\n", 0x100000000l + 16 * i, i % 100);
}

int main(int argc, char **argv)
{
	/* mov rcx, 200000; 1: dec rcx; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0xb9, 0x40, 0x0d, 0x03, 0, 0, 0, 0, 0,
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	char path[64];
	void (*hot)(void), (*unnamed)(void);
	unsigned char *mem;
	int junk = getenv("JIT_MAP_JUNK") != NULL;
	unsigned long calls = 0;
	FILE *map;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	memcpy(mem + 2048, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)mem, sizeof(code),
		getenv("JIT_MAP_NAME") ? getenv("JIT_MAP_NAME") : "jit_hot_loop");
	if (junk)
		write_junk(map);
	fclose(map);
	if (getenv("JIT_MAP_UID") && chown(path, (uid_t)atoi(getenv("JIT_MAP_UID")), (gid_t)-1))
		return 1;
	*(void **)&hot = mem;
	*(void **)&unnamed = mem + 2048;
	secs += thread_cpu_seconds();	/* SECONDS in the JIT code, after writing the map */
	while (thread_cpu_seconds() < secs) {
		if (junk && ++calls % 10 == 0)
			unnamed();
		else
			hot();
	}
	unlink(path);
	return 0;
}
