/* profile.c — per-thread call-stack tries and their snapshots.
 *
 * Invariants: nodes are only appended, and a node is always created after its parent, so a
 * parent's index is smaller than its children's. Snapshots rely on that to merge the per-thread
 * tries in one pass in index order. A node's total is the sum of its self and its children's
 * totals; profile_add() keeps that true by adding along the whole path.
 *
 * The time window is a ring of (time, leaf node) pairs in two arrays, oldest at win_head, with a
 * power-of-two capacity that grows up to PROFILE_WINDOW_MAX. A window snapshot counts each pair's
 * node as one self sample and sums totals bottom-up, which the index order makes one reverse pass. */
#include "proftop/profile.h"

#include "proftop/idmap.h"
#include "proftop/symbols.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct func_key {
	const void *module;
	const void *function;  /* NULL: the function is the address below */
	uint64_t addr;
};

struct profile {
	struct profile_func *funcs;
	struct func_key *func_keys;
	size_t nfuncs, funcs_cap, keys_cap;
	struct idmap func_index;  /* hash of func_key -> id (verified on lookup) */

	struct profile_node *nodes;
	size_t nnodes, nodes_cap;
	struct idmap child_index; /* parent << 32 | func -> node */

	struct profile_thread *threads;
	size_t nthreads, threads_cap;
	struct idmap thread_index; /* tid -> thread */

	char **owned;              /* strings the profile made (names, comms) */
	size_t nowned, owned_cap;
	uint64_t samples;

	uint64_t window_ns, now_ns;
	uint64_t *win_time;
	uint32_t *win_node;
	size_t win_head, win_count, win_cap;
};

static const char *own(struct profile *p, char *s)
{
	xgrow((void **)&p->owned, &p->owned_cap, p->nowned + 1, sizeof(*p->owned));
	p->owned[p->nowned++] = s;
	return s;
}

struct profile *profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	idmap_init(&p->func_index);
	idmap_init(&p->child_index);
	idmap_init(&p->thread_index);
	xgrow((void **)&p->funcs, &p->funcs_cap, 1, sizeof(*p->funcs));
	xgrow((void **)&p->func_keys, &p->keys_cap, 1, sizeof(*p->func_keys));
	p->funcs[0] = (struct profile_func){ "[root]", "" };
	p->func_keys[0] = (struct func_key){ NULL, NULL, 0 };
	p->nfuncs = 1;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p->funcs);
	free(p->func_keys);
	free(p->nodes);
	free(p->threads);
	free(p->win_time);
	free(p->win_node);
	idmap_free(&p->func_index);
	idmap_free(&p->child_index);
	idmap_free(&p->thread_index);
	free(p);
}

static uint64_t func_key_hash(const struct func_key *k, uint64_t seed)
{
	return util_hash_bytes(k, sizeof(*k), seed);
}

static uint32_t add_func(struct profile *p, const struct func_key *key, const struct symbol *sym)
{
	struct profile_func *f;

	xgrow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*p->funcs));
	xgrow((void **)&p->func_keys, &p->keys_cap, p->nfuncs + 1, sizeof(*p->func_keys));
	f = &p->funcs[p->nfuncs];
	f->module = own(p, xstrdup(sym->module ? sym->module : "[unknown]"));
	if (sym->function)
		f->name = own(p, xstrdup(sym->function));
	else if (sym->module)
		f->name = own(p, xasprintf("%s+0x%llx", sym->module, (unsigned long long)sym->module_addr));
	else
		f->name = own(p, xasprintf("0x%llx", (unsigned long long)sym->module_addr));
	p->func_keys[p->nfuncs] = *key;
	return (uint32_t)p->nfuncs++;
}

uint32_t profile_func(struct profile *p, const struct symbol *sym)
{
	struct func_key key = { sym->module, sym->function, sym->function ? 0 : sym->module_addr };
	uint32_t id;

	/* Hash collisions between different keys are resolved by probing with the next seed. */
	for (uint64_t seed = 0;; seed++) {
		uint64_t h = func_key_hash(&key, seed);

		id = idmap_get(&p->func_index, h);
		if (id == IDMAP_MISSING) {
			id = add_func(p, &key, sym);
			idmap_put(&p->func_index, h, id);
			return id;
		}
		if (!memcmp(&p->func_keys[id], &key, sizeof(key)))
			return id;
	}
}

static uint32_t new_node(struct profile *p, uint32_t func, uint32_t parent)
{
	uint32_t id = (uint32_t)p->nnodes;

	if (p->nnodes >= PROFILE_NO_NODE - 1)
		fatal("call tree too large (%zu nodes)", p->nnodes);
	xgrow((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes));
	p->nodes[id] = (struct profile_node){ func, parent, PROFILE_NO_NODE, PROFILE_NO_NODE, 0, 0 };
	if (parent != PROFILE_NO_NODE) {
		p->nodes[id].next_sibling = p->nodes[parent].first_child;
		p->nodes[parent].first_child = id;
		idmap_put(&p->child_index, (uint64_t)parent << 32 | func, id);
	}
	p->nnodes++;
	return id;
}

static struct profile_thread *thread_of(struct profile *p, pid_t pid, pid_t tid)
{
	uint32_t i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)tid);
	struct profile_thread *t;

	if (i != IDMAP_MISSING)
		return &p->threads[i];
	xgrow((void **)&p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*p->threads));
	t = &p->threads[p->nthreads];
	*t = (struct profile_thread){ pid, tid, NULL, new_node(p, PROFILE_ROOT_FUNC, PROFILE_NO_NODE), 0 };
	idmap_put(&p->thread_index, (uint64_t)(uint32_t)tid, (uint32_t)p->nthreads++);
	return t;
}

void profile_set_comm(struct profile *p, pid_t pid, pid_t tid, const char *comm)
{
	struct profile_thread *t = thread_of(p, pid, tid);

	if (!t->comm || strcmp(t->comm, comm))
		t->comm = own(p, xstrdup(comm));
	t->pid = pid;
}

void profile_set_time(struct profile *p, uint64_t now_ns)
{
	p->now_ns = now_ns;
}

void profile_set_window(struct profile *p, uint64_t window_ns)
{
	p->window_ns = window_ns;
	if (window_ns)
		return;
	free(p->win_time);
	free(p->win_node);
	p->win_time = NULL;
	p->win_node = NULL;
	p->win_head = p->win_count = p->win_cap = 0;
}

/* Forget the window's samples taken before since. */
static void window_trim(struct profile *p, uint64_t since)
{
	while (p->win_count && p->win_time[p->win_head] < since) {
		p->win_head = (p->win_head + 1) & (p->win_cap - 1);
		p->win_count--;
	}
}

static uint64_t window_start(const struct profile *p, uint64_t now_ns)
{
	return now_ns > p->window_ns ? now_ns - p->window_ns : 0;
}

/* Double the ring, moving its entries to the front of the new arrays. */
static void window_grow(struct profile *p)
{
	size_t cap = p->win_cap ? p->win_cap * 2 : 1024;
	uint64_t *time = xmalloc(cap * sizeof(*time));
	uint32_t *node = xmalloc(cap * sizeof(*node));

	for (size_t i = 0; i < p->win_count; i++) {
		size_t j = (p->win_head + i) & (p->win_cap - 1);

		time[i] = p->win_time[j];
		node[i] = p->win_node[j];
	}
	free(p->win_time);
	free(p->win_node);
	p->win_time = time;
	p->win_node = node;
	p->win_head = 0;
	p->win_cap = cap;
}

static void window_push(struct profile *p, uint32_t node)
{
	size_t tail;

	window_trim(p, window_start(p, p->now_ns));
	if (p->win_count == p->win_cap) {
		if (p->win_cap < PROFILE_WINDOW_MAX) {
			window_grow(p);
		} else { /* full: the oldest sample makes room */
			p->win_head = (p->win_head + 1) & (p->win_cap - 1);
			p->win_count--;
		}
	}
	tail = (p->win_head + p->win_count) & (p->win_cap - 1);
	p->win_time[tail] = p->now_ns;
	p->win_node[tail] = node;
	p->win_count++;
}

/* Add count samples along funcs; returns the leaf's node. */
static uint32_t add_stack(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs,
			  size_t depth, uint64_t count)
{
	struct profile_thread *t = thread_of(p, pid, tid);
	uint32_t node = t->root;

	t->samples += count;
	p->samples += count;
	p->nodes[node].total += count;
	for (size_t i = 0; i < depth; i++) {
		uint32_t child = idmap_get(&p->child_index, (uint64_t)node << 32 | funcs[i]);

		if (child == IDMAP_MISSING)
			child = new_node(p, funcs[i], node);
		node = child;
		p->nodes[node].total += count;
	}
	p->nodes[node].self += count;
	return node;
}

void profile_add(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth)
{
	uint32_t node = add_stack(p, pid, tid, funcs, depth, 1);

	if (p->window_ns)
		window_push(p, node);
}

void profile_add_n(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth,
		   uint64_t count)
{
	add_stack(p, pid, tid, funcs, depth, count);
}

uint64_t profile_samples(const struct profile *p)
{
	return p->samples;
}

/* Append to nodes (of the snapshot) the merge of every thread's trie under one new root. */
static uint32_t merge_threads(struct profile_node *nodes, size_t nthread_nodes, size_t *nnodes)
{
	uint32_t *merged_of = xmalloc(nthread_nodes * sizeof(*merged_of));
	uint32_t root = (uint32_t)*nnodes;
	struct idmap children;

	idmap_init(&children);
	nodes[(*nnodes)++] = (struct profile_node){ PROFILE_ROOT_FUNC, PROFILE_NO_NODE,
						   PROFILE_NO_NODE, PROFILE_NO_NODE, 0, 0 };
	for (size_t i = 0; i < nthread_nodes; i++) {
		const struct profile_node *n = &nodes[i];
		uint32_t m;

		if (n->parent == PROFILE_NO_NODE) {
			m = root;
		} else {
			uint32_t parent = merged_of[n->parent];
			uint64_t key = (uint64_t)parent << 32 | n->func;

			m = idmap_get(&children, key);
			if (m == IDMAP_MISSING) {
				m = (uint32_t)(*nnodes)++;
				nodes[m] = (struct profile_node){ n->func, parent, PROFILE_NO_NODE,
								  nodes[parent].first_child, 0, 0 };
				nodes[parent].first_child = m;
				idmap_put(&children, key, m);
			}
		}
		nodes[m].self += n->self;
		nodes[m].total += n->total;
		merged_of[i] = m;
	}
	idmap_free(&children);
	free(merged_of);
	return root;
}

void profile_snapshot_flat(const struct profile_snapshot *s, uint32_t top, uint64_t *self,
			   uint64_t *total)
{
	/* How many times each function is on the current path: its total counts only where it is
	 * not already on the path above, so recursion is not counted twice. */
	uint32_t *on_path = xcalloc(s->nfuncs, sizeof(*on_path));
	const struct profile_node *nodes = s->nodes;
	uint32_t n = top;

	memset(self, 0, s->nfuncs * sizeof(*self));
	memset(total, 0, s->nfuncs * sizeof(*total));
	for (; n != PROFILE_NO_NODE; n = profile_walk_next(nodes, top, n, on_path)) {
		const struct profile_node *node = &nodes[n];

		self[node->func] += node->self;
		if (!on_path[node->func]++)
			total[node->func] += node->total;
	}
	free(on_path);
}

uint32_t profile_walk_next(const struct profile_node *nodes, uint32_t top, uint32_t n,
			   uint32_t *on_path)
{
	if (nodes[n].first_child != PROFILE_NO_NODE)
		return nodes[n].first_child;
	/* Leave finished nodes until one has a next sibling. */
	for (;;) {
		if (on_path)
			on_path[nodes[n].func]--;
		if (n == top)
			return PROFILE_NO_NODE;
		if (nodes[n].next_sibling != PROFILE_NO_NODE)
			return nodes[n].next_sibling;
		n = nodes[n].parent;
	}
}

/* Room for the thread tries and the merged tree a snapshot makes of them. */
static struct profile_node *snapshot_nodes(const struct profile *p)
{
	return xmalloc((2 * p->nnodes + 1) * sizeof(struct profile_node));
}

/* A snapshot over nodes (from snapshot_nodes(), taken over): the profile's tries with the counts
 * to show, over samples samples. */
static struct profile_snapshot *snapshot_of(const struct profile *p, struct profile_node *nodes,
					    uint64_t samples)
{
	struct profile_snapshot *s = xcalloc(1, sizeof(*s));
	struct profile_func *funcs = xmalloc(p->nfuncs * sizeof(*funcs));
	struct profile_thread *threads = xmalloc((p->nthreads + 1) * sizeof(*threads));
	uint64_t *self = xmalloc(p->nfuncs * sizeof(*self));
	uint64_t *total = xmalloc(p->nfuncs * sizeof(*total));
	size_t nnodes = p->nnodes;

	atomic_init(&s->refs, 1);
	memcpy(funcs, p->funcs, p->nfuncs * sizeof(*funcs));
	for (size_t i = 0; i < p->nthreads; i++) {
		threads[i] = p->threads[i];
		threads[i].samples = nodes[threads[i].root].total;
	}
	s->merged_root = merge_threads(nodes, p->nnodes, &nnodes);
	s->samples = samples;
	s->nodes = nodes;
	s->nnodes = nnodes;
	s->funcs = funcs;
	s->nfuncs = p->nfuncs;
	s->threads = threads;
	s->nthreads = p->nthreads;
	profile_snapshot_flat(s, s->merged_root, self, total);
	s->func_self = self;
	s->func_total = total;
	return s;
}

struct profile_snapshot *profile_snapshot(const struct profile *p)
{
	struct profile_node *nodes = snapshot_nodes(p);

	if (p->nnodes)
		memcpy(nodes, p->nodes, p->nnodes * sizeof(*nodes));
	return snapshot_of(p, nodes, p->samples);
}

struct profile_snapshot *profile_window_snapshot(struct profile *p, uint64_t now_ns)
{
	struct profile_node *nodes = snapshot_nodes(p);
	struct profile_snapshot *s;

	window_trim(p, window_start(p, now_ns));
	for (size_t i = 0; i < p->nnodes; i++) {
		nodes[i] = p->nodes[i];
		nodes[i].self = nodes[i].total = 0;
	}
	for (size_t i = 0; i < p->win_count; i++)
		nodes[p->win_node[(p->win_head + i) & (p->win_cap - 1)]].self++;
	/* Children come after their parent: one reverse pass sums every subtree. */
	for (size_t i = p->nnodes; i-- > 0;) {
		nodes[i].total += nodes[i].self;
		if (nodes[i].parent != PROFILE_NO_NODE)
			nodes[nodes[i].parent].total += nodes[i].total;
	}
	s = snapshot_of(p, nodes, p->win_count);
	s->window_ns = p->window_ns;
	return s;
}

struct profile_snapshot *profile_snapshot_ref(struct profile_snapshot *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

void profile_snapshot_unref(struct profile_snapshot *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	free((void *)s->nodes);
	free((void *)s->funcs);
	free((void *)s->threads);
	free((void *)s->func_self);
	free((void *)s->func_total);
	free(s);
}
