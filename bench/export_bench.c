/* export_bench DIR [SAMPLES] — how long writing one snapshot takes in each format, and the memory
 * it needs; then how long `proftop report` takes to read the tmon.out back.
 *
 * The profile is synthetic: SAMPLES (default one million) samples over 8 threads, drawn from a pool
 * of 200,000 call stacks 6 to 30 frames deep over 5,000 functions in 20 modules. Each stack is a
 * walk where a frame picks one of 4 successors of the frame above it, so stacks share prefixes
 * the way real ones do and the tree has several hundred thousand nodes. The draw is skewed (a few
 * stacks are hot), with a fixed seed, so every run profiles the same thing.
 *
 * Memory is the peak resident set while exporting (VmHWM, reset through /proc/self/clear_refs
 * before each format) less what was resident before it started. */
#include "proftop/export.h"
#include "proftop/profile.h"
#include "proftop/tmon_read.h"
#include "proftop/util.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL 200000
#define FUNCS 5000
#define MODULES 20
#define THREADS 8
#define MAX_DEPTH 30

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* VmRSS or VmHWM of this process, in KiB. */
static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Give free heap memory back (so what an export allocates shows as new resident pages), then
 * restart the peak from the current resident set. */
static void reset_peak(void)
{
	int fd;

	malloc_trim(0);
	fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "5", 1) < 0) {
			/* an old kernel: the peak then covers the whole run */
		}
		close(fd);
	}
}

static struct profile *synthetic(uint64_t samples)
{
	static char names[FUNCS][32], modules[MODULES][32];
	struct profile *p = profile_new(NULL);
	uint32_t ids[FUNCS], (*pool)[MAX_DEPTH] = malloc(sizeof(uint32_t[POOL][MAX_DEPTH]));
	uint8_t *depth = malloc(POOL);

	for (int m = 0; m < MODULES; m++)
		snprintf(modules[m], sizeof(modules[m]), "libmodule%02d.so", m);
	for (int f = 0; f < FUNCS; f++) {
		snprintf(names[f], sizeof(names[f]), "function_%04d", f);
		ids[f] = profile_func(p, modules[f % MODULES], names[f], 0);
	}
	for (int i = 0; i < POOL; i++) {
		uint32_t f = 0;

		depth[i] = (uint8_t)(6 + rng() % (MAX_DEPTH - 5));
		for (int d = 0; d < depth[i]; d++) {
			pool[i][d] = ids[f];
			f = (uint32_t)((f * 31 + 1 + rng() % 4) % FUNCS);
		}
	}
	for (uint64_t n = 0; n < samples; n++) {
		uint64_t r = rng();
		/* Skewed: the square of a uniform draw favours the pool's start. */
		uint64_t u = r % 65536, i = (u * u / 65536) * POOL / 65536;
		pid_t tid = (pid_t)(1000 + (r >> 32) % THREADS);

		profile_add(p, 1000, tid, pool[i], depth[i]);
	}
	free(pool);
	free(depth);
	return p;
}

/* The enter and exit marks of a tmon.out: its $total_marks. */
static unsigned long long tmon_marks(const char *path)
{
	unsigned long long marks = 0;
	char line[256];
	FILE *f = fopen(path, "re");

	while (f && fgets(line, sizeof(line), f) && sscanf(line, "$total_marks=%llu;", &marks) != 1)
		;
	if (f)
		fclose(f);
	return marks;
}

static double now_s(void)
{
	return (double)util_now_ns() / 1e9;
}

int main(int argc, char **argv)
{
	static const enum export_format formats[] = { EXPORT_TMON, EXPORT_CALLGRIND, EXPORT_FOLDED,
						      EXPORT_PPROF };
	static const char *const files[] = { "tmon.out", "callgrind.out", "bench.folded",
					     "bench.pb.gz" };
	uint64_t samples = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	struct profile *p;
	struct snapshot *s, *s2;
	struct tmon_read_options ro = { 0 };
	struct tmon *tm;
	char path[4096], *message;
	double t0;

	if (argc < 2) {
		fprintf(stderr, "usage: export_bench DIR [SAMPLES]\n");
		return 2;
	}
	t0 = now_s();
	p = synthetic(samples);
	s = profile_snapshot(p);
	s->freq = 999;
	s->elapsed_ns = samples * 1001001ull / THREADS;
	s->user_ns = samples * 1001001ull;
	printf("  profile: %llu samples, %zu threads, %zu functions, %zu tree nodes (built in %.2f s)\n",
	       (unsigned long long)s->samples, s->nthreads, s->nfuncs - 1, s->nnodes,
	       now_s() - t0);
	printf("  %-10s %9s %12s %14s\n", "format", "seconds", "file MiB", "peak +RSS MiB");
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct stat st;
		long before;

		snprintf(path, sizeof(path), "%s/%s", argv[1], files[i]);
		reset_peak();
		before = status_kib("VmRSS");
		t0 = now_s();
		if (export_write(s, NULL, path, formats[i], false, &message)) {
			fprintf(stderr, "export_bench: %s\n", message);
			return 1;
		}
		t0 = now_s() - t0;
		stat(path, &st);
		printf("  %-10s %9.3f %12.1f %14.1f\n", export_format_name(formats[i]), t0,
		       (double)st.st_size / 1048576.0, (double)(status_kib("VmHWM") - before) / 1024.0);
	}

	/* Reading the tmon.out back, as `proftop report` and `proftop -i` do. */
	snprintf(path, sizeof(path), "%s/tmon.out", argv[1]);
	reset_peak();
	t0 = now_s();
	if (tmon_read_file(path, &ro, NULL, &tm, &message)) {
		fprintf(stderr, "export_bench: %s\n", message);
		return 1;
	}
	t0 = now_s() - t0;
	printf("  report: read %llu marks in %.3f s", (unsigned long long)tmon_marks(path), t0);
	t0 = now_s();
	s2 = tmon_snapshot(tm);
	printf(", snapshot of %llu samples in %.3f s\n", (unsigned long long)s2->samples,
	       now_s() - t0);
	snapshot_unref(s2);
	tmon_free(tm);
	snapshot_unref(s);
	profile_free(p);
	return 0;
}
