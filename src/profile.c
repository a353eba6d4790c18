/* profile.c — per-thread call-stack tries, and the snapshots made of them.
 *
 * Invariants: nodes are only appended, and a node is always created after its parent, so a
 * parent's index is smaller than its children's. Snapshots rely on that to merge the per-thread
 * tries in one pass in index order (snapshot.c). A node's total is the sum of its self and its
 * children's totals; profile_add() keeps that true by adding along the whole path.
 *
 * The time window is a ring of (time, leaf node) pairs in two arrays, oldest at win_head, with a
 * power-of-two capacity that grows up to PROFILE_WINDOW_MAX. A window snapshot counts each pair's
 * node as one self sample and sums totals bottom-up, which the index order makes one reverse pass. */
#include "proftop/profile.h"

#include "proftop/diag.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct func_key {
	const char *module;    /* interned in the profile's strings, so compared by pointer */
	const char *name;      /* NULL: the function is the address below */
	uint64_t addr;         /* where a named function starts; an unnamed one's address */
};

struct profile {
	struct diag *diag;
	struct strpool *strings;   /* names, modules, comms; shared with the snapshots */

	struct snapshot_func *funcs;
	struct func_key *func_keys;
	size_t nfuncs, funcs_cap, keys_cap;
	struct idmap func_index;  /* hash of func_key -> id (verified on lookup) */

	struct snapshot_node *nodes;
	size_t nnodes, nodes_cap;
	struct idmap child_index; /* parent << 32 | func -> node */

	struct snapshot_thread *threads;
	size_t nthreads, threads_cap;
	struct idmap thread_index; /* tid -> thread */
	uint64_t samples;

	uint64_t window_ns, now_ns;
	uint64_t *win_time;
	uint32_t *win_node;
	size_t win_head, win_count, win_cap;
};

static const char *intern(struct profile *p, const char *s)
{
	return strpool_intern(p->strings, s, strlen(s));
}

struct profile *profile_new(struct diag *diag)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	p->diag = diag;
	p->strings = strpool_new();
	idmap_init(&p->func_index);
	idmap_init(&p->child_index);
	idmap_init(&p->thread_index);
	xgrow((void **)&p->funcs, &p->funcs_cap, 1, sizeof(*p->funcs));
	xgrow((void **)&p->func_keys, &p->keys_cap, 1, sizeof(*p->func_keys));
	p->funcs[0] = (struct snapshot_func){ intern(p, "[root]"), intern(p, "") };
	p->func_keys[0] = (struct func_key){ NULL, NULL, 0 };
	p->nfuncs = 1;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	strpool_free(p->strings);
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

static uint32_t add_func(struct profile *p, const struct func_key *key)
{
	struct snapshot_func *f;
	char *name = NULL;

	xgrow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*p->funcs));
	xgrow((void **)&p->func_keys, &p->keys_cap, p->nfuncs + 1, sizeof(*p->func_keys));
	f = &p->funcs[p->nfuncs];
	f->module = key->module;
	if (!key->name)
		name = xasprintf("%s+0x%llx", key->module, (unsigned long long)key->addr);
	f->name = name ? intern(p, name) : key->name;
	free(name);
	p->func_keys[p->nfuncs] = *key;
	return (uint32_t)p->nfuncs++;
}

uint32_t profile_func(struct profile *p, const char *module, const char *name, uint64_t addr)
{
	char unmapped[32];
	struct func_key key;
	uint32_t id;

	if (!module && !name) { /* an address no mapping holds: named by itself */
		snprintf(unmapped, sizeof(unmapped), "0x%llx", (unsigned long long)addr);
		name = unmapped;
	}
	key = (struct func_key){ intern(p, module ? module : "[unknown]"),
				 name ? intern(p, name) : NULL, addr };

	/* Hash collisions between different keys are resolved by probing with the next seed. */
	for (uint64_t seed = 0;; seed++) {
		uint64_t h = util_hash_bytes(&key, sizeof(key), seed);

		id = idmap_get(&p->func_index, h);
		if (id == IDMAP_MISSING) {
			id = add_func(p, &key);
			idmap_put(&p->func_index, h, id);
			return id;
		}
		if (!memcmp(&p->func_keys[id], &key, sizeof(key)))
			return id;
	}
}

/* A new node of func under parent, or SNAPSHOT_NO_NODE when the tries hold as many nodes as ids
 * can number (then the sample stays at parent, and the user is told once). Thread roots have
 * room of their own beyond that. */
static uint32_t new_node(struct profile *p, uint32_t func, uint32_t parent)
{
	uint32_t id = (uint32_t)p->nnodes;

	if (parent == SNAPSHOT_NO_NODE && p->nnodes >= PROFILE_MAX_NODES + PROFILE_MAX_THREADS)
		return SNAPSHOT_NO_NODE;
	if (parent != SNAPSHOT_NO_NODE && p->nnodes >= PROFILE_MAX_NODES) {
		diag_report(p->diag, DIAG_WARNING, "the call tree has %zu nodes, the most it can hold: "
			    "samples on new call paths are counted at their deepest known caller",
			    p->nnodes);
		return SNAPSHOT_NO_NODE;
	}
	xgrow((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes));
	p->nodes[id] = (struct snapshot_node){ func, parent, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE, 0, 0 };
	if (parent != SNAPSHOT_NO_NODE) {
		p->nodes[id].next_sibling = p->nodes[parent].first_child;
		p->nodes[parent].first_child = id;
		idmap_put(&p->child_index, (uint64_t)parent << 32 | func, id);
	}
	p->nnodes++;
	return id;
}

/* The thread's entry, made on first sight; NULL when no root can be made for it. */
static struct snapshot_thread *thread_of(struct profile *p, pid_t pid, pid_t tid)
{
	uint32_t i = idmap_get(&p->thread_index, (uint64_t)(uint32_t)tid);
	struct snapshot_thread *t;
	uint32_t root;

	if (i != IDMAP_MISSING)
		return &p->threads[i];
	root = new_node(p, SNAPSHOT_ROOT_FUNC, SNAPSHOT_NO_NODE);
	if (root == SNAPSHOT_NO_NODE)
		return NULL;
	xgrow((void **)&p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*p->threads));
	t = &p->threads[p->nthreads];
	*t = (struct snapshot_thread){ pid, tid, NULL, root, 0 };
	idmap_put(&p->thread_index, (uint64_t)(uint32_t)tid, (uint32_t)p->nthreads++);
	return t;
}

void profile_set_comm(struct profile *p, pid_t pid, pid_t tid, const char *comm)
{
	struct snapshot_thread *t = thread_of(p, pid, tid);

	if (!t)
		return;
	t->comm = intern(p, comm);
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

/* Add count samples along funcs; returns the leaf's node (SNAPSHOT_NO_NODE: not added). */
static uint32_t add_stack(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs,
			  size_t depth, uint64_t count)
{
	struct snapshot_thread *t = thread_of(p, pid, tid);
	uint32_t node;

	if (!t)
		return SNAPSHOT_NO_NODE;
	node = t->root;
	t->samples += count;
	p->samples += count;
	p->nodes[node].total += count;
	for (size_t i = 0; i < depth; i++) {
		uint32_t child = idmap_get(&p->child_index, (uint64_t)node << 32 | funcs[i]);

		if (child == IDMAP_MISSING)
			child = new_node(p, funcs[i], node);
		if (child == SNAPSHOT_NO_NODE)
			break;
		node = child;
		p->nodes[node].total += count;
	}
	p->nodes[node].self += count;
	return node;
}

void profile_add(struct profile *p, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth)
{
	uint32_t node = add_stack(p, pid, tid, funcs, depth, 1);

	if (p->window_ns && node != SNAPSHOT_NO_NODE)
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

/* Room for the thread tries and the merged tree a snapshot makes of them. */
static struct snapshot_node *snapshot_nodes(const struct profile *p)
{
	return xmalloc((2 * p->nnodes + 1) * sizeof(struct snapshot_node));
}

/* A snapshot over nodes (from snapshot_nodes(), taken over): the profile's tries with the counts
 * to show, over samples samples. */
static struct snapshot *snapshot_of(const struct profile *p, struct snapshot_node *nodes,
				    uint64_t samples)
{
	struct snapshot_func *funcs = xmalloc(p->nfuncs * sizeof(*funcs));
	struct snapshot_thread *threads = xmalloc((p->nthreads ? p->nthreads : 1) * sizeof(*threads));

	memcpy(funcs, p->funcs, p->nfuncs * sizeof(*funcs));
	if (p->nthreads)
		memcpy(threads, p->threads, p->nthreads * sizeof(*threads));
	return snapshot_new(nodes, p->nnodes, funcs, p->nfuncs, threads, p->nthreads, samples,
			    strpool_ref(p->strings));
}

struct snapshot *profile_snapshot(const struct profile *p)
{
	struct snapshot_node *nodes = snapshot_nodes(p);

	if (p->nnodes)
		memcpy(nodes, p->nodes, p->nnodes * sizeof(*nodes));
	return snapshot_of(p, nodes, p->samples);
}

struct snapshot *profile_window_snapshot(struct profile *p, uint64_t now_ns)
{
	struct snapshot_node *nodes = snapshot_nodes(p);
	struct snapshot *s;

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
		if (nodes[i].parent != SNAPSHOT_NO_NODE)
			nodes[nodes[i].parent].total += nodes[i].total;
	}
	s = snapshot_of(p, nodes, p->win_count);
	s->window_ns = p->window_ns;
	return s;
}
