/* export_model.c — the profile pprof and OTLP describe, made from a snapshot (export_model.h). */
#include "proftop/export_model.h"

#include "proftop/strpool.h"
#include "proftop/util.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOT_LEAF UINT32_MAX

const struct model_heap_type model_heap_types[SNAPSHOT_NCOMPANIONS] = {
	{ "alloc_objects", "count", "alloc-objects" },
	{ "alloc_space", "bytes", "alloc" },
	{ "inuse_objects", "count", "inuse-objects" },
	{ "inuse_space", "bytes", "inuse" },
};

struct site_key {
	uint64_t func, addr;
};

static const char *intern(struct export_model *m, const char *s)
{
	return strpool_intern(m->pool, s, strlen(s));
}

uint64_t model_string(struct export_model *m, const char *s)
{
	const char *key = intern(m, s);
	uint32_t i = idmap_get(&m->string_index, (uint64_t)(uintptr_t)key);

	if (i == IDMAP_MISSING) {
		xgrow((void **)&m->strings, &m->strings_cap, m->nstrings + 1, sizeof(*m->strings));
		i = (uint32_t)m->nstrings;
		m->strings[m->nstrings++] = key;
		idmap_put(&m->string_index, (uint64_t)(uintptr_t)key, i);
	}
	return i;
}

/* --- what the snapshot has: sites by (function, address), files by module ---------------------- */

static uint32_t site_at(const struct export_model *m, uint32_t func, uint64_t addr)
{
	const struct site_key key = { func, addr };

	for (uint64_t seed = 0;; seed++) {
		uint32_t id = idmap_get(&m->site_index, util_hash_bytes(&key, sizeof(key), seed));

		if (id == IDMAP_MISSING)
			return MODEL_NO_SITE;
		if (m->s->sites[id].func == func && m->s->sites[id].addr == addr)
			return id;
	}
}

/* The index of sites, each function's first site, and which module has a file. */
static void model_index(struct export_model *m)
{
	const struct snapshot *s = m->s;

	m->first_site = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*m->first_site));
	memset(m->first_site, 0xff, s->nfuncs * sizeof(*m->first_site));
	m->chain_at = xcalloc(s->nsites ? s->nsites : 1, sizeof(*m->chain_at));
	m->chain_len = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*m->chain_len));
	memset(m->chain_len, 0xff, s->nsites * sizeof(*m->chain_len));
	for (uint32_t i = 0; i < s->nsites; i++) {
		const struct snapshot_site *site = &s->sites[i];
		const struct site_key key = { site->func, site->addr };
		uint32_t *first = &m->first_site[site->func];
		uint64_t seed = 0, h;

		while (h = util_hash_bytes(&key, sizeof(key), seed++),
		       idmap_get(&m->site_index, h) != IDMAP_MISSING)
			;
		idmap_put(&m->site_index, h, i);
		if (site->addr != SNAPSHOT_SITE_OTHER && site->line &&
		    (*first == MODEL_NO_SITE || site->addr < s->sites[*first].addr))
			*first = i;
	}
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		uint64_t key = (uint64_t)(uintptr_t)intern(m, s->funcs[f].module);

		if (s->funcs[f].path && idmap_get(&m->module_file, key) == IDMAP_MISSING)
			idmap_put(&m->module_file, key, f + 1);
	}
}

/* --- mappings ----------------------------------------------------------------------------------- */

/* The mapping of a function: its file's, else that of a function of the same module with one
 * (code inlined there has no file of its own), else its module's name alone. */
static void use_function(struct export_model *m, uint32_t func)
{
	const struct snapshot_func *f = &m->s->funcs[func];
	const char *path = f->path;
	const char *key;
	struct model_mapping *mp;
	uint32_t id;

	if (m->mapping_of[func])
		return;
	if (!path) {
		id = idmap_get(&m->module_file, (uint64_t)(uintptr_t)intern(m, f->module));
		path = id == IDMAP_MISSING ? NULL : m->s->funcs[id - 1].path;
	}
	key = intern(m, path ? path : f->module);
	id = idmap_get(&m->mapping_index, (uint64_t)(uintptr_t)key);
	if (id == IDMAP_MISSING) {
		xgrow((void **)&m->mappings, &m->mappings_cap, m->nmappings + 1, sizeof(*m->mappings));
		m->mappings[m->nmappings++] = (struct model_mapping){ .key = key, .path = path,
								     .lo = UINT64_MAX };
		id = (uint32_t)m->nmappings;
		idmap_put(&m->mapping_index, (uint64_t)(uintptr_t)key, id);
	}
	mp = &m->mappings[id - 1];
	if (f->path && f->code_end > f->code_start) {
		mp->lo = f->code_start < mp->lo ? f->code_start : mp->lo;
		mp->hi = f->code_end > mp->hi ? f->code_end : mp->hi;
	}
	m->mapping_of[func] = id;
	model_string(m, f->name);
}

/* The executable PT_LOAD segment of elf that holds mp's code. */
static bool exec_segment(Elf *elf, struct model_mapping *mp)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    mp->lo < ph.p_vaddr || mp->hi > ph.p_vaddr + ph.p_memsz)
			continue;
		mp->start = ph.p_vaddr;
		mp->limit = ph.p_vaddr + ph.p_memsz;
		mp->offset = ph.p_offset;
		return true;
	}
	return false;
}

/* mp's range, file offset and build-id from its file (export_model.h). */
static void mapping_read_file(const struct export_model *m, struct model_mapping *mp)
{
	struct stat st;
	Elf *elf = NULL;
	int fd;

	if (mp->lo >= mp->hi)
		return; /* none of its functions' code is known: no addresses */
	mp->start = mp->lo;
	mp->limit = mp->hi;
	fd = open(mp->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec >= m->profiled_since)
		goto out_close;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && exec_segment(elf, mp))
		mp->build_id_len = debugfile_build_id(elf, mp->build_id);
	if (elf)
		elf_end(elf);
out_close:
	close(fd);
}

void model_build_id_hex(const struct model_mapping *mp, char *hex)
{
	for (size_t i = 0; i < mp->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mp->build_id[i]);
	hex[2 * mp->build_id_len] = '\0';
}

/* Whether a Location of mapping id at addr has that address (0: none). */
static bool has_address(const struct export_model *m, uint32_t id, uint64_t addr)
{
	const struct model_mapping *mp = &m->mappings[id - 1];

	return mp->path && addr && addr != SNAPSHOT_SITE_OTHER && addr >= mp->start && addr < mp->limit;
}

void model_mappings_finish(struct export_model *m)
{
	const struct snapshot *s = m->s;

	for (uint32_t f = 1; f < s->nfuncs; f++)
		if (m->mapping_of[f] && m->first_site[f] != MODEL_NO_SITE)
			m->mappings[m->mapping_of[f] - 1].lines = true;
	for (uint32_t i = 0; i < s->nsites; i++)
		if (m->chain_len[i] != NOT_LEAF && m->chain_len[i])
			m->mappings[m->mapping_of[s->sites[i].func] - 1].inline_frames = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	for (size_t i = 0; i < m->nmappings; i++)
		if (m->mappings[i].path)
			mapping_read_file(m, &m->mappings[i]);
}

/* --- samples ------------------------------------------------------------------------------------ */

/* How many callers of a leaf at site share its Location (path[0..depth) is the stack to it):
 * while a frame is code inlined into the one above, that caller's site at the same address
 * holds the line of the call. The first path to a leaf makes its chain; a later one shares the
 * Location as far as its frames match it. Never more than the path's depth: bounded. */
static size_t inline_chain(struct export_model *m, uint32_t site, const uint32_t *path,
			   size_t depth)
{
	const struct snapshot *s = m->s;
	uint64_t addr = s->sites[site].addr;
	uint32_t at = site;
	size_t k = 0;

	if (m->chain_len[site] != NOT_LEAF) {
		const uint32_t *chain = m->chain + m->chain_at[site];

		while (k < m->chain_len[site] && k + 1 < depth &&
		       s->sites[chain[k]].func == s->nodes[path[depth - 2 - k]].func)
			k++;
		return k;
	}
	m->chain_at[site] = (uint32_t)m->nchain;
	for (; addr != SNAPSHOT_SITE_OTHER && s->funcs[s->sites[at].func].inlined && k + 1 < depth;
	     k++) {
		uint32_t outer = site_at(m, s->nodes[path[depth - 2 - k]].func, addr);

		if (outer == MODEL_NO_SITE)
			break;
		xgrow((void **)&m->chain, &m->chain_cap, m->nchain + 1, sizeof(*m->chain));
		m->chain[m->nchain++] = outer;
		at = outer;
	}
	m->chain_len[site] = (uint32_t)k;
	return k;
}

/* A node's self samples: one per site it has, leaf first; what no site has at the leaf
 * function's entry. stack[] holds the entry Locations of the path, leaf first. */
static void node_samples(struct export_model *m, const struct model_tree *t, uint32_t node,
			 const uint32_t *path, size_t depth, uint64_t *stack, model_sample_fn *fn,
			 bool (*stop)(void *arg), void *arg)
{
	const struct snapshot *s = m->s;
	uint64_t left = s->nodes[node].self;

	for (uint32_t e = snapshot_node_sites(s, node);
	     e != SNAPSHOT_NO_NODE_SITE && !(stop && stop(arg)); e = s->node_sites[e].next) {
		const struct snapshot_node_site *ns = &s->node_sites[e];
		size_t k = inline_chain(m, ns->site, path, depth);
		uint64_t entry = stack[k];

		stack[k] = s->nfuncs + ns->site;
		fn(arg, t, stack + k, depth - k, ns->self);
		stack[k] = entry;
		left -= ns->self < left ? ns->self : left;
	}
	if (left && !(stop && stop(arg)))
		fn(arg, t, stack, depth, left);
}

void model_samples(struct export_model *m, const struct snapshot *part, const struct model_tree *t,
		   model_sample_fn *fn, bool (*stop)(void *arg), void *arg)
{
	const struct snapshot *own = m->s;
	const struct snapshot *s = m->s = part;
	struct export_scope scope = { t->root, t->thread };
	struct snapshot_walk w;
	struct snapshot_walk_step step;
	uint64_t *stack = NULL;
	size_t cap = 0;

	if (s->nodes[t->root].self)
		fn(arg, t, NULL, 0, s->nodes[t->root].self);
	export_walk_begin(&w, s, &scope, NULL, NULL);
	while (!(stop && stop(arg)) && snapshot_walk_next(&w, &step)) {
		size_t depth;
		const uint32_t *path = snapshot_walk_path(&w, &depth);

		if (!s->nodes[step.node].self)
			continue;
		xgrow((void **)&stack, &cap, depth, sizeof(*stack));
		for (size_t d = 0; d < depth; d++)
			stack[d] = s->nodes[path[depth - 1 - d]].func;
		node_samples(m, t, step.node, path, depth, stack, fn, stop, arg);
	}
	snapshot_walk_end(&w);
	free(stack);
	m->s = own;
}

/* --- locations ---------------------------------------------------------------------------------- */

/* A Location: its Lines (function, line), innermost first: the site's (none: the function's,
 * without a line), then for a leaf its inlined callers'. */
static void location(struct export_model *m, uint64_t id, uint32_t func, uint64_t addr,
		     uint32_t site, bool leaf, struct model_line **lines, size_t *cap,
		     model_location_fn *fn, void *arg)
{
	const struct snapshot *s = m->s;
	uint32_t mapping = m->mapping_of[func];
	bool address = has_address(m, mapping, addr);
	size_t n = 0, want = 1 + (leaf && site != MODEL_NO_SITE ? m->chain_len[site] : 0);

	xgrow((void **)lines, cap, want, sizeof(**lines));
	if (site == MODEL_NO_SITE) {
		(*lines)[n++] = (struct model_line){ func, 0 };
	} else {
		(*lines)[n++] = (struct model_line){ s->sites[site].func, s->sites[site].line };
		for (uint32_t k = 0; leaf && k < m->chain_len[site]; k++) {
			const struct snapshot_site *outer = &s->sites[m->chain[m->chain_at[site] + k]];

			(*lines)[n++] = (struct model_line){ outer->func, outer->line };
		}
	}
	/* An address-less Location of a module with a file is in no mapping: a symbolizer would
	 * look it up. */
	fn(arg, id, address || !m->mappings[mapping - 1].path ? mapping : 0, address ? addr : 0,
	   *lines, n);
}

void model_locations(struct export_model *m, model_location_fn *fn, void *arg)
{
	const struct snapshot *s = m->s;
	struct model_line *lines = NULL;
	size_t cap = 0;

	for (uint32_t f = 1; f < s->nfuncs; f++) {
		const struct snapshot_func *fnc = &s->funcs[f];

		if (m->mapping_of[f])
			location(m, f, f, fnc->path ? fnc->code_start : 0, m->first_site[f], false,
				 &lines, &cap, fn, arg);
	}
	for (uint32_t i = 0; i < s->nsites; i++)
		if (m->chain_len[i] != NOT_LEAF)
			location(m, s->nfuncs + i, s->sites[i].func, s->sites[i].addr, i, true, &lines,
				 &cap, fn, arg);
	free(lines);
}

/* --- the model ---------------------------------------------------------------------------------- */

/* Give every function of a tree its mapping and strings, in the order the samples meet them. */
static void use_functions(struct export_model *m, const struct model_tree *t)
{
	struct export_scope scope = { t->root, t->thread };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	export_walk_begin(&w, m->s, &scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step))
		use_function(m, m->s->nodes[step.node].func);
	snapshot_walk_end(&w);
}

/* pprof takes the first mapping for the program's: that of main when it has samples, else of the
 * first function seen in a file that is not a shared library; not that of whichever library a
 * thread's stack starts in. */
static void use_main(struct export_model *m)
{
	const struct snapshot *s = m->s;
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
		use_function(m, first);
}

/* Which trees to write: the scope's, or for the merged scope each thread's. */
static size_t trees_of(const struct snapshot *s, const struct export_scope *scope,
		       struct model_tree **out)
{
	struct model_tree *trees = xcalloc(s->nthreads + 1, sizeof(*trees));
	size_t n = 0;

	if (scope->thread || !s->nthreads) {
		trees[n++] = (struct model_tree){ scope->thread, scope->root };
	} else {
		for (size_t i = 0; i < s->nthreads; i++)
			if (s->nodes[s->threads[i].root].total)
				trees[n++] = (struct model_tree){ &s->threads[i], s->threads[i].root };
	}
	*out = trees;
	return n;
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

void model_init(struct export_model *m, const struct snapshot *s, const struct export_scope *scope)
{
	*m = (struct export_model){ .s = s, .pool = strpool_new(), .profiled_since = profiled_since(s) };
	idmap_init(&m->string_index);
	idmap_init(&m->mapping_index);
	idmap_init(&m->module_file);
	idmap_init(&m->site_index);
	m->mapping_of = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*m->mapping_of));
	m->ntrees = trees_of(s, scope, &m->trees);
	model_index(m);
	/* Strings are numbered as records use them. */
	model_string(m, "");
	use_main(m);
	for (size_t i = 0; i < m->ntrees; i++)
		use_functions(m, &m->trees[i]);
	/* An allocation profile's other parts (the merged scope only: a thread's file is its own
	 * snapshot's), their functions numbered as the snapshot's (companions share ids). */
	for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS && snapshot_allocations(s); k++) {
		const struct snapshot *part = snapshot_sibling(s, model_heap_types[k].kind);
		struct export_scope merged;

		if (part && part != s && (scope->thread || part->nfuncs > s->nfuncs))
			part = NULL;
		m->parts[k] = part;
		if (!part || part == s) {
			m->part_trees[k] = m->trees;
			m->part_ntrees[k] = part ? m->ntrees : 0;
			continue;
		}
		export_scope_merged(&merged, part);
		m->part_ntrees[k] = trees_of(part, &merged, &m->part_trees[k]);
		m->s = part;
		for (size_t i = 0; i < m->part_ntrees[k]; i++)
			use_functions(m, &m->part_trees[k][i]);
		m->s = s;
	}
}

void model_free(struct export_model *m)
{
	for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS; k++)
		if (m->part_trees[k] != m->trees)
			free(m->part_trees[k]);
	free(m->trees);
	free(m->strings);
	free(m->mappings);
	free(m->mapping_of);
	free(m->first_site);
	free(m->chain);
	free(m->chain_at);
	free(m->chain_len);
	idmap_free(&m->string_index);
	idmap_free(&m->mapping_index);
	idmap_free(&m->module_file);
	idmap_free(&m->site_index);
	strpool_free(m->pool);
}
