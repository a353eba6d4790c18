/* tui_flame.c — the screen's Flame view: the shown snapshot's call tree laid out as a flame graph
 * (view_flame.h) for the cells the view was last drawn in. The state is the screen's (struct
 * tui_screen); the keys are in tui_screen.c's table, the drawing in tui_draw.c.
 *
 * The selected frame and the frame zoomed into are kept as paths of functions from the tree's
 * root, so each new snapshot finds them again; a selected frame that no longer gets a cell (its
 * share shrank, the screen narrowed) hands the selection to its nearest ancestor that does. */
#include "proftop/tui_flame.h"

#include "proftop/diff.h"

#include <stdlib.h>
#include <string.h>

/* Until the first frame is drawn. */
#define FLAME_DEFAULT_WIDTH 80
#define FLAME_DEFAULT_DEPTH 20

static void remember_selection(struct tui_screen *s)
{
	const struct view_flame_frame *f = tui_flame_selected(s);

	if (f)
		s->nflame_sel = view_tree_funcs(&s->flame_src, f->node, s->flame_sel, TUI_FOCUS_MAX);
}

static size_t frame_of_node(const struct tui_screen *s, uint32_t node)
{
	for (size_t i = 0; i < s->nflame; i++)
		if (s->flame[i].node == node)
			return i;
	return SIZE_MAX;
}

/* The selected path's deepest node that got a cell. */
static void restore_selection(struct tui_screen *s)
{
	s->flame_cursor = s->nflame ? 0 : SIZE_MAX;
	for (size_t k = s->nflame_sel + 1; k-- > 0;) {
		uint32_t node = view_tree_find(&s->flame_src, s->flame_sel, k);
		size_t at = node == SNAPSHOT_NO_NODE ? SIZE_MAX : frame_of_node(s, node);

		if (at != SIZE_MAX) {
			s->flame_cursor = at;
			return;
		}
	}
}

/* Each frame's change against the baseline (matched against shown by the caller): shares of the
 * top frame on both sides, so a zoom compares like with like. */
static void compare_frames(struct tui_screen *s)
{
	uint64_t self, old_top = 0;

	if (!s->baseline || !s->nflame)
		return;
	diff_base_node(s->baseline, s->flame[0].path, &self, &old_top);
	for (size_t i = 0; i < s->nflame; i++) {
		struct view_flame_frame *f = &s->flame[i];
		uint64_t old_total;

		f->only_new = !diff_base_node(s->baseline, f->path, &self, &old_total) || !old_total;
		f->delta = diff_share(f->total, s->flame[0].total) - diff_share(old_total, old_top);
	}
}

size_t tui_flame_build(struct tui_screen *s, uint32_t scope)
{
	struct view_flame_query q = { 0 };
	uint32_t top;

	view_tree_of(&s->flame_src, s->shown, scope);
	top = s->flame_src.root;
	if (s->nflame_zoom) {
		uint32_t node = view_tree_find(&s->flame_src, s->flame_zoom, s->nflame_zoom);

		if (node == SNAPSHOT_NO_NODE || !s->flame_src.nodes[node].total)
			s->nflame_zoom = s->nflame_zooms = 0;
		else
			top = node;
	}
	q.top = top;
	q.width = s->flame_width > 0 ? s->flame_width : FLAME_DEFAULT_WIDTH;
	q.max_depth = s->flame_depth > 0 ? (unsigned)s->flame_depth - 1 : FLAME_DEFAULT_DEPTH;
	q.filter = s->filter;
	s->nflame = view_flame(&s->flame_src, &q, &s->flame, &s->flame_cap, &s->flame_matched);
	compare_frames(s);
	restore_selection(s);
	return s->nflame;
}

void tui_flame_fit(struct tui_screen *s, int width, int depth)
{
	if (width == s->flame_width && depth == s->flame_depth)
		return;
	s->flame_width = width;
	s->flame_depth = depth;
	s->stale = true;
	tui_screen_rebuild(s);
}

const struct view_flame_frame *tui_flame_selected(const struct tui_screen *s)
{
	return s->flame_cursor < s->nflame ? &s->flame[s->flame_cursor] : NULL;
}

static void select_frame(struct tui_screen *s, size_t i)
{
	if (i >= s->nflame)
		return;
	s->flame_cursor = i;
	remember_selection(s);
}

/* The frame beside f at its depth: the one ending where f starts (-1) or starting where it ends. */
static size_t beside(const struct tui_screen *s, const struct view_flame_frame *f, int step)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < s->nflame; i++) {
		const struct view_flame_frame *g = &s->flame[i];

		if (g->depth != f->depth || g == f || (step < 0 ? g->x >= f->x : g->x <= f->x))
			continue;
		if (best == SIZE_MAX || (step < 0 ? g->x > s->flame[best].x : g->x < s->flame[best].x))
			best = i;
	}
	return best;
}

static size_t widest_child(const struct tui_screen *s, size_t parent)
{
	size_t best = SIZE_MAX;

	for (size_t i = parent + 1; i < s->nflame; i++)
		if (s->flame[i].parent == parent &&
		    (best == SIZE_MAX || s->flame[i].total > s->flame[best].total))
			best = i;
	return best;
}

void tui_flame_move(struct tui_screen *s, enum tui_flame_move move)
{
	const struct view_flame_frame *f = tui_flame_selected(s);

	if (!f)
		return;
	switch (move) {
	case TUI_FLAME_PARENT:
		if (f->parent != UINT32_MAX)
			select_frame(s, f->parent);
		break;
	case TUI_FLAME_CHILD:
		select_frame(s, widest_child(s, s->flame_cursor));
		break;
	case TUI_FLAME_PREV:
	case TUI_FLAME_NEXT:
		select_frame(s, beside(s, f, move == TUI_FLAME_PREV ? -1 : 1));
		break;
	}
}

bool tui_flame_select_at(struct tui_screen *s, unsigned depth, int x)
{
	size_t i = view_flame_at(s->flame, s->nflame, depth, x);

	select_frame(s, i);
	return i != SIZE_MAX;
}

void tui_flame_zoom(struct tui_screen *s)
{
	const struct view_flame_frame *f = tui_flame_selected(s);

	if (!f || f->parent == UINT32_MAX)
		return;
	if (s->nflame_zooms == TUI_FLAME_ZOOMS) /* the oldest step back is forgotten */
		memmove(s->flame_zooms, s->flame_zooms + 1, (TUI_FLAME_ZOOMS - 1) * sizeof(*s->flame_zooms));
	else
		s->nflame_zooms++;
	s->flame_zooms[s->nflame_zooms - 1] = (uint16_t)s->nflame_zoom;
	s->nflame_zoom = view_tree_funcs(&s->flame_src, f->node, s->flame_zoom, TUI_FOCUS_MAX);
	s->stale = true;
}

/* Back to where the last zoom started: each zoom goes into the frame shown then, so that zoom is
 * a prefix of this one. Without steps left (forgotten ones), a level at a time. */
bool tui_flame_unzoom(struct tui_screen *s)
{
	if (!s->nflame_zoom)
		return false;
	if (s->nflame_zooms && s->flame_zooms[s->nflame_zooms - 1] < s->nflame_zoom)
		s->nflame_zoom = s->flame_zooms[--s->nflame_zooms];
	else
		s->nflame_zoom--;
	s->stale = true;
	return true;
}

void tui_flame_free(struct tui_screen *s)
{
	free(s->flame);
	s->flame = NULL;
	s->nflame = s->flame_cap = 0;
}
