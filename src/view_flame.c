/* view_flame.c — a flame graph laid out in cells (see view_flame.h).
 *
 * Breadth first: the frames of one depth are laid out from those of the depth above, each
 * frame's children sorted by name once they are known to get a cell. A frame's sample offset from
 * the top frame's left edge gives its cells, so rounding never accumulates along a row. */
#include "proftop/view_flame.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct flame_child {
	uint32_t node;
	const char *name;
};

static int flame_child_cmp(const void *a, const void *b)
{
	const struct flame_child *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->node > y->node) - (x->node < y->node);
}

static size_t flame_push(struct view_flame_frame **frames, size_t *cap, size_t n,
			 const struct view_flame_frame *frame)
{
	xgrow((void **)frames, cap, n + 1, sizeof(**frames));
	(*frames)[n] = *frame;
	return n + 1;
}

/* Which functions the filter matches, by id: matching a name is the cost, so once per function. */
static bool *flame_match_funcs(const struct view_tree *t, const char *filter)
{
	bool *match;

	if (!filter || !*filter)
		return NULL;
	match = xcalloc(t->nfuncs ? t->nfuncs : 1, sizeof(*match));
	for (size_t f = 1; f < t->nfuncs; f++)
		match[f] = view_matches(&t->funcs[f], filter);
	return match;
}

/* Samples of stacks through a frame whose function matches, below top: a match counts its total
 * and hides what is above it, so each sample counts once. */
static uint64_t flame_matched(const struct view_tree *t, uint32_t top, const bool *match)
{
	uint32_t *stack = NULL;
	size_t n = 0, cap = 0;
	uint64_t sum = 0;

	xgrow((void **)&stack, &cap, 1, sizeof(*stack));
	stack[n++] = top;
	while (n) {
		uint32_t node = stack[--n];

		if (node != top && match[t->nodes[node].func]) {
			sum += t->nodes[node].total;
			continue;
		}
		for (uint32_t c = t->nodes[node].first_child; c != SNAPSHOT_NO_NODE;
		     c = t->nodes[c].next_sibling) {
			xgrow((void **)&stack, &cap, n + 1, sizeof(*stack));
			stack[n++] = c;
		}
	}
	free(stack);
	return sum;
}

/* The cell edge nearest to `offset` samples: a frame gets a cell when it covers a cell's middle,
 * so a sliver gets one only as often as its share says, wherever it lies. (Rounding down gave one
 * to any sliver that sorted last under the top: the edge at its right end is always crossed.)
 * 128 bits: a snapshot read from a file may hold up to 2^62 samples. */
static int flame_cell(uint64_t offset, int width, uint64_t top_total)
{
	return (int)(((unsigned __int128)offset * (unsigned)width + top_total / 2) / top_total);
}

/* Lay out the children of frames[i], which starts `start` samples from the top's left edge. */
static size_t flame_children(const struct view_tree *t, const struct view_flame_query *q,
			     const bool *match, uint64_t top_total, struct view_flame_frame **frames,
			     size_t *cap, size_t n, size_t i, uint64_t start, uint64_t **starts,
			     size_t *starts_cap, struct flame_child **kids, size_t *kids_cap)
{
	const struct view_flame_frame parent = (*frames)[i];
	size_t nkids = 0;

	for (uint32_t c = t->nodes[parent.node].first_child; c != SNAPSHOT_NO_NODE;
	     c = t->nodes[c].next_sibling) {
		if (!t->nodes[c].total)
			continue;
		xgrow((void **)kids, kids_cap, nkids + 1, sizeof(**kids));
		(*kids)[nkids++] = (struct flame_child){ c, t->funcs[t->nodes[c].func].name };
	}
	if (nkids > 1) /* (a leaf has no array to sort) */
		qsort(*kids, nkids, sizeof(**kids), flame_child_cmp);
	for (size_t k = 0; k < nkids; k++) {
		const struct snapshot_node *node = &t->nodes[(*kids)[k].node];
		const struct snapshot_func *f = &t->funcs[node->func];
		int x = flame_cell(start, q->width, top_total);
		int end = flame_cell(start + node->total, q->width, top_total);

		if (end > x) {
			struct view_flame_frame frame = {
				.node = (*kids)[k].node, .func = node->func, .name = f->name,
				.module = f->module, .depth = parent.depth + 1, .x = x, .width = end - x,
				.self = node->self, .total = node->total,
				.path = snapshot_path_child(parent.path, node->func), .parent = (uint32_t)i,
				.match = match && match[node->func],
			};

			xgrow((void **)starts, starts_cap, n + 1, sizeof(**starts));
			(*starts)[n] = start;
			n = flame_push(frames, cap, n, &frame);
		}
		start += node->total;
	}
	return n;
}

size_t view_flame(const struct view_tree *t, const struct view_flame_query *q,
		  struct view_flame_frame **frames, size_t *cap, uint64_t *matched)
{
	const struct snapshot_node *top = &t->nodes[q->top];
	const struct snapshot_func *f = &t->funcs[top->func];
	bool *match = flame_match_funcs(t, q->filter);
	struct view_flame_frame frame = {
		.node = q->top, .func = top->func, .name = f->name, .module = f->module, .depth = 0,
		.x = 0, .width = q->width, .self = top->self, .total = top->total,
		.path = view_tree_path(t, q->top), .parent = UINT32_MAX,
		.match = match && q->top != t->root && match[top->func],
	};
	uint64_t *starts = NULL;
	struct flame_child *kids = NULL;
	size_t n = 0, starts_cap = 0, kids_cap = 0;

	*matched = match ? flame_matched(t, q->top, match) : 0;
	if (!top->total || q->width <= 0) {
		free(match);
		return 0;
	}
	if (frame.match)
		*matched = top->total;
	xgrow((void **)&starts, &starts_cap, 1, sizeof(*starts));
	starts[0] = 0;
	n = flame_push(frames, cap, n, &frame);
	for (size_t i = 0; i < n; i++)
		if ((*frames)[i].depth < q->max_depth)
			n = flame_children(t, q, match, top->total, frames, cap, n, i, starts[i],
					   &starts, &starts_cap, &kids, &kids_cap);
	free(starts);
	free(kids);
	free(match);
	return n;
}

size_t view_flame_at(const struct view_flame_frame *frames, size_t n, unsigned depth, int x)
{
	for (size_t i = 0; i < n; i++)
		if (frames[i].depth == depth && x >= frames[i].x && x < frames[i].x + frames[i].width)
			return i;
	return SIZE_MAX;
}
