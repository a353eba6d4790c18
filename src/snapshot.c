/* snapshot.c — snapshots: references, flat totals, and the one tree walk every reader uses.
 *
 * The walk keeps an explicit stack of frames to visit. A visited node's children are pushed only
 * when the walk moves on from it without a prune, coolest first so that the hottest is popped
 * next; so a frame that shows the open part of a huge tree costs the rows it shows, not the
 * tree. */
#include "proftop/snapshot.h"

#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

/* --- making one ------------------------------------------------------------------------------ */

struct snapshot *snapshot_alloc(struct strpool *strings)
{
	struct snapshot *s = xcalloc(1, sizeof(*s));

	atomic_init(&s->refs, 1);
	s->strings = strings;
	return s;
}

struct snapshot *snapshot_ref(struct snapshot *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

void snapshot_unref(struct snapshot *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	free((void *)s->nodes);
	free((void *)s->funcs);
	free((void *)s->threads);
	free((void *)s->func_self);
	free((void *)s->func_total);
	free((void *)s->sites);
	free((void *)s->node_sites);
	free((void *)s->node_site_first);
	free((void *)s->spans);
	for (int i = 0; i < SNAPSHOT_NCOMPANIONS; i++)
		snapshot_unref(s->companions[i]);
	strpool_free(s->strings);
	free(s);
}

/* What a snapshot made from s says of the run: when, how it sampled, which stretch (not the
 * timeline, which the newest snapshot carries). */
static void copy_about(struct snapshot *out, const struct snapshot *s)
{
	out->counters = s->counters;
	out->cost = s->cost;
	out->elapsed_ns = s->elapsed_ns;
	out->user_ns = s->user_ns;
	out->system_ns = s->system_ns;
	memcpy(out->fetching, s->fetching, sizeof(out->fetching));
	out->mode = s->mode;
	out->freq = s->freq;
	out->window_ns = s->window_ns;
	out->ranged = s->ranged;
	out->range_start_s = s->range_start_s;
	out->range_end_s = s->range_end_s;
	out->ownerless = s->ownerless;
}

const struct snapshot *snapshot_companion(const struct snapshot *s, enum sample_mode mode)
{
	if (s->mode == mode)
		return s;
	if (!sample_mode_allocations(mode))
		return NULL;
	return s->companions[mode - SAMPLE_MODE_ALLOC];
}

const struct snapshot *snapshot_objects(const struct snapshot *bytes, const struct snapshot *with)
{
	const struct snapshot *objects;

	if (!snapshot_bytes(bytes))
		return NULL;
	objects = snapshot_companion(with, bytes->mode == SAMPLE_MODE_ALLOC
						   ? SAMPLE_MODE_ALLOC_OBJECTS
						   : SAMPLE_MODE_INUSE_OBJECTS);
	return objects && objects->nfuncs >= bytes->nfuncs ? objects : NULL;
}

bool snapshot_timed(const struct snapshot *s)
{
	return sample_mode_switches(s->mode);
}

bool snapshot_allocations(const struct snapshot *s)
{
	return sample_mode_allocations(s->mode);
}

bool snapshot_coverage(const struct snapshot *s)
{
	return s->mode == SAMPLE_MODE_COVERAGE;
}

bool snapshot_bytes(const struct snapshot *s)
{
	return s->mode == SAMPLE_MODE_ALLOC || s->mode == SAMPLE_MODE_INUSE;
}

const char *snapshot_alloc_measured(enum sample_mode mode)
{
	return sample_mode_allocations(mode) ? sample_mode_info(mode)->measures : NULL;
}

const char *snapshot_unit(const struct snapshot *s)
{
	return sample_mode_info(s->mode)->unit;
}

const char *snapshot_time_measured(const struct snapshot *s)
{
	return sample_mode_info(s->mode)->time_measured;
}

void snapshot_times(const struct snapshot *s, uint64_t *real_ns, uint64_t *user_ns,
		    uint64_t *system_ns)
{
	uint64_t start, end;

	*real_ns = s->elapsed_ns;
	*user_ns = s->user_ns;
	*system_ns = s->system_ns;
	if (snapshot_timed(s)) { /* the counts stand for the time measured, not CPU time */
		*user_ns = s->freq ? s->samples * (1000000000u / s->freq) : 0;
		*system_ns = 0;
	}
	if (!s->ranged)
		return;
	if (snapshot_allocations(s)) { /* the counts stand for no time */
		*user_ns = *system_ns = 0;
		return;
	}
	start = s->range_start_s * 1000000000u;
	end = s->range_end_s * 1000000000u;
	if (end > s->elapsed_ns) /* the second still going on */
		end = s->elapsed_ns;
	*real_ns = end > start ? end - start : 0;
	*user_ns = s->freq ? s->samples * 1000000000u / s->freq : 0;
	*system_ns = 0;
}

uint32_t snapshot_node_sites(const struct snapshot *s, uint32_t node)
{
	if (!s->nnode_sites || !s->node_site_first || node >= s->nnodes)
		return SNAPSHOT_NO_NODE_SITE;
	return s->node_site_first[node];
}

/* --- flat totals ----------------------------------------------------------------------------- */

struct flat {
	const struct snapshot_node *nodes;
	uint32_t *on_path;         /* per function: its frames on the walk's path */
};

static void flat_leave(void *arg, uint32_t node)
{
	struct flat *f = arg;

	f->on_path[f->nodes[node].func]--;
}

void snapshot_flat(const struct snapshot *s, uint32_t top, uint64_t *self, uint64_t *total)
{
	/* A function's total counts only where it is not already on the path above, so recursion
	 * is not counted twice. */
	struct flat f = { s->nodes, xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(uint32_t)) };
	struct snapshot_walk w = { .nodes = s->nodes, .leave = flat_leave, .arg = &f,
				   .unordered = true };
	struct snapshot_walk_step step;

	memset(self, 0, s->nfuncs * sizeof(*self));
	memset(total, 0, s->nfuncs * sizeof(*total));
	snapshot_walk_begin(&w, top, true);
	while (snapshot_walk_next(&w, &step)) {
		const struct snapshot_node *node = &s->nodes[step.node];

		self[node->func] += node->self;
		if (!f.on_path[node->func]++)
			total[node->func] += node->total;
	}
	snapshot_walk_end(&w);
	free(f.on_path);
}

/* --- without inlined frames ------------------------------------------------------------------ */

/* Whether the snapshot has an inlined function at all. */
static bool has_inlined(const struct snapshot *s)
{
	for (size_t f = 0; f < s->nfuncs; f++)
		if (s->funcs[f].inlined)
			return true;
	return false;
}

/* The site of a function that is not inlined at (module, addr), or IDMAP_MISSING. */
struct site_at {
	const char *module;
	uint64_t addr;
};

static uint32_t outer_site(const struct snapshot *s, const struct idmap *at, const char *module,
			   uint64_t addr, uint64_t *hash)
{
	struct site_at key = { module, addr };

	for (uint64_t seed = 0;; seed++) {
		uint32_t id;

		*hash = util_hash_bytes(&key, sizeof(key), seed);
		id = idmap_get(at, *hash);
		if (id == IDMAP_MISSING || (s->sites[id].addr == addr &&
					    s->funcs[s->sites[id].func].module == module))
			return id;
	}
}

/* An inlined frame's samples at an address were taken in the code of the function it was inlined
 * into, whose frame has a site at the same address (the line of the inlined call): they move
 * there. to[site] is where each site's samples went (itself when nowhere). */
static struct snapshot_site *fold_sites(const struct snapshot *s, uint32_t *to)
{
	struct snapshot_site *sites = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*sites));
	struct idmap at;
	uint64_t hash;

	memcpy(sites, s->sites, s->nsites * sizeof(*sites));
	idmap_init(&at);
	for (size_t i = 0; i < s->nsites; i++) {
		const struct snapshot_func *f = &s->funcs[sites[i].func];

		if (!f->inlined && sites[i].addr != SNAPSHOT_SITE_OTHER &&
		    outer_site(s, &at, f->module, sites[i].addr, &hash) == IDMAP_MISSING)
			idmap_put(&at, hash, (uint32_t)i);
	}
	for (size_t i = 0; i < s->nsites; i++) {
		const struct snapshot_func *f = &s->funcs[sites[i].func];
		uint32_t outer;

		to[i] = (uint32_t)i;
		if (!f->inlined)
			continue;
		outer = outer_site(s, &at, f->module, sites[i].addr, &hash);
		if (outer != IDMAP_MISSING) {
			sites[outer].self += sites[i].self;
			sites[i].self = 0;
			to[i] = outer;
		}
	}
	idmap_free(&at);
	return sites;
}

/* The node sites follow their nodes (map) and their sites (site_to): an inlined frame's go to the
 * node it merged into, at the site its samples moved to, and entries that meet are summed. One
 * whose site had nowhere to go (its caller has no frame at that address) is left out. */
static void fold_node_sites(const struct snapshot *s, struct snapshot *out, const uint32_t *map,
			    const uint32_t *site_to)
{
	struct snapshot_node_site *entries;
	uint32_t *first;
	struct idmap at; /* new node << 32 | site -> entry */
	size_t n = 0;

	if (!s->nnode_sites)
		return;
	entries = xmalloc(s->nnode_sites * sizeof(*entries));
	first = xmalloc((out->nnodes ? out->nnodes : 1) * sizeof(*first));
	memset(first, 0xff, out->nnodes * sizeof(*first));
	idmap_init(&at);
	for (size_t i = 0; i < s->nnode_sites; i++) {
		const struct snapshot_node_site *e = &s->node_sites[i];
		uint32_t node = map[e->node], site = site_to[e->site], j;
		uint64_t key = (uint64_t)node << 32 | site;

		if (out->sites[site].func != out->nodes[node].func)
			continue;
		j = idmap_get(&at, key);
		if (j == IDMAP_MISSING) {
			j = (uint32_t)n++;
			entries[j] = (struct snapshot_node_site){ node, site, first[node], 0 };
			first[node] = j;
			idmap_put(&at, key, j);
		}
		entries[j].self += e->self;
	}
	idmap_free(&at);
	out->node_sites = entries;
	out->nnode_sites = n;
	out->node_site_first = first;
}

/* The nodes with every inlined one merged into its nearest caller that is not inlined (children
 * of one function under one parent become one node). map[old] is the node it became. Totals are
 * summed bottom-up again and children linked anew. */
static struct snapshot_node *fold_nodes(const struct snapshot *s, uint32_t *map, size_t *count)
{
	struct snapshot_node *nodes = xmalloc((s->nnodes ? s->nnodes : 1) * sizeof(*nodes));
	struct idmap children; /* (new parent, function) -> new node */
	size_t n = 0;

	idmap_init(&children);
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct snapshot_node *old = &s->nodes[i];
		uint32_t parent = old->parent == SNAPSHOT_NO_NODE ? SNAPSHOT_NO_NODE : map[old->parent];
		uint64_t key = (uint64_t)parent << 32 | old->func;
		uint32_t j = parent == SNAPSHOT_NO_NODE ? IDMAP_MISSING : idmap_get(&children, key);

		if (parent != SNAPSHOT_NO_NODE && s->funcs[old->func].inlined)
			j = parent;
		if (j == IDMAP_MISSING) {
			j = (uint32_t)n++;
			nodes[j] = (struct snapshot_node){ old->func, parent, SNAPSHOT_NO_NODE,
							   SNAPSHOT_NO_NODE, 0, 0 };
			if (parent != SNAPSHOT_NO_NODE)
				idmap_put(&children, key, j);
		}
		nodes[j].self += old->self;
		map[i] = j;
	}
	idmap_free(&children);
	/* A parent was made before its children, so one pass back sums and links them. */
	for (size_t j = n; j-- > 0;) {
		struct snapshot_node *node = &nodes[j];

		node->total += node->self;
		if (node->parent == SNAPSHOT_NO_NODE)
			continue;
		nodes[node->parent].total += node->total;
		node->next_sibling = nodes[node->parent].first_child;
		nodes[node->parent].first_child = (uint32_t)j;
	}
	*count = n;
	return nodes;
}

/* The flat table: a function's total is unchanged (its inlined frames were inside it), and the
 * self of the merged tree's inlined nodes moves to the function they folded into. Self in a
 * subtree the memory budget folded into "[other]" has no caller to move to, and is left out. */
static void fold_flat(const struct snapshot *s, const struct snapshot_node *nodes,
		      const uint32_t *map, uint64_t *self, uint64_t *total)
{
	bool *merged = xcalloc(s->nnodes ? s->nnodes : 1, sizeof(*merged));

	memcpy(self, s->func_self, s->nfuncs * sizeof(*self));
	memcpy(total, s->func_total, s->nfuncs * sizeof(*total));
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct snapshot_node *old = &s->nodes[i];

		merged[i] = i == s->merged_root || (old->parent != SNAPSHOT_NO_NODE && merged[old->parent]);
		if (merged[i] && s->funcs[old->func].inlined)
			self[nodes[map[i]].func] += old->self;
	}
	for (size_t f = 0; f < s->nfuncs; f++)
		if (s->funcs[f].inlined)
			self[f] = total[f] = 0;
	free(merged);
}

struct snapshot *snapshot_fold_inlined(struct snapshot *s)
{
	struct snapshot *out;
	struct snapshot_func *funcs;
	struct snapshot_thread *threads;
	uint64_t *self, *total;
	uint32_t *map, *site_to;

	if (!has_inlined(s))
		return snapshot_ref(s);
	out = snapshot_alloc(strpool_ref(s->strings));
	copy_about(out, s);
	out->samples = s->samples;
	out->folded_nodes = s->folded_nodes;
	funcs = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*funcs));
	memcpy(funcs, s->funcs, s->nfuncs * sizeof(*funcs));
	out->funcs = funcs;
	out->nfuncs = s->nfuncs;
	map = xmalloc((s->nnodes ? s->nnodes : 1) * sizeof(*map));
	out->nodes = fold_nodes(s, map, &out->nnodes);
	out->merged_root = map[s->merged_root];
	threads = xmalloc((s->nthreads ? s->nthreads : 1) * sizeof(*threads));
	for (size_t t = 0; t < s->nthreads; t++) {
		threads[t] = s->threads[t];
		threads[t].root = map[s->threads[t].root];
	}
	out->threads = threads;
	out->nthreads = s->nthreads;
	self = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*self));
	total = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*total));
	fold_flat(s, out->nodes, map, self, total);
	out->func_self = self;
	out->func_total = total;
	site_to = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*site_to));
	out->sites = fold_sites(s, site_to);
	out->nsites = s->nsites;
	out->sites_self_only = s->sites_self_only;
	fold_node_sites(s, out, map, site_to);
	free(site_to);
	free(map);
	return out;
}

/* --- sites of one thread ------------------------------------------------------------------- */

struct snapshot *snapshot_sites_in(struct snapshot *s, uint32_t scope)
{
	struct snapshot *out = snapshot_alloc(strpool_ref(s->strings));
	struct snapshot_func *funcs = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*funcs));
	struct snapshot_site *sites = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*sites));
	uint64_t *self = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*self));
	uint64_t *total = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*total));
	bool *in = xcalloc(s->nnodes ? s->nnodes : 1, sizeof(*in));

	copy_about(out, s);
	memcpy(funcs, s->funcs, s->nfuncs * sizeof(*funcs));
	out->funcs = funcs;
	out->nfuncs = s->nfuncs;
	snapshot_flat(s, scope, self, total);
	out->func_self = self;
	out->func_total = total;
	out->samples = scope < s->nnodes ? s->nodes[scope].total : 0;
	for (size_t i = 0; i < s->nsites; i++) {
		sites[i] = s->sites[i];
		sites[i].self = sites[i].total = 0;
	}
	/* A parent comes before its children: one pass marks the subtree. */
	for (size_t i = 0; i < s->nnodes; i++) {
		uint32_t parent = s->nodes[i].parent;

		in[i] = i == scope || (parent != SNAPSHOT_NO_NODE && in[parent]);
		for (uint32_t e = in[i] ? snapshot_node_sites(s, (uint32_t)i) : SNAPSHOT_NO_NODE_SITE;
		     e != SNAPSHOT_NO_NODE_SITE; e = s->node_sites[e].next)
			sites[s->node_sites[e].site].self += s->node_sites[e].self;
	}
	free(in);
	out->sites = sites;
	out->nsites = s->nsites;
	out->sites_self_only = true;
	return out;
}

/* --- the walk -------------------------------------------------------------------------------- */

struct snapshot_walk_frame {
	uint32_t node;
	uint32_t func;             /* the node's, kept here so sorting reads no node */
	uint64_t total;
	unsigned depth;
	bool hottest, last;
};

static bool kept(const struct snapshot_walk *w, uint32_t node)
{
	return w->nodes[node].total && (!w->keep || w->keep(w->arg, node));
}

/* Coolest first, so the hottest is on top of the stack. Ties (common among one-sample leaves)
 * go by function id, lowest on top, then by node. */
static int pop_order(const struct snapshot_walk_frame *a, const struct snapshot_walk_frame *b)
{
	if (a->total != b->total)
		return a->total < b->total ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? 1 : -1;
	return a->node < b->node ? 1 : -1;
}

static int pop_order_qsort(const void *a, const void *b)
{
	return pop_order(a, b);
}

/* Most nodes have a handful of children: an insertion sort then beats qsort's merge sort and its
 * allocation; long lists (a leaf-only profile's root) still get an O(n log n) sort. */
static void sort_frames(struct snapshot_walk_frame *f, size_t n)
{
	if (n > 16) {
		qsort(f, n, sizeof(*f), pop_order_qsort);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct snapshot_walk_frame x = f[i];
		size_t j = i;

		for (; j > 0 && pop_order(&f[j - 1], &x) > 0; j--)
			f[j] = f[j - 1];
		f[j] = x;
	}
}

static inline void push(struct snapshot_walk *w, uint32_t node, unsigned depth)
{
	if (w->depth == w->cap)
		xgrow((void **)&w->stack, &w->cap, w->depth + 1, sizeof(*w->stack));
	w->stack[w->depth++] = (struct snapshot_walk_frame){ node, w->nodes[node].func,
							     w->nodes[node].total, depth, false, false };
}

/* Push the kept children of parent, to be popped in visiting order; returns how many. */
static size_t push_children(struct snapshot_walk *w, uint32_t parent, unsigned depth)
{
	size_t start = w->depth;

	for (uint32_t c = w->nodes[parent].first_child; c != SNAPSHOT_NO_NODE;
	     c = w->nodes[c].next_sibling)
		if (kept(w, c))
			push(w, c, depth);
	if (w->depth == start)
		return 0;
	if (!w->unordered)
		sort_frames(w->stack + start, w->depth - start);
	w->stack[w->depth - 1].hottest = true;
	w->stack[start].last = true;
	return w->depth - start;
}

void snapshot_walk_begin(struct snapshot_walk *w, uint32_t top, bool include_top)
{
	w->depth = w->path_len = 0;
	w->expand = false;
	if (!include_top) {
		push_children(w, top, 0);
	} else if (kept(w, top)) {
		push(w, top, 0);
		w->stack[0].hottest = w->stack[0].last = true;
	}
}

/* Leave the path's nodes from depth on, innermost first. */
static void leave_to(struct snapshot_walk *w, size_t depth)
{
	while (w->path_len > depth) {
		w->path_len--;
		if (w->leave)
			w->leave(w->arg, w->path[w->path_len]);
	}
}

bool snapshot_walk_next(struct snapshot_walk *w, struct snapshot_walk_step *step)
{
	struct snapshot_walk_frame f;

	if (w->expand)
		push_children(w, w->path[w->path_len - 1], (unsigned)w->path_len);
	w->expand = false;
	if (!w->depth) {
		leave_to(w, 0);
		return false;
	}
	f = w->stack[--w->depth];
	leave_to(w, f.depth);
	if (w->path_len == w->path_cap)
		xgrow((void **)&w->path, &w->path_cap, w->path_len + 1, sizeof(*w->path));
	w->path[w->path_len++] = f.node;
	w->expand = true;
	*step = (struct snapshot_walk_step){ f.node, f.depth, f.hottest, f.last };
	return true;
}

void snapshot_walk_prune(struct snapshot_walk *w)
{
	w->expand = false;
}

bool snapshot_walk_has_children(const struct snapshot_walk *w)
{
	uint32_t node = w->path_len ? w->path[w->path_len - 1] : SNAPSHOT_NO_NODE;

	if (node == SNAPSHOT_NO_NODE)
		return false;
	for (uint32_t c = w->nodes[node].first_child; c != SNAPSHOT_NO_NODE;
	     c = w->nodes[c].next_sibling)
		if (kept(w, c))
			return true;
	return false;
}

size_t snapshot_walk_expand(struct snapshot_walk *w)
{
	if (!w->expand)
		return 0;
	w->expand = false;
	return push_children(w, w->path[w->path_len - 1], (unsigned)w->path_len);
}

const uint32_t *snapshot_walk_path(const struct snapshot_walk *w, size_t *len)
{
	*len = w->path_len;
	return w->path;
}

void snapshot_walk_end(struct snapshot_walk *w)
{
	leave_to(w, 0);
	free(w->stack);
	free(w->path);
	w->stack = NULL;
	w->path = NULL;
	w->depth = w->cap = w->path_len = w->path_cap = 0;
}

uint64_t snapshot_path_child(uint64_t parent, uint32_t func)
{
	return util_hash_u64(parent + 0x9e3779b97f4a7c15ull * ((uint64_t)func + 1));
}

const char *snapshot_kind(const struct snapshot *s)
{
	return sample_mode_name(s->mode);
}

const char *snapshot_alloc_measures(const struct snapshot *s)
{
	return snapshot_alloc_measured(s->mode);
}

bool snapshot_level(const struct snapshot *s)
{
	return sample_mode_info(s->mode)->level;
}

const struct snapshot *snapshot_sibling(const struct snapshot *s, const char *kind)
{
	enum sample_mode mode;

	return sample_mode_parse(kind, &mode) ? snapshot_companion(s, mode) : NULL;
}
