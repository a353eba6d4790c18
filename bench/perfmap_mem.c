/* perfmap_mem.c — what a hostile JIT perf map costs proftop: peak memory and time to read
 * /tmp/perf-PID.map (this process's own) holding N entries, or one line of N MiB.
 *
 *   perfmap_mem entries N     N lines "START 10 jit_function_I", all starts and names distinct
 *   perfmap_mem starts N      the same with 1024 names between them (code compiled again elsewhere)
 *   perfmap_mem line MIB      one line whose name is MIB MiB long, then one ordinary line
 *
 * Prints the entries kept, the length of the long line's name, the seconds spent refreshing and
 * the peak RSS (getrusage). Figures only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proftop/perfmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

static int write_map(const char *path, const char *mode, long n)
{
	FILE *file = fopen(path, "w");

	if (!file)
		return -1;
	if (strcmp(mode, "line")) {
		long names = strcmp(mode, "starts") ? n : 1024;

		for (long i = 0; i < n; i++)
			fprintf(file, "%lx 10 jit_function_%ld\n", 0x10000000L + 16 * i, i % names);
	} else {
		fputs("1000 10 ", file);
		for (long i = 0; i < n << 20; i++)
			putc('x', file);
		fputs("\n2000 10 after_the_long_line\n", file);
	}
	return fclose(file);
}

int main(int argc, char **argv)
{
	struct strpool *pool;
	struct perfmap *map;
	struct rusage ru;
	char path[64];
	const char *name;
	uint64_t t0, t1;
	long n;

	if (argc != 3 || (strcmp(argv[1], "entries") && strcmp(argv[1], "starts") &&
			  strcmp(argv[1], "line"))) {
		fprintf(stderr, "usage: perfmap_mem entries N | starts N | line MIB\n");
		return 2;
	}
	n = atol(argv[2]);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (write_map(path, argv[1], n)) {
		perror(path);
		return 1;
	}
	pool = strpool_new();
	map = perfmap_new(pool);
	t0 = util_now_ns();
	/* A refresh reads a bounded amount; a refresh with nothing new costs one fstat. No deadline
	 * here (UINT64_MAX): what reading the whole map costs. */
	for (int i = 1; i <= 400; i++)
		perfmap_refresh(map, getpid(), (uint64_t)i * PERFMAP_RECHECK_NS, UINT64_MAX);
	t1 = util_now_ns();
	unlink(path);
	getrusage(RUSAGE_SELF, &ru);
	name = perfmap_lookup(map, 0x1000);
	printf("perfmap %s %ld: %zu entries (%zu lines skipped), %.2f s, peak RSS %.1f MiB",
	       argv[1], n, perfmap_count(map), perfmap_skipped(map), (double)(t1 - t0) / 1e9,
	       ru.ru_maxrss / 1024.0);
	if (!strcmp(argv[1], "line"))
		printf("; the long name kept as %zu bytes, the line after it %s", name ? strlen(name) : 0,
		       perfmap_lookup(map, 0x2000) ? "read" : "lost");
	putchar('\n');
	perfmap_free(map);
	strpool_free(pool);
	return 0;
}
