/* libFuzzer target: the tmon.out parser of `proftop report` on arbitrary bytes. The first byte
 * picks the options (which clock, -F, -T or -t, -l, -O); a file that parses is then printed as
 * dprofpp's table and turned into a snapshot, whose counts must add up. */
#include "proftop/snapshot.h"
#include "proftop/report.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_options o = { 0 };
	struct report *r = NULL;
	struct snapshot *s;
	char *message = NULL, *out = NULL;
	size_t n = 0;
	FILE *fp;

	if (size < 1)
		return 0;
	o.time = (enum report_time)(data[0] & 3);
	o.fake_exits = data[0] & 4;
	o.tree = data[0] & 8;
	o.compact_tree = data[0] & 16;
	o.by_calls = data[0] & 32;
	o.rows = data[0] & 64 ? -1 : 0;
	o.columns = data[0] & 128 ? 132 : 0;
	fp = open_memstream(&out, &n);
	if (!fp)
		abort();
	if (report_parse((const char *)data + 1, size - 1, &o, fp, &r, &message)) {
		/* Every error names its line. */
		if (!message || strncmp(message, "line ", 5) || r)
			abort();
		free(message);
		fclose(fp);
		free(out);
		return 0;
	}
	report_print(fp, r, &o);
	s = report_snapshot(r);
	if (s->nodes[s->merged_root].total != s->samples)
		abort();
	for (uint32_t f = 1; f < s->nfuncs; f++)
		if (s->func_self[f] > s->func_total[f] || s->func_total[f] > s->samples)
			abort();
	report_free(r);
	snapshot_unref(s); /* after the report: the snapshot owns its names */
	fclose(fp);
	free(out);
	return 0;
}
