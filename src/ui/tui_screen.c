/* tui_screen.c — the TUI's state: which view, what is selected, filtered, open or paused. Keys
 * change it through the key table near the end (its readers are in tui_keys.c), clicks through
 * tui_mouse.c; the current view's rows are made again from the shown snapshot by tui_rows.c
 * when any of it changes. The sub-views (tui_timeline.c, tui_flame.c, tui_lines.c) keep their
 * own state and return what the screen is to do (tui_result.h); their keys are here with the
 * others. */
#include "proftop/ui/tui_screen_internal.h"

#include "proftop/diff.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_lines.h"
#include "proftop/ui/tui_timeline.h"
#include "proftop/util.h"

#include <curses.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tui_screen_init(struct tui_screen *s, const char *target)
{
	memset(s, 0, sizeof(*s));
	s->target = xstrdup(target);
	s->sort = VIEW_SORT_SELF;
	s->stale = true;
	s->tabs_y = s->columns_y = s->timeline.y = -1;
	s->timeline.window_s = 10;
	snprintf(s->state, sizeof(s->state), "running");
	view_expansion_init(&s->tree_open);
	view_expansion_init(&s->callers_open);
	theme_builtin(&s->theme, "default");
}

void tui_screen_free(struct tui_screen *s)
{
	snapshot_unref(s->shown);
	snapshot_unref(s->shown_raw);
	snapshot_unref(s->live);
	snapshot_unref(s->base_raw);
	diff_base_free(s->baseline);
	free(s->top);
	free(s->tree);
	free(s->callers);
	free(s->threads);
	tui_lines_free(&s->annotated);
	tui_flame_free(&s->flame);
	view_tree_free(&s->callers_src);
	view_expansion_free(&s->tree_open);
	view_expansion_free(&s->callers_open);
	free(s->target);
	memset(s, 0, sizeof(*s));
}

const char *tui_screen_view_name(enum tui_view v)
{
	static const char *const names[TUI_NVIEWS] = { "Top", "Tree", "Callers", "Threads", "Flame",
						       "Lines" };

	return v < TUI_NVIEWS ? names[v] : "?";
}

void tui_screen_message(struct tui_screen *s, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->message, sizeof(s->message), fmt, ap);
	va_end(ap);
	s->message_is_error = error;
	s->message_ns = util_now_ns();
}

/* What a sub-view's handler asked for (tui_result.h). */
void tui_screen_take_result(struct tui_screen *s, struct tui_result r)
{
	if (r.clear_message)
		s->message[0] = 0;
	if (r.message)
		tui_screen_message(s, r.error, "%s", r.text);
	if (r.rebuild) {
		s->stale = true;
		tui_screen_rebuild(s);
	}
}

/* Rates per second, from the previous newest snapshot to this one; and proftop's own cost then,
 * for its share of the last refresh. */
static void update_rates(struct tui_screen *s, const struct snapshot *next)
{
	const struct snapshot *prev = s->live;
	const uint64_t *a, *b;
	double dt;

	if (prev && next->cost.wall_ns > prev->cost.wall_ns && selfcost_known(&prev->cost))
		s->cost_before = prev->cost;
	if (!prev || next->elapsed_ns <= prev->elapsed_ns || next->window_ns != prev->window_ns)
		return;
	dt = (double)(next->elapsed_ns - prev->elapsed_ns) / 1e9;
	a = &prev->counters.samples;
	b = &next->counters.samples;
	/* struct counters is TUI_NCOUNTERS uint64_t in a row */
	_Static_assert(sizeof(struct counters) == TUI_NCOUNTERS * sizeof(uint64_t), "counters");
	for (int i = 0; i < TUI_NCOUNTERS; i++)
		s->rate[i] = b[i] >= a[i] ? (double)(b[i] - a[i]) / dt : 0;
}

/* What the views read of a snapshot: itself, or with inlined frames folded into their callers. */
static struct snapshot *presented(const struct tui_screen *s, struct snapshot *snapshot)
{
	if (!snapshot)
		return NULL;
	return s->fold_inlined ? snapshot_fold_inlined(snapshot) : snapshot_ref(snapshot);
}

static void present(struct tui_screen *s)
{
	snapshot_unref(s->shown);
	s->shown = presented(s, s->shown_raw);
	s->stale = true;
}

/* The baseline as the views compare with it: presented as shown is. */
static void present_baseline(struct tui_screen *s)
{
	struct snapshot *base = presented(s, s->base_raw);

	diff_base_free(s->baseline);
	s->baseline = base ? diff_base_new(base, s->base_label) : NULL;
	snapshot_unref(base);
	s->stale = true;
}

void tui_screen_set_baseline(struct tui_screen *s, struct snapshot *raw, const char *label)
{
	if (raw)
		snapshot_ref(raw);
	snapshot_unref(s->base_raw);
	s->base_raw = raw;
	snprintf(s->base_label, sizeof(s->base_label), "%s", raw ? label : "");
	if (!raw && (s->sort == VIEW_SORT_DELTA_SELF || s->sort == VIEW_SORT_DELTA_TOTAL))
		s->sort = VIEW_SORT_SELF;
	present_baseline(s);
}

/* Show the newest snapshots (after a pause, or as they come). */
static void show_live(struct tui_screen *s)
{
	if (s->shown_raw && strcmp(snapshot_kind(s->live), snapshot_kind(s->shown_raw)))
		for (int v = 0; v < TUI_NVIEWS; v++)
			s->lists[v].keep_key = s->lists[v].has_key;
	snapshot_unref(s->shown_raw);
	s->shown_raw = snapshot_ref(s->live);
	present(s);
}

void tui_screen_set_snapshot(struct tui_screen *s, struct snapshot *snapshot)
{
	if (snapshot == s->live) {
		snapshot_unref(snapshot);
		return;
	}
	update_rates(s, snapshot);
	snapshot_unref(s->live);
	s->live = snapshot;
	if (s->paused && s->shown)
		return;
	show_live(s);
}

/* --- keys ------------------------------------------------------------------------------------- */

struct tui_list *tui_screen_list(struct tui_screen *s)
{
	return &s->lists[s->view];
}

void tui_screen_select_row(struct tui_screen *s, size_t row)
{
	struct tui_list *l = tui_screen_list(s);

	if (!l->rows)
		return;
	l->cursor = row < l->rows ? row : l->rows - 1;
	l->key = tui_screen_row_key(s, s->view, l->cursor);
	l->has_key = true;
	l->keep_key = false;
}

void tui_screen_move_cursor(struct tui_screen *s, long delta)
{
	struct tui_list *l = tui_screen_list(s);
	long row = (long)l->cursor + delta;

	tui_screen_select_row(s, row < 0 ? 0 : (size_t)row);
}

static uint32_t selected_func(const struct tui_screen *s);

/* Going from the Top view to Callers shows the callers of the function selected there. Lines
 * is about the function `a` chose: there is none before the first `a`. */
void tui_screen_switch_view(struct tui_screen *s, int v)
{
	enum tui_view next = (enum tui_view)((v + TUI_NVIEWS) % TUI_NVIEWS);
	uint32_t f = s->view == TUI_TOP && next == TUI_CALLERS ? selected_func(s) : 0;

	if (next == TUI_LINES && !s->lines_func) {
		tui_screen_message(s, false, "a on a function in Top, Tree or Callers shows its lines");
		return;
	}

	if (f && f != s->callers_func) {
		s->callers_func = f;
		s->lists[TUI_CALLERS] = (struct tui_list){ 0 };
	}
	s->view = next;
	s->stale = true;
}

bool tui_screen_is_tree_view(const struct tui_screen *s)
{
	return s->view == TUI_TREE || s->view == TUI_CALLERS;
}

static const struct view_tree_row *tree_row(const struct tui_screen *s)
{
	const struct tui_list *l = &s->lists[s->view];

	if (!tui_screen_is_tree_view(s) || l->cursor >= l->rows || s->stale)
		return NULL;
	return s->view == TUI_TREE ? &s->tree[l->cursor] : &s->callers[l->cursor];
}

static struct view_expansion *expansion(struct tui_screen *s)
{
	return s->view == TUI_TREE ? &s->tree_open : &s->callers_open;
}

/* Right/+: open the node; on an open one, go to its first child. Left/-: close it; on a closed
 * one, go to its parent. */
static void open_node(struct tui_screen *s, bool open)
{
	const struct view_tree_row *r = tree_row(s);
	const struct view_tree_row *rows = s->view == TUI_TREE ? s->tree : s->callers;
	size_t at = tui_screen_list(s)->cursor;

	if (!r || (open && !r->has_children))
		return;
	if (open == r->open) {
		if (open) {
			tui_screen_move_cursor(s, 1);
			return;
		}
		while (at-- > 0) {
			if (rows[at].depth < r->depth) {
				tui_screen_select_row(s, at);
				return;
			}
		}
		return;
	}
	view_expansion_set(expansion(s), r->path, open);
	s->stale = true;
}

void tui_screen_toggle_node(struct tui_screen *s, int unused)
{
	(void)unused;
	const struct view_tree_row *r = tree_row(s);

	if (r && r->has_children) {
		view_expansion_set(expansion(s), r->path, !r->open);
		s->stale = true;
	}
}

/* The function under the cursor in the top or tree view; 0 when none. */
static uint32_t selected_func(const struct tui_screen *s)
{
	const struct tui_list *l = &s->lists[s->view];

	if (s->stale || l->cursor >= l->rows)
		return 0;
	if (s->view == TUI_TOP)
		return s->top[l->cursor].func;
	if (s->view == TUI_TREE || s->view == TUI_CALLERS)
		return tree_row(s)->func;
	if (s->view == TUI_FLAME && tui_flame_selected(&s->flame)) /* the root frame is no function */
		return tui_flame_selected(&s->flame)->func == SNAPSHOT_ROOT_FUNC ? 0 : tui_flame_selected(&s->flame)->func;
	return 0;
}

uint32_t tui_screen_selected_func(const struct tui_screen *s)
{
	return s->view == TUI_LINES ? s->lines_func : selected_func(s);
}

static void show_callers(struct tui_screen *s, int unused)
{
	(void)unused;
	uint32_t f = selected_func(s);

	if (!f)
		return;
	s->callers_func = f;
	s->lists[TUI_CALLERS] = (struct tui_list){ 0 };
	s->view = TUI_CALLERS;
	s->stale = true;
}

static void toggle_focus(struct tui_screen *s, int unused)
{
	(void)unused;
	const struct view_tree_row *r = tree_row(s);
	char buf[160];

	if (s->focused) {
		s->focused = false;
		tui_screen_message(s, false, "percentages of the whole profile");
	} else if (r && s->view == TUI_TREE) {
		s->nfocus = view_tree_funcs(&s->tree_src, r->node, s->focus, TUI_FOCUS_MAX);
		s->focused = s->nfocus > 0;
		if (s->focused)
			tui_screen_message(s, false, "percentages relative to %s (%% again: the whole)",
					   view_name(r->name, s->names, buf, sizeof(buf)));
	}
	s->stale = true;
}

static void choose_thread(struct tui_screen *s, int unused)
{
	(void)unused;
	const struct tui_list *l = &s->lists[TUI_THREADS];

	if (s->stale || l->cursor >= l->rows)
		return;
	if (l->cursor == 0) {
		s->thread = 0;
		tui_screen_message(s, false, "all threads");
	} else {
		const struct view_thread_row *t = &s->threads[l->cursor - 1];

		s->thread = t->tid;
		tui_screen_message(s, false, "only thread %d (%s) in every view; Enter on \"all threads\" "
					     "to undo", (int)t->tid, t->comm);
	}
	s->stale = true;
}

/* The columns in the order they stand; the changes only against a baseline. */
static void cycle_sort(struct tui_screen *s, int delta)
{
	static const enum view_sort order[] = { VIEW_SORT_SELF, VIEW_SORT_TOTAL,
						VIEW_SORT_DELTA_SELF, VIEW_SORT_DELTA_TOTAL,
						VIEW_SORT_NAME, VIEW_SORT_MODULE };
	int n = 6, i = 0;

	while (i < n && order[i] != s->sort)
		i++;
	do
		i = ((i + delta) % n + n) % n;
	while (!s->baseline && (order[i] == VIEW_SORT_DELTA_SELF ||
				order[i] == VIEW_SORT_DELTA_TOTAL));
	s->sort = order[i];
	s->stale = true;
}

static long page(const struct tui_screen *s)
{
	return s->list_h > 1 ? s->list_h - 1 : 1;
}

/* --- what keys do: the handlers of the key table ---------------------------------------------
 *
 * Each takes the binding's argument: a view, a step, a direction. */

/* To view arg (TUI_TOP ... TUI_THREADS). */
static void view_key(struct tui_screen *s, int view)
{
	tui_screen_switch_view(s, view);
}

/* To the next (1) or previous (-1) view of the profile: Tab leaves Lines out (`a` opens it on a
 * function, 5 goes back to it), so that it cycles through the views of the whole profile. */
static void view_step(struct tui_screen *s, int step)
{
	int next = ((int)s->view + step + TUI_NVIEWS) % TUI_NVIEWS;

	if (next == TUI_LINES)
		next += step;
	tui_screen_switch_view(s, next);
}

static void row_step(struct tui_screen *s, int rows)
{
	tui_screen_move_cursor(s, rows);
}

static void page_step(struct tui_screen *s, int pages)
{
	tui_screen_move_cursor(s, pages * page(s));
}

/* The first row (0) or the last (1). */
static void row_end(struct tui_screen *s, int last)
{
	tui_screen_select_row(s, last ? SIZE_MAX : 0);
}

/* Open the node, or on an open one go to its child (1); close it, or go to its parent (0). */
static void node_key(struct tui_screen *s, int open)
{
	open_node(s, open);
}

static void sort_step(struct tui_screen *s, int step)
{
	cycle_sort(s, step);
}

static void open_all(struct tui_screen *s, int unused)
{
	(void)unused;
	struct view_expansion *e = expansion(s);

	view_expansion_reset(e, !e->all);
	tui_screen_message(s, false, e->all ? "everything open" : "the hottest path open");
	s->stale = true;
}

static void start_filter(struct tui_screen *s, int unused)
{
	(void)unused;
	s->editing = true;
	s->filter[0] = 0;
	s->stale = true;
}

/* The filter changed while typed: the rows are rebuilt, the cursor on the first. */
static void filter_changed(struct tui_screen *s)
{
	s->stale = true;
	s->lists[s->view].cursor = 0;
	s->lists[s->view].has_key = false;
}

/* A printable key while a filter is typed goes into it, when it fits; false for other keys. */
static bool type_key(struct tui_screen *s, int key)
{
	size_t n = strlen(s->filter);

	if (key < ' ' || key > '~')
		return false;
	if (n + 1 < sizeof(s->filter)) {
		s->filter[n] = (char)key;
		s->filter[n + 1] = 0;
		filter_changed(s);
	}
	return true;
}

static void erase_char(struct tui_screen *s, int unused)
{
	(void)unused;
	size_t n = strlen(s->filter);

	if (n)
		s->filter[n - 1] = 0;
	filter_changed(s);
}

static void erase_filter(struct tui_screen *s, int unused)
{
	(void)unused;
	s->filter[0] = 0;
	filter_changed(s);
}

static void keep_filter(struct tui_screen *s, int unused)
{
	(void)unused;
	s->editing = false;
}

static void drop_filter(struct tui_screen *s, int unused)
{
	(void)unused;
	s->filter[0] = 0;
	s->editing = false;
	s->stale = true;
}

/* Esc: the filter goes first, then the relative percentages. */
static void clear_filter_or_focus(struct tui_screen *s, int unused)
{
	(void)unused;
	if (s->filter[0]) {
		s->filter[0] = 0;
		s->stale = true;
	} else if (s->focused) {
		toggle_focus(s, 0);
	}
}

/* Sampling goes on while paused; going on shows the newest profile at once. */
static void toggle_pause(struct tui_screen *s, int unused)
{
	(void)unused;
	s->paused = !s->paused;
	if (!s->paused && s->live && s->live != s->shown_raw)
		show_live(s);
}

/* `i`: inlined functions as frames of their own, or counted in the functions they were inlined
 * into (as --no-inline collects them), in every view, paused or not. */
static void toggle_inlined(struct tui_screen *s, int unused)
{
	(void)unused;
	s->fold_inlined = !s->fold_inlined;
	present(s);
	present_baseline(s);
	tui_screen_message(s, false, s->fold_inlined ? "inlined functions counted in their callers" :
			   "inlined functions shown as frames of their own");
}

/* `p`: function names whole, without parameter lists and return types, without template
 * arguments too, in turn. Only the drawing reads it: the rows stay. */
static void names_step(struct tui_screen *s, int unused)
{
	static const char *const told[VIEW_NAMES_COUNT] = {
		"names in full",
		"short names: no parameter lists or return types",
		"bare names: no parameter lists, return types or template arguments",
	};

	(void)unused;
	s->names = (enum view_names)((s->names + 1) % VIEW_NAMES_COUNT);
	tui_screen_message(s, false, "%s", told[s->names]);
}

/* `a`: the selected function per source line, in the Lines view. */
static void open_lines(struct tui_screen *s, int unused)
{
	(void)unused;
	uint32_t f = selected_func(s);

	if (!f)
		return;
	s->lines_func = f;
	s->lines_from = s->view;
	s->lines_fresh = true;
	s->lists[TUI_LINES] = (struct tui_list){ 0 };
	s->view = TUI_LINES;
	s->stale = true;
}

static void lines_back(struct tui_screen *s, int unused)
{
	(void)unused;
	tui_screen_switch_view(s, s->lines_from);
}

/* n: the next line in the order of self samples (hottest first), wrapping; N (-1): back. From an
 * instruction, the line it is under counts. */
static void lines_step(struct tui_screen *s, int step)
{
	const struct tui_list *l = &s->lists[TUI_LINES];
	size_t n, at = 0;

	tui_screen_rebuild(s);
	n = s->annotated.nhot;
	if (!n || l->cursor >= l->rows)
		return;
	while (at < n && s->annotated.order[at] != s->annotated.rows[l->cursor].line)
		at++;
	at = at == n ? 0 : (at + (step > 0 ? 1 : n - 1)) % n;
	tui_screen_select_row(s, tui_lines_row_of_line(&s->annotated, s->annotated.order[at]));
}

/* d: each line's instructions under it, or not; from an instruction the cursor goes to its line,
 * centred. */
static void lines_disasm(struct tui_screen *s, int unused)
{
	(void)unused;
	struct tui_list *l = &s->lists[TUI_LINES];

	tui_screen_rebuild(s);
	if (s->lines_asm && l->cursor < l->rows && s->annotated.rows[l->cursor].line != TUI_NO_LINE) {
		l->key = tui_lines_line_key(&s->annotated.lines.lines[s->annotated.rows[l->cursor].line]);
		l->has_key = true;
	}
	s->lines_asm = !s->lines_asm;
	s->lines_center = true; /* the line's instructions come (or go) below it: show them */
	s->stale = true;
}

/* < and >: the Lines of the previous / next function in Top's order (its sort, filter and thread),
 * wrapping; from a function Top does not list, its first. */
static void lines_function_step(struct tui_screen *s, int step)
{
	struct view_top_query q = { s->sort, s->filter, tui_screen_scope_root(s) };
	struct view_row *rows;
	size_t n, at = 0;

	if (!s->shown)
		return;
	n = view_top(s->shown, &q, &rows);
	while (at < n && rows[at].func != s->lines_func)
		at++;
	at = at == n ? 0 : (at + (step > 0 ? 1 : n - 1)) % n;
	if (n && rows[at].func != s->lines_func) {
		s->lines_func = rows[at].func;
		s->lines_fresh = true;
		s->lists[TUI_LINES] = (struct tui_list){ 0 };
		s->stale = true;
	}
	free(rows);
}

static void lines_basis(struct tui_screen *s, int unused)
{
	(void)unused;
	s->lines_of_profile = !s->lines_of_profile;
	tui_screen_message(s, false, s->lines_of_profile ? "percentages of the whole profile"
			   : "percentages of the function (%% again: of the whole profile)");
}

/* The arrows in the Flame view move as they point: up is the parent when the root is at the top
 * (an icicle), a child when it is at the bottom (a flame). */
static void flame_arrow(struct tui_screen *s, int move)
{
	tui_screen_rebuild(s);
	if (s->flame.up && (move == TUI_FLAME_PARENT || move == TUI_FLAME_CHILD))
		move = move == TUI_FLAME_PARENT ? TUI_FLAME_CHILD : TUI_FLAME_PARENT;
	tui_flame_move(&s->flame, (enum tui_flame_move)move);
}

static void flame_zoom(struct tui_screen *s, int unused)
{
	(void)unused;
	tui_screen_rebuild(s);
	s->stale |= tui_flame_zoom(&s->flame);
}

/* Esc: the search goes first, then the last zoom. */
static void flame_escape(struct tui_screen *s, int unused)
{
	(void)unused;
	if (s->filter[0]) {
		s->filter[0] = 0;
		s->stale = true;
	} else {
		s->stale |= tui_flame_unzoom(&s->flame);
	}
}

static void flame_flip(struct tui_screen *s, int unused)
{
	(void)unused;
	s->flame.up = !s->flame.up;
	tui_screen_message(s, false, s->flame.up ? "flame: the root at the bottom"
			   : "icicle: the root at the top");
}

/* `b`: what the views show now (the stretch, paused or not) is the baseline from now on. */
static void take_baseline(struct tui_screen *s, int unused)
{
	(void)unused;
	const struct snapshot *p = s->shown_raw;
	char label[64];

	if (!p)
		return;
	if (p->ranged)
		snprintf(label, sizeof(label), "seconds %llu-%llu", (unsigned long long)p->range_start_s,
			 (unsigned long long)p->range_end_s);
	else
		snprintf(label, sizeof(label), "seconds 0-%.0f", (double)p->elapsed_ns / 1e9);
	tui_screen_set_baseline(s, s->shown_raw, label);
	tui_screen_message(s, false, "baseline: %s; the views show the change since (B drops it)",
			   label);
}

static void drop_baseline(struct tui_screen *s, int unused)
{
	(void)unused;
	if (!s->base_raw) {
		tui_screen_message(s, false, "no baseline (b takes what the views show)");
		return;
	}
	tui_screen_set_baseline(s, NULL, NULL);
	tui_screen_message(s, false, "no baseline");
}

static void show_help(struct tui_screen *s, int unused)
{
	(void)unused;
	s->help = true;
	s->help_top = 0;
}

/* The help's first line under its title: top, kept where the lines fill the box as last drawn
 * (help_lines, help_rows), which drawing keeps again after a resize. */
static void help_move(struct tui_screen *s, long top)
{
	long last = s->help_lines > s->help_rows ? s->help_lines - s->help_rows : 0;

	s->help_top = (int)(top < 0 ? 0 : top > last ? last : top);
}

void tui_screen_help_scroll(struct tui_screen *s, int lines)
{
	help_move(s, (long)s->help_top + lines);
}

/* A page less a line, so the last line read stays in sight. */
static void help_page(struct tui_screen *s, int pages)
{
	help_move(s, (long)s->help_top + (long)pages * (s->help_rows > 1 ? s->help_rows - 1 : 1));
}

/* The start (0) or the end (1). */
static void help_end(struct tui_screen *s, int end)
{
	help_move(s, end ? s->help_lines : 0);
}

/* --- the key table -------------------------------------------------------------------------------
 *
 * In the order of the help, the most used keys first (quitting, the help, the views, moving,
 * Enter, the filter...), each view's own keys after those. The help's own keys come last; the
 * help names them in its title. A binding without help text shares the help line of the one above;
 * those for TUI_IN_FILTER alone are told on the line of /. A hint's .at is its place in every
 * line that shows it, so one order serves the five views; each line must fit 80 columns. */

static const struct tui_binding bindings[] = {
	{ .keys = { 'q', KEY_F(10) }, .where = TUI_IN_VIEWS | TUI_IN_TIMELINE, .action = TUI_ACT_QUIT,
	  .help = "quit: a launched command is ended, attached processes run on",
	  .hint = { "q:quit", TUI_IN_VIEWS | TUI_IN_TIMELINE, 17, 1 } },
	{ .keys = { '?', KEY_F(1) }, .where = TUI_IN_VIEWS, .run = show_help,
	  .help = "this help (h outside Flame)", .hint = { "?:help", TUI_IN_VIEWS, 1, 1 } },
	{ .keys = { 'h' }, .where = TUI_IN_LISTS, .run = show_help },
	{ .keys = { '\t' }, .where = TUI_IN_VIEWS | TUI_IN_FILTER, .run = view_step, .arg = 1,
	  .help = "views: 1 Top functions, 2 call Tree, 3 Callers, 4 Threads, 5 Flame graph\n"
		  "(Tab skips 6 Lines, which a opens on a function)",
	  .hint = { "Tab:view", TUI_IN_VIEWS, 2, 1 } },
	{ .keys = { KEY_BTAB }, .where = TUI_IN_VIEWS | TUI_IN_FILTER, .run = view_step, .arg = -1 },
	{ .keys = { '1' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_TOP },
	{ .keys = { '2' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_TREE },
	{ .keys = { '3' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_CALLERS },
	{ .keys = { '4' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_THREADS },
	{ .keys = { '5' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_FLAME,
	  .help = "view 5 Flame: the call tree as a flame graph, live" },
	{ .keys = { '6' }, .where = TUI_IN_VIEWS, .run = view_key, .arg = TUI_LINES,
	  .help = "view 6 Lines again: the function a opened last, per source line" },
	{ .keys = { KEY_UP, 'k' }, .where = TUI_IN_LISTS | TUI_IN_FILTER, .run = row_step, .arg = -1,
	  .help = "move the cursor a row / a page (the mouse selects rows)" },
	{ .keys = { KEY_DOWN, 'j' }, .where = TUI_IN_LISTS | TUI_IN_FILTER, .run = row_step, .arg = 1 },
	{ .keys = { KEY_PPAGE }, .where = TUI_IN_LISTS | TUI_IN_FILTER, .run = page_step, .arg = -1 },
	{ .keys = { KEY_NPAGE }, .where = TUI_IN_LISTS | TUI_IN_FILTER, .run = page_step, .arg = 1 },
	{ .keys = { KEY_HOME, 'g' }, .where = TUI_IN_LISTS, .run = row_end, .arg = 0,
	  .help = "the first / last row" },
	{ .keys = { KEY_END, 'G' }, .where = TUI_IN_LISTS, .run = row_end, .arg = 1 },
	{ .keys = { '\n', '\r', KEY_ENTER }, .where = TUI_IN_TOP, .run = show_callers,
	  .help = "show the callers of the function (a: its lines)",
	  .hint = { "Enter:callers", TUI_IN_TOP, 10, 1 } },
	{ .keys = { '\n', '\r', KEY_ENTER }, .where = TUI_IN_TREES, .run = tui_screen_toggle_node,
	  .help = "open / close the node (a: the function's lines)",
	  .hint = { "Enter/Left/Right:open/close", TUI_IN_TREES, 3, 1 } },
	{ .keys = { '\n', '\r', KEY_ENTER }, .where = TUI_IN_THREADS, .run = choose_thread,
	  .help = "only this thread in every view (\"all threads\" undoes)",
	  .hint = { "Enter:only this thread", TUI_IN_THREADS, 4, 1 } },
	{ .keys = { '/' }, .where = TUI_IN_PROFILE, .run = start_filter,
	  .help = "filter by function or module name as you type (Flame: mark)\n"
		  "(Enter keeps it, Esc clears it, Ctrl-U empties it)",
	  .hint = { "/:filter", TUI_IN_TOP | TUI_IN_TREE | TUI_IN_THREADS | TUI_IN_FLAME, 8, 2 } },
	{ .keys = { '\n', '\r', KEY_ENTER }, .where = TUI_IN_FILTER, .run = keep_filter },
	{ .keys = { TUI_ESC }, .where = TUI_IN_FILTER, .run = drop_filter },
	{ .keys = { KEY_BACKSPACE, TUI_DEL, TUI_CTRL_H }, .where = TUI_IN_FILTER,
	  .run = erase_char },
	{ .keys = { TUI_CTRL_U }, .where = TUI_IN_FILTER, .run = erase_filter },
	{ .keys = { TUI_ESC }, .where = TUI_IN_PROFILE & ~TUI_IN_FLAME, .run = clear_filter_or_focus,
	  .help = "clear the filter, then leave relative percentages" },
	{ .keys = { ' ' }, .where = TUI_IN_VIEWS, .run = toggle_pause, .action = TUI_ACT_PAUSE,
	  .help = "pause the display (sampling and counters go on)",
	  .hint = { "space:pause", TUI_IN_TOP | TUI_IN_CALLERS | TUI_IN_THREADS | TUI_IN_FLAME |
		    TUI_IN_LINES, 12, 3 } },
	{ .keys = { '<' }, .where = TUI_IN_PROFILE, .run = sort_step, .arg = -1,
	  .help = "sort Top by the previous / next column (or click a heading)",
	  .hint = { "<>:sort", TUI_IN_TOP, 9, 2 } },
	{ .keys = { '>' }, .where = TUI_IN_PROFILE, .run = sort_step, .arg = 1 },
	{ .keys = { 'a' }, .where = TUI_IN_TOP | TUI_IN_TREES | TUI_IN_FLAME, .run = open_lines,
	  .help = "annotate: the function's samples per source line, live (6 Lines)",
	  .hint = { "a:annotate", TUI_IN_TOP | TUI_IN_TREES | TUI_IN_FLAME, 11, 1 } },
	{ .keys = { 'c' }, .where = TUI_IN_TOP | TUI_IN_TREES, .run = show_callers,
	  .help = "callers of the selected function", .hint = { "c:callers", TUI_IN_TREE, 7, 2 } },
	{ .keys = { 's' }, .where = TUI_IN_VIEWS, .action = TUI_ACT_SAVE,
	  .help = "save a snapshot of the profile (of the stretch shown)", .hint = { "s:save", TUI_IN_TOP, 15, 2 } },
	{ .keys = { KEY_RIGHT, '+', 'l' }, .where = TUI_IN_TREES, .run = node_key, .arg = 1,
	  .help = "open the node; on an open one, go to its child" },
	{ .keys = { KEY_LEFT, '-' }, .where = TUI_IN_TREES, .run = node_key, .arg = 0,
	  .help = "close the node; on a closed one, go to its parent" },
	{ .keys = { '*' }, .where = TUI_IN_TREES, .run = open_all,
	  .help = "open everything / only the hottest path",
	  .hint = { "*:all", TUI_IN_TREES, 5, 3 } },
	{ .keys = { '%' }, .where = TUI_IN_PROFILE, .run = toggle_focus,
	  .help = "percentages relative to the node selected in Tree / the whole",
	  .hint = { "%:relative", TUI_IN_TREE, 6, 2 } },
	{ .keys = { '+' }, .where = TUI_IN_TOP | TUI_IN_THREADS, .action = TUI_ACT_FREQ_UP,
	  .help = "raise / lower the sampling frequency",
	  .hint = { "+-:freq", TUI_IN_TOP | TUI_IN_THREADS, 14, 4 } },
	{ .keys = { '-' }, .where = TUI_IN_TOP | TUI_IN_THREADS, .action = TUI_ACT_FREQ_DOWN },
	{ .keys = { ']' }, .where = TUI_IN_VIEWS, .action = TUI_ACT_FREQ_UP,
	  .help = "raise / lower the sampling frequency in any view" },
	{ .keys = { '[' }, .where = TUI_IN_VIEWS, .action = TUI_ACT_FREQ_DOWN },
	{ .keys = { 'w' }, .where = TUI_IN_VIEWS | TUI_IN_TIMELINE, .timeline = tui_timeline_window,
	  .action = TUI_ACT_STRETCH,
	  .help = "time window: the last seconds only / since the start",
	  .hint = { "w:window", TUI_IN_CALLERS | TUI_IN_TIMELINE, 13, 3 } },
	{ .keys = { 't' }, .where = TUI_IN_VIEWS, .timeline = tui_timeline_enter,
	  .help = "the timeline: choose the stretch of the run every view shows, s saves",
	  .hint = { "t:timeline", TUI_IN_TOP | TUI_IN_TREE | TUI_IN_FLAME, 13, 3 } },
	{ .keys = { 'm' }, .where = TUI_IN_VIEWS, .action = TUI_ACT_MODE,
	  .help = "mode: cpu, offcpu (blocked), runnable (preempted), wall (all three);\n"
		  "the views keep their place (a run in --mode cpu has the CPU's only)" },
	{ .keys = { 'b' }, .where = TUI_IN_VIEWS, .run = take_baseline, .action = TUI_ACT_BASELINE,
	  .help = "baseline: compare every view with what it shows now (B: no more)\n"
		  "(Top and Tree: the change in points, Flame: growth red, shrinkage blue)",
	  .hint = { "b:baseline", TUI_IN_TOP | TUI_IN_TREE | TUI_IN_FLAME, 16, 4 } },
	{ .keys = { 'B' }, .where = TUI_IN_VIEWS, .run = drop_baseline, .action = TUI_ACT_BASELINE },
	{ .keys = { 'i' }, .where = TUI_IN_VIEWS, .run = toggle_inlined,
	  .help = "inlined functions: frames of their own / counted in their callers" },
	{ .keys = { 'p' }, .where = TUI_IN_VIEWS, .run = names_step,
	  .help = "names: full / without parameter lists and return types / also without\n"
		  "template arguments (as drawn: the filter reads whole names)" },
	{ .keys = { KEY_UP, 'k' }, .where = TUI_IN_FLAME, .run = flame_arrow, .arg = TUI_FLAME_PARENT,
	  .help = "the frame above / below: caller or widest callee, as drawn",
	  .hint = { "h/j/k/l:move", TUI_IN_FLAME, 3, 1 } },
	{ .keys = { KEY_DOWN, 'j' }, .where = TUI_IN_FLAME, .run = flame_arrow, .arg = TUI_FLAME_CHILD },
	{ .keys = { KEY_LEFT, 'h' }, .where = TUI_IN_FLAME, .run = flame_arrow, .arg = TUI_FLAME_PREV,
	  .help = "the frame to the left / right (a click selects one)" },
	{ .keys = { KEY_RIGHT, 'l' }, .where = TUI_IN_FLAME, .run = flame_arrow, .arg = TUI_FLAME_NEXT },
	{ .keys = { '\n', '\r', KEY_ENTER }, .where = TUI_IN_FLAME, .run = flame_zoom,
	  .help = "zoom into the frame (or click it again) / back out of the last zoom",
	  .hint = { "Enter:zoom", TUI_IN_FLAME, 4, 1 } },
	{ .keys = { TUI_ESC }, .where = TUI_IN_FLAME, .run = flame_escape,
	  .hint = { "Esc:out", TUI_IN_FLAME, 5, 2 } },
	{ .keys = { 'f' }, .where = TUI_IN_FLAME, .run = flame_flip,
	  .help = "the root at the bottom (a flame) / at the top (an icicle)",
	  .hint = { "f:flip", TUI_IN_FLAME, 6, 3 } },
	{ .keys = { 'n' }, .where = TUI_IN_LINES, .run = lines_step, .arg = 1,
	  .help = "the next line by self samples, hottest to coldest (wraps) / back",
	  .hint = { "n/N:next hot", TUI_IN_LINES, 4, 1 } },
	{ .keys = { 'N' }, .where = TUI_IN_LINES, .run = lines_step, .arg = -1 },
	{ .keys = { 'd' }, .where = TUI_IN_LINES, .run = lines_disasm,
	  .help = "disassembly: each line's instructions under it, with their samples / off",
	  .hint = { "d:asm", TUI_IN_LINES, 5, 2 } },
	{ .keys = { '>' }, .where = TUI_IN_LINES, .run = lines_function_step, .arg = 1,
	  .help = "the next / previous function in Top's order",
	  .hint = { "<>:function", TUI_IN_LINES, 7, 4 } },
	{ .keys = { '<' }, .where = TUI_IN_LINES, .run = lines_function_step, .arg = -1 },
	{ .keys = { '%' }, .where = TUI_IN_LINES, .run = lines_basis,
	  .help = "percentages of the function / of the whole profile",
	  .hint = { "%:of all", TUI_IN_LINES, 6, 2 } },
	{ .keys = { TUI_ESC, KEY_LEFT }, .where = TUI_IN_LINES, .run = lines_back,
	  .help = "back to the view a was pressed in",
	  .hint = { "Esc:back", TUI_IN_LINES, 3, 1 } },
	{ .keys = { KEY_LEFT, 'h' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_cursor, .arg = -1,
	  .help = "the cursor a column earlier / later (a click puts it there)",
	  .hint = { "Left/Right:cursor", TUI_IN_TIMELINE, 1, 1 } },
	{ .keys = { KEY_RIGHT, 'l' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_cursor, .arg = 1 },
	{ .keys = { KEY_HOME, 'g' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_cursor,
	  .arg = INT_MIN, .help = "the cursor to the start / end of the run" },
	{ .keys = { KEY_END, 'G' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_cursor,
	  .arg = INT_MAX },
	{ .keys = { '[' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_mark, .arg = 0,
	  .action = TUI_ACT_STRETCH, .help = "the stretch starts / ends at the cursor",
	  .hint = { "[]:start/end", TUI_IN_TIMELINE, 2, 1 } },
	{ .keys = { ']' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_mark, .arg = 1,
	  .action = TUI_ACT_STRETCH },
	{ .keys = { '<', ',' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_shift, .arg = -1,
	  .action = TUI_ACT_STRETCH, .help = "move the stretch a column earlier / later",
	  .hint = { "<>:move", TUI_IN_TIMELINE, 3, 1 } },
	{ .keys = { '>', '.' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_shift, .arg = 1,
	  .action = TUI_ACT_STRETCH },
	{ .keys = { '+', '=' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_widen, .arg = 1,
	  .action = TUI_ACT_STRETCH, .help = "widen / narrow the stretch a column on each side",
	  .hint = { "+-:widen", TUI_IN_TIMELINE, 4, 2 } },
	{ .keys = { '-' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_widen, .arg = -1,
	  .action = TUI_ACT_STRETCH },
	{ .keys = { 'x' }, .where = TUI_IN_TIMELINE, .timeline = tui_timeline_all,
	  .action = TUI_ACT_STRETCH, .help = "the whole run again",
	  .hint = { "x:all", TUI_IN_TIMELINE, 14, 2 } },
	{ .keys = { '\n', '\r', KEY_ENTER, TUI_ESC, 't' }, .where = TUI_IN_TIMELINE,
	  .timeline = tui_timeline_leave, .help = "leave the timeline; the stretch stays",
	  .hint = { "Enter:done", TUI_IN_TIMELINE, 15, 1 } },
	{ .keys = { 'T' }, .where = TUI_IN_VIEWS, .action = TUI_ACT_THEME, .help = "next theme" },
	{ .keys = { TUI_CTRL_L }, .where = TUI_IN_VIEWS, .action = TUI_ACT_REDRAW,
	  .help = "repaint the whole screen (if the command wrote over it)" },
	{ .keys = { KEY_UP, 'k' }, .where = TUI_IN_HELP, .run = tui_screen_help_scroll, .arg = -1 },
	{ .keys = { KEY_DOWN, 'j' }, .where = TUI_IN_HELP, .run = tui_screen_help_scroll, .arg = 1 },
	{ .keys = { KEY_PPAGE }, .where = TUI_IN_HELP, .run = help_page, .arg = -1 },
	{ .keys = { KEY_NPAGE, ' ' }, .where = TUI_IN_HELP, .run = help_page, .arg = 1 },
	{ .keys = { KEY_HOME, 'g' }, .where = TUI_IN_HELP, .run = help_end, .arg = 0 },
	{ .keys = { KEY_END, 'G' }, .where = TUI_IN_HELP, .run = help_end, .arg = 1 },
};

const struct tui_binding *tui_screen_bindings(size_t *n)
{
	*n = sizeof(bindings) / sizeof(*bindings);
	return bindings;
}

/* With the help shown its own keys scroll it, and any other key closes it: q and Esc too, as
 * they close a pager, rather than doing what they do in the views. */
static enum tui_action help_key(struct tui_screen *s, int key)
{
	const struct tui_binding *b = tui_keys_find(key, TUI_IN_HELP);

	if (b)
		b->run(s, b->arg);
	else
		s->help = false;
	return TUI_ACT_NONE;
}

/* The binding of key where the screen is runs. While a filter is typed, printable keys go into it,
 * and a key that also works in the views ends the typing, then does what it does there. */
enum tui_action tui_screen_key(struct tui_screen *s, int key)
{
	const struct tui_binding *b;

	if (key == KEY_RESIZE)
		return TUI_ACT_NONE;
	s->message[0] = 0;
	if (s->help)
		return help_key(s, key);
	if (s->editing && type_key(s, key))
		return TUI_ACT_NONE;
	b = s->timeline.active && !s->editing ? tui_keys_find(key, TUI_IN_TIMELINE) : NULL;
	if (!b)
		b = tui_keys_find(key, s->editing ? TUI_IN_FILTER : 1u << s->view);
	if (b && s->editing && (b->where & TUI_IN_VIEWS)) {
		s->editing = false;
		b = tui_keys_find(key, 1u << s->view);
	}
	if (!b)
		return TUI_ACT_NONE;
	if (b->run)
		b->run(s, b->arg);
	else if (b->timeline)
		tui_screen_take_result(s, b->timeline(&s->timeline, s->live, b->arg));
	return b->action;
}
