/* profile.c — the collector's call trees, and the snapshots made of them.
 *
 * Nodes live in one array: the per-thread tries and the tree merged over all threads (node 0 is
 * the merged root), in creation order, so a parent's index is always smaller than its children's.
 * Each thread node knows its counterpart in the merged tree (merged_of; a merged node maps to
 * itself), so a sample walks its thread's trie by hash and the merged tree by array reads. The
 * flat table (self and total per function, recursion counted once per sample) is kept per sample
 * too. So a snapshot needs no merge and no walk: it is copies.
 *
 * And the copies are incremental: every change is logged (log_change()) against the snapshots
 * the profile keeps, which profile_snapshot.c brings up to date. The memory budget folds the
 * coldest subtrees into "[other]" and makes the tries again (profile_fold.c); node ids change
 * then. The three files share profile_internal.h.
 *
 * Sites and node sites: a site is an address of a function with its line (snapshot_site), counted
 * for the whole run; a node site is the self samples of one thread node at one site, in a table of
 * (node, site) entries indexed by node << 32 | site, a node's entries chained from its
 * node_site_first. Both take at most a quarter of the memory budget together: past it a new
 * address counts at its function's SNAPSHOT_SITE_OTHER site, and a new (node, site) pair at
 * (node, that site). A fold keeps a surviving node's entries (renumbered) and drops those of the
 * nodes that went into "[other]", which so has self samples but no sites.
 *
 * JIT code named late: an address no symbol names but a JIT's perf map may (profile_jit_func())
 * is a function of its own, keyed by its process and address, until the map names it
 * (profile_name_jit()). Then it is merged into the function of that name: merged_into says
 * where to, lookups of the address and stacks added later count there, and the tries are rebuilt
 * as a fold rebuilds them, with the merged nodes together (node sites and history follow). The
 * flat table takes the merged function's counts: its self adds up; its total is the sum less the
 * samples where both were on the stack, as the tries count them (samples of folded subtrees
 * cannot be told apart: those count twice). A merged function keeps its id, with no samples.
 *
 * The history (history.h) keeps each second's (thread leaf, leaf site) counts, for snapshots of a
 * stretch (profile_range_snapshot()). */
#include "proftop/profile_internal.h"

#include "proftop/asuser.h"
#include "proftop/diag.h"
#include "proftop/history.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct site_key {
	uint64_t func;
	uint64_t addr;
};

static const char *intern(struct profile *p, const char *s)
{
	return strpool_intern(p->strings, s, strlen(s));
}

/* --- making a profile -------------------------------------------------------------------------- */

static void grow_funcs(struct profile *p)
{
	size_t cap = p->funcs_cap;

	if (p->nfuncs < cap)
		return;
	cap = cap ? cap * 2 : 64;
	p->funcs = xrealloc(p->funcs, cap * sizeof(*p->funcs));
	p->func_keys = xrealloc(p->func_keys, cap * sizeof(*p->func_keys));
	p->func_self = xrealloc(p->func_self, cap * sizeof(*p->func_self));
	p->func_total = xrealloc(p->func_total, cap * sizeof(*p->func_total));
	p->func_seen = xrealloc(p->func_seen, cap * sizeof(*p->func_seen));
	p->merged_into = xrealloc(p->merged_into, cap * sizeof(*p->merged_into));
	p->funcs_cap = cap;
	profile_log_reserve(&p->logs[LOG_FUNCS], cap);
}

static void grow_nodes(struct profile *p)
{
	size_t cap = p->nodes_cap;

	if (p->nnodes < cap)
		return;
	cap = cap ? cap * 2 : 256;
	p->nodes = xrealloc(p->nodes, cap * sizeof(*p->nodes));
	p->merged_of = xrealloc(p->merged_of, cap * sizeof(*p->merged_of));
	p->node_site_first = xrealloc(p->node_site_first, cap * sizeof(*p->node_site_first));
	p->nodes_cap = cap;
	profile_log_reserve(&p->logs[LOG_NODES], cap);
}

static uint32_t add_func(struct profile *p, const struct func_key *key, const char *name)
{
	uint32_t id = (uint32_t)p->nfuncs;

	grow_funcs(p);
	p->funcs[id] = (struct snapshot_func){ name, key->module, key->inlined != 0, NULL, 0, 0 };
	p->func_keys[id] = *key;
	p->func_self[id] = p->func_total[id] = 0;
	p->func_seen[id] = 0;
	p->merged_into[id] = 0;
	p->nfuncs++;
	log_change(p, LOG_FUNCS, id);
	return id;
}

/* A new node of func under parent (SNAPSHOT_NO_NODE: a root). */
static uint32_t append_node(struct profile *p, uint32_t func, uint32_t parent, uint32_t merged)
{
	uint32_t id = (uint32_t)p->nnodes;

	grow_nodes(p);
	p->nodes[id] = (struct snapshot_node){ func, parent, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE, 0, 0 };
	p->merged_of[id] = merged == SNAPSHOT_NO_NODE ? id : merged;
	p->node_site_first[id] = SNAPSHOT_NO_NODE_SITE;
	p->nnodes++;
	if (parent != SNAPSHOT_NO_NODE) {
		p->nodes[id].next_sibling = p->nodes[parent].first_child;
		p->nodes[parent].first_child = id;
		idmap_put(&p->child_index, (uint64_t)parent << 32 | func, id);
		log_change(p, LOG_NODES, parent);
	}
	log_change(p, LOG_NODES, id);
	return id;
}

struct profile *profile_new(struct diag *diag)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	struct func_key root_key = { NULL, NULL, 0, 0 };

	p->diag = diag;
	p->strings = strpool_new();
	p->gen = 1;
	idmap_init(&p->func_index);
	idmap_init(&p->renamed_index);
	idmap_init(&p->child_index);
	idmap_init(&p->thread_index);
	idmap_init(&p->site_index);
	idmap_init(&p->node_site_index);
	root_key.module = intern(p, "");
	add_func(p, &root_key, intern(p, "[root]"));
	append_node(p, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE); /* the merged root */
	p->next_check = BUDGET_CHECK_NODES;
	return p;
}

void profile_set_max_memory(struct profile *p, size_t bytes)
{
	p->max_bytes = bytes;
	p->next_check = p->nnodes;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	profile_pool_drop(p);
	strpool_free(p->strings);
	free(p->funcs);
	free(p->func_keys);
	free(p->func_self);
	free(p->func_total);
	free(p->func_seen);
	free(p->merged_into);
	free(p->jit_funcs);
	free(p->remapped);
	free(p->nodes);
	free(p->merged_of);
	free(p->threads);
	history_free(p->history);
	free(p->sites);
	free(p->site_seen);
	free(p->node_sites);
	free(p->node_site_first);
	for (int l = 0; l < NLOGS; l++) {
		free(p->logs[l].gen_of);
		free(p->logs[l].items);
	}
	idmap_free(&p->func_index);
	idmap_free(&p->renamed_index);
	idmap_free(&p->child_index);
	idmap_free(&p->thread_index);
	idmap_free(&p->site_index);
	idmap_free(&p->node_site_index);
	free(p);
}

static uint32_t func_of_key(struct profile *p, const struct func_key *key);

uint32_t profile_func(struct profile *p, const char *module, const char *name, uint64_t addr)
{
	char unmapped[32];
	struct func_key key;

	if (!module && !name) { /* an address no mapping holds: named by itself */
		snprintf(unmapped, sizeof(unmapped), "0x%llx", (unsigned long long)addr);
		name = unmapped;
	}
	key = (struct func_key){ intern(p, module ? module : "[unknown]"),
				 name ? intern(p, name) : NULL, addr, 0 };
	return func_of_key(p, &key);
}

uint32_t profile_inlined_func(struct profile *p, const char *module, const char *name)
{
	struct func_key key = { intern(p, module ? module : "[unknown]"), intern(p, name), 0, 1 };

	return func_of_key(p, &key);
}

/* The function of key, or IDMAP_MISSING with *free_hash where it would go. Hash collisions
 * between different keys are resolved by probing with the next seed. */
static uint32_t find_func(const struct profile *p, const struct func_key *keyp, uint64_t *free_hash)
{
	const struct func_key key = *keyp;
	uint32_t id;

	for (uint64_t seed = 0;; seed++) {
		uint64_t h = util_hash_bytes(&key, sizeof(key), seed);

		id = idmap_get(&p->func_index, h);
		if (id == IDMAP_MISSING) {
			*free_hash = h;
			return id;
		}
		if (!memcmp(&p->func_keys[id], &key, sizeof(key)))
			return id;
	}
}

static uint64_t renamed_hash(const char *module, uint64_t addr)
{
	return util_hash_u64((uint64_t)(uintptr_t)module ^ util_hash_u64(addr));
}

/* The function of key, interned on first sight. An unnamed one named since is that function:
 * with several collector workers, one whose symbolizer has not taken the debug file yet still
 * finds the address unnamed. */
static uint32_t func_of_key(struct profile *p, const struct func_key *key)
{
	uint64_t h;
	uint32_t id = find_func(p, key, &h);
	char *shown;

	if (id != IDMAP_MISSING)
		return func_now(p, id);
	if (!key->name && !key->inlined) {
		uint32_t named = idmap_get(&p->renamed_index, renamed_hash(key->module, key->addr));

		if (named != IDMAP_MISSING && p->func_keys[named].module == key->module &&
		    p->func_keys[named].addr == key->addr && !p->func_keys[named].inlined)
			return named;
	}
	/* Shown as perf shows them: an inlined instance "name (inlined)". */
	shown = !key->name ? xasprintf("%s+0x%llx", key->module, (unsigned long long)key->addr) :
		key->inlined ? xasprintf("%s (inlined)", key->name) : NULL;
	id = add_func(p, key, shown ? intern(p, shown) : key->name);
	free(shown);
	idmap_put(&p->func_index, h, id);
	return id;
}

size_t profile_name_funcs(struct profile *p, const char *module, const char *path,
			  profile_namer_fn *namer, void *arg)
{
	const char *interned = intern(p, module);
	size_t renamed = 0;

	for (uint32_t id = 1; id < p->nfuncs; id++) {
		struct func_key key = p->func_keys[id];
		const char *name;
		uint64_t end = 0, h;

		if (key.module != interned || key.name || key.inlined || key.jit_pid ||
		    !(name = namer(arg, key.addr, &end)))
			continue;
		key.name = intern(p, name);
		/* Its old key no longer matches what the index finds under it; a lookup of it
		 * (a symbolizer without the debug file yet) finds it through renamed_index. */
		if (find_func(p, &key, &h) != IDMAP_MISSING)
			continue;
		p->func_keys[id] = key;
		p->funcs[id].name = key.name;
		p->funcs[id].no_lines = NULL;
		idmap_put(&p->func_index, h, id);
		idmap_put(&p->renamed_index, renamed_hash(key.module, key.addr), id);
		log_change(p, LOG_FUNCS, id);
		profile_func_code(p, id, path, key.addr, end);
		renamed++;
	}
	return renamed;
}

/* --- JIT code named late ---------------------------------------------------------------------- */

/* A JIT address's key carries its process; once the process is gone its functions keep their
 * keys with this added, which no lookup makes: a later process of the same pid is another. */
#define JIT_PID_GONE (1ull << 32)

uint32_t profile_jit_func(struct profile *p, const char *module, uint64_t addr, pid_t pid)
{
	struct func_key key = { intern(p, module ? module : "[unknown]"), NULL, addr, 0,
				(uint64_t)(uint32_t)pid };
	uint32_t id;
	char *shown;
	uint64_t h;

	if (pid <= 0)
		return profile_func(p, module, NULL, addr);
	id = find_func(p, &key, &h);
	if (id != IDMAP_MISSING)
		return func_now(p, id);
	shown = module ? xasprintf("%s+0x%llx", module, (unsigned long long)addr)
		       : xasprintf("0x%llx", (unsigned long long)addr);
	id = add_func(p, &key, intern(p, shown));
	free(shown);
	idmap_put(&p->func_index, h, id);
	xgrow((void **)&p->jit_funcs, &p->jit_funcs_cap, p->njit_funcs + 1, sizeof(*p->jit_funcs));
	p->jit_funcs[p->njit_funcs++] = id;
	return id;
}

/* Is id an address of pid's that no name has taken yet? */
static bool jit_waiting(const struct profile *p, uint32_t id, pid_t pid)
{
	return !p->merged_into[id] && p->func_keys[id].jit_pid == (uint64_t)(uint32_t)pid;
}

bool profile_jit_waiting(const struct profile *p, pid_t pid)
{
	for (size_t i = 0; i < p->njit_funcs; i++)
		if (jit_waiting(p, p->jit_funcs[i], pid))
			return true;
	return false;
}

void profile_jit_forget(struct profile *p, pid_t pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < p->njit_funcs; i++) {
		uint32_t id = p->jit_funcs[i];

		if (p->func_keys[id].jit_pid == (uint64_t)(uint32_t)pid)
			p->func_keys[id].jit_pid |= JIT_PID_GONE;
		else
			p->jit_funcs[kept++] = id;
	}
	p->njit_funcs = kept;
}

size_t profile_name_jit(struct profile *p, pid_t pid, profile_jit_namer_fn *namer, void *arg)
{
	uint32_t *merged = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < p->njit_funcs; i++) {
		uint32_t id = p->jit_funcs[i];
		struct func_key named = { NULL, NULL, 0, 0, 0 };
		const char *name, *module = NULL;

		if (!jit_waiting(p, id, pid) || !(name = namer(arg, p->func_keys[id].addr, &module)))
			continue;
		named.module = intern(p, module ? module : "[unknown]");
		named.name = intern(p, name);
		p->merged_into[id] = func_of_key(p, &named);
		xgrow((void **)&merged, &cap, n + 1, sizeof(*merged));
		merged[n++] = id;
	}
	if (n)
		profile_merge_funcs(p, merged, n);
	free(merged);
	return n;
}

const char *profile_func_name(const struct profile *p, uint32_t func)
{
	return func < p->nfuncs ? p->funcs[func].name : "";
}

void profile_func_code(struct profile *p, uint32_t func, const char *path, uint64_t start,
		       uint64_t end)
{
	struct snapshot_func *f = &p->funcs[func];

	if (f->path || !path || end <= start)
		return;
	f->path = intern(p, path);
	f->code_start = start;
	f->code_end = end;
	log_change(p, LOG_FUNCS, func);
}

void profile_func_no_lines(struct profile *p, uint32_t func, const char *why)
{
	struct snapshot_func *f = &p->funcs[func];

	if (f->no_lines || !why)
		return;
	f->no_lines = intern(p, why);
	log_change(p, LOG_FUNCS, func);
}

static void grow_sites(struct profile *p)
{
	size_t cap = p->sites_cap;

	if (p->nsites < cap)
		return;
	cap = cap ? cap * 2 : 256;
	p->sites = xrealloc(p->sites, cap * sizeof(*p->sites));
	p->site_seen = xrealloc(p->site_seen, cap * sizeof(*p->site_seen));
	p->sites_cap = cap;
	profile_log_reserve(&p->logs[LOG_SITES], cap);
}

/* Whether more sites and node sites fit: together they may take a quarter of the memory budget,
 * each with its copies in the pool and its share of an index (under half full, and doubling). */
static bool sites_fit(const struct profile *p, size_t more_sites, size_t more_node_sites)
{
	size_t index = 4 * (sizeof(uint64_t) + sizeof(uint32_t));
	size_t site = sizeof(*p->sites) * (1 + POOL_SIZE) + sizeof(*p->site_seen) + index;
	size_t node_site = sizeof(*p->node_sites) * (1 + POOL_SIZE) + index;

	return !p->max_bytes || (p->nsites + more_sites) * site +
				(p->nnode_sites + more_node_sites) * node_site <= p->max_bytes / 4;
}

/* The site of (func, addr), or by_line of (func, addr, line). */
static uint32_t find_site(struct profile *p, uint32_t func, uint64_t addr, const char *file,
			  unsigned line, bool by_line)
{
	/* (a line's site keys its line too, above the function's id) */
	struct site_key key = { func | (by_line ? (uint64_t)line + 1 : 0) << 32, addr };
	uint64_t h;
	uint32_t id;

	/* Probe seeds until the key or a free hash: a new site goes in at that hash. */
	for (uint64_t seed = 0;; seed++) {
		h = util_hash_bytes(&key, sizeof(key), seed);
		id = idmap_get(&p->site_index, h);
		if (id == IDMAP_MISSING)
			break;
		if (p->sites[id].func == func && p->sites[id].addr == addr &&
		    (!by_line || p->sites[id].line == line))
			break;
	}
	if (id != IDMAP_MISSING) {
		/* A debug file that arrived later gives the line the first sight had not. */
		if (!p->sites[id].file && file && addr != SNAPSHOT_SITE_OTHER) {
			p->sites[id].file = intern(p, file);
			p->sites[id].line = line;
			log_change(p, LOG_SITES, id);
		}
		return id;
	}
	if (addr != SNAPSHOT_SITE_OTHER && !sites_fit(p, 1, 0))
		return find_site(p, func, SNAPSHOT_SITE_OTHER, NULL, 0, false);
	grow_sites(p);
	id = (uint32_t)p->nsites++;
	p->sites[id] = (struct snapshot_site){ func, line, addr, file && addr != SNAPSHOT_SITE_OTHER ?
					       intern(p, file) : NULL, 0, 0 };
	p->site_seen[id] = 0;
	idmap_put(&p->site_index, h, id);
	log_change(p, LOG_SITES, id);
	return id;
}

uint32_t profile_site(struct profile *p, uint32_t func, uint64_t addr, const char *file,
		      unsigned line)
{
	return find_site(p, func, addr, file, line, false);
}

uint32_t profile_line_site(struct profile *p, uint32_t func, uint64_t addr, const char *file,
			   unsigned line)
{
	return find_site(p, func, addr, file, line, true);
}

/* A new (node, site) entry, first of the node's. */
static uint32_t add_node_site(struct profile *p, uint32_t node, uint32_t site)
{
	uint32_t e = (uint32_t)p->nnode_sites;

	if (p->nnode_sites == p->node_sites_cap) {
		xgrow((void **)&p->node_sites, &p->node_sites_cap, p->nnode_sites + 1,
		      sizeof(*p->node_sites));
		profile_log_reserve(&p->logs[LOG_NODE_SITES], p->node_sites_cap);
	}
	p->nnode_sites++;
	p->node_sites[e] = (struct snapshot_node_site){ node, site, p->node_site_first[node], 0 };
	p->node_site_first[node] = e;
	idmap_put(&p->node_site_index, (uint64_t)node << 32 | site, e);
	/* node_site_first[node] is copied with the node, which its sample logged. */
	return e;
}

/* A self sample of thread node at site, in the node's histogram. Past the budget a new pair
 * counts at (node, the site function's SNAPSHOT_SITE_OTHER site); past what 32-bit ids number,
 * nowhere. */
static void count_node_site(struct profile *p, uint32_t node, uint32_t site, uint64_t count)
{
	uint32_t e = idmap_get(&p->node_site_index, (uint64_t)node << 32 | site);

	if (e == IDMAP_MISSING) {
		if (p->sites[site].addr != SNAPSHOT_SITE_OTHER && !sites_fit(p, 0, 1)) {
			count_node_site(p, node, profile_site(p, p->sites[site].func,
							      SNAPSHOT_SITE_OTHER, NULL, 0), count);
			return;
		}
		if (p->nnode_sites >= SNAPSHOT_NO_NODE_SITE - 1)
			return;
		e = add_node_site(p, node, site);
	}
	p->node_sites[e].self += count;
	log_change(p, LOG_NODE_SITES, e);
}

/* The child of parent for func, made on first sight with its merged counterpart; or
 * SNAPSHOT_NO_NODE when the tries hold as many nodes as ids can number (then the sample stays
 * at parent, and the user is told). */
static uint32_t child_of(struct profile *p, uint32_t parent, uint32_t func)
{
	uint32_t child = idmap_get(&p->child_index, (uint64_t)parent << 32 | func);
	uint32_t merged;

	if (child != IDMAP_MISSING)
		return child;
	if (p->nnodes + 2 > PROFILE_MAX_NODES) {
		diag_report(p->diag, DIAG_WARNING, "the call tree has %zu nodes, the most it can hold: "
			    "samples on new call paths are counted at their deepest known caller",
			    p->nnodes);
		return SNAPSHOT_NO_NODE;
	}
	merged = p->merged_of[parent];
	if (merged == parent) /* a merged node */
		return append_node(p, func, parent, SNAPSHOT_NO_NODE);
	/* A thread node: its counterpart first. */
	merged = child_of(p, merged, func);
	return merged == SNAPSHOT_NO_NODE ? merged : append_node(p, func, parent, merged);
}

/* The thread's entry, made on first sight; NULL when no root can be made for it. */
static struct snapshot_thread *thread_of(struct profile *p, pid_t pid, pid_t tid)
{
	struct snapshot_thread *t;
	uint32_t i, root;

	if (p->by_process)
		tid = pid;
	i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)tid);
	if (i != IDMAP_MISSING)
		return &p->threads[i];
	if (p->nthreads >= PROFILE_MAX_THREADS || p->nnodes + 1 > PROFILE_MAX_NODES)
		return NULL;
	root = append_node(p, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE, 0);
	if (p->nthreads == p->threads_cap) {
		xgrow((void **)&p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*p->threads));
		profile_log_reserve(&p->logs[LOG_THREADS], p->threads_cap);
	}
	t = &p->threads[p->nthreads];
	*t = (struct snapshot_thread){ .pid = pid, .tid = tid, .root = root };
	idmap_put(&p->thread_index, (uint64_t)(uint32_t)tid, (uint32_t)p->nthreads);
	log_change(p, LOG_THREADS, (uint32_t)p->nthreads++);
	return t;
}

void profile_set_comm(struct profile *p, pid_t pid, pid_t tid, const char *comm)
{
	struct snapshot_thread *t;

	if (p->by_process && tid != pid) /* a process is named by its main thread */
		return;
	t = thread_of(p, pid, tid);
	if (!t)
		return;
	t->comm = intern(p, comm);
	t->pid = pid;
	log_change(p, LOG_THREADS, (uint32_t)(t - p->threads));
}

const char *profile_comm(const struct profile *p, pid_t tid)
{
	uint32_t i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)tid);

	return i == IDMAP_MISSING ? NULL : p->threads[i].comm;
}

void profile_set_time(struct profile *p, uint64_t now_ns)
{
	p->now_ns = now_ns;
}

/* --- adding samples ----------------------------------------------------------------------------- */

static inline void count_node(struct profile *p, uint32_t node, uint64_t count, bool leaf)
{
	p->nodes[node].total += count;
	if (leaf)
		p->nodes[node].self += count;
	log_change(p, LOG_NODES, node);
}

/* The flat table: self for the leaf (the root's when the stack is empty), total once for each
 * function on the stack, and for the root. */
static void count_funcs(struct profile *p, const uint32_t *funcs, size_t depth, uint64_t count)
{
	uint64_t sample = p->samples; /* already counted this one: unique per sample */

	p->func_total[SNAPSHOT_ROOT_FUNC] += count;
	log_change(p, LOG_FUNCS, SNAPSHOT_ROOT_FUNC);
	for (size_t i = 0; i < depth; i++) {
		uint32_t f = funcs[i];

		if (p->func_seen[f] != sample) {
			p->func_seen[f] = sample;
			p->func_total[f] += count;
			log_change(p, LOG_FUNCS, f);
		}
	}
	p->func_self[depth ? funcs[depth - 1] : SNAPSHOT_ROOT_FUNC] += count;
}

/* Add count samples along funcs; returns the leaf's thread node (SNAPSHOT_NO_NODE: not added). */
static uint32_t add_stack(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs,
			  size_t depth, uint64_t count)
{
	struct snapshot_thread *t = thread_of(p, pid, tid);
	uint32_t node;
	size_t reached = 0;

	if (!t)
		return SNAPSHOT_NO_NODE;
	t->samples += count;
	p->samples += count;
	log_change(p, LOG_THREADS, (uint32_t)(t - p->threads));
	node = t->root;
	for (;; reached++) {
		bool leaf = reached == depth;
		uint32_t child = leaf ? SNAPSHOT_NO_NODE : child_of(p, node, funcs[reached]);

		leaf = leaf || child == SNAPSHOT_NO_NODE;
		count_node(p, node, count, leaf);
		count_node(p, p->merged_of[node], count, leaf);
		if (leaf)
			break;
		node = child;
	}
	count_funcs(p, funcs, reached, count);
	return node;
}

/* After a sample: fold when the tries have grown past the budget. */
static void after_add(struct profile *p)
{
	if (p->nnodes >= p->next_check)
		profile_check_budget(p);
}

uint64_t profile_samples(const struct profile *p)
{
	return p->samples;
}

/* --- the history ------------------------------------------------------------------------------ */

void profile_set_by_process(struct profile *p)
{
	p->by_process = true;
}

void profile_set_ownerless(struct profile *p)
{
	p->ownerless = true;
}

void profile_set_owner(struct profile *p, pid_t pid, pid_t tid, const struct asuser *owner)
{
	struct snapshot_thread *t = thread_of(p, pid, tid);

	if (!t)
		return;
	t->owner = owner ? SNAPSHOT_OWNER_KNOWN : SNAPSHOT_OWNER_GONE;
	t->uid = owner ? owner->uid : 0;
	t->gid = owner ? owner->gid : 0;
	log_change(p, LOG_THREADS, (uint32_t)(t - p->threads));
}

void profile_forget_owner(struct profile *p, pid_t pid, pid_t tid)
{
	uint32_t i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)(p->by_process ? pid : tid));

	if (i == IDMAP_MISSING || p->threads[i].owner == SNAPSHOT_OWNER_UNSEEN)
		return;
	p->threads[i].owner = SNAPSHOT_OWNER_UNSEEN;
	log_change(p, LOG_THREADS, i);
}

bool profile_owner_seen(const struct profile *p, pid_t tid)
{
	uint32_t i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)tid);

	/* A thread the profile has no room for has no owner to keep either. */
	if (i == IDMAP_MISSING)
		return p->nthreads >= PROFILE_MAX_THREADS || p->nnodes + 1 > PROFILE_MAX_NODES;
	return p->threads[i].owner != SNAPSHOT_OWNER_UNSEEN;
}

void profile_set_history(struct profile *p, unsigned seconds, uint64_t origin_ns)
{
	history_free(p->history);
	p->history = seconds ? history_new(seconds) : NULL;
	p->history_seconds = seconds;
	p->origin_ns = origin_ns;
}

void profile_set_origin(struct profile *p, uint64_t origin_ns)
{
	p->origin_ns = origin_ns;
}

bool profile_has_history(const struct profile *p)
{
	return p->history != NULL;
}

size_t profile_history_memory(const struct profile *p)
{
	return p->history ? history_memory(p->history) : 0;
}

/* The second of the run now_ns is in. */
static uint64_t run_second(const struct profile *p, uint64_t now_ns)
{
	return now_ns > p->origin_ns ? (now_ns - p->origin_ns) / 1000000000u : 0;
}

/* The sites of one sample: the leaf's self, every one's total once. */
static void count_sites(struct profile *p, const uint32_t *sites, size_t depth, uint64_t count)
{
	uint64_t sample = p->samples;

	for (size_t i = 0; i < depth; i++) {
		uint32_t site = sites[i];

		if (site == PROFILE_NO_SITE || p->site_seen[site] == sample)
			continue;
		p->site_seen[site] = sample;
		p->sites[site].total += count;
		log_change(p, LOG_SITES, site);
	}
	if (depth && sites[depth - 1] != PROFILE_NO_SITE)
		p->sites[sites[depth - 1]].self += count;
}

void profile_add(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth)
{
	profile_add_sites(p, pid, tid, funcs, NULL, depth);
}

/* funcs[0..depth) with each merged function replaced by the one it went into: a stack made
 * before the merge (the frames of a sample resolved, a wait's stack) counts where it goes now. */
static const uint32_t *funcs_now(struct profile *p, const uint32_t *funcs, size_t depth)
{
	if (!p->nmerged)
		return funcs;
	xgrow((void **)&p->remapped, &p->remapped_cap, depth, sizeof(*p->remapped));
	for (size_t i = 0; i < depth; i++)
		p->remapped[i] = func_now(p, funcs[i]);
	return p->remapped;
}

void profile_add_sites(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs,
		       const uint32_t *sites, size_t depth)
{
	profile_add_sites_n(p, pid, tid, funcs, sites, depth, 1);
}

void profile_add_sites_n(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs,
			 const uint32_t *sites, size_t depth, uint64_t count)
{
	uint32_t node = add_stack(p, pid, tid, funcs_now(p, funcs, depth), depth, count);
	uint32_t leaf = sites && depth ? sites[depth - 1] : PROFILE_NO_SITE;

	if (node == SNAPSHOT_NO_NODE)
		leaf = PROFILE_NO_SITE;
	if (sites && node != SNAPSHOT_NO_NODE)
		count_sites(p, sites, depth, count);
	/* The leaf's node, unless the stack was cut short (no room for more nodes). */
	if (leaf != PROFILE_NO_SITE && func_now(p, p->sites[leaf].func) != p->nodes[node].func)
		leaf = PROFILE_NO_SITE;
	if (leaf != PROFILE_NO_SITE)
		count_node_site(p, node, leaf, count);

	if (p->history && node != SNAPSHOT_NO_NODE)
		history_add_n(p->history, run_second(p, p->now_ns), node, leaf, count);
	after_add(p);
}

void profile_add_n(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth,
		   uint64_t count)
{
	uint32_t node = add_stack(p, pid, tid, funcs_now(p, funcs, depth), depth, count);

	if (p->history && node != SNAPSHOT_NO_NODE)
		history_add_n(p->history, run_second(p, p->now_ns), node, PROFILE_NO_SITE, count);
	after_add(p);
}

/* --- starting over ---------------------------------------------------------------------------- */

void profile_reset(struct profile *p)
{
	profile_logs_restart(p);
	p->nnodes = 0;
	idmap_free(&p->child_index);
	idmap_init(&p->child_index);
	idmap_free(&p->node_site_index);
	idmap_init(&p->node_site_index);
	p->nnode_sites = 0;
	append_node(p, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE);
	for (size_t i = 0; i < p->nthreads; i++) {
		p->threads[i].root = append_node(p, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE, 0);
		p->threads[i].samples = 0;
	}
	memset(p->func_self, 0, p->nfuncs * sizeof(*p->func_self));
	memset(p->func_total, 0, p->nfuncs * sizeof(*p->func_total));
	memset(p->func_seen, 0, p->nfuncs * sizeof(*p->func_seen));
	for (size_t i = 0; i < p->nsites; i++) {
		p->sites[i].self = p->sites[i].total = 0;
		p->site_seen[i] = 0;
	}
	p->samples = 0;
	p->folded_nodes = 0;
	if (p->history) {
		history_free(p->history);
		p->history = history_new(p->history_seconds);
	}
}
