/* libFuzzer target: the /tmp/perf-PID.map parser on arbitrary bytes, as a JIT in the middle of
 * writing would leave the file. The first byte picks where the input is cut in two (that many
 * 255ths of the way through), so the second part is parsed from the offset the first call
 * reported, as perfmap_refresh() does; then the whole input is parsed once more, as a file
 * written again would be (every start replaced, in a merge of its own). Every entry is looked up
 * at its start and its last byte, and so is every 8 bytes of the input read as an address.
 *
 * When no line is longer than PERFMAP_LINE_MAX, the lookups are checked against a model that
 * parses the same slices line by line with perfmap_parse_line() and keeps the last entry of each
 * start: the map must name what it names (the sorting and merging of parts read at different
 * times must lose nothing, and keep the later line). The seed long_line.map makes inputs long
 * enough for lines past PERFMAP_NAME_MAX, which are cut or skipped across the calls.
 *
 * Each line is also offered as the path of a mapping (perfmap_offer_dump()): the map must take
 * the first absolute one of under 256 bytes whose last component is "jit-N.dump" (N 1 to 9
 * digits, not 0), and no other. */
#include "proftop/perfmap.h"
#include "proftop/strpool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct model {
	struct perfmap_entry *v;
	size_t n, cap;
};

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

/* The model reads one line: it replaces the entry of its start, or is added. */
static void model_line(struct model *m, const char *line, size_t len)
{
	struct perfmap_entry e;

	if (perfmap_parse_line(line, len, &e))
		return;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].start == e.start) {
			m->v[i] = e;
			return;
		}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		if (!m->v)
			abort();
	}
	m->v[m->n++] = e;
}

/* What perfmap_parse() reads of buf: its lines, the unterminated last one too. Returns the bytes
 * up to the last newline. */
static size_t model_parse(struct model *m, const char *buf, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n') {
			model_line(m, buf + start, i - start);
			start = i + 1;
		}
	if (start < len)
		model_line(m, buf + start, len - start);
	return start;
}

/* The model's name for addr: the entry of the greatest start at or below it, if addr is inside. */
static const struct perfmap_entry *model_lookup(const struct model *m, uint64_t addr)
{
	const struct perfmap_entry *best = NULL;

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].start <= addr && (!best || m->v[i].start > best->start))
			best = &m->v[i];
	return best && addr - best->start < best->size ? best : NULL;
}

static void check_lookup(const struct perfmap *map, const struct model *m, bool exact,
			 uint64_t addr)
{
	const char *name = perfmap_lookup(map, addr);
	const struct perfmap_entry *want;

	if (name && (!*name || strlen(name) > PERFMAP_NAME_MAX))
		abort();
	if (!exact)
		return;
	want = model_lookup(m, addr);
	if (!want != !name)
		abort();
	if (want && (strlen(name) != want->name_len || memcmp(name, want->name, want->name_len)))
		abort();
}

/* Is every line of data[0..size) at most PERFMAP_LINE_MAX bytes? */
static bool short_lines(const uint8_t *data, size_t size)
{
	size_t start = 0;

	for (size_t i = 0; i <= size; i++)
		if (i == size || data[i] == '\n') {
			if (i - start > PERFMAP_LINE_MAX)
				return false;
			start = i + 1;
		}
	return true;
}

/* The form perfmap_dump_name() promises, checked the long way. */
static bool model_dump_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len, digits = 0;
	bool nonzero = false;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len < 10 || memcmp(base, "jit-", 4) || strcmp(base + len - 5, ".dump"))
		return false;
	for (size_t i = 4; i < len - 5; i++, digits++) {
		if (base[i] < '0' || base[i] > '9')
			return false;
		nonzero |= base[i] != '0';
	}
	return digits >= 1 && digits <= 9 && nonzero;
}

/* Offer each line of data as a mapped path, in a map of its own: taken exactly when it should. */
static void check_offers(const uint8_t *data, size_t size)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	bool taken = false;
	char path[300];

	for (size_t i = 0, start = 0; i <= size; i++) {
		size_t len = i - start;

		if (i < size && data[i] != '\n')
			continue;
		if (len < sizeof(path) && !memchr(data + start, '\0', len)) {
			bool good;

			memcpy(path, data + start, len);
			path[len] = '\0';
			good = model_dump_name(path);
			if (perfmap_dump_name(path) != good)
				abort();
			perfmap_offer_dump(map, path);
			taken |= good && path[0] == '/' && len < 256;
			if (perfmap_wants_dump(map) != !taken)
				abort();
		}
		start = i + 1;
	}
	perfmap_free(map);
	strpool_free(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text;
	struct model m = { 0 };
	struct strpool *pool;
	struct perfmap *map;
	size_t cut, used, model_used;
	bool exact;

	if (size < 1)
		return 0;
	data++;
	size--;
	text = (const char *)data;
	cut = data[-1] * size / 255;
	for (size_t i = 0, start = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			check_line(data + start, i - start);
			start = i + 1;
		}
	}
	exact = short_lines(data, size);
	check_offers(data, size);

	pool = strpool_new();
	map = perfmap_new(pool);
	used = perfmap_parse(map, text, cut);
	model_used = model_parse(&m, text, cut);
	if (used > cut || (exact && used != model_used))
		abort();
	model_parse(&m, text + used, size - used);
	used += perfmap_parse(map, text + used, size - used);
	if (used > size)
		abort();
	perfmap_parse(map, text, size);
	model_parse(&m, text, size);
	for (size_t i = 0; i < m.n; i++) {
		check_lookup(map, &m, exact, m.v[i].start);
		check_lookup(map, &m, exact, m.v[i].start + m.v[i].size - 1);
	}
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t addr;

		memcpy(&addr, data + i, 8);
		check_lookup(map, &m, exact, addr);
	}
	free(m.v);
	perfmap_free(map);
	strpool_free(pool);
	return 0;
}
