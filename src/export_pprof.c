/* export_pprof.c — a snapshot as a gzipped profile.proto message (pprof's format: go tool pprof,
 * Pyroscope, Parca).
 *
 * The protobuf is encoded here by hand: a message is a sequence of (field << 3 | wire type) keys,
 * each followed by a varint or by a length and that many bytes. The Profile's repeated fields are
 * independent top-level records, so each is encoded into a small buffer and streamed through zlib's
 * gzip deflate: memory stays proportional to the largest single record, not to the file.
 *
 * Layout: two sample types, samples/count and cpu/nanoseconds (count x the sampling period); in
 * the timed modes, microseconds/count and MODE/nanoseconds (offcpu, runnable or wall). An
 * allocation profile has the four of Go's heap profiles, alloc_objects/count, alloc_space/bytes,
 * inuse_objects/count and inuse_space/bytes, from the snapshot and its companions (each
 * snapshot's samples carry its own value, the others 0: pprof adds samples of one stack up), and
 * the one shown is the default sample type.
 * Samples are labelled with the thread's pid, tid and name; the merged scope emits every thread's
 * tree, so tools can still split by thread.
 *
 * Addresses are the modules' link-time (ELF) addresses. A module's Mapping spans the link-time
 * range of its executable PT_LOAD segment (the one holding its functions' code), its file_offset
 * that segment's p_offset, so address - memory_start + file_offset is the address's offset in
 * the file, as pprof's symbolizer computes it; build_id is the file's GNU build-id. Both are read
 * from the file when the profile is written (libelf): a file that cannot be read, that changed
 * since profiling began, or whose segment no longer holds those functions gives a Mapping that
 * spans the functions' code, without build ID or file offset. Mappings say has_functions, and
 * has_filenames and has_line_numbers when their functions have lines, has_inline_frames when a
 * Location of theirs holds an inlined chain: pprof takes them as symbolized.
 *
 * Samples, one per (stack, leaf site): a thread node's self samples are split by the sites they
 * were taken at (snapshot_node_sites()). The leaf Location is the sampled instruction itself:
 * its address, and a Line (function, line) per frame there, innermost first, so an inlined chain
 * is several Lines in one Location (pprof's convention; the callers that share it are left off
 * the rest of the stack). The callers are Locations at their function's entry (its code's start,
 * on the line of its lowest sampled address): proftop keeps per-path counts by function, not by
 * call site, so the sampled instruction is exact and the callers are placed at their function's
 * entry. A node's samples without a site (no line lookups, a file read back, "[other]") have
 * their leaf at its function's entry too; a function without code or sites has one Location with
 * no address, a Line of line 0. Function ids are proftop's; Location ids are the function's for
 * the entry, nfuncs + the site's for a leaf. */
#include "proftop/export_writers.h"

#include "proftop/debugfile.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

/* The fields of profile.proto's Profile message. */
enum {
	PPROF_SAMPLE_TYPE = 1, PPROF_SAMPLE = 2, PPROF_MAPPING = 3, PPROF_LOCATION = 4,
	PPROF_FUNCTION = 5, PPROF_STRING_TABLE = 6, PPROF_DURATION_NANOS = 10,
	PPROF_PERIOD_TYPE = 11, PPROF_PERIOD = 12, PPROF_COMMENT = 13, PPROF_DEFAULT_SAMPLE_TYPE = 14,
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

#define NO_SITE UINT32_MAX
#define NOT_LEAF UINT32_MAX

/* One Mapping: a module's file, or its name alone when none of its functions has one. */
struct mapping {
	const char *key;            /* interned: the file's path, else the module's name */
	const char *path;           /* NULL: no file */
	uint64_t lo, hi;            /* the range of its functions' code */
	uint64_t start, limit, offset; /* as written; all 0 without a file */
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool lines, inline_frames;
};

struct site_key {
	uint64_t func, addr;
};

struct pprof {
	const struct snapshot *s;
	struct strpool *pool;
	struct idmap string_index;  /* interned string → index in strings */
	const char **strings;
	size_t nstrings, strings_cap;
	uint32_t *mapping_of;       /* function → its mapping id (0: function not used) */
	struct mapping *mappings;   /* mapping id - 1 */
	size_t nmappings, mappings_cap;
	struct idmap mapping_index; /* interned key → mapping id */
	struct idmap module_file;   /* interned module → a function of it with a file, + 1 */
	uint32_t *first_site;       /* per function: its lowest sampled address with a line */
	/* Per site: a leaf Location's Lines after its own, the sites of the callers its code is
	 * inlined into, innermost first: chain[chain_at[site]] on, chain_len[site] of them
	 * (NOT_LEAF: no leaf Location). Kept per leaf, not as a link per site: a site (function,
	 * address) recurs in the chain of code inlined into itself, and links would make a cycle. */
	uint32_t *chain, *chain_at, *chain_len;
	size_t nchain, chain_cap;
	struct idmap site_index;    /* hash of site_key → site (verified on lookup) */
	uint64_t profiled_since;    /* CLOCK_REALTIME ns when profiling began */
	/* An allocation profile's snapshots, in heap_types' order (NULL: none), and the trees of
	 * each that are written (the snapshot's own: the scope's; a companion's: every thread's);
	 * which one's samples are written now. */
	const struct snapshot *parts[SNAPSHOT_NCOMPANIONS];
	struct tree *part_trees[SNAPSHOT_NCOMPANIONS];
	size_t part_ntrees[SNAPSHOT_NCOMPANIONS];
	size_t part;
};

/* Go's heap profile: its sample types in its order, and proftop's kind of profile of each. */
static const struct {
	const char *type, *unit, *kind;
} heap_types[SNAPSHOT_NCOMPANIONS] = {
	{ "alloc_objects", "count", "alloc-objects" },
	{ "alloc_space", "bytes", "alloc" },
	{ "inuse_objects", "count", "inuse-objects" },
	{ "inuse_space", "bytes", "inuse" },
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

static const char *intern(struct pprof *p, const char *s)
{
	return strpool_intern(p->pool, s, strlen(s));
}

/* --- what the snapshot has: sites by (function, address), files by module ---------------------- */

static uint32_t site_at(const struct pprof *p, uint32_t func, uint64_t addr)
{
	const struct site_key key = { func, addr };

	for (uint64_t seed = 0;; seed++) {
		uint32_t id = idmap_get(&p->site_index, util_hash_bytes(&key, sizeof(key), seed));

		if (id == IDMAP_MISSING)
			return NO_SITE;
		if (p->s->sites[id].func == func && p->s->sites[id].addr == addr)
			return id;
	}
}

/* The index of sites, each function's first site, and which module has a file. */
static void pprof_index(struct pprof *p)
{
	const struct snapshot *s = p->s;

	p->first_site = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*p->first_site));
	memset(p->first_site, 0xff, s->nfuncs * sizeof(*p->first_site));
	p->chain_at = xcalloc(s->nsites ? s->nsites : 1, sizeof(*p->chain_at));
	p->chain_len = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*p->chain_len));
	memset(p->chain_len, 0xff, s->nsites * sizeof(*p->chain_len));
	for (uint32_t i = 0; i < s->nsites; i++) {
		const struct snapshot_site *site = &s->sites[i];
		const struct site_key key = { site->func, site->addr };
		uint32_t *first = &p->first_site[site->func];
		uint64_t seed = 0, h;

		while (h = util_hash_bytes(&key, sizeof(key), seed++),
		       idmap_get(&p->site_index, h) != IDMAP_MISSING)
			;
		idmap_put(&p->site_index, h, i);
		if (site->addr != SNAPSHOT_SITE_OTHER && site->line &&
		    (*first == NO_SITE || site->addr < s->sites[*first].addr))
			*first = i;
	}
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		uint64_t key = (uint64_t)(uintptr_t)intern(p, s->funcs[f].module);

		if (s->funcs[f].path && idmap_get(&p->module_file, key) == IDMAP_MISSING)
			idmap_put(&p->module_file, key, f + 1);
	}
}

/* --- mappings ----------------------------------------------------------------------------------- */

/* The mapping of a function: its file's, else that of a function of the same module with one
 * (code inlined there has no file of its own), else its module's name alone. */
static void use_function(struct pprof *p, uint32_t func)
{
	const struct snapshot_func *f = &p->s->funcs[func];
	const char *path = f->path;
	const char *key;
	struct mapping *m;
	uint32_t id;

	if (p->mapping_of[func])
		return;
	if (!path) {
		id = idmap_get(&p->module_file, (uint64_t)(uintptr_t)intern(p, f->module));
		path = id == IDMAP_MISSING ? NULL : p->s->funcs[id - 1].path;
	}
	key = intern(p, path ? path : f->module);
	id = idmap_get(&p->mapping_index, (uint64_t)(uintptr_t)key);
	if (id == IDMAP_MISSING) {
		xgrow((void **)&p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*p->mappings));
		p->mappings[p->nmappings++] = (struct mapping){ .key = key, .path = path,
							       .lo = UINT64_MAX };
		id = (uint32_t)p->nmappings;
		idmap_put(&p->mapping_index, (uint64_t)(uintptr_t)key, id);
	}
	m = &p->mappings[id - 1];
	if (f->path && f->code_end > f->code_start) {
		m->lo = f->code_start < m->lo ? f->code_start : m->lo;
		m->hi = f->code_end > m->hi ? f->code_end : m->hi;
	}
	p->mapping_of[func] = id;
	str_index(p, f->name);
}

/* The executable PT_LOAD segment of elf that holds m's code. */
static bool exec_segment(Elf *elf, struct mapping *m)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    m->lo < ph.p_vaddr || m->hi > ph.p_vaddr + ph.p_memsz)
			continue;
		m->start = ph.p_vaddr;
		m->limit = ph.p_vaddr + ph.p_memsz;
		m->offset = ph.p_offset;
		return true;
	}
	return false;
}

/* m's range, file offset and build-id from its file (see the top of the file). */
static void mapping_read_file(const struct pprof *p, struct mapping *m)
{
	struct stat st;
	Elf *elf = NULL;
	int fd;

	if (m->lo >= m->hi)
		return; /* none of its functions' code is known: no addresses */
	m->start = m->lo;
	m->limit = m->hi;
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec >= p->profiled_since)
		goto out_close;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && exec_segment(elf, m))
		m->build_id_len = debugfile_build_id(elf, m->build_id);
	if (elf)
		elf_end(elf);
out_close:
	close(fd);
}

/* Whether a Location of mapping id at addr has that address (0: none). */
static bool has_address(const struct pprof *p, uint32_t id, uint64_t addr)
{
	const struct mapping *m = &p->mappings[id - 1];

	return m->path && addr && addr != SNAPSHOT_SITE_OTHER && addr >= m->start && addr < m->limit;
}

static void mapping_record(struct gz *g, struct pprof *p, size_t id, struct pb *msg)
{
	const struct mapping *m = &p->mappings[id - 1];
	char hex[2 * DEBUGFILE_BUILD_ID_MAX + 1];

	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	hex[2 * m->build_id_len] = '\0';
	pb_uint(msg, 1, id);
	pb_uint(msg, 2, m->start);
	pb_uint(msg, 3, m->limit);
	pb_uint(msg, 4, m->offset);
	pb_uint(msg, 5, str_index(p, m->key));
	pb_uint(msg, 6, str_index(p, hex));
	pb_uint(msg, 7, 1);            /* has_functions */
	pb_uint(msg, 8, m->lines);     /* has_filenames */
	pb_uint(msg, 9, m->lines);     /* has_line_numbers */
	pb_uint(msg, 10, m->inline_frames);
	gz_record(g, PPROF_MAPPING, msg);
}

/* --- samples ------------------------------------------------------------------------------------ */

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
	uint64_t values[SNAPSHOT_NCOMPANIONS] = { count, count * period };

	pb_packed(msg, 1, stack, depth);
	if (snapshot_allocations(p->s)) {
		memset(values, 0, sizeof(values));
		values[p->part] = count;
		pb_packed(msg, 2, values, SNAPSHOT_NCOMPANIONS);
	} else {
		pb_packed(msg, 2, values, 2);
	}
	if (t->thread && t->thread->tid) {
		label(msg, tmp, p, "pid", NULL, (uint64_t)t->thread->pid);
		label(msg, tmp, p, "tid", NULL, (uint64_t)t->thread->tid);
		if (t->thread->comm && *t->thread->comm)
			label(msg, tmp, p, "thread_name", t->thread->comm, 0);
	}
	gz_record(g, PPROF_SAMPLE, msg);
}

/* How many callers of a leaf at site share its Location (path[0..depth) is the stack to it):
 * while a frame is code inlined into the one above, that caller's site at the same address
 * holds the line of the call. The first path to a leaf makes its chain; a later one shares the
 * Location as far as its frames match it. Never more than the path's depth: bounded. */
static size_t inline_chain(struct pprof *p, uint32_t site, const uint32_t *path, size_t depth)
{
	const struct snapshot *s = p->s;
	uint64_t addr = s->sites[site].addr;
	uint32_t at = site;
	size_t k = 0;

	if (p->chain_len[site] != NOT_LEAF) {
		const uint32_t *chain = p->chain + p->chain_at[site];

		while (k < p->chain_len[site] && k + 1 < depth &&
		       s->sites[chain[k]].func == s->nodes[path[depth - 2 - k]].func)
			k++;
		return k;
	}
	p->chain_at[site] = (uint32_t)p->nchain;
	for (; addr != SNAPSHOT_SITE_OTHER && s->funcs[s->sites[at].func].inlined && k + 1 < depth;
	     k++) {
		uint32_t outer = site_at(p, s->nodes[path[depth - 2 - k]].func, addr);

		if (outer == NO_SITE)
			break;
		xgrow((void **)&p->chain, &p->chain_cap, p->nchain + 1, sizeof(*p->chain));
		p->chain[p->nchain++] = outer;
		at = outer;
	}
	p->chain_len[site] = (uint32_t)k;
	return k;
}

/* A node's self samples: one Sample per site it has, leaf first; what no site has at the leaf
 * function's entry. stack[] holds the entry Locations of the path, leaf first. */
static void node_samples(struct gz *g, struct pprof *p, const struct tree *t, uint32_t node,
			 const uint32_t *path, size_t depth, uint64_t *stack, uint64_t period,
			 struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;
	uint64_t left = s->nodes[node].self;

	for (uint32_t e = snapshot_node_sites(s, node); e != SNAPSHOT_NO_NODE_SITE && !g->err;
	     e = s->node_sites[e].next) {
		const struct snapshot_node_site *ns = &s->node_sites[e];
		size_t k = inline_chain(p, ns->site, path, depth);
		uint64_t entry = stack[k];

		stack[k] = s->nfuncs + ns->site;
		sample(g, p, t, stack + k, depth - k, ns->self, period, msg, tmp);
		stack[k] = entry;
		left -= ns->self < left ? ns->self : left;
	}
	if (left && !g->err)
		sample(g, p, t, stack, depth, left, period, msg, tmp);
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
		node_samples(g, p, t, step.node, path, depth, stack, period, msg, tmp);
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

/* pprof takes the first mapping for the program's: that of main when it has samples, else of the
 * first function seen in a file that is not a shared library; not that of whichever library a
 * thread's stack starts in. */
static void use_main(struct pprof *p)
{
	const struct snapshot *s = p->s;
	uint32_t first = 0;

	for (uint32_t f = 1; f < s->nfuncs; f++) {
		const char *path = s->funcs[f].path;

		if (!path || !s->func_total[f])
			continue;
		if (!strcmp(s->funcs[f].name, "main")) {
			first = f;
			break;
		}
		if (!first && !strstr(strrchr(path, '/') ? strrchr(path, '/') : path, ".so"))
			first = f;
	}
	if (first)
		use_function(p, first);
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

/* --- the tables --------------------------------------------------------------------------------- */

static void location_line(struct pb *msg, struct pb *tmp, uint32_t func, uint32_t line)
{
	tmp->len = 0;
	pb_uint(tmp, 1, func);
	pb_uint(tmp, 2, line);
	pb_bytes(msg, 4, tmp->buf, tmp->len);
}

/* A Location: id, mapping, address, then its Lines (function, line), innermost first: the
 * site's (none: the function's, without a line), then for a leaf its inlined callers'. */
static void location_record(struct gz *g, struct pprof *p, uint64_t id, uint32_t func,
			    uint64_t addr, uint32_t site, bool leaf, struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;
	uint32_t mapping = p->mapping_of[func];
	bool address = has_address(p, mapping, addr);

	pb_uint(msg, 1, id);
	/* An address-less Location of a module with a file is in no mapping: pprof would look it up. */
	pb_uint(msg, 2, address || !p->mappings[mapping - 1].path ? mapping : 0);
	pb_uint(msg, 3, address ? addr : 0);
	if (site == NO_SITE) {
		location_line(msg, tmp, func, 0);
	} else {
		location_line(msg, tmp, s->sites[site].func, s->sites[site].line);
		for (uint32_t k = 0; leaf && k < p->chain_len[site]; k++) {
			const struct snapshot_site *outer = &s->sites[p->chain[p->chain_at[site] + k]];

			location_line(msg, tmp, outer->func, outer->line);
		}
	}
	gz_record(g, PPROF_LOCATION, msg);
}

/* What the mappings say of themselves: lines, inlined chains; and their files' layouts. */
static void mappings_finish(struct pprof *p)
{
	const struct snapshot *s = p->s;

	for (uint32_t f = 1; f < s->nfuncs; f++)
		if (p->mapping_of[f] && p->first_site[f] != NO_SITE)
			p->mappings[p->mapping_of[f] - 1].lines = true;
	for (uint32_t i = 0; i < s->nsites; i++)
		if (p->chain_len[i] != NOT_LEAF && p->chain_len[i])
			p->mappings[p->mapping_of[s->sites[i].func] - 1].inline_frames = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	for (size_t m = 0; m < p->nmappings; m++)
		if (p->mappings[m].path)
			mapping_read_file(p, &p->mappings[m]);
}

static void tables(struct gz *g, struct pprof *p, struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;

	mappings_finish(p);
	for (size_t m = 0; m < p->nmappings && !g->err; m++)
		mapping_record(g, p, m + 1, msg);
	for (uint32_t f = 1; f < s->nfuncs && !g->err; f++) {
		const struct snapshot_func *fn = &s->funcs[f];

		if (p->mapping_of[f])
			location_record(g, p, f, f, fn->path ? fn->code_start : 0, p->first_site[f],
					false, msg, tmp);
	}
	for (uint32_t i = 0; i < s->nsites && !g->err; i++)
		if (p->chain_len[i] != NOT_LEAF)
			location_record(g, p, s->nfuncs + i, s->sites[i].func, s->sites[i].addr, i,
					true, msg, tmp);
	for (uint32_t f = 1; f < s->nfuncs && !g->err; f++) {
		uint32_t first = p->first_site[f];

		if (!p->mapping_of[f])
			continue;
		pb_uint(msg, 1, f);
		pb_uint(msg, 2, str_index(p, s->funcs[f].name));
		pb_uint(msg, 3, str_index(p, s->funcs[f].name));
		if (first != NO_SITE && s->sites[first].file)
			pb_uint(msg, 4, str_index(p, s->sites[first].file));
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

/* An allocation profile's samples: each part's trees, with its value in its place. */
static void heap_samples(struct gz *g, struct pprof *p, struct pb *msg, struct pb *tmp)
{
	const struct snapshot *s = p->s;

	for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS && !g->err; k++) {
		p->s = p->parts[k];
		p->part = k;
		for (size_t i = 0; p->s && i < p->part_ntrees[k] && !g->err; i++)
			samples_of(g, p, &p->part_trees[k][i], 0, msg, tmp);
	}
	p->s = s;
}

/* The Profile message's fields, in the order Go's writer uses. comments[1] is proftop's own
 * cost ("" when the snapshot has none: then no second comment). */
static void write_profile(struct gz *g, struct pprof *p, const struct tree *trees, size_t ntrees,
			  const char *const comments[2])
{
	const struct snapshot *s = p->s;
	bool heap = snapshot_allocations(s);
	uint64_t period = heap ? s->freq : s->freq ? (1000000000ull + s->freq / 2) / s->freq : 0;
	uint64_t real, user, system, shown = 0;
	struct pb msg = { 0 }, tmp = { 0 };

	/* In a timed mode a count is a microsecond: the second type is that time. */
	const char *time_type = snapshot_kind(s);

	if (heap) {
		for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS; k++) {
			value_type(&msg, p, heap_types[k].type, heap_types[k].unit);
			gz_record(g, PPROF_SAMPLE_TYPE, &msg);
			if (!strcmp(heap_types[k].kind, snapshot_kind(s)))
				shown = str_index(p, heap_types[k].type);
		}
		heap_samples(g, p, &msg, &tmp);
	} else {
		value_type(&msg, p, snapshot_timed(s) ? "microseconds" : "samples", "count");
		gz_record(g, PPROF_SAMPLE_TYPE, &msg);
		value_type(&msg, p, time_type, "nanoseconds");
		gz_record(g, PPROF_SAMPLE_TYPE, &msg);
		for (size_t i = 0; i < ntrees && !g->err; i++)
			samples_of(g, p, &trees[i], period, &msg, &tmp);
	}
	for (int i = 0; i < 2; i++)
		if (comments[i][0])
			str_index(p, comments[i]);
	str_index(p, heap ? "space" : time_type); /* the period's type: strings go out next */
	tables(g, p, &msg, &tmp);
	snapshot_times(s, &real, &user, &system);
	gz_varint_field(g, PPROF_DURATION_NANOS, real);
	/* A heap profile's period is the mean bytes between samples, as Go's says. */
	value_type(&msg, p, heap ? "space" : time_type, heap ? "bytes" : "nanoseconds");
	gz_record(g, PPROF_PERIOD_TYPE, &msg);
	gz_varint_field(g, PPROF_PERIOD, period);
	for (int i = 0; i < 2; i++)
		if (comments[i][0])
			gz_varint_field(g, PPROF_COMMENT, str_index(p, comments[i]));
	if (shown)
		gz_varint_field(g, PPROF_DEFAULT_SAMPLE_TYPE, shown);
	free(msg.buf);
	free(tmp.buf);
}

/* When profiling began, on the clock file times are in. */
static uint64_t profiled_since(const struct snapshot *s)
{
	struct timespec now;
	uint64_t ns;

	clock_gettime(CLOCK_REALTIME, &now);
	ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	return ns > s->elapsed_ns ? ns - s->elapsed_ns : 0;
}

static void pprof_free(struct pprof *p)
{
	free(p->strings);
	free(p->mappings);
	free(p->mapping_of);
	free(p->first_site);
	free(p->chain);
	free(p->chain_at);
	free(p->chain_len);
	idmap_free(&p->string_index);
	idmap_free(&p->mapping_index);
	idmap_free(&p->module_file);
	idmap_free(&p->site_index);
	strpool_free(p->pool);
}

int export_pprof(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct pprof p = { .s = s, .pool = strpool_new(), .profiled_since = profiled_since(s) };
	struct gz *g = xcalloc(1, sizeof(*g));
	struct tree *trees;
	size_t ntrees = trees_of(s, scope, &trees);
	char *comment = counters_comment(s), cost[128];
	const char *comments[2] = { comment, selfcost_summary(cost, sizeof(cost), &s->cost) };
	int err;

	idmap_init(&p.string_index);
	idmap_init(&p.mapping_index);
	idmap_init(&p.module_file);
	idmap_init(&p.site_index);
	p.mapping_of = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*p.mapping_of));
	pprof_index(&p);
	/* Strings are numbered as records use them; the table goes out after them all. */
	str_index(&p, "");
	use_main(&p);
	for (size_t i = 0; i < ntrees; i++)
		use_functions(&p, &trees[i]);
	/* An allocation profile's other parts (the merged scope only: a thread's file is its own
	 * snapshot's), their functions numbered as the snapshot's (companions share ids). */
	for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS && snapshot_allocations(s); k++) {
		const struct snapshot *part = snapshot_sibling(s, heap_types[k].kind);
		struct export_scope merged;

		if (part && part != s && (scope->thread || part->nfuncs > s->nfuncs))
			part = NULL;
		p.parts[k] = part;
		if (!part || part == s) {
			p.part_trees[k] = trees;
			p.part_ntrees[k] = part ? ntrees : 0;
			continue;
		}
		export_scope_merged(&merged, part);
		p.part_ntrees[k] = trees_of(part, &merged, &p.part_trees[k]);
		p.s = part;
		for (size_t i = 0; i < p.part_ntrees[k]; i++)
			use_functions(&p, &p.part_trees[k][i]);
		p.s = s;
	}
	g->out = out;
	/* The fastest level, as Go's runtime/pprof writes its profiles. */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fatal("out of memory (zlib)");
	write_profile(g, &p, trees, ntrees, comments);
	if (!g->err)
		gz_feed(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err ? g->err : ferror(out) ? -(errno ? errno : EIO) : 0;

	for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS; k++)
		if (p.part_trees[k] != trees)
			free(p.part_trees[k]);
	free(trees);
	free(comment);
	free(g->head.buf);
	free(g);
	pprof_free(&p);
	return err;
}
