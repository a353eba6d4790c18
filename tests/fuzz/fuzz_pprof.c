/* libFuzzer target: the pprof writer (export_pprof.c) over any structure of functions, inlined
 * functions, sites and stacks, in particular chains of code inlined into itself and into code
 * inlined into it (a site recurring in its own chain once looped for ever). The input builds a
 * profile:
 *   byte 0: how many functions (1..8), byte 1: which are inlined (a bit each);
 *   byte 2: how many sites (0..31), then per site: its function, its address (one of 8), its line;
 *   then stacks until the input ends: a depth (1..24), then per frame its function and which of
 *   that function's sites it is at (none when it has fewer), outermost first.
 * Its snapshot is written as pprof, callgrind and folded to memory. Checks: each write ends and
 * succeeds; the pprof stream inflates to a well-formed protobuf whose Locations have no more Lines
 * than the deepest stack has frames, and whose Samples' stacks are no deeper.
 *
 * Seeds in corpus/fuzz_pprof: recursion inlined into itself, two functions inlined into each
 * other, a plain two-level stack. */
#include "proftop/export.h"
#include "proftop/profile.h"
#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define MAX_FUNCS 8
#define MAX_SITES 31
#define MAX_DEPTH 24

struct reader {
	const uint8_t *p, *end;
};

static bool varint(struct reader *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; r->p < r->end && shift < 64; shift += 7) {
		uint8_t b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Fields of one message, each length-delimited one's bytes in *sub. */
static bool field(struct reader *r, unsigned *number, uint64_t *value, struct reader *sub)
{
	uint64_t key;

	if (!varint(r, &key))
		abort();
	*number = (unsigned)(key >> 3);
	if ((key & 7) == 0)
		return varint(r, value);
	if ((key & 7) != 2 || !varint(r, value) || *value > (uint64_t)(r->end - r->p))
		abort();
	*sub = (struct reader){ r->p, r->p + *value };
	r->p += *value;
	return true;
}

/* How many fields numbered number a message has (its packed varints for a packed one). */
static size_t count_fields(struct reader m, unsigned number, bool packed)
{
	struct reader sub;
	unsigned f;
	uint64_t v;
	size_t n = 0;

	while (m.p < m.end) {
		if (!field(&m, &f, &v, &sub))
			abort();
		if (f != number)
			continue;
		if (!packed) {
			n++;
			continue;
		}
		while (sub.p < sub.end) {
			if (!varint(&sub, &v))
				abort();
			n++;
		}
	}
	return n;
}

static void check_profile(const uint8_t *gz, size_t size, size_t max_depth)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream z = { .next_in = (uint8_t *)gz, .avail_in = (uInt)size, .next_out = raw,
		       .avail_out = (uInt)cap };
	struct reader r, sub;
	unsigned f;
	uint64_t v;

	if (!raw || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK || inflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	r = (struct reader){ raw, raw + z.total_out };
	while (r.p < r.end) {
		if (!field(&r, &f, &v, &sub))
			abort();
		if (f == 2 && count_fields(sub, 1, true) > max_depth) /* Sample.location_id */
			abort();
		if (f == 4 && count_fields(sub, 4, false) > max_depth) /* Location.line */
			abort();
	}
	inflateEnd(&z);
	free(raw);
}

static void write_as(const struct snapshot *s, enum export_format format, size_t max_depth)
{
	char *buf = NULL, *message = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	if (!out)
		return;
	if (export_stream(out, s, format, &message))
		abort();
	if (fclose(out))
		abort();
	if (format == EXPORT_PPROF)
		check_profile((const uint8_t *)buf, size, max_depth);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[MAX_FUNCS] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	uint32_t funcs[MAX_FUNCS], sites[MAX_SITES], stack[MAX_DEPTH], at[MAX_DEPTH];
	size_t site_func[MAX_SITES];
	size_t nfuncs, nsites, i = 3, max_depth = 1;
	struct profile *p;
	struct snapshot *s;

	if (size < 3)
		return 0;
	nfuncs = data[0] % MAX_FUNCS + 1;
	nsites = data[2] % (MAX_SITES + 1);
	p = profile_new(NULL);
	for (size_t f = 0; f < nfuncs; f++) {
		if (data[1] >> f & 1) {
			funcs[f] = profile_inlined_func(p, "prog", names[f]);
		} else {
			funcs[f] = profile_func(p, "prog", names[f], 0x1000 + 0x100 * f);
			profile_func_code(p, funcs[f], "/nonexistent/proftop-fuzz/prog",
					  0x1000 + 0x100 * f, 0x1100 + 0x100 * f);
		}
	}
	for (size_t k = 0; k < nsites; k++, i += 3) {
		if (i + 3 > size) {
			nsites = k;
			break;
		}
		site_func[k] = data[i] % nfuncs;
		sites[k] = profile_site(p, funcs[site_func[k]], 0x1000 + 0x10 * (data[i + 1] % 8),
					"prog.c", data[i + 2]);
	}
	while (i < size) {
		size_t depth = data[i++] % MAX_DEPTH + 1;

		for (size_t d = 0; d < depth; d++, i += 2) {
			size_t f = (i < size ? data[i] : 0) % nfuncs;
			unsigned which = i + 1 < size ? data[i + 1] : 255;

			stack[d] = funcs[f];
			at[d] = PROFILE_NO_SITE;
			for (size_t k = 0; k < nsites; k++)
				if (site_func[k] == f && which-- == 0)
					at[d] = sites[k];
		}
		profile_add_sites(p, 1, 1, stack, at, depth);
		max_depth = depth > max_depth ? depth : max_depth;
	}
	profile_set_comm(p, 1, 1, "prog");
	s = profile_snapshot(p);
	s->freq = 100;
	profile_free(p);
	write_as(s, EXPORT_PPROF, max_depth);
	write_as(s, EXPORT_CALLGRIND, max_depth);
	write_as(s, EXPORT_FOLDED, max_depth);
	snapshot_unref(s);
	return 0;
}
