/* tui_flame.h — the screen's Flame view (tui_flame.c): the shown profile as a flame graph, laid
 * out for the screen (view_flame.h), with a selected frame and a frame zoomed into, both kept by
 * their paths from one snapshot to the next. */
#ifndef PROFTOP_TUI_FLAME_H
#define PROFTOP_TUI_FLAME_H

#include "proftop/tui_screen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a move goes, in the tree: the drawing decides which arrow is which. */
enum tui_flame_move {
	TUI_FLAME_PARENT,
	TUI_FLAME_CHILD,       /* the widest child */
	TUI_FLAME_PREV,        /* the frame to the left at the same depth */
	TUI_FLAME_NEXT,
};

/* Lay the frames out again from the shown snapshot, the subtree under scope (a thread's root;
 * SNAPSHOT_NO_NODE: all), for the geometry of the last frame drawn. Returns how many. */
size_t tui_flame_build(struct tui_screen *screen, uint32_t scope);
/* The geometry the view is drawn in: a new one lays the frames out again. */
void tui_flame_fit(struct tui_screen *screen, int width, int depth);
/* The selected frame; NULL when there is none (no samples). */
const struct view_flame_frame *tui_flame_selected(const struct tui_screen *screen);
void tui_flame_move(struct tui_screen *screen, enum tui_flame_move move);
/* Select the frame at cell x of depth; true when there is one. */
bool tui_flame_select_at(struct tui_screen *screen, unsigned depth, int x);
/* Zoom into the selected frame (it becomes the full width); out: back one level, false when
 * there is none. */
void tui_flame_zoom(struct tui_screen *screen);
bool tui_flame_unzoom(struct tui_screen *screen);
void tui_flame_free(struct tui_screen *screen);

#endif
