/* profile_snapshot.c — snapshots of a profile (profile.c), whole or of a stretch of the run, and
 * the change logs and the pool that make them incremental.
 *
 * The profile keeps the last POOL_SIZE snapshots it made and logs the nodes, functions and threads
 * (and sites, node sites) that change (an item once per generation; a generation is the time
 * between two snapshots). A new snapshot takes a pooled one that no reader holds any more (its only
 * reference is the pool's) and copies into it just what was logged since it was made: the cost of
 * a snapshot follows what changed, not the size of the profile. With nothing pooled there is
 * nothing to log against, and a snapshot is a full copy. Node ids that change (a fold, a reset)
 * drop the pool and restart the logs.
 *
 * The history (history.h) keeps each second's (thread leaf, leaf site) counts. A snapshot of a
 * stretch counts each leaf's samples there (and its merged counterpart's) as self and sums totals
 * bottom-up, which the index order makes one reverse pass; each leaf site counts self samples of
 * its site and of its (node, site) pair. The history keeps no stacks of sites, so a stretch's
 * sites have no totals. */
#include "proftop/profile_internal.h"

#include "proftop/history.h"
#include "proftop/strpool.h"

#include <stdlib.h>
#include <string.h>

/* --- the change logs and the pool ------------------------------------------------------------- */

/* Room in a log for items up to count (the profile's array of them grew). */
void profile_log_reserve(struct change_log *l, size_t count)
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
void profile_pool_drop(struct profile *p)
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

/* The logs start over too: node ids changed, nothing pooled is kept to log against. */
void profile_logs_restart(struct profile *p)
{
	profile_pool_drop(p);
	for (int l = 0; l < NLOGS; l++) {
		free(p->logs[l].gen_of);
		free(p->logs[l].items);
		memset(&p->logs[l], 0, sizeof(p->logs[l]));
	}
	profile_log_reserve(&p->logs[LOG_NODES], p->nodes_cap);
	profile_log_reserve(&p->logs[LOG_FUNCS], p->funcs_cap);
	profile_log_reserve(&p->logs[LOG_THREADS], p->threads_cap);
	profile_log_reserve(&p->logs[LOG_SITES], p->sites_cap);
	profile_log_reserve(&p->logs[LOG_NODE_SITES], p->node_sites_cap);
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
		profile_check_budget(p);
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
