/* profile_fold.c — a profile's (profile.c) memory budget, and its tries made again: folded under
 * the budget, or with the nodes of functions merged by a late name together.
 *
 * When the tries, their index and the pooled snapshots outgrow the budget, the coldest subtrees
 * fold. Every thread node whose total is under a threshold (chosen so that at most a quarter of the
 * budget's nodes stay) leaves with its subtree, and its samples go to an "[other]" child of its
 * parent; the merged tree is then rebuilt from the thread tries. Totals stay exact (a parent's
 * total is still its self plus its children's), the flat table is kept per sample and never folds,
 * and node ids change, so the pool is dropped (profile_logs_restart()).
 *
 * A JIT function named late (profile_name_jit()) is merged into the function of that name: the
 * flat table takes its counts (the total less the samples where both were on the stack, as the
 * tries count them) and the tries are rebuilt as a fold rebuilds them, with no threshold. Node
 * sites and the history follow the renumbering either way. */
#include "proftop/profile_internal.h"

#include "proftop/history.h"

#include <stdlib.h>
#include <string.h>

/* Totals at or above this are counted together when choosing what folds. */
#define FOLD_HISTOGRAM 65536u

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
	profile_logs_restart(p);
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

/* --- functions merged by a late name ---------------------------------------------------------- */

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
void profile_merge_funcs(struct profile *p, const uint32_t *merged, size_t n)
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

/* --- memory ----------------------------------------------------------------------------------- */

static size_t log_bytes(const struct change_log *l)
{
	return l->gen_cap * sizeof(*l->gen_of) + l->cap * sizeof(*l->items);
}

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
void profile_check_budget(struct profile *p)
{
	p->next_check = p->nnodes + BUDGET_CHECK_NODES;
	if (!p->max_bytes || profile_memory(p) + index_growth(p) + nodes_growth(p) <= p->max_bytes)
		return;
	fold(p);
	p->next_check = p->nnodes + BUDGET_CHECK_NODES;
	if (profile_memory(p) > p->max_bytes)
		p->next_check = p->nnodes * 2 + BUDGET_CHECK_NODES;
}
