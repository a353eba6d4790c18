/* export_pprof.c — a snapshot as a gzipped profile.proto message (pprof's format: go tool pprof,
 * Pyroscope, Parca), over the model export_model.h makes (mappings, locations, samples).
 *
 * The Profile's repeated fields are independent top-level records, so each is encoded into a
 * small buffer (pbenc.h) and streamed through zlib's gzip deflate: memory stays proportional to
 * the largest single record, not to the file.
 *
 * Layout: two sample types, samples/count and cpu/nanoseconds (count x the sampling period); in
 * the timed modes, microseconds/count and MODE/nanoseconds (offcpu, runnable or wall). An
 * allocation profile has the four of Go's heap profiles, alloc_objects/count, alloc_space/bytes,
 * inuse_objects/count and inuse_space/bytes, from the snapshot and its companions (each
 * snapshot's samples carry its own value, the others 0: pprof adds samples of one stack up), and
 * the one shown is the default sample type.
 * Samples are labelled with the thread's pid, tid and name; the merged scope emits every thread's
 * tree, so tools can still split by thread. Mappings say has_functions, and has_filenames and
 * has_line_numbers when their functions have lines, has_inline_frames when a Location of theirs
 * holds an inlined chain: pprof takes them as symbolized. Function ids are proftop's; Location
 * ids the model's. */
#include "proftop/export_writers.h"

#include "proftop/export_model.h"
#include "proftop/pbenc.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The fields of profile.proto's Profile message. */
enum {
	PPROF_SAMPLE_TYPE = 1, PPROF_SAMPLE = 2, PPROF_MAPPING = 3, PPROF_LOCATION = 4,
	PPROF_FUNCTION = 5, PPROF_STRING_TABLE = 6, PPROF_DURATION_NANOS = 10,
	PPROF_PERIOD_TYPE = 11, PPROF_PERIOD = 12, PPROF_COMMENT = 13, PPROF_DEFAULT_SAMPLE_TYPE = 14,
};

/* --- the gzip stream ---------------------------------------------------------------------------- */

struct gz {
	FILE *out;
	z_stream z;
	uint8_t chunk[1 << 16];
	struct pb head;          /* a record's key and length */
	int err;                 /* -errno of the first failure */
};

static void gz_feed(struct gz *g, const void *data, size_t len, int flush)
{
	g->z.next_in = (Bytef *)(uintptr_t)data;
	g->z.avail_in = (uInt)len;
	do {
		int rc;

		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		if (fwrite(g->chunk, 1, sizeof(g->chunk) - g->z.avail_out, g->out) !=
		    sizeof(g->chunk) - g->z.avail_out) {
			g->err = -(errno ? errno : EIO);
			return;
		}
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && g->z.avail_in));
}

/* One top-level field of Profile holding the message in msg; msg is emptied for reuse. */
static void gz_record(struct gz *g, unsigned field, struct pb *msg)
{
	g->head.len = 0;
	pb_varint(&g->head, (uint64_t)field << 3 | PB_WIRE_BYTES);
	pb_varint(&g->head, msg->len);
	gz_feed(g, g->head.buf, g->head.len, Z_NO_FLUSH);
	gz_feed(g, msg->buf, msg->len, Z_NO_FLUSH);
	msg->len = 0;
}

static void gz_varint_field(struct gz *g, unsigned field, uint64_t v)
{
	g->head.len = 0;
	pb_uint(&g->head, field, v);
	gz_feed(g, g->head.buf, g->head.len, Z_NO_FLUSH);
}

/* --- the profile -------------------------------------------------------------------------------- */

struct pprof {
	struct export_model m;
	struct gz *g;
	struct pb msg, tmp;
	uint64_t period;
	size_t part;                /* an allocation profile: whose samples are written now */
};

static void mapping_record(struct pprof *p, size_t id)
{
	const struct model_mapping *mp = &p->m.mappings[id - 1];
	char hex[2 * DEBUGFILE_BUILD_ID_MAX + 1];

	model_build_id_hex(mp, hex);
	pb_uint(&p->msg, 1, id);
	pb_uint(&p->msg, 2, mp->start);
	pb_uint(&p->msg, 3, mp->limit);
	pb_uint(&p->msg, 4, mp->offset);
	pb_uint(&p->msg, 5, model_string(&p->m, mp->key));
	pb_uint(&p->msg, 6, model_string(&p->m, hex));
	pb_uint(&p->msg, 7, 1);            /* has_functions */
	pb_uint(&p->msg, 8, mp->lines);     /* has_filenames */
	pb_uint(&p->msg, 9, mp->lines);     /* has_line_numbers */
	pb_uint(&p->msg, 10, mp->inline_frames);
	gz_record(p->g, PPROF_MAPPING, &p->msg);
}

/* --- samples ------------------------------------------------------------------------------------ */

static void value_type(struct pprof *p, const char *type, const char *unit)
{
	pb_uint(&p->msg, 1, model_string(&p->m, type));
	pb_uint(&p->msg, 2, model_string(&p->m, unit));
}

static void label(struct pprof *p, const char *key, const char *str, uint64_t num)
{
	p->tmp.len = 0;
	pb_uint(&p->tmp, 1, model_string(&p->m, key));
	if (str)
		pb_uint(&p->tmp, 2, model_string(&p->m, str));
	else
		pb_uint(&p->tmp, 3, num);
	pb_bytes(&p->msg, 3, p->tmp.buf, p->tmp.len);
}

static void sample(void *arg, const struct model_tree *t, const uint64_t *stack, size_t depth,
		   uint64_t count)
{
	struct pprof *p = arg;
	uint64_t values[SNAPSHOT_NCOMPANIONS] = { count, count * p->period };

	pb_packed(&p->msg, 1, stack, depth);
	if (snapshot_allocations(p->m.s)) {
		memset(values, 0, sizeof(values));
		values[p->part] = count;
		pb_packed(&p->msg, 2, values, SNAPSHOT_NCOMPANIONS);
	} else {
		pb_packed(&p->msg, 2, values, 2);
	}
	if (t->thread && t->thread->tid) {
		label(p, "pid", NULL, (uint64_t)t->thread->pid);
		label(p, "tid", NULL, (uint64_t)t->thread->tid);
		if (t->thread->comm && *t->thread->comm)
			label(p, "thread_name", t->thread->comm, 0);
	}
	gz_record(p->g, PPROF_SAMPLE, &p->msg);
}

static bool failed(void *arg)
{
	return ((struct pprof *)arg)->g->err != 0;
}

/* --- the tables --------------------------------------------------------------------------------- */

static void location_record(void *arg, uint64_t id, uint32_t mapping, uint64_t addr,
			    const struct model_line *lines, size_t nlines)
{
	struct pprof *p = arg;

	if (p->g->err)
		return;
	pb_uint(&p->msg, 1, id);
	pb_uint(&p->msg, 2, mapping);
	pb_uint(&p->msg, 3, addr);
	for (size_t i = 0; i < nlines; i++) {
		p->tmp.len = 0;
		pb_uint(&p->tmp, 1, lines[i].func);
		pb_uint(&p->tmp, 2, lines[i].line);
		pb_bytes(&p->msg, 4, p->tmp.buf, p->tmp.len);
	}
	gz_record(p->g, PPROF_LOCATION, &p->msg);
}

static void tables(struct pprof *p)
{
	struct export_model *m = &p->m;
	const struct snapshot *s = m->s;
	struct gz *g = p->g;

	model_mappings_finish(m);
	for (size_t i = 0; i < m->nmappings && !g->err; i++)
		mapping_record(p, i + 1);
	model_locations(m, location_record, p);
	for (uint32_t f = 1; f < s->nfuncs && !g->err; f++) {
		uint32_t first = model_first_site(m, f);

		if (!m->mapping_of[f])
			continue;
		pb_uint(&p->msg, 1, f);
		pb_uint(&p->msg, 2, model_string(m, s->funcs[f].name));
		pb_uint(&p->msg, 3, model_string(m, s->funcs[f].name));
		if (first != MODEL_NO_SITE && s->sites[first].file)
			pb_uint(&p->msg, 4, model_string(m, s->sites[first].file));
		gz_record(g, PPROF_FUNCTION, &p->msg);
	}
	for (size_t i = 0; i < m->nstrings && !g->err; i++) {
		g->head.len = 0;
		pb_bytes(&g->head, PPROF_STRING_TABLE, m->strings[i], strlen(m->strings[i]));
		gz_feed(g, g->head.buf, g->head.len, Z_NO_FLUSH);
	}
}

/* The comment every profile carries: proftop's version and the sampling counters. */
static char *counters_comment(const struct snapshot *s)
{
	const struct counters *c = &s->counters;

	return xasprintf("proftop %s: samples %llu overflow %llu dropped %llu throttled %llu "
			 "truncated %llu", PROFTOP_VERSION, (unsigned long long)c->samples,
			 (unsigned long long)c->overflow, (unsigned long long)c->dropped,
			 (unsigned long long)c->throttled, (unsigned long long)c->truncated);
}

/* The Profile message's fields, in the order Go's writer uses. comments[1] is proftop's own
 * cost ("" when the snapshot has none: then no second comment). */
static void write_profile(struct pprof *p, const char *const comments[2])
{
	struct export_model *m = &p->m;
	const struct snapshot *s = m->s;
	struct gz *g = p->g;
	bool heap = snapshot_allocations(s);
	uint64_t real, user, system, shown = 0;
	/* In a timed mode a count is a microsecond: the second type is that time. */
	const char *time_type = snapshot_kind(s);

	p->period = heap ? s->freq : s->freq ? (1000000000ull + s->freq / 2) / s->freq : 0;
	if (heap) {
		for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS; k++) {
			value_type(p, model_heap_types[k].type, model_heap_types[k].unit);
			gz_record(g, PPROF_SAMPLE_TYPE, &p->msg);
			if (!strcmp(model_heap_types[k].kind, snapshot_kind(s)))
				shown = model_string(m, model_heap_types[k].type);
		}
		/* Each part's trees, with its value in its place. */
		for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS && !g->err; k++) {
			p->part = k;
			for (size_t i = 0; m->parts[k] && i < m->part_ntrees[k] && !g->err; i++)
				model_samples(m, m->parts[k], &m->part_trees[k][i], sample, failed, p);
		}
	} else {
		value_type(p, snapshot_timed(s) ? "microseconds" : "samples", "count");
		gz_record(g, PPROF_SAMPLE_TYPE, &p->msg);
		value_type(p, time_type, "nanoseconds");
		gz_record(g, PPROF_SAMPLE_TYPE, &p->msg);
		for (size_t i = 0; i < m->ntrees && !g->err; i++)
			model_samples(m, s, &m->trees[i], sample, failed, p);
	}
	for (int i = 0; i < 2; i++)
		if (comments[i][0])
			model_string(m, comments[i]);
	model_string(m, heap ? "space" : time_type); /* the period's type: strings go out next */
	tables(p);
	snapshot_times(s, &real, &user, &system);
	gz_varint_field(g, PPROF_DURATION_NANOS, real);
	/* A heap profile's period is the mean bytes between samples, as Go's says. */
	value_type(p, heap ? "space" : time_type, heap ? "bytes" : "nanoseconds");
	gz_record(g, PPROF_PERIOD_TYPE, &p->msg);
	gz_varint_field(g, PPROF_PERIOD, p->period);
	for (int i = 0; i < 2; i++)
		if (comments[i][0])
			gz_varint_field(g, PPROF_COMMENT, model_string(m, comments[i]));
	if (shown)
		gz_varint_field(g, PPROF_DEFAULT_SAMPLE_TYPE, shown);
}

int export_pprof(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct pprof p = { 0 };
	struct gz *g = xcalloc(1, sizeof(*g));
	char *comment = counters_comment(s), cost[128];
	const char *comments[2] = { comment, selfcost_summary(cost, sizeof(cost), &s->cost) };
	int err;

	model_init(&p.m, s, scope);
	p.g = g;
	g->out = out;
	/* The fastest level, as Go's runtime/pprof writes its profiles. */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fatal("out of memory (zlib)");
	write_profile(&p, comments);
	if (!g->err)
		gz_feed(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err ? g->err : ferror(out) ? -(errno ? errno : EIO) : 0;

	free(comment);
	pb_free(&g->head);
	free(g);
	pb_free(&p.msg);
	pb_free(&p.tmp);
	model_free(&p.m);
	return err;
}
