/* export_pprof.c — a snapshot as a gzipped profile.proto message (pprof's format: go tool pprof,
 * Pyroscope, Parca).
 *
 * The protobuf is encoded here by hand: a message is a sequence of (field << 3 | wire type) keys,
 * each followed by a varint or by a length and that many bytes. The Profile's repeated fields are
 * independent top-level records, so each is encoded into a small buffer and streamed through zlib's
 * gzip deflate: memory stays proportional to the largest single record, not to the file.
 *
 * Layout: two sample types, samples/count and cpu/nanoseconds (count x the sampling period). One
 * Sample per distinct stack with self samples, locations leaf first, labelled with the thread's pid,
 * tid and name; the merged scope emits every thread's tree, so tools can still split by thread.
 * One Location and one Function per proftop function (location id = function id, no address: a
 * snapshot keeps functions, not addresses), one Mapping per module. */
#include "proftop/export.h"

#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

/* The fields of profile.proto's Profile message. */
enum {
	PPROF_SAMPLE_TYPE = 1, PPROF_SAMPLE = 2, PPROF_MAPPING = 3, PPROF_LOCATION = 4,
	PPROF_FUNCTION = 5, PPROF_STRING_TABLE = 6, PPROF_DURATION_NANOS = 10,
	PPROF_PERIOD_TYPE = 11, PPROF_PERIOD = 12, PPROF_COMMENT = 13,
};

struct pb {
	uint8_t *buf;
	size_t len, cap;
};

static void pb_raw(struct pb *b, const void *data, size_t len)
{
	xgrow((void **)&b->buf, &b->cap, b->len + len, 1);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

/* A varint field; zero is the default and is left out. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
	pb_varint(b, len);
	pb_raw(b, data, len);
}

static void pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += varint_size(v[i]);
	pb_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
	pb_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

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
	pb_varint(&g->head, (uint64_t)field << 3 | WIRE_BYTES);
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
	const struct snapshot *s;
	struct strpool *pool;
	struct idmap string_index;  /* interned string → index in strings */
	const char **strings;
	size_t nstrings, strings_cap;
	uint32_t *mapping_of;       /* function → its mapping id (0: function not used) */
	const char **mappings;      /* mapping id - 1 → module */
	size_t nmappings, mappings_cap;
	struct idmap mapping_index; /* interned module → mapping id */
};

static uint64_t str_index(struct pprof *p, const char *s)
{
	const char *key = strpool_intern(p->pool, s, strlen(s));
	uint32_t i = idmap_get(&p->string_index, (uint64_t)(uintptr_t)key);

	if (i == IDMAP_MISSING) {
		xgrow((void **)&p->strings, &p->strings_cap, p->nstrings + 1, sizeof(*p->strings));
		i = (uint32_t)p->nstrings;
		p->strings[p->nstrings++] = key;
		idmap_put(&p->string_index, (uint64_t)(uintptr_t)key, i);
	}
	return i;
}

static void use_function(struct pprof *p, uint32_t func)
{
	const char *module = p->s->funcs[func].module;
	const char *key;
	uint32_t id;

	if (p->mapping_of[func])
		return;
	key = strpool_intern(p->pool, module, strlen(module));
	id = idmap_get(&p->mapping_index, (uint64_t)(uintptr_t)key);
	if (id == IDMAP_MISSING) {
		xgrow((void **)&p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*p->mappings));
		p->mappings[p->nmappings++] = key;
		id = (uint32_t)p->nmappings;
		idmap_put(&p->mapping_index, (uint64_t)(uintptr_t)key, id);
		str_index(p, module);
	}
	p->mapping_of[func] = id;
	str_index(p, p->s->funcs[func].name);
}

struct tree {
	const struct snapshot_thread *thread; /* NULL: no thread labels */
	uint32_t root;
};

static void value_type(struct pb *msg, struct pprof *p, const char *type, const char *unit)
{
	pb_uint(msg, 1, str_index(p, type));
	pb_uint(msg, 2, str_index(p, unit));
}

static void label(struct pb *msg, struct pb *tmp, struct pprof *p, const char *key,
		  const char *str, uint64_t num)
{
	tmp->len = 0;
	pb_uint(tmp, 1, str_index(p, key));
	if (str)
		pb_uint(tmp, 2, str_index(p, str));
	else
		pb_uint(tmp, 3, num);
	pb_bytes(msg, 3, tmp->buf, tmp->len);
}

static void sample(struct gz *g, struct pprof *p, const struct tree *t, const uint64_t *stack,
		   size_t depth, uint64_t count, uint64_t period, struct pb *msg, struct pb *tmp)
{
	uint64_t values[2] = { count, count * period };

	pb_packed(msg, 1, stack, depth);
	pb_packed(msg, 2, values, 2);
	if (t->thread && t->thread->tid) {
		label(msg, tmp, p, "pid", NULL, (uint64_t)t->thread->pid);
		label(msg, tmp, p, "tid", NULL, (uint64_t)t->thread->tid);
		if (t->thread->comm && *t->thread->comm)
			label(msg, tmp, p, "thread_name", t->thread->comm, 0);
	}
	gz_record(g, PPROF_SAMPLE, msg);
}

/* The samples of one tree: each node with self samples, its stack leaf first. */
static void samples_of(struct gz *g, struct pprof *p, const struct tree *t, uint64_t period,
		       struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;
	struct export_scope scope = { t->root, t->thread };
	struct snapshot_walk w;
	struct snapshot_walk_step step;
	uint64_t *stack = NULL;
	size_t cap = 0;

	if (s->nodes[t->root].self)
		sample(g, p, t, NULL, 0, s->nodes[t->root].self, period, msg, tmp);
	export_walk_begin(&w, s, &scope, NULL, NULL);
	while (!g->err && snapshot_walk_next(&w, &step)) {
		size_t depth;
		const uint32_t *path = snapshot_walk_path(&w, &depth);

		if (!s->nodes[step.node].self)
			continue;
		xgrow((void **)&stack, &cap, depth, sizeof(*stack));
		for (size_t d = 0; d < depth; d++)
			stack[d] = s->nodes[path[depth - 1 - d]].func;
		sample(g, p, t, stack, depth, s->nodes[step.node].self, period, msg, tmp);
	}
	snapshot_walk_end(&w);
	free(stack);
}

/* Give every function of a tree its mapping and strings, in the order the samples meet them. */
static void use_functions(struct pprof *p, const struct tree *t)
{
	struct export_scope scope = { t->root, t->thread };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	export_walk_begin(&w, p->s, &scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step))
		use_function(p, p->s->nodes[step.node].func);
	snapshot_walk_end(&w);
}

/* Which trees to write: the scope's, or for the merged scope each thread's. */
static size_t trees_of(const struct snapshot *s, const struct export_scope *scope,
		       struct tree **out)
{
	struct tree *trees = xcalloc(s->nthreads + 1, sizeof(*trees));
	size_t n = 0;

	if (scope->thread || !s->nthreads) {
		trees[n++] = (struct tree){ scope->thread, scope->root };
	} else {
		for (size_t i = 0; i < s->nthreads; i++)
			if (s->nodes[s->threads[i].root].total)
				trees[n++] = (struct tree){ &s->threads[i], s->threads[i].root };
	}
	*out = trees;
	return n;
}

static void tables(struct gz *g, struct pprof *p, struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;

	for (size_t m = 0; m < p->nmappings && !g->err; m++) {
		pb_uint(msg, 1, m + 1);
		pb_uint(msg, 5, str_index(p, p->mappings[m]));
		pb_uint(msg, 7, 1); /* has_functions */
		gz_record(g, PPROF_MAPPING, msg);
	}
	for (uint32_t f = 1; f < s->nfuncs && !g->err; f++) {
		if (!p->mapping_of[f])
			continue;
		tmp->len = 0;
		pb_uint(tmp, 1, f); /* Line.function_id */
		pb_uint(msg, 1, f);
		pb_uint(msg, 2, p->mapping_of[f]);
		pb_bytes(msg, 4, tmp->buf, tmp->len);
		gz_record(g, PPROF_LOCATION, msg);
	}
	for (uint32_t f = 1; f < s->nfuncs && !g->err; f++) {
		if (!p->mapping_of[f])
			continue;
		pb_uint(msg, 1, f);
		pb_uint(msg, 2, str_index(p, s->funcs[f].name));
		pb_uint(msg, 3, str_index(p, s->funcs[f].name));
		gz_record(g, PPROF_FUNCTION, msg);
	}
	for (size_t i = 0; i < p->nstrings && !g->err; i++) {
		g->head.len = 0;
		pb_bytes(&g->head, PPROF_STRING_TABLE, p->strings[i], strlen(p->strings[i]));
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

/* The Profile message's fields, in the order Go's writer uses. */
static void write_profile(struct gz *g, struct pprof *p, const struct tree *trees, size_t ntrees,
			  const char *comment)
{
	const struct snapshot *s = p->s;
	uint64_t period = s->freq ? (1000000000ull + s->freq / 2) / s->freq : 0;
	struct pb msg = { 0 }, tmp = { 0 };

	value_type(&msg, p, "samples", "count");
	gz_record(g, PPROF_SAMPLE_TYPE, &msg);
	value_type(&msg, p, "cpu", "nanoseconds");
	gz_record(g, PPROF_SAMPLE_TYPE, &msg);
	for (size_t i = 0; i < ntrees && !g->err; i++)
		samples_of(g, p, &trees[i], period, &msg, &tmp);
	str_index(p, comment);
	tables(g, p, &msg, &tmp);
	gz_varint_field(g, PPROF_DURATION_NANOS, s->elapsed_ns);
	value_type(&msg, p, "cpu", "nanoseconds");
	gz_record(g, PPROF_PERIOD_TYPE, &msg);
	gz_varint_field(g, PPROF_PERIOD, period);
	gz_varint_field(g, PPROF_COMMENT, str_index(p, comment));
	free(msg.buf);
	free(tmp.buf);
}

int export_pprof(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct pprof p = { .s = s, .pool = strpool_new() };
	struct gz *g = xcalloc(1, sizeof(*g));
	struct tree *trees;
	size_t ntrees = trees_of(s, scope, &trees);
	char *comment = counters_comment(s);
	int err;

	idmap_init(&p.string_index);
	idmap_init(&p.mapping_index);
	p.mapping_of = xcalloc(s->nfuncs, sizeof(*p.mapping_of));
	/* Strings are numbered as records use them; the table goes out after them all. */
	str_index(&p, "");
	for (size_t i = 0; i < ntrees; i++)
		use_functions(&p, &trees[i]);
	g->out = out;
	/* The fastest level, as Go's runtime/pprof writes its profiles. */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fatal("out of memory (zlib)");
	write_profile(g, &p, trees, ntrees, comment);
	if (!g->err)
		gz_feed(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err ? g->err : ferror(out) ? -(errno ? errno : EIO) : 0;

	free(trees);
	free(comment);
	free(g->head.buf);
	free(g);
	free(p.strings);
	free(p.mappings);
	free(p.mapping_of);
	idmap_free(&p.string_index);
	idmap_free(&p.mapping_index);
	strpool_free(p.pool);
	return err;
}
