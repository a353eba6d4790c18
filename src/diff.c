/* diff.c — a baseline matched against the snapshot shown (see diff.h).
 *
 * Matching has three parts, each redone only when what it depends on changed: the baseline's
 * counts in its scope (on the tid), the baseline function each of now's functions is (on now's
 * functions: a snapshot of the same profile has the same ids, another profile is matched by name
 * and module through an index of now's functions that grows with them; a match once made holds),
 * and the baseline's nodes by path hash (on the scope and on new matches). So a live profile that
 * keeps finding functions costs a pass over the baseline's functions per new snapshot, and its
 * nodes only when one of them is among the new. */
#include "proftop/diff.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

#define NO_FUNC UINT32_MAX

struct diff_base {
	struct snapshot *old;
	char *label;
	/* The scope: the tid asked for, and the baseline's node it came to. */
	pid_t tid;
	uint32_t root;
	bool counted;
	uint64_t *old_self, *old_total; /* per baseline function, in the scope */
	/* now's functions: which profile (its strings), how many are indexed and matched. */
	const struct strpool *now_strings;
	size_t now_nfuncs;
	struct idmap by_name;      /* hash of name and module → now's function (other profiles) */
	uint32_t *to_now;          /* per baseline function: now's, or NO_FUNC */
	uint64_t *self, *total;    /* per now function: the baseline's samples */
	size_t cap;
	struct diff_unmatched *unmatched;
	size_t nunmatched, unmatched_cap;
	/* The baseline's nodes in the scope by path. */
	struct idmap paths;        /* path hash → index into node_self/node_total */
	uint64_t *node_self, *node_total;
	size_t nnodes, nodes_cap;
	uint64_t *node_path;       /* per baseline node: its path hash (scratch) */
	bool *node_matched;        /* per baseline node: every function on its path matched */
};

double diff_share(uint64_t count, uint64_t samples)
{
	return samples ? 100.0 * (double)count / (double)samples : 0.0;
}

static uint64_t name_key(const struct snapshot_func *f)
{
	uint64_t h = util_hash_bytes(f->name, strlen(f->name), 0x64696666);

	return util_hash_bytes(f->module, strlen(f->module), h);
}

struct diff_base *diff_base_new(struct snapshot *old, const char *label)
{
	struct diff_base *b = xcalloc(1, sizeof(*b));
	size_t nfuncs = old->nfuncs ? old->nfuncs : 1;

	b->old = snapshot_ref(old);
	b->label = xstrdup(label);
	b->old_self = xcalloc(nfuncs, sizeof(*b->old_self));
	b->old_total = xcalloc(nfuncs, sizeof(*b->old_total));
	b->to_now = xmalloc(nfuncs * sizeof(*b->to_now));
	b->node_path = xmalloc((old->nnodes ? old->nnodes : 1) * sizeof(*b->node_path));
	b->node_matched = xmalloc((old->nnodes ? old->nnodes : 1) * sizeof(*b->node_matched));
	idmap_init(&b->by_name);
	idmap_init(&b->paths);
	return b;
}

void diff_base_free(struct diff_base *b)
{
	if (!b)
		return;
	snapshot_unref(b->old);
	free(b->label);
	free(b->old_self);
	free(b->old_total);
	free(b->to_now);
	free(b->self);
	free(b->total);
	free(b->unmatched);
	free(b->node_self);
	free(b->node_total);
	free(b->node_path);
	free(b->node_matched);
	idmap_free(&b->by_name);
	idmap_free(&b->paths);
	free(b);
}

const struct snapshot *diff_base_snapshot(const struct diff_base *b)
{
	return b->old;
}

const char *diff_base_label(const struct diff_base *b)
{
	return b->label;
}

/* The baseline's counts in the scope of tid. */
static void count_scope(struct diff_base *b, pid_t tid)
{
	const struct snapshot *old = b->old;

	b->root = old->merged_root;
	for (size_t i = 0; tid && i < old->nthreads; i++)
		if (old->threads[i].tid == tid)
			b->root = old->threads[i].root;
	b->tid = tid;
	b->counted = true;
	if (!old->nnodes)
		return;
	if (b->root == old->merged_root) {
		memcpy(b->old_self, old->func_self, old->nfuncs * sizeof(*b->old_self));
		memcpy(b->old_total, old->func_total, old->nfuncs * sizeof(*b->old_total));
	} else {
		snapshot_flat(old, b->root, b->old_self, b->old_total);
	}
}

/* now's function of the same name and module as the baseline's f, through the index of now's
 * functions (grown to now's first). */
static uint32_t find_by_name(struct diff_base *b, const struct snapshot *now, uint32_t f)
{
	const struct snapshot_func *of = &b->old->funcs[f];

	for (uint64_t k = name_key(of);; k = util_hash_u64(k)) {
		uint32_t at = idmap_get(&b->by_name, k);

		if (at == IDMAP_MISSING)
			return NO_FUNC;
		if (!strcmp(now->funcs[at].name, of->name) && !strcmp(now->funcs[at].module, of->module))
			return at;
	}
}

static void index_names(struct diff_base *b, const struct snapshot *now)
{
	for (uint32_t f = (uint32_t)(b->now_nfuncs ? b->now_nfuncs : 1); f < now->nfuncs; f++) {
		uint64_t k = name_key(&now->funcs[f]);

		/* A name already taken (two functions of one module alike) keeps its first. */
		for (;; k = util_hash_u64(k)) {
			uint32_t at = idmap_get(&b->by_name, k);

			if (at == IDMAP_MISSING) {
				idmap_put(&b->by_name, k, f);
				break;
			}
			if (!strcmp(now->funcs[at].name, now->funcs[f].name) &&
			    !strcmp(now->funcs[at].module, now->funcs[f].module))
				break;
		}
	}
}

/* Which of now's functions each baseline function is, and the baseline's counts by now's ids.
 * A match, once made, holds while now's functions are the same profile's (they only grow): only
 * the baseline functions still unmatched are looked up again. Returns whether any match is new
 * (the paths must then be matched again). */
static bool match_funcs(struct diff_base *b, const struct snapshot *now)
{
	const struct snapshot *old = b->old;
	bool same_profile = now->strings == old->strings;
	bool same_as_last = now->strings == b->now_strings, changed = !same_as_last;

	if (!same_profile) {
		if (!same_as_last) {
			idmap_free(&b->by_name);
			b->now_nfuncs = 0;
		}
		index_names(b, now);
	}
	b->now_strings = now->strings;
	b->now_nfuncs = now->nfuncs;
	xgrow((void **)&b->self, &b->cap, now->nfuncs ? now->nfuncs : 1, sizeof(*b->self));
	b->total = xrealloc(b->total, b->cap * sizeof(*b->total));
	memset(b->self, 0, b->cap * sizeof(*b->self));
	memset(b->total, 0, b->cap * sizeof(*b->total));
	b->nunmatched = 0;
	b->to_now[0] = SNAPSHOT_ROOT_FUNC;
	for (uint32_t f = 1; f < old->nfuncs; f++) {
		uint32_t to = same_as_last ? b->to_now[f] : NO_FUNC;

		if (to == NO_FUNC && same_profile)
			to = f < now->nfuncs ? f : NO_FUNC;
		else if (to == NO_FUNC)
			to = find_by_name(b, now, f);
		changed |= to != b->to_now[f];
		b->to_now[f] = to;
		if (to != NO_FUNC) {
			b->self[to] += b->old_self[f];
			b->total[to] += b->old_total[f];
		} else if (b->old_total[f]) {
			xgrow((void **)&b->unmatched, &b->unmatched_cap, b->nunmatched + 1,
			      sizeof(*b->unmatched));
			b->unmatched[b->nunmatched++] = (struct diff_unmatched){ f, b->old_self[f],
										 b->old_total[f] };
		}
	}
	return changed;
}

/* The baseline's nodes under the scope's root by their paths in now's functions. Nodes come
 * after their parents, so one forward pass knows each parent's path. */
static void match_paths(struct diff_base *b)
{
	const struct snapshot *old = b->old;

	idmap_free(&b->paths);
	b->nnodes = 0;
	if (!old->nnodes)
		return;
	memset(b->node_matched, 0, old->nnodes * sizeof(*b->node_matched));
	for (uint32_t n = b->root; n < old->nnodes; n++) {
		const struct snapshot_node *node = &old->nodes[n];
		uint32_t at, to;

		if (n == b->root) {
			b->node_path[n] = SNAPSHOT_ROOT_PATH;
		} else {
			to = b->to_now[node->func];
			if (node->parent == SNAPSHOT_NO_NODE || !b->node_matched[node->parent] ||
			    to == NO_FUNC || !node->total)
				continue;
			b->node_path[n] = snapshot_path_child(b->node_path[node->parent], to);
		}
		b->node_matched[n] = true;
		at = idmap_get(&b->paths, b->node_path[n]);
		if (at == IDMAP_MISSING) { /* two baseline paths may be one of now's: they add up */
			at = (uint32_t)b->nnodes++;
			xgrow((void **)&b->node_self, &b->nodes_cap, b->nnodes, sizeof(*b->node_self));
			b->node_total = xrealloc(b->node_total, b->nodes_cap * sizeof(*b->node_total));
			b->node_self[at] = b->node_total[at] = 0;
			idmap_put(&b->paths, b->node_path[n], at);
		}
		b->node_self[at] += node->self;
		b->node_total[at] += node->total;
	}
}

void diff_base_match(struct diff_base *b, const struct snapshot *now, pid_t tid)
{
	/* A profile's functions only grow: the same strings and count, the same functions. */
	bool same_funcs = now->strings == b->now_strings && now->nfuncs == b->now_nfuncs;
	bool new_scope = !b->counted || tid != b->tid;

	if (new_scope)
		count_scope(b, tid);
	if (same_funcs && !new_scope)
		return;
	if (match_funcs(b, now) || new_scope)
		match_paths(b);
}

uint64_t diff_base_samples(const struct diff_base *b)
{
	return b->old->nnodes ? b->old->nodes[b->root].total : 0;
}

void diff_base_func(const struct diff_base *b, uint32_t func, uint64_t *self, uint64_t *total)
{
	bool known = func < b->now_nfuncs;

	*self = known ? b->self[func] : 0;
	*total = known ? b->total[func] : 0;
}

bool diff_base_node(const struct diff_base *b, uint64_t path, uint64_t *self, uint64_t *total)
{
	uint32_t at = idmap_get(&b->paths, path);

	*self = at == IDMAP_MISSING ? 0 : b->node_self[at];
	*total = at == IDMAP_MISSING ? 0 : b->node_total[at];
	return at != IDMAP_MISSING;
}

size_t diff_base_unmatched(const struct diff_base *b, const struct diff_unmatched **funcs)
{
	*funcs = b->unmatched;
	return b->nunmatched;
}
