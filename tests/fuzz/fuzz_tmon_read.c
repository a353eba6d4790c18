/* libFuzzer target: the tmon.out reader (tmon_read.c) on arbitrary bytes, and `proftop report`'s
 * printer on what it reads. The first byte picks the options (which clock, -F, -T or -t, -l, -O).
 * A file that fails names its line and leaves no result, only the trace of what was read before
 * (printed, as report prints it); a file that parses is printed as dprofpp's table and tree and
 * turned into a snapshot, whose counts must add up. The same bytes read from a file, a piece at a
 * time, must give the same result and the same error. What is printed holds no control byte but
 * the report's own line breaks and form feeds: the file's names are in visible form. */
#include "proftop/report.h"
#include "proftop/snapshot.h"
#include "proftop/tmon_read.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The snapshot of a file that parsed: every count within the total. */
static void check_snapshot(const struct tmon *tm)
{
	struct snapshot *s = tmon_snapshot(tm);

	if (s->nodes[s->merged_root].total != s->samples)
		abort();
	for (uint32_t f = 1; f < s->nfuncs; f++)
		if (s->func_self[f] > s->func_total[f] || s->func_total[f] > s->samples)
			abort();
	snapshot_unref(s);
}

/* Read the bytes as a file (a memfd) and compare with what reading them from memory gave. */
static void check_file(const uint8_t *data, size_t size, const struct tmon_read_options *o,
		       int want_err, const char *want_message)
{
	int fd = memfd_create("fuzz_tmon_read", MFD_CLOEXEC);
	char path[64], *message = NULL, *prefixed = NULL;
	struct tmon *tm = NULL;
	int err;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = tmon_read_file(path, o, NULL, &tm, &message);
	close(fd);
	if (err != want_err || (!err) != (tm != NULL))
		abort();
	if (err && (asprintf(&prefixed, "%s: %s", path, want_message) < 0 ||
		    strcmp(message, prefixed)))
		abort();
	free(prefixed);
	free(message);
	tmon_free(tm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_options o = { 0 };
	struct tmon_trace trace = { 0 };
	struct tmon *tm = NULL;
	char *message = NULL, *out = NULL;
	size_t n = 0;
	FILE *fp;
	int err;

	if (size < 1)
		return 0;
	o.read.clock = (enum tmon_clock)(data[0] & 3);
	o.read.fake_exits = data[0] & 4;
	o.tree = data[0] & 8;
	o.compact_tree = data[0] & 16;
	o.by_calls = data[0] & 32;
	o.rows = data[0] & 64 ? -1 : 0;
	o.columns = data[0] & 128 ? 132 : 0;
	fp = open_memstream(&out, &n);
	if (!fp)
		abort();
	err = tmon_read((const char *)data + 1, size - 1, &o.read,
			o.tree || o.compact_tree ? &trace : NULL, &tm, &message);
	report_print_tree(fp, &trace, &o);
	tmon_trace_free(&trace);
	check_file(data + 1, size - 1, &o.read, err, message);
	if (err) {
		/* Every error names its line. */
		if (!message || strncmp(message, "line ", 5) || tm)
			abort();
		free(message);
	} else {
		report_print(fp, tm, &o);
		check_snapshot(tm);
		tmon_free(tm);
	}
	fclose(fp);
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)out[i] < 0x20 && out[i] != '\n' && out[i] != '\f') || out[i] == 0x7f)
			abort();
	free(out);
	return 0;
}
