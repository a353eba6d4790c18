/* view.h — what frontends show, as plain rows computed from a snapshot: sorting, filtering and
 * percentages live here so the TUI and batch mode show the same thing. No curses here.
 *
 * Four kinds of rows: the top functions (flat), a call tree flattened top-down, the callers of one
 * function (the tree inverted below it) and the threads. Node indices change from one snapshot to
 * the next; what stays is a node's path, the function ids from its tree's root down to it, so
 * tree rows carry a hash of that path and expansion state is kept by path. */
#ifndef PROFTOP_VIEW_H
#define PROFTOP_VIEW_H

#include "proftop/diff.h"
#include "proftop/idmap.h"
#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum view_sort {
	VIEW_SORT_SELF,
	VIEW_SORT_TOTAL,
	VIEW_SORT_NAME,
	VIEW_SORT_MODULE,
	VIEW_SORT_DELTA_SELF,      /* against a baseline: the largest change of SELF% first */
	VIEW_SORT_DELTA_TOTAL,
};

struct view_row {
	uint32_t func;             /* 0 for a function only the baseline has */
	const char *name;
	const char *module;
	uint64_t self, total;      /* samples */
	double self_pct, total_pct; /* of the samples in scope */
	/* Against a baseline: the same shares there; the function has samples on one side only. */
	double old_self_pct, old_total_pct;
	bool only_new, only_old;
	/* Coverage: its source lines, and how many of them ran (else 0, 0). */
	uint32_t lines, lines_reached;
};

struct view_top_query {
	enum view_sort sort;
	const char *filter;   /* case-insensitive substring of function or module; NULL: all */
	uint32_t scope;       /* node whose subtree counts (a thread's root); NO_NODE: all threads */
	/* A baseline matched against the snapshot and scope (diff_base_match()): rows get its
	 * shares, and the functions only it has (in scope) are rows too, with no samples now.
	 * NULL: none. */
	const struct diff_base *base;
};

/* --- the numbers of a row ------------------------------------------------------------------------
 *
 * Every frontend prints a row's numbers alike: two percentages (SELF% TOTAL% for functions, TOTAL%
 * SELF% in trees) and a sample count, each in a cell of fixed width ("%7.2f " "%7.2f " "%8llu  "),
 * then the function and its module; off the CPU the count is seconds. Against a baseline two more
 * cells follow the count: how many
 * points each percentage moved ("%+7.2f "). */

enum {
	VIEW_CELL_FIRST, VIEW_CELL_SECOND, VIEW_CELL_COUNT,
	VIEW_CELL_DELTA_FIRST, VIEW_CELL_DELTA_SECOND,
	VIEW_NCELLS_DIFF,
	VIEW_NCELLS = VIEW_CELL_DELTA_FIRST, /* without a baseline */
};

#define VIEW_CELLS_WIDTH 26    /* the three cells: where the function starts */
#define VIEW_DELTAS_WIDTH 16   /* the change cells: where it starts after them */

struct view_cells {
	char text[VIEW_NCELLS_DIFF][32];
	int x[VIEW_NCELLS_DIFF];   /* where each cell starts */
	int width[VIEW_NCELLS_DIFF];
};

/* A row's cells; a negative second_pct shows "-": no such number. */
void view_cells(struct view_cells *cells, double first_pct, double second_pct, uint64_t count);
/* The count cell as seconds (an off-CPU profile's microseconds), "%8.3f  ". */
void view_seconds_cell(struct view_cells *cells, uint64_t microseconds);
/* The count cell as the snapshot's unit reads (snapshot_unit()): samples and objects as they
 * are, microseconds as seconds, bytes with a K, M, G or T (powers of 1024). */
void view_count_cell(struct view_cells *cells, const struct snapshot *snapshot, uint64_t count);
/* The count cell of a source line's row: in a coverage snapshot "#####" when it never ran (as
 * gcov marks it) and ">=N" once it reached the cap N (its counting stopped there); else as
 * view_count_cell(). */
void view_line_count_cell(struct view_cells *cells, const struct snapshot *snapshot,
			  uint64_t count);
/* A coverage row's lines reached of its lines and their share ("  12/15   80%"), in the room of
 * the change cells; "" for a row that has no lines. */
void view_lines_cell(char *text, size_t size, const struct view_row *row);
#define VIEW_LINES_HEADING "  LINES RAN     "
/* The heading over the count cells: the snapshot's unit in coverage, else "SAMPLES". */
const char *view_line_count_heading(const struct snapshot *snapshot);
/* Its change cells: now's percentages minus the baseline's, in points. */
void view_delta_cells(struct view_cells *cells, double first_delta, double second_delta);
/* The column headings over them, right-aligned as the numbers are (a heading may hold UTF-8:
 * it is aligned by its columns, not its bytes). */
void view_cell_headings(struct view_cells *cells, const char *first, const char *second,
			const char *count);
void view_delta_headings(struct view_cells *cells, const char *first, const char *second);

/* The top-functions table: one row per function with samples in scope (or in the baseline's),
 * hottest first by the chosen column (ties broken by name so output is stable). Returns the
 * number of rows; *rows is malloc'd and belongs to the caller. */
size_t view_top(const struct snapshot *snapshot, const struct view_top_query *query,
		struct view_row **rows);

/* True when filter (a case-insensitive substring; NULL or "" matches all) is in the function's
 * name or module. */
bool view_matches(const struct snapshot_func *func, const char *filter);

/* --- call trees -------------------------------------------------------------------------------- */

/* A tree to flatten: the snapshot's own nodes, or a callers tree built by view_callers(). Nodes
 * follow the snapshot's rule that a parent's index is smaller than its children's. */
struct view_tree {
	const struct snapshot_node *nodes;
	size_t nnodes;
	const struct snapshot_func *funcs;
	size_t nfuncs;
	uint32_t root;             /* the top node; rows are what lies below it */
	uint64_t root_path;        /* its path hash (another tree's node's, for a subtree) */
	struct snapshot_node *owned; /* nodes this tree allocated (callers); view_tree_free() */
};

/* Which nodes are open, by path. A node nobody toggled is open when `all` is set, or else when it
 * is the hottest child of its (open) parent, so the hottest path is open by default. */
struct view_expansion {
	struct idmap state;        /* path → 1 open, 0 closed */
	bool all;
};

void view_expansion_init(struct view_expansion *expansion);
void view_expansion_free(struct view_expansion *expansion);
/* Forget every toggle; all: open every node, else the hottest path. */
void view_expansion_reset(struct view_expansion *expansion, bool all);
void view_expansion_set(struct view_expansion *expansion, uint64_t path, bool open);

struct view_tree_row {
	uint32_t node;             /* in the view_tree the rows came from */
	uint32_t func;
	const char *name;
	const char *module;
	unsigned depth;            /* 0 for the top row(s) */
	uint64_t self, total;      /* samples */
	double self_pct, total_pct; /* of the query's base */
	uint64_t path;             /* the node's path hash: the key for expansion and selection */
	bool has_children;         /* children with samples (shown or not) */
	bool open;                 /* its children follow as rows */
	bool last;                 /* the last of its siblings among the rows */
	/* Against a baseline: the same path's shares there (of the baseline's node at the tree's
	 * root, as the row's are of the base); only_new: the baseline has no such path. */
	double old_self_pct, old_total_pct;
	bool only_new;
};

struct view_tree_query {
	double min_pct;            /* leave out nodes under this percent of the base */
	const char *filter;        /* only paths to a function that matches, opened */
	const struct view_expansion *expansion; /* NULL: every node open */
	bool show_root;            /* the root itself is the first row (depth 0) */
	uint64_t base;             /* samples that make 100%; 0: the root's total */
	/* A baseline matched against the tree's snapshot (diff_base_match()), for the rows' old
	 * shares; with base 0 only (the baseline's 100% is its node at the tree's root). NULL: none. */
	const struct diff_base *baseline;
};

/* The snapshot's tree below node (a thread's root, or SNAPSHOT_NO_NODE for all threads). */
void view_tree_of(struct view_tree *tree, const struct snapshot *snapshot, uint32_t node);
/* Flatten the open part of a tree into rows, depth first, hottest child first. *rows (with
 * capacity *cap; NULL and 0 to start) is grown as needed and stays the caller's. Returns the
 * number of rows. Nodes without samples never show. */
size_t view_tree(const struct view_tree *tree, const struct view_tree_query *query,
		 struct view_tree_row **rows, size_t *cap);
/* The path hash of a node of the tree (seen from tree->root), and the node with a path, found by
 * walking down from the root; SNAPSHOT_NO_NODE when the path does not lead anywhere. */
uint64_t view_tree_path(const struct view_tree *tree, uint32_t node);
uint32_t view_tree_find(const struct view_tree *tree, const uint32_t *funcs, size_t depth);
/* The functions from below tree->root down to node, outermost first (at most max); returns the
 * depth, so view_tree_find() can find the same node in another snapshot. */
size_t view_tree_funcs(const struct view_tree *tree, uint32_t node, uint32_t *funcs, size_t max);
void view_tree_free(struct view_tree *tree);

/* How a tree row shows its depth before its open/closed mark, in room columns (a share of the
 * function column): two columns a level while they fit, so a child sits two columns right of its
 * parent. A row deeper than that stops moving right and says its depth instead: "·27" (":27"
 * without UTF-8) at mark_x, ending a column before its mark, which stays where the deepest
 * indented rows have theirs. So two rows of different depths never look alike, at any depth. */
struct view_indent {
	int columns;               /* before the open/closed mark */
	int mark_x;                /* where mark starts, from the row's indentation */
	char mark[16];             /* "" while the depth is shown by indentation alone */
};

void view_tree_indent(struct view_indent *indent, unsigned depth, int room, bool utf8);

/* The callers of func, bottom-up: the root is func itself (its total the samples it was on the
 * stack for, counted once per sample), its children are the functions that called it, theirs the
 * functions that called those, and so on up to the thread roots; a node's self is the samples
 * whose stack started there. Built from the snapshot's tree below scope (SNAPSHOT_NO_NODE: all
 * threads). Free with view_tree_free(); the tree borrows the snapshot's functions. */
void view_callers(struct view_tree *tree, const struct snapshot *snapshot, uint32_t scope,
		  uint32_t func);

/* --- threads ----------------------------------------------------------------------------------- */

struct view_thread_row {
	pid_t pid, tid;
	const char *comm;          /* its process's when it has none of its own; "" when unknown */
	uint32_t root;             /* the thread's root node, a view_top/view_tree scope */
	uint64_t samples;
	double pct;                /* of all samples */
	uint32_t hot_func;         /* the function with the most self samples; 0 when none */
	const char *hot_name;
	const char *hot_module;
	double hot_pct;            /* its self samples, of the thread's */
};

/* One row per thread with samples, most samples first (ties by tid). filter matches the command
 * name or the hottest function. Returns the count; *rows is malloc'd and belongs to the caller. */
size_t view_threads(const struct snapshot *snapshot, const char *filter,
		    struct view_thread_row **rows);

#endif
