/* view_flame.h — a flame graph laid out in terminal cells from a call tree: no curses here.
 *
 * The frame at the top of the layout (the root, or the frame zoomed into) spans the whole width;
 * below it each frame's children share its cells in proportion to their samples, side by side in
 * the order of their names (so a live graph does not shuffle as counts change), as flamegraph.pl
 * orders them. A frame gets the cells from floor(start * width / total) to floor(end * width /
 * total), so each frame is within one cell of its exact share; a frame that gets no cell is not
 * laid out, nor is anything above it. Only what is laid out is visited: the cost follows the
 * cells of the screen, not the size of the tree. */
#ifndef PROFTOP_VIEW_FLAME_H
#define PROFTOP_VIEW_FLAME_H

#include "proftop/view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct view_flame_frame {
	uint32_t node;         /* in the tree laid out */
	uint32_t func;
	const char *name;
	const char *module;
	unsigned depth;        /* 0: the top frame */
	int x, width;          /* cells */
	uint64_t self, total;  /* samples */
	uint64_t path;         /* the node's path hash (view_tree_path()): the selection's key */
	uint32_t parent;       /* index of its parent frame; UINT32_MAX for the top one */
	bool match;            /* the filter matches its function */
	/* Against a baseline (filled in by the screen): its share of the top frame now minus the
	 * same path's share of the same top there, in points; only_new: the baseline lacks it. */
	double delta;
	bool only_new;
};

struct view_flame_query {
	uint32_t top;          /* the node that spans the width (tree->root, or one zoomed into) */
	int width;             /* cells */
	unsigned max_depth;    /* frames deeper than this are not laid out (the screen's rows) */
	const char *filter;    /* frames whose function or module matches are marked; NULL: none */
};

/* Lay out tree from query->top: frames in *frames (capacity *cap, grown as needed, the caller's),
 * depth by depth, left to right within a depth. Returns how many. When a filter is given,
 * *matched is the samples of stacks through a matching frame anywhere below top (each counted
 * once, laid out or not); else 0. */
size_t view_flame(const struct view_tree *tree, const struct view_flame_query *query,
		  struct view_flame_frame **frames, size_t *cap, uint64_t *matched);

/* The frame at cell x of depth, or SIZE_MAX. */
size_t view_flame_at(const struct view_flame_frame *frames, size_t n, unsigned depth, int x);

#endif
