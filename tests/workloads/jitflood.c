/* jitflood.c — `jitflood MODE [SECONDS] [decoy]`: a JIT whose perf map is made to cost a
 * profiler as much as it can. Like jit.c it runs a counting loop in anonymous executable memory
 * (jit_hot_loop, named in /tmp/perf-PID.map), busy an eighth of each 8 ms for SECONDS of wall
 * time (default 5); one call in ten goes to a copy of the loop the map does not name, so that a
 * profiler looks at the map again and again (a named address is named once and for all, an
 * unnamed one is looked up again). MODE says what the
 * map is meanwhile:
 *
 *   big     2 million more functions, written before the loop starts (about 55 MB)
 *   sparse  a 1 GiB file of nothing after the first line, its mtime touched every 20 ms
 *   grow    a million lines more each second, in batches of 10,000 every 10 ms, each a new
 *           function, from a thread of its own
 *
 * With `decoy`, the same bytes go to /tmp/jitflood-PID.decoy instead and the map holds only
 * the first line: the same work for the machine, nothing for a profiler to read; the reference a
 * test compares with. Both files are removed at the end, also on SIGTERM or SIGINT. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CYCLE_NS	8000000ull
#define GROW_BATCH	10000
#define GROW_EVERY_NS	10000000ull
#define TOUCH_EVERY_NS	20000000ull

static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The file the flood goes to: the map itself, or the decoy. */
static FILE *flood_file;
static int flood_fd;
static uint64_t flood_until;

static void *grow(void *arg)
{
	unsigned long next = 0x200000000ul;

	(void)arg;
	while (!stop && now_ns() < flood_until) {
		for (int i = 0; i < GROW_BATCH; i++, next += 16)
			fprintf(flood_file, "%lx 10 grown_%lu\n", next, next & 0xffff);
		fflush(flood_file);
		sleep_ns(GROW_EVERY_NS);
	}
	return NULL;
}

static void *touch(void *arg)
{
	(void)arg;
	while (!stop && now_ns() < flood_until) {
		futimens(flood_fd, NULL);
		sleep_ns(TOUCH_EVERY_NS);
	}
	return NULL;
}

static void big(void)
{
	for (long i = 0; i < 2000000 && !stop; i++)
		fprintf(flood_file, "%lx 10 big_%ld\n", 0x100000000l + 16 * i, i % 1000);
	fflush(flood_file);
}

int main(int argc, char **argv)
{
	/* mov rcx, 20000; 1: dec rcx; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0xb9, 0x20, 0x4e, 0, 0, 0, 0, 0, 0,
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	const char *mode = argc > 1 ? argv[1] : "";
	double secs = argc > 2 ? atof(argv[2]) : 5.0;
	int decoy = argc > 3 && !strcmp(argv[3], "decoy");
	char path[64], decoy_path[64];
	pthread_t thread;
	void (*hot)(void), (*unnamed)(void);
	unsigned long calls = 0;
	unsigned char *mem;
	FILE *map;
	uint64_t end;

	if (strcmp(mode, "big") && strcmp(mode, "sparse") && strcmp(mode, "grow")) {
		fprintf(stderr, "usage: jitflood big|sparse|grow [SECONDS] [decoy]\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	memcpy(mem + 2048, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(decoy_path, sizeof(decoy_path), "/tmp/jitflood-%d.decoy", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fflush(map);
	flood_file = decoy ? fopen(decoy_path, "w") : map;
	if (!flood_file)
		return 1;
	flood_fd = fileno(flood_file);
	end = now_ns() + (uint64_t)(secs * 1e9);
	flood_until = end;
	if (!strcmp(mode, "big"))
		big();
	else if (!strcmp(mode, "sparse") && ftruncate(flood_fd, 1l << 30))
		return 1;
	if ((!strcmp(mode, "grow") && pthread_create(&thread, NULL, grow, NULL)) ||
	    (!strcmp(mode, "sparse") && pthread_create(&thread, NULL, touch, NULL)))
		return 1;
	*(void **)&hot = mem;
	*(void **)&unnamed = mem + 2048;
	while (!stop && now_ns() < end) {
		uint64_t t0 = now_ns();

		while (now_ns() < t0 + CYCLE_NS / 8) {
			if (++calls % 10 == 0)
				unnamed();
			else
				hot();
		}
		sleep_ns(CYCLE_NS - CYCLE_NS / 8);
	}
	stop = 1;
	if (strcmp(mode, "big"))
		pthread_join(thread, NULL);
	unlink(path);
	unlink(decoy_path);
	return 0;
}
