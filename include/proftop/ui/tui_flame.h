/* tui_flame.h — the screen's Flame view (tui_flame.c): the shown profile as a flame graph, laid
 * out for the screen (view_flame.h), with a selected frame and a frame zoomed into, both kept by
 * their paths from one snapshot to the next. */
#ifndef PROFTOP_TUI_FLAME_H
#define PROFTOP_TUI_FLAME_H

#include "proftop/view.h"
#include "proftop/view_flame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diff_base;
struct snapshot;

#define TUI_FLAME_PATH_MAX 256
#define TUI_FLAME_ZOOMS 32

/* The frames laid out for width cells and depth rows; the selected one (cursor) and the one
 * zoomed into, by their paths of functions from the tree's root. */
struct tui_flame {
	struct view_tree src;
	struct view_flame_frame *frames;
	size_t n, cap, cursor;
	uint64_t matched;          /* samples through frames the filter matches */
	uint32_t sel[TUI_FLAME_PATH_MAX], zoom[TUI_FLAME_PATH_MAX];
	size_t nsel, nzoom;
	uint16_t zooms[TUI_FLAME_ZOOMS]; /* the zoom depths before each zoom, for Esc */
	size_t nzooms;
	bool up;                   /* `f`: root at the bottom (a flame); else at the top (icicle) */
	int width, depth;
};

/* Where a move goes, in the tree: the drawing decides which arrow is which. */
enum tui_flame_move {
	TUI_FLAME_PARENT,
	TUI_FLAME_CHILD,       /* the widest child */
	TUI_FLAME_PREV,        /* the frame to the left at the same depth */
	TUI_FLAME_NEXT,
};

/* Lay the frames out again from shown, the subtree under scope (a thread's root;
 * SNAPSHOT_NO_NODE: all), for the geometry of the last frame drawn, compared with baseline
 * (NULL: none) and matched against filter. Returns how many. */
size_t tui_flame_build(struct tui_flame *flame, const struct snapshot *shown,
		       const struct diff_base *baseline, const char *filter, uint32_t scope);
/* The geometry the view is drawn in; true when it is a new one: the frames are to be laid out
 * again. */
bool tui_flame_fit(struct tui_flame *flame, int width, int depth);
/* The selected frame; NULL when there is none (no samples). */
const struct view_flame_frame *tui_flame_selected(const struct tui_flame *flame);
void tui_flame_move(struct tui_flame *flame, enum tui_flame_move move);
/* Select the frame at cell x of depth; true when there is one. */
bool tui_flame_select_at(struct tui_flame *flame, unsigned depth, int x);
/* Zoom into the selected frame (it becomes the full width); out: back one level, false when
 * there is none. Both true when the frames are to be laid out again. */
bool tui_flame_zoom(struct tui_flame *flame);
bool tui_flame_unzoom(struct tui_flame *flame);
void tui_flame_free(struct tui_flame *flame);

#endif
