/* tui_flame.c — the screen's Flame view: the shown snapshot's call tree laid out as a flame graph
 * (view_flame.h) for the cells the view was last drawn in. Its state is its own (struct
 * tui_flame, which the screen holds); the keys are in tui_screen.c's table, the drawing in
 * tui_draw.c, and what a change asks of the screen (rows made again) is returned.
 *
 * The selected frame and the frame zoomed into are kept as paths of functions from the tree's
 * root, so each new snapshot finds them again; a selected frame that no longer gets a cell (its
 * share shrank, the screen narrowed) hands the selection to its nearest ancestor that does. */
#include "proftop/ui/tui_flame.h"

#include "proftop/diff.h"
#include "proftop/snapshot.h"

#include <stdlib.h>
#include <string.h>

/* Until the first frame is drawn. */
#define FLAME_DEFAULT_WIDTH 80
#define FLAME_DEFAULT_DEPTH 20

static void remember_selection(struct tui_flame *fl)
{
	const struct view_flame_frame *f = tui_flame_selected(fl);

	if (f)
		fl->nsel = view_tree_funcs(&fl->src, f->node, fl->sel, TUI_FLAME_PATH_MAX);
}

static size_t frame_of_node(const struct tui_flame *fl, uint32_t node)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->frames[i].node == node)
			return i;
	return SIZE_MAX;
}

/* The selected path's deepest node that got a cell. */
static void restore_selection(struct tui_flame *fl)
{
	fl->cursor = fl->n ? 0 : SIZE_MAX;
	for (size_t k = fl->nsel + 1; k-- > 0;) {
		uint32_t node = view_tree_find(&fl->src, fl->sel, k);
		size_t at = node == SNAPSHOT_NO_NODE ? SIZE_MAX : frame_of_node(fl, node);

		if (at != SIZE_MAX) {
			fl->cursor = at;
			return;
		}
	}
}

/* Each frame's change against the baseline (matched against shown by the caller): shares of the
 * top frame on both sides, so a zoom compares like with like. */
static void compare_frames(struct tui_flame *fl, const struct diff_base *baseline)
{
	uint64_t self, old_top = 0;

	if (!baseline || !fl->n)
		return;
	diff_base_node(baseline, fl->frames[0].path, &self, &old_top);
	for (size_t i = 0; i < fl->n; i++) {
		struct view_flame_frame *f = &fl->frames[i];
		uint64_t old_total;

		f->only_new = !diff_base_node(baseline, f->path, &self, &old_total) || !old_total;
		f->delta = diff_share(f->total, fl->frames[0].total) - diff_share(old_total, old_top);
	}
}

size_t tui_flame_build(struct tui_flame *fl, const struct snapshot *shown,
		       const struct diff_base *baseline, const char *filter, uint32_t scope)
{
	struct view_flame_query q = { 0 };
	uint32_t top;

	view_tree_of(&fl->src, shown, scope);
	top = fl->src.root;
	if (fl->nzoom) {
		uint32_t node = view_tree_find(&fl->src, fl->zoom, fl->nzoom);

		if (node == SNAPSHOT_NO_NODE || !fl->src.nodes[node].total)
			fl->nzoom = fl->nzooms = 0;
		else
			top = node;
	}
	q.top = top;
	q.width = fl->width > 0 ? fl->width : FLAME_DEFAULT_WIDTH;
	q.max_depth = fl->depth > 0 ? (unsigned)fl->depth - 1 : FLAME_DEFAULT_DEPTH;
	q.filter = filter;
	fl->n = view_flame(&fl->src, &q, &fl->frames, &fl->cap, &fl->matched);
	compare_frames(fl, baseline);
	restore_selection(fl);
	return fl->n;
}

bool tui_flame_fit(struct tui_flame *fl, int width, int depth)
{
	if (width == fl->width && depth == fl->depth)
		return false;
	fl->width = width;
	fl->depth = depth;
	return true;
}

const struct view_flame_frame *tui_flame_selected(const struct tui_flame *fl)
{
	return fl->cursor < fl->n ? &fl->frames[fl->cursor] : NULL;
}

static void select_frame(struct tui_flame *fl, size_t i)
{
	if (i >= fl->n)
		return;
	fl->cursor = i;
	remember_selection(fl);
}

/* The frame beside f at its depth: the one ending where f starts (-1) or starting where it ends. */
static size_t beside(const struct tui_flame *fl, const struct view_flame_frame *f, int step)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < fl->n; i++) {
		const struct view_flame_frame *g = &fl->frames[i];

		if (g->depth != f->depth || g == f || (step < 0 ? g->x >= f->x : g->x <= f->x))
			continue;
		if (best == SIZE_MAX || (step < 0 ? g->x > fl->frames[best].x : g->x < fl->frames[best].x))
			best = i;
	}
	return best;
}

static size_t widest_child(const struct tui_flame *fl, size_t parent)
{
	size_t best = SIZE_MAX;

	for (size_t i = parent + 1; i < fl->n; i++)
		if (fl->frames[i].parent == parent &&
		    (best == SIZE_MAX || fl->frames[i].total > fl->frames[best].total))
			best = i;
	return best;
}

void tui_flame_move(struct tui_flame *fl, enum tui_flame_move move)
{
	const struct view_flame_frame *f = tui_flame_selected(fl);

	if (!f)
		return;
	switch (move) {
	case TUI_FLAME_PARENT:
		if (f->parent != UINT32_MAX)
			select_frame(fl, f->parent);
		break;
	case TUI_FLAME_CHILD:
		select_frame(fl, widest_child(fl, fl->cursor));
		break;
	case TUI_FLAME_PREV:
	case TUI_FLAME_NEXT:
		select_frame(fl, beside(fl, f, move == TUI_FLAME_PREV ? -1 : 1));
		break;
	}
}

bool tui_flame_select_at(struct tui_flame *fl, unsigned depth, int x)
{
	size_t i = view_flame_at(fl->frames, fl->n, depth, x);

	select_frame(fl, i);
	return i != SIZE_MAX;
}

bool tui_flame_zoom(struct tui_flame *fl)
{
	const struct view_flame_frame *f = tui_flame_selected(fl);

	if (!f || f->parent == UINT32_MAX)
		return false;
	if (fl->nzooms == TUI_FLAME_ZOOMS) /* the oldest step back is forgotten */
		memmove(fl->zooms, fl->zooms + 1, (TUI_FLAME_ZOOMS - 1) * sizeof(*fl->zooms));
	else
		fl->nzooms++;
	fl->zooms[fl->nzooms - 1] = (uint16_t)fl->nzoom;
	fl->nzoom = view_tree_funcs(&fl->src, f->node, fl->zoom, TUI_FLAME_PATH_MAX);
	return true;
}

/* Back to where the last zoom started: each zoom goes into the frame shown then, so that zoom is
 * a prefix of this one. Without steps left (forgotten ones), a level at a time. */
bool tui_flame_unzoom(struct tui_flame *fl)
{
	if (!fl->nzoom)
		return false;
	if (fl->nzooms && fl->zooms[fl->nzooms - 1] < fl->nzoom)
		fl->nzoom = fl->zooms[--fl->nzooms];
	else
		fl->nzoom--;
	return true;
}

void tui_flame_free(struct tui_flame *fl)
{
	free(fl->frames);
	fl->frames = NULL;
	fl->n = fl->cap = 0;
}
