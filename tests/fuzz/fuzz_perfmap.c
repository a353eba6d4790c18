/* libFuzzer target: the /tmp/perf-PID.map parser on arbitrary bytes, as a JIT in the middle of
 * writing would leave the file. The first byte picks where the input is cut in two (that many
 * 255ths of the way through), so the second part is parsed from the offset the first call
 * reported, as perfmap_refresh() does; then every entry is looked up again at its start and its
 * last byte. The seed long_line.map makes inputs long enough for lines past PERFMAP_NAME_MAX,
 * which are cut or skipped across the two calls. */
#include "proftop/perfmap.h"
#include "proftop/strpool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Whatever a line parses to must satisfy the entry's promises. */
static void check_line(const uint8_t *line, size_t len)
{
	struct perfmap_entry e;

	if (perfmap_parse_line((const char *)line, len, &e))
		return;
	if (!e.size || e.start + e.size < e.start || !e.name_len || e.name_len > PERFMAP_NAME_MAX ||
	    e.name_len + 3 < (e.cut ? PERFMAP_NAME_MAX : 0) ||
	    e.name < (const char *)line || e.name + e.name_len > (const char *)line + len ||
	    memchr(e.name, '\0', e.name_len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strpool *pool;
	struct perfmap *map;
	size_t cut, used;

	if (size < 1)
		return 0;
	data++;
	size--;
	cut = data[-1] * size / 255;
	for (size_t i = 0, start = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			check_line(data + start, i - start);
			start = i + 1;
		}
	}

	pool = strpool_new();
	map = perfmap_new(pool);
	used = perfmap_parse(map, (const char *)data, cut);
	if (used > cut)
		abort();
	used += perfmap_parse(map, (const char *)data + used, size - used);
	if (used > size)
		abort();
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t addr;
		const char *name;

		memcpy(&addr, data + i, 8);
		name = perfmap_lookup(map, addr);
		if (name && (!*name || strlen(name) > PERFMAP_NAME_MAX))
			abort();
	}
	perfmap_free(map);
	strpool_free(pool);
	return 0;
}
