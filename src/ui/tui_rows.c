/* tui_rows.c — the screen's rows: the current view's, made again from the shown snapshot when
 * its state changed (tui_screen_rebuild()), each view's selection found again by its key. Only
 * the current view's rows are kept up to date: switching views marks them stale. */
#include "proftop/ui/tui_screen_internal.h"

#include "proftop/diff.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_lines.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

uint32_t tui_screen_scope_root(const struct tui_screen *s)
{
	for (size_t i = 0; s->thread && i < s->shown->nthreads; i++)
		if (s->shown->threads[i].tid == s->thread)
			return s->shown->threads[i].root;
	return SNAPSHOT_NO_NODE;
}

uint64_t tui_screen_row_key(const struct tui_screen *s, enum tui_view v, size_t i)
{
	switch (v) {
	case TUI_TOP: /* a function only the baseline has: by its name */
		return s->top[i].func ? s->top[i].func
				      : util_hash_bytes(s->top[i].name, strlen(s->top[i].name),
							util_hash_bytes(s->top[i].module,
									strlen(s->top[i].module), 0)) |
						1ull << 63;
	case TUI_TREE:
		return s->tree[i].path;
	case TUI_CALLERS:
		return s->callers[i].path;
	case TUI_LINES:
		return tui_lines_row_key(&s->annotated, i);
	case TUI_FLAME: /* its frames are not a list: only the count is kept there */
		return i < s->flame.n ? s->flame.frames[i].path : 0;
	default:
		return i ? (uint64_t)s->threads[i - 1].tid : 0;
	}
}

/* After a rebuild: put the cursor back on what it was on, or as near as the rows allow. */
static void restore_cursor(struct tui_screen *s, enum tui_view v, size_t rows)
{
	struct tui_list *l = &s->lists[v];
	bool found = false;

	l->rows = rows;
	for (size_t i = 0; l->has_key && i < rows && !found; i++) {
		if (tui_screen_row_key(s, v, i) == l->key) {
			l->cursor = i;
			found = true;
		}
	}
	if (!found && l->cursor >= rows)
		l->cursor = rows ? rows - 1 : 0;
	if (!found && l->keep_key)
		return;
	l->has_key = rows > 0;
	l->key = rows ? tui_screen_row_key(s, v, l->cursor) : 0;
}

/* The baseline matched against shown in the thread scope; NULL when there is none. */
static const struct diff_base *matched_baseline(struct tui_screen *s)
{
	if (s->baseline)
		diff_base_match(s->baseline, s->shown, s->thread);
	return s->baseline;
}

static void rebuild_top(struct tui_screen *s)
{
	struct view_top_query q = { s->sort, s->filter, tui_screen_scope_root(s), matched_baseline(s) };

	free(s->top);
	restore_cursor(s, TUI_TOP, view_top(s->shown, &q, &s->top));
}

static void rebuild_tree(struct tui_screen *s)
{
	struct view_tree_query q = { 0, s->filter, &s->tree_open, false, 0, matched_baseline(s) };
	struct view_tree tree;

	view_tree_of(&s->tree_src, s->shown, tui_screen_scope_root(s));
	tree = s->tree_src;
	if (s->focused) {
		uint32_t node = view_tree_find(&s->tree_src, s->focus, s->nfocus);

		if (node == SNAPSHOT_NO_NODE) {
			s->focused = false;
		} else {
			tree.root = node;
			tree.root_path = view_tree_path(&s->tree_src, node);
			q.show_root = true;
		}
	}
	restore_cursor(s, TUI_TREE, view_tree(&tree, &q, &s->tree, &s->tree_cap));
}

/* The function the callers view is about: the chosen one, else the hottest in scope. */
static uint32_t callers_subject(struct tui_screen *s, uint32_t scope)
{
	struct view_top_query q = { VIEW_SORT_SELF, NULL, scope };
	struct view_row *rows;
	uint32_t f;

	if (s->callers_func && s->callers_func < s->shown->nfuncs)
		return s->callers_func;
	f = view_top(s->shown, &q, &rows) ? rows[0].func : SNAPSHOT_ROOT_FUNC;
	free(rows);
	return f;
}

/* The filter picks functions in the other views; here every caller of the subject shows. */
static void rebuild_callers(struct tui_screen *s)
{
	uint32_t scope = tui_screen_scope_root(s);
	uint32_t top = scope == SNAPSHOT_NO_NODE ? s->shown->merged_root : scope;
	struct view_tree_query q = { 0, NULL, &s->callers_open, true, s->shown->nodes[top].total };
	size_t n = 0;

	view_tree_free(&s->callers_src);
	memset(&s->callers_src, 0, sizeof(s->callers_src));
	uint32_t f = callers_subject(s, scope);
	if (f != SNAPSHOT_ROOT_FUNC) {
		view_callers(&s->callers_src, s->shown, scope, f);
		n = view_tree(&s->callers_src, &q, &s->callers, &s->callers_cap);
	}
	restore_cursor(s, TUI_CALLERS, n);
}

static void rebuild_threads(struct tui_screen *s)
{
	free(s->threads);
	restore_cursor(s, TUI_THREADS, view_threads(s->shown, s->filter, &s->threads) + 1);
}

const struct snapshot *tui_screen_lines_snapshot(const struct tui_screen *s)
{
	return s->annotated.src ? s->annotated.src : s->shown;
}

/* The function's lines again (tui_lines.h), the cursor on the same line or instruction; on the
 * hottest line when just opened. */
static void rebuild_lines(struct tui_screen *s)
{
	struct tui_list *l = &s->lists[TUI_LINES];

	restore_cursor(s, TUI_LINES, tui_lines_build(&s->annotated, s->shown, s->lines_func,
							 s->lines_asm,
							 s->thread ? tui_screen_scope_root(s) : SNAPSHOT_NO_NODE));
	if (s->lines_fresh && s->annotated.nhot) {
		l->cursor = tui_lines_row_of_line(&s->annotated, s->annotated.order[0]);
		l->key = tui_screen_row_key(s, TUI_LINES, l->cursor);
		s->lines_fresh = false;
		s->lines_center = true;
	}
}

static void rebuild_flame(struct tui_screen *s)
{
	matched_baseline(s);
	s->lists[TUI_FLAME].rows = tui_flame_build(&s->flame, s->shown, s->baseline, s->filter,
						    tui_screen_scope_root(s));
}

void tui_screen_rebuild(struct tui_screen *s)
{
	static void (*const rebuild[TUI_NVIEWS])(struct tui_screen *) = {
		[TUI_TOP] = rebuild_top,
		[TUI_TREE] = rebuild_tree,
		[TUI_CALLERS] = rebuild_callers,
		[TUI_THREADS] = rebuild_threads,
		[TUI_FLAME] = rebuild_flame,
		[TUI_LINES] = rebuild_lines,
	};

	if (s->view != TUI_LINES && s->annotated.src) { /* no older snapshot held behind another view */
		snapshot_unref(s->annotated.src);
		s->annotated.src = NULL;
	}
	if (!s->stale || !s->shown)
		return;
	rebuild[s->view](s);
	s->stale = false;
}
