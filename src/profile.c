/* profile.c — the collector's call trees, and the snapshots made of them.
 *
 * Nodes live in one array: the per-thread tries and the tree merged over all threads (node 0 is
 * the merged root), in creation order, so a parent's index is always smaller than its children's.
 * Each thread node knows its counterpart in the merged tree (merged_of; a merged node maps to
 * itself), so a sample walks its thread's trie by hash and the merged tree by array reads. The
 * flat table (self and total per function, recursion counted once per sample) is kept per sample
 * too. So a snapshot needs no merge and no walk: it is copies.
 *
 * And the copies are incremental. The profile keeps the last POOL_SIZE snapshots it made and logs
 * the nodes, functions and threads that change (an item once per generation; a generation is the
 * time between two snapshots). A new snapshot takes a pooled one that no reader holds any more
 * (its only reference is the pool's) and copies into it just what was logged since it was made:
 * the cost of a snapshot follows what changed, not the size of the profile. With nothing
 * pooled there is nothing to log against, and a snapshot is a full copy.
 *
 * The memory budget: when the tries, their index and the pooled snapshots outgrow it, the
 * coldest subtrees fold. Every thread node whose total is under a threshold (chosen so that at
 * most a quarter of the budget's nodes stay) leaves with its subtree, and its samples go to an
 * "[other]" child of its parent; the merged tree is then rebuilt from the thread tries. Totals
 * stay exact (a parent's total is still its self plus its children's), the flat table is kept
 * per sample and never folds, and node ids change, so the pool is dropped.
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
 * The history (history.h) keeps each second's (thread leaf, leaf site) counts. A snapshot of a
 * stretch counts each leaf's samples there (and its merged counterpart's) as self and sums totals
 * bottom-up, which the index order makes one reverse pass; each leaf site counts self samples of
 * its site and of its (node, site) pair. The history keeps no stacks of sites, so a stretch's
 * sites have no totals. */
#include "proftop/profile.h"

#include "proftop/asuser.h"
#include "proftop/diag.h"
#include "proftop/history.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_SIZE 3
/* Look at memory every this many new nodes (and after each snapshot). */
#define BUDGET_CHECK_NODES 4096u
/* Totals at or above this are counted together when choosing what folds. */
#define FOLD_HISTOGRAM 65536u

enum { LOG_NODES, LOG_FUNCS, LOG_THREADS, LOG_SITES, LOG_NODE_SITES, NLOGS };

struct change_log {
	uint32_t *gen_of;      /* per item: the generation it was last logged in */
	size_t gen_cap;
	uint32_t *items;       /* the items changed, oldest first; each once per generation */
	size_t n, cap;
};

/* A snapshot the profile made and may update into a newer one. */
struct pooled {
	struct snapshot *snapshot;
	struct snapshot_node *nodes;   /* its arrays, writable here */
	struct snapshot_func *funcs;
	uint64_t *self, *total;
	struct snapshot_thread *threads;
	struct snapshot_site *sites;
	struct snapshot_node_site *node_sites;
	uint32_t *node_site_first;     /* nodes_cap of them */
	size_t nodes_cap, funcs_cap, threads_cap, sites_cap, node_sites_cap;
	size_t log_pos[NLOGS];         /* where each log stood when it was made */
};

struct func_key {
	const char *module;    /* interned in the profile's strings, so compared by pointer */
	const char *name;      /* NULL: the function is the address below */
	uint64_t addr;         /* where a named function starts; an unnamed one's address */
	uint64_t inlined;      /* 1: its inlined instances (addr 0) */
	uint64_t jit_pid;      /* a JIT's unnamed address (profile_jit_func()): its process; else 0 */
};

struct site_key {
	uint64_t func;
	uint64_t addr;
};

struct profile {
	struct diag *diag;
	bool by_process;           /* a tree per process, not per thread (-a) */
	bool ownerless;            /* read from a file (profile_set_ownerless()) */
	struct strpool *strings;   /* names, modules, comms; shared with the snapshots */

	struct snapshot_func *funcs;
	struct func_key *func_keys;
	uint64_t *func_self, *func_total;
	uint64_t *func_seen;       /* the sample that last counted the function's total */
	size_t nfuncs, funcs_cap;
	struct idmap func_index;   /* hash of func_key -> id (verified on lookup) */
	struct idmap renamed_index; /* hash of (module, addr) -> an id named after it was interned
				     * unnamed there (profile_name_funcs(); verified on lookup) */
	uint32_t *merged_into;     /* per function: the one it was merged into (never a merged one
				    * itself); 0: none */
	size_t nmerged;
	uint32_t *jit_funcs;       /* the JIT addresses of live processes, named or not */
	size_t njit_funcs, jit_funcs_cap;
	uint32_t *remapped;        /* a stack added, its merged functions replaced */
	size_t remapped_cap;

	struct snapshot_node *nodes;
	uint32_t *merged_of;
	size_t nnodes, nodes_cap;
	struct idmap child_index;  /* parent << 32 | func -> node */

	struct snapshot_thread *threads;
	size_t nthreads, threads_cap;
	struct idmap thread_index; /* tid -> thread */
	uint64_t samples;

	struct snapshot_site *sites;
	uint64_t *site_seen;       /* the sample that last counted the site's total */
	size_t nsites, sites_cap;
	struct idmap site_index;   /* hash of site_key -> id (verified on lookup) */
	struct snapshot_node_site *node_sites;
	size_t nnode_sites, node_sites_cap;
	uint32_t *node_site_first; /* per node (nodes_cap): its first entry */
	struct idmap node_site_index; /* node << 32 | site -> entry */

	size_t max_bytes;          /* the memory budget; 0: none */
	size_t next_check;         /* node count at which memory is looked at again */
	uint32_t other_func;       /* "[other]", once something folded */
	uint64_t folded_nodes;
	unsigned folds;

	struct change_log logs[NLOGS];
	uint32_t gen;
	struct pooled pool[POOL_SIZE]; /* oldest first */
	size_t npool;

	uint64_t now_ns;
	struct history *history;   /* NULL: none kept */
	unsigned history_seconds;
	uint32_t traced_func;      /* the timeline counts its samples too; 0: none */
	uint64_t origin_ns;        /* when the history's second 0 began */
};

static const char *intern(struct profile *p, const char *s)
{
	return strpool_intern(p->strings, s, strlen(s));
}

/* --- the change logs and the pool ------------------------------------------------------------- */

/* Item was made or changed: log it once in this generation. Nothing is logged while nothing is
 * pooled. */
static inline void log_change(struct profile *p, int which, uint32_t item)
{
	struct change_log *l = &p->logs[which];

	if (!p->npool || l->gen_of[item] == p->gen)
		return;
	l->gen_of[item] = p->gen;
	if (l->n == l->cap)
		xgrow((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items));
	l->items[l->n++] = item;
}

/* Room in a log for items up to count (the profile's array of them grew). */
static void log_reserve(struct change_log *l, size_t count)
{
	size_t old = l->gen_cap;

	if (count <= old)
		return;
	xgrow((void **)&l->gen_of, &l->gen_cap, count, sizeof(*l->gen_of));
	memset(l->gen_of + old, 0, (l->gen_cap - old) * sizeof(*l->gen_of));
}

static void pooled_release(struct pooled *e)
{
	snapshot_unref(e->snapshot);
	memset(e, 0, sizeof(*e));
}

/* Forget every pooled snapshot (readers keep theirs) and the logs kept for them. */
static void pool_drop(struct profile *p)
{
	for (size_t i = 0; i < p->npool; i++)
		pooled_release(&p->pool[i]);
	p->npool = 0;
	for (int l = 0; l < NLOGS; l++)
		p->logs[l].n = 0;
}

/* Drop log entries no pooled snapshot needs. */
static void logs_trim(struct profile *p)
{
	for (int l = 0; l < NLOGS; l++) {
		size_t keep_from = p->logs[l].n;

		for (size_t i = 0; i < p->npool; i++)
			if (p->pool[i].log_pos[l] < keep_from)
				keep_from = p->pool[i].log_pos[l];
		if (!keep_from)
			continue;
		memmove(p->logs[l].items, p->logs[l].items + keep_from,
			(p->logs[l].n - keep_from) * sizeof(*p->logs[l].items));
		p->logs[l].n -= keep_from;
		for (size_t i = 0; i < p->npool; i++)
			p->pool[i].log_pos[l] -= keep_from;
	}
}

static size_t log_bytes(const struct change_log *l)
{
	return l->gen_cap * sizeof(*l->gen_of) + l->cap * sizeof(*l->items);
}

/* --- memory ----------------------------------------------------------------------------------- */

size_t profile_memory(const struct profile *p)
{
	size_t bytes = p->nodes_cap * (sizeof(*p->nodes) + sizeof(*p->merged_of)) +
		       p->child_index.capacity * (sizeof(uint64_t) + sizeof(uint32_t)) +
		       p->funcs_cap * (sizeof(*p->funcs) + sizeof(*p->func_keys) + 3 * sizeof(uint64_t)) +
		       (p->func_index.capacity + p->renamed_index.capacity) *
			       (sizeof(uint64_t) + sizeof(uint32_t)) +
		       (p->funcs_cap + p->jit_funcs_cap + p->remapped_cap) * sizeof(uint32_t) +
		       p->threads_cap * sizeof(*p->threads) +
		       p->sites_cap * (sizeof(*p->sites) + sizeof(*p->site_seen)) +
		       p->site_index.capacity * (sizeof(uint64_t) + sizeof(uint32_t)) +
		       p->node_sites_cap * sizeof(*p->node_sites) + p->nodes_cap * sizeof(uint32_t) +
		       p->node_site_index.capacity * (sizeof(uint64_t) + sizeof(uint32_t));

	for (int l = 0; l < NLOGS; l++)
		bytes += log_bytes(&p->logs[l]);
	for (size_t i = 0; i < p->npool; i++)
		bytes += p->pool[i].nodes_cap * sizeof(struct snapshot_node) +
			 p->pool[i].funcs_cap * (sizeof(struct snapshot_func) + 2 * sizeof(uint64_t)) +
			 p->pool[i].threads_cap * sizeof(struct snapshot_thread) +
			 p->pool[i].sites_cap * sizeof(struct snapshot_site) +
			 p->pool[i].node_sites_cap * sizeof(struct snapshot_node_site) +
			 p->pool[i].nodes_cap * sizeof(uint32_t);
	return bytes;
}

static void fold(struct profile *p);
static void logs_restart(struct profile *p);

/* The bytes the child index is about to take on top of what it has: it doubles when more than
 * half full, and for a moment holds both tables. */
static size_t index_growth(const struct profile *p)
{
	const struct idmap *m = &p->child_index;

	if ((m->count + 2 * BUDGET_CHECK_NODES) * 2 <= m->capacity)
		return 0;
	return 2 * m->capacity * (sizeof(uint64_t) + sizeof(uint32_t));
}

/* The bytes the node arrays are about to take on top of what they have: they double when full. */
static size_t nodes_growth(const struct profile *p)
{
	if (p->nnodes + BUDGET_CHECK_NODES <= p->nodes_cap)
		return 0;
	/* nodes, merged_of, node_site_first and the node log's generations */
	return p->nodes_cap * (sizeof(*p->nodes) + sizeof(*p->merged_of) + 2 * sizeof(uint32_t));
}

/* Fold when over the budget, or when the index's or the nodes' next growth would be. The next
 * look is a check's worth of nodes from where the fold left the tree. A fold that cannot get under
 * it (the budget is below what the functions and threads alone take) is not retried until the
 * nodes double. */
static void check_budget(struct profile *p)
{
	p->next_check = p->nnodes + BUDGET_CHECK_NODES;
	if (!p->max_bytes || profile_memory(p) + index_growth(p) + nodes_growth(p) <= p->max_bytes)
		return;
	fold(p);
	p->next_check = p->nnodes + BUDGET_CHECK_NODES;
	if (profile_memory(p) > p->max_bytes)
		p->next_check = p->nnodes * 2 + BUDGET_CHECK_NODES;
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
	log_reserve(&p->logs[LOG_FUNCS], cap);
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
	log_reserve(&p->logs[LOG_NODES], cap);
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
	pool_drop(p);
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

/* Where func counts now: the function it was merged into, if it was. */
static inline uint32_t func_now(const struct profile *p, uint32_t func)
{
	return p->merged_into[func] ? p->merged_into[func] : func;
}

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

static void rebuild(struct profile *p, uint64_t threshold);

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

/* Entering (enter) or leaving thread node n on a walk of the tries, for count_both(). */
static void both_step(const struct profile *p, uint32_t n, bool enter, const uint32_t *group,
		      uint32_t *on_func, uint32_t *on_group, uint64_t *both)
{
	uint32_t f = p->nodes[n].func, g = group[f];

	if (!g)
		return;
	if (!enter) {
		on_func[f]--;
		on_group[g]--;
		return;
	}
	/* The first of f on this path, below another of the group: its samples count twice. */
	if (!on_func[f] && on_group[g])
		both[g] += p->nodes[n].total;
	on_func[f]++;
	on_group[g]++;
}

/* For each group of functions about to become one (group[f]: the one; 0: f is in none), what the
 * sum of their totals counts too many: per sample in the tries, one for every other function of
 * the group on its stack. A walk of the thread tries, depth first, in no memory but counters. */
static void count_both(const struct profile *p, const uint32_t *group, uint64_t *both)
{
	uint32_t *on_func = xcalloc(p->nfuncs, sizeof(*on_func));
	uint32_t *on_group = xcalloc(p->nfuncs, sizeof(*on_group));

	for (size_t t = 0; t < p->nthreads; t++) {
		uint32_t root = p->threads[t].root, n = p->nodes[root].first_child;

		while (n != SNAPSHOT_NO_NODE) {
			both_step(p, n, true, group, on_func, on_group, both);
			if (p->nodes[n].first_child != SNAPSHOT_NO_NODE) {
				n = p->nodes[n].first_child;
				continue;
			}
			for (;;) {
				both_step(p, n, false, group, on_func, on_group, both);
				if (p->nodes[n].next_sibling != SNAPSHOT_NO_NODE) {
					n = p->nodes[n].next_sibling;
					break;
				}
				n = p->nodes[n].parent;
				if (n == root) {
					n = SNAPSHOT_NO_NODE;
					break;
				}
			}
		}
	}
	free(on_func);
	free(on_group);
}

/* The functions merged[0..n) were just merged (merged_into): the flat table counts them in the
 * functions they went into, and the tries are made again with their nodes together. */
static void merge_funcs(struct profile *p, const uint32_t *merged, size_t n)
{
	uint32_t *group = xcalloc(p->nfuncs, sizeof(*group));
	uint64_t *both = xcalloc(p->nfuncs, sizeof(*both));

	for (size_t i = 0; i < n; i++) {
		uint32_t to = p->merged_into[merged[i]];

		group[merged[i]] = group[to] = to;
	}
	count_both(p, group, both);
	for (size_t i = 0; i < n; i++) {
		uint32_t from = merged[i], to = p->merged_into[from];

		p->func_self[to] += p->func_self[from];
		p->func_total[to] += p->func_total[from];
		p->func_self[from] = p->func_total[from] = 0;
		p->nmerged++;
		log_change(p, LOG_FUNCS, from);
		log_change(p, LOG_FUNCS, to);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t to = p->merged_into[merged[i]];

		p->func_total[to] -= both[to] < p->func_total[to] ? both[to] : p->func_total[to];
		both[to] = 0;
	}
	if (p->traced_func < p->nfuncs)
		p->traced_func = func_now(p, p->traced_func);
	free(group);
	free(both);
	rebuild(p, 0);
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
		merge_funcs(p, merged, n);
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
	log_reserve(&p->logs[LOG_SITES], cap);
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

uint32_t profile_site(struct profile *p, uint32_t func, uint64_t addr, const char *file,
		      unsigned line)
{
	struct site_key key = { func, addr };
	uint64_t h;
	uint32_t id;

	/* Probe seeds until the key or a free hash: a new site goes in at that hash. */
	for (uint64_t seed = 0;; seed++) {
		h = util_hash_bytes(&key, sizeof(key), seed);
		id = idmap_get(&p->site_index, h);
		if (id == IDMAP_MISSING)
			break;
		if (p->sites[id].func == func && p->sites[id].addr == addr)
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
		return profile_site(p, func, SNAPSHOT_SITE_OTHER, NULL, 0);
	grow_sites(p);
	id = (uint32_t)p->nsites++;
	p->sites[id] = (struct snapshot_site){ func, line, addr, file && addr != SNAPSHOT_SITE_OTHER ?
					       intern(p, file) : NULL, 0, 0 };
	p->site_seen[id] = 0;
	idmap_put(&p->site_index, h, id);
	log_change(p, LOG_SITES, id);
	return id;
}

/* A new (node, site) entry, first of the node's. */
static uint32_t add_node_site(struct profile *p, uint32_t node, uint32_t site)
{
	uint32_t e = (uint32_t)p->nnode_sites;

	if (p->nnode_sites == p->node_sites_cap) {
		xgrow((void **)&p->node_sites, &p->node_sites_cap, p->nnode_sites + 1,
		      sizeof(*p->node_sites));
		log_reserve(&p->logs[LOG_NODE_SITES], p->node_sites_cap);
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
static void count_node_site(struct profile *p, uint32_t node, uint32_t site)
{
	uint32_t e = idmap_get(&p->node_site_index, (uint64_t)node << 32 | site);

	if (e == IDMAP_MISSING) {
		if (p->sites[site].addr != SNAPSHOT_SITE_OTHER && !sites_fit(p, 0, 1)) {
			count_node_site(p, node, profile_site(p, p->sites[site].func,
							      SNAPSHOT_SITE_OTHER, NULL, 0));
			return;
		}
		if (p->nnode_sites >= SNAPSHOT_NO_NODE_SITE - 1)
			return;
		e = add_node_site(p, node, site);
	}
	p->node_sites[e].self++;
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
		log_reserve(&p->logs[LOG_THREADS], p->threads_cap);
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
		check_budget(p);
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
static void count_sites(struct profile *p, const uint32_t *sites, size_t depth)
{
	uint64_t sample = p->samples;

	for (size_t i = 0; i < depth; i++) {
		uint32_t site = sites[i];

		if (site == PROFILE_NO_SITE || p->site_seen[site] == sample)
			continue;
		p->site_seen[site] = sample;
		p->sites[site].total++;
		log_change(p, LOG_SITES, site);
	}
	if (depth && sites[depth - 1] != PROFILE_NO_SITE)
		p->sites[sites[depth - 1]].self++;
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
	uint32_t node = add_stack(p, pid, tid, funcs_now(p, funcs, depth), depth, 1);
	uint32_t leaf = sites && depth ? sites[depth - 1] : PROFILE_NO_SITE;

	if (node == SNAPSHOT_NO_NODE)
		leaf = PROFILE_NO_SITE;
	if (sites && node != SNAPSHOT_NO_NODE)
		count_sites(p, sites, depth);
	/* The leaf's node, unless the stack was cut short (no room for more nodes). */
	if (leaf != PROFILE_NO_SITE && func_now(p, p->sites[leaf].func) != p->nodes[node].func)
		leaf = PROFILE_NO_SITE;
	if (leaf != PROFILE_NO_SITE)
		count_node_site(p, node, leaf);

	if (p->history && node != SNAPSHOT_NO_NODE)
		history_add(p->history, run_second(p, p->now_ns), node, leaf);
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

/* --- folding ---------------------------------------------------------------------------------- */

/* The smallest total a thread node may have and stay, so that at most keep of them do. */
static uint64_t fold_threshold(const struct profile *p, size_t keep)
{
	uint32_t *count = xcalloc(FOLD_HISTOGRAM, sizeof(*count));
	size_t kept = 0;
	uint64_t t = FOLD_HISTOGRAM;

	for (size_t i = 0; i < p->nnodes; i++)
		if (p->merged_of[i] != i && p->nodes[i].parent != SNAPSHOT_NO_NODE)
			count[p->nodes[i].total < FOLD_HISTOGRAM ? p->nodes[i].total
								 : FOLD_HISTOGRAM - 1]++;
	while (t > 1 && kept + count[t - 1] <= keep)
		kept += count[--t];
	free(count);
	return t;
}

struct refold {
	struct profile *p;
	struct snapshot_node *nodes;
	uint32_t *merged_of;
	size_t nnodes, cap;
	struct idmap children;
	uint32_t *other_of;        /* per new node: its "[other]" child (SNAPSHOT_NO_NODE: none) */
};

static uint32_t refold_append(struct refold *r, uint32_t func, uint32_t parent, uint32_t merged,
			      uint64_t self, uint64_t total)
{
	uint32_t id = (uint32_t)r->nnodes++;

	if (id == r->cap) {
		r->cap *= 2;
		r->nodes = xrealloc(r->nodes, r->cap * sizeof(*r->nodes));
		r->merged_of = xrealloc(r->merged_of, r->cap * sizeof(*r->merged_of));
		r->other_of = xrealloc(r->other_of, r->cap * sizeof(*r->other_of));
	}
	r->nodes[id] = (struct snapshot_node){ func, parent, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE,
					       self, total };
	r->merged_of[id] = merged == SNAPSHOT_NO_NODE ? id : merged;
	r->other_of[id] = SNAPSHOT_NO_NODE;
	if (parent != SNAPSHOT_NO_NODE) {
		r->nodes[id].next_sibling = r->nodes[parent].first_child;
		r->nodes[parent].first_child = id;
		idmap_put(&r->children, (uint64_t)parent << 32 | func, id);
	}
	return id;
}

/* The child of parent for func with these counts added: found (two nodes became one, their
 * functions merged) or made. */
static uint32_t refold_child(struct refold *r, uint32_t func, uint32_t parent, uint64_t self,
			     uint64_t total)
{
	uint32_t id = idmap_get(&r->children, (uint64_t)parent << 32 | func);

	if (id == IDMAP_MISSING)
		return refold_append(r, func, parent, 0, self, total);
	r->nodes[id].self += self;
	r->nodes[id].total += total;
	return id;
}

/* Where a folded subtree's samples go: the "[other]" child of parent (a new node). */
static uint32_t refold_other(struct refold *r, uint32_t parent)
{
	if (r->other_of[parent] == SNAPSHOT_NO_NODE) {
		/* Apart: refold_append() may move other_of, and C leaves open whether the address
		 * of the element is taken before or after the call. */
		uint32_t other = refold_append(r, r->p->other_func, parent, 0, 0, 0);

		r->other_of[parent] = other;
	}
	return r->other_of[parent];
}

/* The merged counterpart of new thread node n: found or made under its parent's, with n's
 * counts added. */
static void refold_merge(struct refold *r, uint32_t n)
{
	const struct snapshot_node *node = &r->nodes[n];
	uint32_t m = 0;

	if (node->parent != SNAPSHOT_NO_NODE) {
		uint32_t mp = r->merged_of[node->parent];
		uint64_t key = (uint64_t)mp << 32 | node->func;

		m = idmap_get(&r->children, key);
		if (m == IDMAP_MISSING)
			m = refold_append(r, node->func, mp, SNAPSHOT_NO_NODE, 0, 0);
	}
	r->nodes[m].self += r->nodes[n].self;
	r->nodes[m].total += r->nodes[n].total;
	r->merged_of[n] = m;
}

/* Fold the thread nodes under threshold into their parents' "[other]" children, put the nodes of
 * merged functions together, and rebuild the merged tree; to[] maps each old thread node to where
 * its samples are now. */
static void refold_threads(struct refold *r, uint64_t threshold, uint32_t *to)
{
	const struct profile *p = r->p;

	for (size_t i = 1; i < p->nnodes; i++) {
		const struct snapshot_node *n = &p->nodes[i];
		uint32_t parent = n->parent == SNAPSHOT_NO_NODE ? SNAPSHOT_NO_NODE : to[n->parent];

		to[i] = SNAPSHOT_NO_NODE;
		if (p->merged_of[i] == i)
			continue; /* merged nodes are made again below */
		if (n->parent == SNAPSHOT_NO_NODE) {
			to[i] = refold_append(r, n->func, parent, 0, n->self, n->total);
		} else if (p->other_func && r->nodes[parent].func == p->other_func) {
			to[i] = parent; /* inside a folded subtree: already counted */
		} else if (n->total >= threshold && (!p->other_func || n->func != p->other_func)) {
			to[i] = refold_child(r, func_now(p, n->func), parent, n->self, n->total);
		} else { /* folds, or an earlier fold's "[other]": one per parent */
			to[i] = refold_other(r, parent);
			r->nodes[to[i]].self += n->total;
			r->nodes[to[i]].total += n->total;
		}
	}
	/* Counted once each: the node's own samples, not its folded children's again. */
	for (size_t n = 1, end = r->nnodes; n < end; n++)
		refold_merge(r, (uint32_t)n);
}

/* After refold_threads(): the node sites of the thread nodes that stayed, renumbered (to[] maps
 * an old node to its new one, in r) and added up where nodes went together; those of the nodes
 * that went into "[other]" are dropped. */
static void refold_node_sites(struct profile *p, const struct refold *r, const uint32_t *to)
{
	size_t kept = 0;

	free(p->node_site_first);
	p->node_site_first = xmalloc(r->cap * sizeof(*p->node_site_first));
	memset(p->node_site_first, 0xff, r->cap * sizeof(*p->node_site_first));
	idmap_free(&p->node_site_index);
	for (size_t i = 0; i < p->nnode_sites; i++) {
		struct snapshot_node_site e = p->node_sites[i];
		uint32_t n = to[e.node], at;

		if (n == SNAPSHOT_NO_NODE || r->nodes[n].func != func_now(p, p->nodes[e.node].func))
			continue;
		at = idmap_get(&p->node_site_index, (uint64_t)n << 32 | e.site);
		if (at != IDMAP_MISSING) {
			p->node_sites[at].self += e.self;
			continue;
		}
		e.node = n;
		e.next = p->node_site_first[n];
		p->node_site_first[n] = (uint32_t)kept;
		idmap_put(&p->node_site_index, (uint64_t)n << 32 | e.site, (uint32_t)kept);
		p->node_sites[kept++] = e;
	}
	p->nnode_sites = kept;
}

/* Make the tries again: thread nodes under threshold (0: none) folded, merged functions'
 * together. Node ids change. */
static void rebuild(struct profile *p, uint64_t threshold)
{
	uint32_t *to = xmalloc(p->nnodes * sizeof(*to));
	struct refold r = { .p = p, .cap = p->nnodes / 2 + 16 };

	r.nodes = xmalloc(r.cap * sizeof(*r.nodes));
	r.merged_of = xmalloc(r.cap * sizeof(*r.merged_of));
	r.other_of = xmalloc(r.cap * sizeof(*r.other_of));
	idmap_init(&r.children);
	refold_append(&r, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE, 0, 0);
	to[0] = 0;
	refold_threads(&r, threshold, to);
	refold_node_sites(p, &r, to);
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i].root = to[p->threads[i].root];
	if (p->history)
		history_renumber(p->history, to);
	free(to);
	free(r.other_of);
	free(p->nodes);
	free(p->merged_of);
	idmap_free(&p->child_index);
	p->nodes = r.nodes;
	p->merged_of = r.merged_of;
	p->nnodes = r.nnodes;
	p->nodes_cap = r.cap;
	p->child_index = r.children;
	logs_restart(p);
}

static void fold(struct profile *p)
{
	size_t per_node = (sizeof(struct snapshot_node) + sizeof(uint32_t)) * (1 + POOL_SIZE) + 40;
	uint64_t threshold = fold_threshold(p, p->max_bytes / per_node / 4);
	size_t before = p->nnodes;

	if (!p->other_func)
		p->other_func = profile_func(p, NULL, "[other]", 0);
	rebuild(p, threshold);
	p->folded_nodes += before - p->nnodes;
	p->folds++;
}

/* --- starting over ---------------------------------------------------------------------------- */

/* The logs start over too: node ids changed, nothing pooled is kept to log against. */
static void logs_restart(struct profile *p)
{
	pool_drop(p);
	for (int l = 0; l < NLOGS; l++) {
		free(p->logs[l].gen_of);
		free(p->logs[l].items);
		memset(&p->logs[l], 0, sizeof(p->logs[l]));
	}
	log_reserve(&p->logs[LOG_NODES], p->nodes_cap);
	log_reserve(&p->logs[LOG_FUNCS], p->funcs_cap);
	log_reserve(&p->logs[LOG_THREADS], p->threads_cap);
	log_reserve(&p->logs[LOG_SITES], p->sites_cap);
	log_reserve(&p->logs[LOG_NODE_SITES], p->node_sites_cap);
}

void profile_reset(struct profile *p)
{
	logs_restart(p);
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

/* --- snapshots ---------------------------------------------------------------------------------- */

/* Copy items [from, to) of an array of elem bytes (the whole thing, or the logged ones). */
static void copy_logged(void *dst, const void *src, size_t elem, const struct change_log *l,
			size_t from_pos)
{
	for (size_t i = from_pos; i < l->n; i++)
		memcpy((char *)dst + (size_t)l->items[i] * elem,
		       (const char *)src + (size_t)l->items[i] * elem, elem);
}

/* Make e's arrays big enough for the profile's items now. */
static void pooled_reserve(const struct profile *p, struct pooled *e)
{
	if (e->nodes_cap < p->nnodes) {
		e->nodes_cap = p->nodes_cap;
		e->nodes = xrealloc(e->nodes, e->nodes_cap * sizeof(*e->nodes));
		e->node_site_first = xrealloc(e->node_site_first,
					      e->nodes_cap * sizeof(*e->node_site_first));
	}
	if (e->funcs_cap < p->nfuncs) {
		e->funcs_cap = p->funcs_cap;
		e->funcs = xrealloc(e->funcs, e->funcs_cap * sizeof(*e->funcs));
		e->self = xrealloc(e->self, e->funcs_cap * sizeof(*e->self));
		e->total = xrealloc(e->total, e->funcs_cap * sizeof(*e->total));
	}
	if (e->sites_cap < p->nsites) {
		e->sites_cap = p->sites_cap;
		e->sites = xrealloc(e->sites, e->sites_cap * sizeof(*e->sites));
	}
	if (e->node_sites_cap < p->nnode_sites) {
		e->node_sites_cap = p->node_sites_cap;
		e->node_sites = xrealloc(e->node_sites, e->node_sites_cap * sizeof(*e->node_sites));
	}
	if (e->threads_cap < p->nthreads || !e->threads) {
		e->threads_cap = p->threads_cap ? p->threads_cap : 1;
		e->threads = xrealloc(e->threads, e->threads_cap * sizeof(*e->threads));
	}
}

/* Bring e up to the profile: everything (full) or what the logs say changed since it was made. */
static void pooled_update(const struct profile *p, struct pooled *e, bool full)
{
	const struct change_log *logs = p->logs;

	pooled_reserve(p, e);
	if (full) {
		memcpy(e->nodes, p->nodes, p->nnodes * sizeof(*e->nodes));
		memcpy(e->node_site_first, p->node_site_first,
		       p->nnodes * sizeof(*e->node_site_first));
		memcpy(e->funcs, p->funcs, p->nfuncs * sizeof(*e->funcs));
		memcpy(e->self, p->func_self, p->nfuncs * sizeof(*e->self));
		memcpy(e->total, p->func_total, p->nfuncs * sizeof(*e->total));
		if (p->nthreads)
			memcpy(e->threads, p->threads, p->nthreads * sizeof(*e->threads));
		if (p->nsites)
			memcpy(e->sites, p->sites, p->nsites * sizeof(*e->sites));
		if (p->nnode_sites)
			memcpy(e->node_sites, p->node_sites,
			       p->nnode_sites * sizeof(*e->node_sites));
	} else {
		copy_logged(e->nodes, p->nodes, sizeof(*e->nodes), &logs[LOG_NODES],
			    e->log_pos[LOG_NODES]);
		copy_logged(e->node_site_first, p->node_site_first, sizeof(*e->node_site_first),
			    &logs[LOG_NODES], e->log_pos[LOG_NODES]);
		copy_logged(e->funcs, p->funcs, sizeof(*e->funcs), &logs[LOG_FUNCS],
			    e->log_pos[LOG_FUNCS]);
		copy_logged(e->self, p->func_self, sizeof(*e->self), &logs[LOG_FUNCS],
			    e->log_pos[LOG_FUNCS]);
		copy_logged(e->total, p->func_total, sizeof(*e->total), &logs[LOG_FUNCS],
			    e->log_pos[LOG_FUNCS]);
		copy_logged(e->threads, p->threads, sizeof(*e->threads), &logs[LOG_THREADS],
			    e->log_pos[LOG_THREADS]);
		copy_logged(e->sites, p->sites, sizeof(*e->sites), &logs[LOG_SITES],
			    e->log_pos[LOG_SITES]);
		copy_logged(e->node_sites, p->node_sites, sizeof(*e->node_sites),
			    &logs[LOG_NODE_SITES], e->log_pos[LOG_NODE_SITES]);
	}
	for (int l = 0; l < NLOGS; l++)
		e->log_pos[l] = logs[l].n;
}

/* Point e's snapshot at e's arrays and the profile's counts. */
static void pooled_publish(const struct profile *p, struct pooled *e)
{
	struct snapshot *s = e->snapshot;

	s->nodes = e->nodes;
	s->nnodes = p->nnodes;
	s->funcs = e->funcs;
	s->nfuncs = p->nfuncs;
	s->func_self = e->self;
	s->func_total = e->total;
	s->threads = e->threads;
	s->nthreads = p->nthreads;
	s->sites = e->sites;
	s->nsites = p->nsites;
	s->node_sites = e->node_sites;
	s->nnode_sites = p->nnode_sites;
	s->node_site_first = e->node_site_first;
	s->merged_root = 0;
	s->samples = p->samples;
	s->folded_nodes = p->folded_nodes;
	s->by_process = p->by_process;
	s->ownerless = p->ownerless;
	s->window_ns = 0;
}

/* A pooled snapshot no reader holds (the newest such), taken out of the pool; or a new one. */
static struct pooled take_pooled(struct profile *p, bool *full)
{
	struct pooled e = { 0 };

	for (size_t i = p->npool; i-- > 0;) {
		if (atomic_load_explicit(&p->pool[i].snapshot->refs, memory_order_acquire) != 1)
			continue;
		e = p->pool[i];
		memmove(&p->pool[i], &p->pool[i + 1], (p->npool - i - 1) * sizeof(*p->pool));
		p->npool--;
		/* Its companions were of its publication (the collector sets them): theirs to reuse. */
		for (int c = 0; c < SNAPSHOT_NCOMPANIONS; c++) {
			snapshot_unref(e.snapshot->companions[c]);
			e.snapshot->companions[c] = NULL;
		}
		*full = false;
		return e;
	}
	e.snapshot = snapshot_alloc(strpool_ref(p->strings));
	*full = true;
	return e;
}

/* The samples per stretch whose stack passed through func: a thread node is marked when it or
 * an ancestor is func, which the index order (parents first) makes one pass. */
static void trace(const struct profile *p, struct snapshot_span *spans, size_t n, uint32_t func)
{
	bool *marked = xmalloc(p->nnodes * sizeof(*marked));
	uint64_t *counts = xmalloc((n ? n : 1) * sizeof(*counts));

	for (size_t i = 0; i < p->nnodes; i++) {
		uint32_t parent = p->nodes[i].parent;

		marked[i] = p->nodes[i].func == func || (parent != SNAPSHOT_NO_NODE && marked[parent]);
	}
	history_count(p->history, marked, counts);
	for (size_t i = 0; i < n; i++)
		spans[i].traced = counts[i];
	free(counts);
	free(marked);
}

/* The run's timeline, new in every snapshot (a pooled one drops the one it had). */
static void timeline(const struct profile *p, struct snapshot *s)
{
	struct snapshot_span *spans = NULL;

	free((void *)s->spans);
	s->nspans = p->history ? history_timeline(p->history, &spans) : 0;
	s->spans = spans;
	s->traced_func = p->history && p->traced_func < p->nfuncs ? p->traced_func : 0;
	if (s->traced_func)
		trace(p, spans, s->nspans, s->traced_func);
}

void profile_trace(struct profile *p, uint32_t func)
{
	p->traced_func = func < p->nfuncs ? func_now(p, func) : func;
}

struct snapshot *profile_snapshot(struct profile *p)
{
	bool full;
	struct pooled e = take_pooled(p, &full);

	pooled_update(p, &e, full);
	pooled_publish(p, &e);
	timeline(p, e.snapshot);
	/* The snapshot now frees its own arrays; the pool keeps a reference to update it later. */
	snapshot_ref(e.snapshot);
	if (p->npool == POOL_SIZE) {
		pooled_release(&p->pool[0]);
		memmove(&p->pool[0], &p->pool[1], (POOL_SIZE - 1) * sizeof(*p->pool));
		p->npool--;
	}
	p->pool[p->npool++] = e;
	p->gen++;
	logs_trim(p);
	if (p->nnodes >= p->next_check || (p->max_bytes && profile_memory(p) > p->max_bytes))
		check_budget(p);
	return e.snapshot;
}

/* A snapshot of a stretch in the making: what each history entry there adds to. */
struct stretch_build {
	const struct profile *p;
	struct snapshot_node *nodes;
	struct snapshot_site *sites;
	struct snapshot_node_site *entries;    /* (leaf, site) pairs, chained per node */
	size_t n, cap;
	uint32_t *first;
	struct idmap index;                    /* node << 32 | site -> entry */
};

static void stretch_add(void *arg, const struct history_entry *h)
{
	struct stretch_build *b = arg;
	uint64_t key = (uint64_t)h->node << 32 | h->site;
	uint32_t e;

	b->nodes[h->node].self += h->count;
	b->nodes[b->p->merged_of[h->node]].self += h->count;
	if (h->site == HISTORY_NO_SITE)
		return;
	b->sites[h->site].self += h->count;
	if (b->sites[h->site].func != b->nodes[h->node].func) /* folded into "[other]" since */
		return;
	e = idmap_get(&b->index, key);
	if (e == IDMAP_MISSING) {
		xgrow((void **)&b->entries, &b->cap, b->n + 1, sizeof(*b->entries));
		e = (uint32_t)b->n++;
		b->entries[e] = (struct snapshot_node_site){ h->node, h->site, b->first[h->node], 0 };
		b->first[h->node] = e;
		idmap_put(&b->index, key, e);
	}
	b->entries[e].self += h->count;
}

struct snapshot *profile_range_snapshot(struct profile *p, uint64_t from_s, uint64_t to_s)
{
	struct snapshot_func *funcs = xmalloc(p->nfuncs * sizeof(*funcs));
	struct snapshot_thread *threads = xmalloc((p->nthreads ? p->nthreads : 1) * sizeof(*threads));
	uint64_t *self = xmalloc(p->nfuncs * sizeof(*self));
	uint64_t *total = xmalloc(p->nfuncs * sizeof(*total));
	struct snapshot *s = snapshot_alloc(strpool_ref(p->strings));
	struct stretch_build b = { .p = p };
	size_t nnodes = p->nnodes ? p->nnodes : 1;

	b.nodes = xmalloc(nnodes * sizeof(*b.nodes));
	b.sites = xmalloc((p->nsites ? p->nsites : 1) * sizeof(*b.sites));
	b.first = xmalloc(nnodes * sizeof(*b.first));
	memset(b.first, 0xff, nnodes * sizeof(*b.first));
	idmap_init(&b.index);
	for (size_t i = 0; i < p->nnodes; i++) {
		b.nodes[i] = p->nodes[i];
		b.nodes[i].self = b.nodes[i].total = 0;
	}
	for (size_t i = 0; i < p->nsites; i++) {
		b.sites[i] = p->sites[i];
		b.sites[i].self = b.sites[i].total = 0;
	}
	if (p->history)
		s->samples = history_each(p->history, from_s, to_s, stretch_add, &b, &s->range_start_s,
					  &s->range_end_s);
	idmap_free(&b.index);
	/* Children come after their parent: one reverse pass sums every subtree. */
	for (size_t i = p->nnodes; i-- > 0;) {
		b.nodes[i].total += b.nodes[i].self;
		if (b.nodes[i].parent != SNAPSHOT_NO_NODE)
			b.nodes[b.nodes[i].parent].total += b.nodes[i].total;
	}
	memcpy(funcs, p->funcs, p->nfuncs * sizeof(*funcs));
	if (p->nthreads)
		memcpy(threads, p->threads, p->nthreads * sizeof(*threads));
	for (size_t i = 0; i < p->nthreads; i++)
		threads[i].samples = b.nodes[threads[i].root].total;
	s->nodes = b.nodes;
	s->nnodes = p->nnodes;
	s->funcs = funcs;
	s->nfuncs = p->nfuncs;
	s->threads = threads;
	s->nthreads = p->nthreads;
	s->merged_root = 0;
	s->folded_nodes = p->folded_nodes;
	s->by_process = p->by_process;
	s->ownerless = p->ownerless;
	s->ranged = true;
	snapshot_flat(s, 0, self, total);
	s->func_self = self;
	s->func_total = total;
	s->sites = b.sites;
	s->nsites = p->nsites;
	s->node_sites = b.entries;
	s->nnode_sites = b.n;
	s->node_site_first = b.first;
	s->sites_self_only = true;
	timeline(p, s);
	return s;
}
