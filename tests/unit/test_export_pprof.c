/* Unit tests of the pprof writer on synthetic profiles whose counts, addresses and lines are
 * known: its output is inflated with zlib and decoded by a protobuf reader written for this test.
 * Samples per (stack, leaf site), the leaf at the sampled address with its inlined chain as Lines
 * of one Location, callers at their functions' entries; mappings from the file on disk (build-id
 * as `readelf -n` reads it) or, when the file is missing, not ELF, changed since profiling began
 * or no longer holds the code, over the functions' code without a build ID. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/export.h"
#include "proftop/export_writers.h"
#include "proftop/profile.h"
#include "unit_profiles.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HZ 100

/* --- a protobuf reader -------------------------------------------------------------------------- */

struct pb_reader {
	const uint8_t *p, *end;
};

static uint64_t pb_varint(struct pb_reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; r->p < r->end && shift < 64; shift += 7) {
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	fail_msg("bad varint");
	return 0;
}

/* The next field: its number, and for a length-delimited one its bytes in *sub. */
static bool pb_next(struct pb_reader *r, unsigned *field, uint64_t *value, struct pb_reader *sub)
{
	uint64_t key;

	if (r->p >= r->end)
		return false;
	key = pb_varint(r);
	*field = (unsigned)(key >> 3);
	switch (key & 7) {
	case 0:
		*value = pb_varint(r);
		return true;
	case 2:
		*value = pb_varint(r);
		assert_true(*value <= (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + *value;
		r->p += *value;
		return true;
	default:
		fail_msg("unexpected wire type %u", (unsigned)(key & 7));
		return false;
	}
}

static uint8_t *gunzip(const char *data, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);

	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* --- the decoded profile ------------------------------------------------------------------------ */

#define MAX_ITEMS 256

struct d_line {
	uint64_t func, line;
};

struct d_location {
	uint64_t id, mapping, addr;
	struct d_line lines[8];
	size_t nlines;
};

struct d_mapping {
	uint64_t id, start, limit, offset, file, build_id;
	bool functions, filenames, line_numbers, inline_frames;
};

struct d_function {
	uint64_t id, name, system_name, file;
};

struct d_sample {
	uint64_t locs[32];
	size_t nlocs;
	uint64_t count, cpu;
	size_t labels;
};

struct decoded {
	struct d_sample samples[MAX_ITEMS];
	struct d_location locations[MAX_ITEMS];
	struct d_mapping mappings[16];
	struct d_function functions[MAX_ITEMS];
	char *strings[MAX_ITEMS];
	size_t nsamples, nlocations, nmappings, nfunctions, nstrings;
	uint64_t period;
};

static void decode_sample(struct pb_reader r, struct d_sample *s)
{
	struct pb_reader sub;
	unsigned f;
	uint64_t v;

	while (pb_next(&r, &f, &v, &sub)) {
		if (f == 1) {
			while (sub.p < sub.end) {
				assert_true(s->nlocs < 32);
				s->locs[s->nlocs++] = pb_varint(&sub);
			}
		} else if (f == 2) {
			s->count = pb_varint(&sub);
			s->cpu = pb_varint(&sub);
		} else if (f == 3) {
			s->labels++;
		}
	}
}

static void decode_location(struct pb_reader r, struct d_location *l)
{
	struct pb_reader sub, line;
	unsigned f, lf;
	uint64_t v, lv;

	while (pb_next(&r, &f, &v, &sub)) {
		if (f == 1)
			l->id = v;
		else if (f == 2)
			l->mapping = v;
		else if (f == 3)
			l->addr = v;
		else if (f == 4) {
			assert_true(l->nlines < 8);
			while (pb_next(&sub, &lf, &lv, &line))
				if (lf == 1)
					l->lines[l->nlines].func = lv;
				else if (lf == 2)
					l->lines[l->nlines].line = lv;
			l->nlines++;
		}
	}
}

static void decode_mapping(struct pb_reader r, struct d_mapping *m)
{
	struct pb_reader sub;
	unsigned f;
	uint64_t v;

	while (pb_next(&r, &f, &v, &sub)) {
		switch (f) {
		case 1: m->id = v; break;
		case 2: m->start = v; break;
		case 3: m->limit = v; break;
		case 4: m->offset = v; break;
		case 5: m->file = v; break;
		case 6: m->build_id = v; break;
		case 7: m->functions = v; break;
		case 8: m->filenames = v; break;
		case 9: m->line_numbers = v; break;
		case 10: m->inline_frames = v; break;
		}
	}
}

static void decode_function(struct pb_reader r, struct d_function *fn)
{
	struct pb_reader sub;
	unsigned f;
	uint64_t v;

	while (pb_next(&r, &f, &v, &sub)) {
		if (f == 1)
			fn->id = v;
		else if (f == 2)
			fn->name = v;
		else if (f == 3)
			fn->system_name = v;
		else if (f == 4)
			fn->file = v;
	}
}

/* The writer's output for scope (NULL: merged), decoded (calloc'd; free_decoded()). */
static struct decoded *decode(const struct snapshot *s, const struct export_scope *scope)
{
	struct decoded *d = calloc(1, sizeof(*d));
	struct export_scope merged;
	char *gz = NULL;
	size_t len = 0, plen;
	FILE *out = open_memstream(&gz, &len);
	uint8_t *pb;
	struct pb_reader r, sub;
	unsigned f;
	uint64_t v;

	if (!scope) {
		export_scope_merged(&merged, s);
		scope = &merged;
	}
	assert_int_equal(export_pprof(out, s, scope), 0);
	assert_int_equal(fclose(out), 0);
	assert_true((unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
	pb = gunzip(gz, len, &plen);
	r = (struct pb_reader){ pb, pb + plen };
	while (pb_next(&r, &f, &v, &sub)) {
		if (f == 2) {
			assert_true(d->nsamples < MAX_ITEMS);
			decode_sample(sub, &d->samples[d->nsamples++]);
		} else if (f == 3) {
			assert_true(d->nmappings < 16);
			decode_mapping(sub, &d->mappings[d->nmappings++]);
		} else if (f == 4) {
			assert_true(d->nlocations < MAX_ITEMS);
			decode_location(sub, &d->locations[d->nlocations++]);
		} else if (f == 5) {
			assert_true(d->nfunctions < MAX_ITEMS);
			decode_function(sub, &d->functions[d->nfunctions++]);
		} else if (f == 6) {
			assert_true(d->nstrings < MAX_ITEMS);
			d->strings[d->nstrings++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
		} else if (f == 12) {
			d->period = v;
		}
	}
	free(pb);
	free(gz);
	return d;
}

static void free_decoded(struct decoded *d)
{
	for (size_t i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	free(d);
}

static const char *str(const struct decoded *d, uint64_t i)
{
	assert_true(i < d->nstrings);
	return d->strings[i];
}

static const struct d_location *location(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nlocations; i++)
		if (d->locations[i].id == id)
			return &d->locations[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const struct d_mapping *mapping(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nmappings; i++)
		if (d->mappings[i].id == id)
			return &d->mappings[i];
	fail_msg("no mapping %llu", (unsigned long long)id);
	return NULL;
}

static const struct d_function *function(const struct decoded *d, uint64_t id)
{
	for (size_t i = 0; i < d->nfunctions; i++)
		if (d->functions[i].id == id)
			return &d->functions[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

/* The name of the function of a Location's Line. */
static const char *line_func(const struct decoded *d, const struct d_line *l)
{
	return str(d, function(d, l->func)->name);
}

/* Every Location with an address is inside its mapping; every id a sample names exists. */
static void assert_consistent(const struct decoded *d)
{
	for (size_t i = 0; i < d->nlocations; i++) {
		const struct d_location *l = &d->locations[i];

		assert_true(l->nlines >= 1);
		if (l->addr) {
			const struct d_mapping *m = mapping(d, l->mapping);

			assert_true(l->addr >= m->start && l->addr < m->limit);
		}
		for (size_t k = 0; k < l->nlines; k++)
			function(d, l->lines[k].func);
	}
	for (size_t i = 0; i < d->nsamples; i++)
		for (size_t k = 0; k < d->samples[i].nlocs; k++)
			location(d, d->samples[i].locs[k]);
}

static uint64_t total(const struct decoded *d)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->nsamples; i++) {
		sum += d->samples[i].count;
		assert_int_equal(d->samples[i].cpu, d->samples[i].count * d->period);
	}
	return sum;
}

/* --- profiles without sites ---------------------------------------------------------------------- */

/* Functions only (no line lookups, or a file read back): one sample per distinct stack of each
 * thread, labelled; one address-less Location per function, with one Line of line 0; one
 * mapping per module, its name alone. */
static void pprof_functions_only(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t m = profile_func(p, "prog", "main", 0), a = profile_func(p, "prog", "path_a", 0);
	uint32_t burn = profile_func(p, "libc.so.6", "burn", 0), solo = profile_func(p, "prog", "solo", 0);

	unit_add(p, 7, 60, 3, m, a, burn);
	unit_add(p, 7, 10, 2, m, solo);
	unit_add(p, 8, 20, 2, m, burn);
	unit_add(p, 8, 5, 1, m);
	profile_set_comm(p, 7, 7, "prog");
	profile_set_comm(p, 7, 8, "worker");
	struct snapshot *s = profile_snapshot(p);
	s->freq = HZ;
	profile_free(p);
	struct decoded *d = decode(s, NULL);

	assert_int_equal(d->period, 10000000); /* 1 s / 100 Hz */
	assert_int_equal(total(d), 95);
	assert_int_equal(d->nsamples, 4);
	for (size_t i = 0; i < d->nsamples; i++)
		assert_int_equal(d->samples[i].labels, 3); /* pid, tid, thread name */
	assert_string_equal(d->strings[0], "");
	assert_int_equal(d->nlocations, s->nfuncs - 1);
	assert_int_equal(d->nfunctions, s->nfuncs - 1);
	assert_int_equal(d->nmappings, 2); /* prog, libc.so.6 */
	for (size_t i = 0; i < d->nlocations; i++) {
		const struct d_location *l = &d->locations[i];

		assert_int_equal(l->addr, 0);
		assert_int_equal(l->nlines, 1);
		assert_int_equal(l->lines[0].func, l->id);
		assert_int_equal(l->lines[0].line, 0);
		assert_int_not_equal(l->mapping, 0);
	}
	for (size_t i = 0; i < d->nmappings; i++) {
		assert_int_equal(d->mappings[i].start, 0);
		assert_int_equal(d->mappings[i].limit, 0);
		assert_int_equal(d->mappings[i].build_id, 0);
		assert_true(d->mappings[i].functions);
		assert_false(d->mappings[i].filenames || d->mappings[i].line_numbers);
	}
	assert_string_equal(str(d, mapping(d, location(d, burn)->mapping)->file), "libc.so.6");
	assert_consistent(d);
	free_decoded(d);
	snapshot_unref(s);
}

/* --- addresses and lines -------------------------------------------------------------------------- */

struct lined {
	struct snapshot *s;
	uint32_t main_, work, step, ext;
	uint32_t m_call, w5, w6, w_call7, s20;
};

/* main (0x1000..0x1100) calls work (0x1100..0x1200) of path, which has step() inlined at 0x1130
 * (its line 20 of step.h, called from work's line 7), and memcpy of libc.so.6 (no file, no
 * site). Thread 1: work at 0x1110 (line 5) x3, at 0x1120 (line 6) x2, in step x4, one sample of
 * work without sites, memcpy x2. */
static struct lined lined_profile(const char *path)
{
	struct profile *p = profile_new(NULL);
	struct lined x;

	x.main_ = profile_func(p, "prog", "main", 0x1000);
	x.work = profile_func(p, "prog", "work", 0x1100);
	x.step = profile_inlined_func(p, "prog", "step");
	x.ext = profile_func(p, "libc.so.6", "memcpy", 0x500);
	profile_func_code(p, x.main_, path, 0x1000, 0x1100);
	profile_func_code(p, x.work, path, 0x1100, 0x1200);
	x.m_call = profile_site(p, x.main_, 0x1010, "prog.c", 3);
	x.w5 = profile_site(p, x.work, 0x1110, "prog.c", 5);
	x.w6 = profile_site(p, x.work, 0x1120, "prog.c", 6);
	x.w_call7 = profile_site(p, x.work, 0x1130, "prog.c", 7);
	x.s20 = profile_site(p, x.step, 0x1130, "step.h", 20);

	const uint32_t two[] = { x.main_, x.work }, three[] = { x.main_, x.work, x.step };
	const uint32_t lib[] = { x.main_, x.ext };
	const uint32_t at5[] = { x.m_call, x.w5 }, at6[] = { x.m_call, x.w6 };
	const uint32_t in_step[] = { x.m_call, x.w_call7, x.s20 };
	const uint32_t at_lib[] = { x.m_call, PROFILE_NO_SITE };

	for (int i = 0; i < 3; i++)
		profile_add_sites(p, 1, 1, two, at5, 2);
	for (int i = 0; i < 2; i++)
		profile_add_sites(p, 1, 1, two, at6, 2);
	for (int i = 0; i < 4; i++)
		profile_add_sites(p, 1, 1, three, in_step, 3);
	profile_add(p, 1, 1, two, 2);
	for (int i = 0; i < 2; i++)
		profile_add_sites(p, 1, 1, lib, at_lib, 2);
	profile_set_comm(p, 1, 1, "prog");
	x.s = profile_snapshot(p);
	x.s->freq = HZ;
	profile_free(p);
	return x;
}

/* The sample whose leaf Location is leaf. */
static const struct d_sample *sample_at(const struct decoded *d, uint64_t leaf)
{
	for (size_t i = 0; i < d->nsamples; i++)
		if (d->samples[i].nlocs && d->samples[i].locs[0] == leaf)
			return &d->samples[i];
	fail_msg("no sample at location %llu", (unsigned long long)leaf);
	return NULL;
}

/* The leaf Location of site (id nfuncs + site). */
static const struct d_location *leaf_of(const struct decoded *d, const struct snapshot *s,
					uint32_t site)
{
	return location(d, s->nfuncs + site);
}

/* A missing file: each self sample at its exact address and line, an inlined chain in one
 * Location innermost first (the caller off the rest of the stack), callers at their entries,
 * samples without a site at the leaf function's entry; the mapping spans the functions' code,
 * without build ID or file offset. */
static void pprof_addresses_and_lines(void **state)
{
	(void)state;
	struct lined x = lined_profile("/nonexistent/proftop-test/prog");
	const struct snapshot *s = x.s;
	struct decoded *d = decode(s, NULL);
	const struct d_location *l;
	const struct d_sample *smp;
	const struct d_mapping *prog;

	assert_int_equal(total(d), 12);
	assert_int_equal(d->nsamples, 5); /* work at 5, at 6, without site; step; memcpy */
	/* work at 0x1110, line 5: 3 samples, main at its entry as the caller. */
	l = leaf_of(d, s, x.w5);
	assert_int_equal(l->addr, 0x1110);
	assert_int_equal(l->nlines, 1);
	assert_string_equal(line_func(d, &l->lines[0]), "work");
	assert_int_equal(l->lines[0].line, 5);
	smp = sample_at(d, l->id);
	assert_int_equal(smp->count, 3);
	assert_int_equal(smp->nlocs, 2);
	assert_int_equal(smp->locs[1], x.main_);
	assert_int_equal(sample_at(d, leaf_of(d, s, x.w6)->id)->count, 2);
	assert_int_equal(leaf_of(d, s, x.w6)->addr, 0x1120);
	/* step inlined into work at 0x1130: one Location, step's line then work's call line. */
	l = leaf_of(d, s, x.s20);
	assert_int_equal(l->addr, 0x1130);
	assert_int_equal(l->nlines, 2);
	assert_string_equal(line_func(d, &l->lines[0]), "step (inlined)");
	assert_int_equal(l->lines[0].line, 20);
	assert_string_equal(line_func(d, &l->lines[1]), "work");
	assert_int_equal(l->lines[1].line, 7);
	smp = sample_at(d, l->id);
	assert_int_equal(smp->count, 4);
	assert_int_equal(smp->nlocs, 2); /* work is in the leaf's Location, not after it */
	assert_int_equal(smp->locs[1], x.main_);
	/* Entries: main's and work's code starts, on their lowest sampled address's line. */
	l = location(d, x.main_);
	assert_int_equal(l->addr, 0x1000);
	assert_int_equal(l->lines[0].line, 3);
	l = location(d, x.work);
	assert_int_equal(l->addr, 0x1100);
	assert_int_equal(l->lines[0].line, 5);
	smp = sample_at(d, x.work); /* the sample without a site */
	assert_int_equal(smp->count, 1);
	assert_int_equal(smp->nlocs, 2);
	/* Inlined code has no code of its own: no address, so in no mapping. */
	l = location(d, x.step);
	assert_int_equal(l->addr, 0);
	assert_int_equal(l->mapping, 0);
	assert_int_equal(l->lines[0].line, 20);
	/* memcpy: no file, no site; its module's mapping is its name. */
	l = location(d, x.ext);
	assert_int_equal(l->addr, 0);
	assert_int_equal(l->lines[0].line, 0);
	assert_int_equal(sample_at(d, x.ext)->count, 2);
	assert_string_equal(str(d, mapping(d, l->mapping)->file), "libc.so.6");
	assert_false(mapping(d, l->mapping)->line_numbers);
	/* Functions name their files. */
	assert_string_equal(str(d, function(d, x.work)->file), "prog.c");
	assert_string_equal(str(d, function(d, x.step)->file), "step.h");
	assert_int_equal(function(d, x.ext)->file, 0);
	/* The program's mapping comes first: over its functions' code, no build ID, no offset. */
	prog = &d->mappings[0];
	assert_int_equal(prog->id, 1);
	assert_string_equal(str(d, prog->file), "/nonexistent/proftop-test/prog");
	assert_int_equal(prog->start, 0x1000);
	assert_int_equal(prog->limit, 0x1200);
	assert_int_equal(prog->offset, 0);
	assert_int_equal(prog->build_id, 0);
	assert_true(prog->functions && prog->filenames && prog->line_numbers && prog->inline_frames);
	assert_int_equal(leaf_of(d, s, x.w5)->mapping, 1);
	assert_consistent(d);
	free_decoded(d);
	snapshot_unref(x.s);
}

/* Code inlined into itself (recursion the compiler unrolled) and into a function inlined into
 * it: a site (function, address) recurs in its own chain. The export ends, and the leaf's
 * Location lists every inlined frame of the stack once, innermost first. */
static void pprof_inlined_into_itself(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0x1000);
	uint32_t work = profile_func(p, "prog", "work", 0x1100);
	uint32_t step = profile_inlined_func(p, "prog", "step");
	uint32_t hop = profile_inlined_func(p, "prog", "hop");

	profile_func_code(p, main_, "/nonexistent/proftop-test/prog", 0x1000, 0x1100);
	profile_func_code(p, work, "/nonexistent/proftop-test/prog", 0x1100, 0x1200);

	uint32_t m_call = profile_site(p, main_, 0x1010, "prog.c", 3);
	uint32_t w_self = profile_site(p, work, 0x1130, "prog.c", 7);
	uint32_t s_self = profile_site(p, step, 0x1130, "step.h", 20);
	uint32_t w_mut = profile_site(p, work, 0x1140, "prog.c", 8);
	uint32_t s_mut = profile_site(p, step, 0x1140, "step.h", 21);
	uint32_t h_mut = profile_site(p, hop, 0x1140, "hop.h", 30);
	const uint32_t self_stack[] = { main_, work, step, step, step };
	const uint32_t self_at[] = { m_call, w_self, s_self, s_self, s_self };
	const uint32_t mut_stack[] = { main_, work, step, hop, step };
	const uint32_t mut_at[] = { m_call, w_mut, s_mut, h_mut, s_mut };

	for (int i = 0; i < 3; i++)
		profile_add_sites(p, 1, 1, self_stack, self_at, 5);
	for (int i = 0; i < 2; i++)
		profile_add_sites(p, 1, 1, mut_stack, mut_at, 5);
	profile_set_comm(p, 1, 1, "prog");

	struct snapshot *s = profile_snapshot(p);
	struct decoded *d;
	const struct d_location *l;
	const struct d_sample *smp;

	s->freq = HZ;
	profile_free(p);
	d = decode(s, NULL);
	assert_int_equal(total(d), 5);
	l = leaf_of(d, s, s_self);
	assert_int_equal(l->nlines, 4);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(line_func(d, &l->lines[i]), "step (inlined)");
		assert_int_equal(l->lines[i].line, 20);
	}
	assert_string_equal(line_func(d, &l->lines[3]), "work");
	assert_int_equal(l->lines[3].line, 7);
	smp = sample_at(d, l->id);
	assert_int_equal(smp->count, 3);
	assert_int_equal(smp->nlocs, 2);
	assert_int_equal(smp->locs[1], main_);
	l = leaf_of(d, s, s_mut);
	assert_int_equal(l->nlines, 4);
	assert_string_equal(line_func(d, &l->lines[0]), "step (inlined)");
	assert_string_equal(line_func(d, &l->lines[1]), "hop (inlined)");
	assert_int_equal(l->lines[1].line, 30);
	assert_string_equal(line_func(d, &l->lines[2]), "step (inlined)");
	assert_int_equal(l->lines[2].line, 21);
	assert_string_equal(line_func(d, &l->lines[3]), "work");
	assert_int_equal(l->lines[3].line, 8);
	smp = sample_at(d, l->id);
	assert_int_equal(smp->count, 2);
	assert_int_equal(smp->nlocs, 2);
	assert_consistent(d);
	free_decoded(d);
	snapshot_unref(s);
}

/* One thread's scope: its samples only, with the same Locations. */
static void pprof_one_thread(void **state)
{
	(void)state;
	struct lined x = lined_profile("/nonexistent/proftop-test/prog");
	struct export_scope scope = { x.s->threads[0].root, &x.s->threads[0] };
	struct decoded *d = decode(x.s, &scope);

	assert_int_equal(total(d), 12);
	assert_int_equal(leaf_of(d, x.s, x.s20)->nlines, 2);
	assert_consistent(d);
	free_decoded(d);
	snapshot_unref(x.s);
}

/* --- files on disk --------------------------------------------------------------------------------- */

/* A function of this program, to map: its link-time address (PIE: minus the load base). */
static uint64_t own_code(void)
{
	Dl_info info;

	assert_int_not_equal(dladdr((void *)own_code, &info), 0);
	return (uint64_t)((uintptr_t)own_code - (uintptr_t)info.dli_fbase);
}

/* The build-id of this program as `readelf -n` reads it (into out, 128 bytes). */
static void readelf_build_id(char *out)
{
	char cmd[64], line[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null", (int)getpid());
	p = popen(cmd, "r");
	out[0] = '\0';
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %127s", out) == 1)
			break;
	pclose(p);
	if (!out[0])
		skip(); /* readelf (binutils) is not installed */
}

/* The mapping of a profile of one function of path over [lo, hi), profiling begun elapsed_ns
 * ago: decoded into *m, with its file name and build-id. */
static void mapping_of_file(const char *path, uint64_t lo, uint64_t hi, uint64_t elapsed_ns,
			    struct d_mapping *m, char *build_id, size_t size)
{
	struct profile *p = profile_new(NULL);
	uint32_t f = profile_func(p, "prog", "f", lo);
	const uint32_t stack[] = { f }, at[] = { profile_site(p, f, lo + 4, "f.c", 1) };

	profile_func_code(p, f, path, lo, hi);
	profile_add_sites(p, 1, 1, stack, at, 1);
	struct snapshot *s = profile_snapshot(p);
	s->elapsed_ns = elapsed_ns;
	profile_free(p);
	struct decoded *d = decode(s, NULL);

	assert_int_equal(d->nmappings, 1);
	*m = d->mappings[0];
	assert_string_equal(str(d, m->file), path);
	snprintf(build_id, size, "%s", str(d, m->build_id));
	assert_int_equal(leaf_of(d, s, at[0])->addr, lo + 4);
	assert_consistent(d);
	free_decoded(d);
	snapshot_unref(s);
}

/* This program's own file: its executable segment and the build-id readelf reads. */
static void pprof_mapping_from_the_file(void **state)
{
	(void)state;
	char want[128], got[128];
	uint64_t code = own_code();
	struct d_mapping m;

	readelf_build_id(want);
	mapping_of_file("/proc/self/exe", code, code + 16, 0, &m, got, sizeof(got));
	assert_string_equal(got, want);
	assert_true(m.start <= code && m.limit >= code + 16 && m.limit - m.start > 16);
	/* The segment's file offset and address agree modulo the page size (ELF's rule). */
	assert_int_equal((m.start - m.offset) % 4096, 0);
	assert_true(m.functions && m.filenames && m.line_numbers);
	assert_false(m.inline_frames);
}

/* Files that cannot give a layout: the mapping spans the code, without build ID or offset. */
static void pprof_mapping_without_the_file(void **state)
{
	(void)state;
	char text[] = "/tmp/proftop-pprof-text.XXXXXX", copy[] = "/tmp/proftop-pprof-copy.XXXXXX";
	char cmd[128], got[128], want[128];
	uint64_t code = own_code();
	struct d_mapping m;
	int fd = mkstemp(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not ELF\n", 8), 8);
	close(fd);
	fd = mkstemp(copy);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), copy); /* this program */
	assert_int_equal(system(cmd), 0);

	const struct {
		const char *path;
		uint64_t lo, elapsed_ns;
	} cases[] = {
		{ text, 0x1000, 1000000000ull },             /* not ELF */
		{ "/", 0x1000, 1000000000ull },              /* not a file */
		{ "/nonexistent/x", 0x1000, 1000000000ull }, /* missing */
		{ "/proc/self/exe", 0x7f000000000ull, 1000000000ull }, /* not its code */
		{ copy, code, 3600ull * 1000000000ull },    /* changed since profiling began */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mapping_of_file(cases[i].path, cases[i].lo, cases[i].lo + 16, cases[i].elapsed_ns, &m,
				got, sizeof(got));
		assert_string_equal(got, "");
		assert_int_equal(m.start, cases[i].lo);
		assert_int_equal(m.limit, cases[i].lo + 16);
		assert_int_equal(m.offset, 0);
	}
	/* The same copy, made before profiling began: read, this program's build-id. */
	readelf_build_id(want);
	mapping_of_file(copy, code, code + 16, 0, &m, got, sizeof(got));
	assert_string_equal(got, want);
	unlink(text);
	unlink(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof_functions_only),
		cmocka_unit_test(pprof_addresses_and_lines),
		cmocka_unit_test(pprof_inlined_into_itself),
		cmocka_unit_test(pprof_one_thread),
		cmocka_unit_test(pprof_mapping_from_the_file),
		cmocka_unit_test(pprof_mapping_without_the_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
