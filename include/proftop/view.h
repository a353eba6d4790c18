/* view.h — what frontends show, as plain rows computed from a snapshot: sorting, filtering and
 * percentages live here so the TUI and batch mode show the same thing. No curses here. */
#ifndef PROFTOP_VIEW_H
#define PROFTOP_VIEW_H

#include "proftop/profile.h"

#include <stddef.h>
#include <stdint.h>

enum view_sort {
	VIEW_SORT_SELF,
	VIEW_SORT_TOTAL,
	VIEW_SORT_NAME,
	VIEW_SORT_MODULE,
};

struct view_row {
	uint32_t func;
	const char *name;
	const char *module;
	uint64_t self, total;      /* samples */
	double self_pct, total_pct; /* of the samples in scope */
};

struct view_top_query {
	enum view_sort sort;
	const char *filter;   /* case-insensitive substring of function or module; NULL: all */
	uint32_t scope;       /* node whose subtree counts (a thread's root); NO_NODE: all threads */
};

/* The top-functions table: one row per function with samples in scope, hottest first by the
 * chosen column (ties broken by name so output is stable). Returns the number of rows; *rows is
 * malloc'd and belongs to the caller. */
size_t view_top(const struct profile_snapshot *snapshot, const struct view_top_query *query,
		struct view_row **rows);

#endif
