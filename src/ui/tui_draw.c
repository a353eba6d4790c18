/* tui_draw.c — one frame of the TUI from its state: header, tab bar, column headings, rows, the
 * bottom line and the help. Every string goes through tui_put(), which clips it to the screen, so any
 * terminal size draws what fits and nothing else.
 *
 * Layout, top to bottom, each line only when the terminal is tall enough for it:
 *   title (target, state, elapsed, frequency, stretch,    always
 *          the debug file being fetched)
 *   counters, proftop's own CPU share and memory           7 lines or more
 *   timeline (samples per second, the stretch shown)       12 or more (4 on the timeline),
 *                                                          when the profile keeps one
 *   the selected function's samples per second             16 or more
 *   tab bar                                                4 or more
 *   column headings                                        5 or more
 *   rows (Lines: its heading and a note above them)        what is left
 *   key hints, the filter being typed, or a message        3 or more */
#include "proftop/ui/tui_screen.h"

#include "proftop/ui/tui_paint.h"
#include "proftop/diff.h"
#include "proftop/disasm.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_timeline.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"
#include "proftop/view_name.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOT_PCT 10.0
#define WARM_PCT 1.0
#define TUI_PUT_MAX 4096           /* bytes of one tui_put(): 1000 columns of 4-byte characters */

/* --- colours ---------------------------------------------------------------------------------- */

/* A theme colour as this terminal can show it: bright colours become bold on 8-colour terminals,
 * 256-colour ones their nearest basic colour. */
static short terminal_color(int c, bool fg, unsigned long *extra)
{
	if (c < 0)
		return -1;
	if (c < COLORS)
		return (short)c;
	if (c < 16) {
		if (fg)
			*extra |= A_BOLD;
		return (short)(c - 8);
	}
	if (c >= 232)
		return c >= 244 ? COLOR_WHITE : COLOR_BLACK;
	c -= 16;
	return (short)((c / 36 >= 3 ? COLOR_RED : 0) | ((c / 6) % 6 >= 3 ? COLOR_GREEN : 0) |
		       (c % 6 >= 3 ? COLOR_BLUE : 0));
}

static unsigned long attributes(uint8_t a)
{
	return (a & THEME_BOLD ? A_BOLD : 0) | (a & THEME_DIM ? A_DIM : 0) |
	       (a & THEME_UNDERLINE ? A_UNDERLINE : 0) | (a & THEME_REVERSE ? A_REVERSE : 0) |
	       (a & THEME_ITALIC ? A_ITALIC : 0);
}

void tui_draw_theme(struct tui_screen *s, const struct theme *t)
{
	bool colors = has_colors();

	s->theme = *t;
	for (int r = 0; r < THEME_NROLES; r++) {
		const struct theme_style *st = &t->styles[r];
		unsigned long a = attributes(st->attrs);

		if (colors && (st->fg >= 0 || st->bg >= 0) && r + 1 < COLOR_PAIRS) {
			short fg = terminal_color(st->fg, true, &a), bg = terminal_color(st->bg, false, &a);

			init_pair((short)(r + 1), fg, bg);
			a |= COLOR_PAIR(r + 1);
		}
		s->attrs[r] = a;
	}
	bkgdset(' ' | (chtype)s->attrs[THEME_NORMAL]);
}

/* --- the header ------------------------------------------------------------------------------- */

static void draw_title(struct tui_screen *s, int y)
{
	const struct snapshot *p = s->live;
	unsigned long a = s->attrs[THEME_HEADER];
	char text[512], mode[64], rate[64];
	int x;

	tui_fill(y, 0, COLS, a);
	if (p && p->ranged && p->window_ns)
		snprintf(mode, sizeof(mode), "window %.0fs", (double)p->window_ns / 1e9);
	else if (p && p->ranged)
		snprintf(mode, sizeof(mode), "seconds %llu-%llu",
			 (unsigned long long)p->range_start_s, (unsigned long long)p->range_end_s);
	else
		snprintf(mode, sizeof(mode), s->timeline.stretch == TUI_STRETCH_ALL ? "cumulative"
					     : "stretch (starting)");
	if (p && snapshot_allocations(p)) { /* "alloc: 1.2G allocated (45M/s), 30M in use" */
		char all[16], per_s[16], in_use[16];

		snprintf(rate, sizeof(rate), "%s: %s allocated (%s/s), %s in use",
			 snapshot_kind(p),
			 util_bytes_text(all, sizeof(all), p->counters.allocated),
			 util_bytes_text(per_s, sizeof(per_s), (uint64_t)s->rate[6]),
			 util_bytes_text(in_use, sizeof(in_use), p->counters.in_use));
	} else if (p && snapshot_coverage(p)) { /* "coverage: cap 1000, 45 of 52 probes placed" */
		snprintf(rate, sizeof(rate), "coverage: cap %llu, %llu of %llu probes placed",
			 (unsigned long long)p->coverage_cap, (unsigned long long)p->counters.probes_open,
			 (unsigned long long)p->counters.probes);
	} else if (p && snapshot_timed(p)) { /* the mode, and what 100% is: "wall: thread time 8.0s" */
		snprintf(rate, sizeof(rate), "%s: %s %.1fs", snapshot_kind(p),
			 snapshot_time_measured(p), (double)p->samples / 1e6);
	}
	else {
		snprintf(rate, sizeof(rate), "cpu %u Hz", p ? p->freq : 0);
	}
	snprintf(text, sizeof(text), " proftop  %s  [%s]  %.1fs  %s  %s%s%s%s%s%s", s->target,
		 s->state, p ? (double)p->elapsed_ns / 1e9 : 0.0, rate, mode,
		 s->baseline ? "  vs " : "", s->baseline ? s->base_label : "",
		 s->fold_inlined ? "  no inline" : "", p && p->fetching[0] ? "  debuginfod: " : "",
		 p ? p->fetching : "");
	x = tui_put(y, 0, COLS, a, text);
	if (s->paused)
		x += 2 + tui_put(y, x + 2, COLS, s->attrs[THEME_WARNING], " PAUSED ");
	if (s->serving[0]) { /* --serve: where, and loudly when other machines can read it */
		snprintf(text, sizeof(text), s->serving_exposed ? " serving %s to the network "
				: "serving %s", s->serving);
		tui_put(y, x + 2, COLS, s->serving_exposed ? s->attrs[THEME_WARNING] : a, text);
	}
}

static int counter(struct tui_screen *s, int y, int x, const char *label, uint64_t value, double rate,
		   bool loss)
{
	char num[64];
	unsigned long a = !loss ? s->attrs[THEME_NORMAL] | A_BOLD
			  : value ? s->attrs[THEME_COUNTER_NONZERO] : s->attrs[THEME_COUNTER_ZERO];

	x += tui_put(y, x, COLS, s->attrs[THEME_NORMAL], label);
	if (value && rate >= 0.5)
		snprintf(num, sizeof(num), "%llu (%.0f/s)", (unsigned long long)value, rate);
	else
		snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	x += tui_put(y, x, COLS, a, num);
	return x + tui_put(y, x, COLS, s->attrs[THEME_NORMAL], "  ");
}

/* One row of the timeline's bars, scaled to max. */
static void draw_bars(struct tui_screen *s, int y, const struct tui_timeline_scale *scale,
		      const double *samples, double max)
{
	static const char *const blocks[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = "_.-:=+*#";
	uint64_t from = 0, to = 0;
	bool ranged = tui_timeline_bounds(&s->timeline, s->live, &from, &to);

	tui_fill(y, 0, COLS, s->attrs[THEME_NORMAL]);
	for (int c = 0; c < scale->columns && c + 1 < COLS; c++) {
		uint64_t start = (uint64_t)c * scale->per_column, end = start + scale->per_column;
		int level = max > 0 ? (int)(samples[c] * 8 / max - 1e-9) : 0;
		bool cursor = s->timeline.active && s->timeline.cursor_s >= start && s->timeline.cursor_s < end;
		enum theme_role role = cursor ? THEME_SELECTED
				       : ranged && start < to && end > from ? THEME_TIMELINE_RANGE
									    : THEME_SPARKLINE;
		char one[2];

		level = level < 0 ? 0 : level > 7 ? 7 : level;
		one[0] = ascii[level];
		one[1] = 0;
		tui_put(y, 1 + c, 1, s->attrs[role], samples[c] <= 0 ? " " : s->utf8 ? blocks[level] : one);
	}
}

/* Samples per second over the run, a column per second or per few, on row y; on the next row
 * (when traced) those through the traced function, to the same scale, and its name after them
 * when there is room. The stretch shown in its own colour, the cursor on the timeline in the
 * selected row's. */
static void draw_timeline(struct tui_screen *s, int y, bool traced)
{
	struct tui_timeline_scale scale;
	double *samples, max = 0;

	tui_timeline_scale(&s->timeline, s->live, &scale);
	samples = xmalloc((size_t)scale.columns * sizeof(*samples));
	tui_timeline_columns(s->live, &scale, false, samples);
	for (int c = 0; c < scale.columns; c++)
		if (samples[c] > max)
			max = samples[c];
	draw_bars(s, y, &scale, samples, max);
	if (traced && !s->live->traced_func) {
		tui_fill(y + 1, 0, COLS, s->attrs[THEME_NORMAL]);
	} else if (traced) {
		const struct snapshot *p = s->live;
		char name[256], buf[TUI_PUT_MAX];

		tui_timeline_columns(s->live, &scale, true, samples); /* max stays: the same scale */
		draw_bars(s, y + 1, &scale, samples, max);
		snprintf(name, sizeof(name), "<- %s", tui_shown_name(s, p->funcs[p->traced_func].name, buf));
		if (scale.columns + 3 + (int)strlen(name) <= COLS)
			tui_put(y + 1, scale.columns + 2, COLS, s->attrs[THEME_NORMAL], name);
	}
	free(samples);
}

static void draw_counters(struct tui_screen *s, int y)
{
	const struct counters *c = s->live ? &s->live->counters : NULL;
	struct counters none = { 0 };
	int x = 1;

	if (!c)
		c = &none;
	tui_fill(y, 0, COLS, s->attrs[THEME_NORMAL]);
	x = counter(s, y, x, s->live && snapshot_coverage(s->live) ? "lines ran " : "samples ",
		    c->samples, s->rate[0], false);
	if (c->switches) /* of the samples: the switches' (every mode but cpu) */
		x = counter(s, y, x, "switches ", c->switches, s->rate[5], false);
	x = counter(s, y, x, "overflow ", c->overflow, s->rate[1], true);
	x = counter(s, y, x, "dropped ", c->dropped, s->rate[2], true);
	x = counter(s, y, x, "throttled ", c->throttled, s->rate[3], true);
	x = counter(s, y, x, "truncated ", c->truncated, s->rate[4], true);
	if (c->unread) /* interpreters' frames that could not be read consistently */
		x = counter(s, y, x, "unread ", c->unread, s->rate[8], true);
	if (s->live && s->live->folded_nodes) /* the tree outgrew --max-memory */
		x = counter(s, y, x, "folded ", s->live->folded_nodes, 0, true);
	if (c->pushing) { /* --otlp-endpoint: profiles sent, tries retried, profiles dropped */
		x = counter(s, y, x, "otlp sent ", c->pushed, 0, false);
		x = counter(s, y, x, "retried ", c->push_retried, 0, true);
		x = counter(s, y, x, "dropped ", c->push_dropped, 0, true);
	}
	/* proftop's own CPU share over the last refresh, and its memory: last, so a narrow
	 * terminal clips it before the loss counters. None for a saved profile. */
	if (s->live && selfcost_known(&s->live->cost)) {
		char cost[64];

		tui_put(y, x, COLS, s->attrs[THEME_NORMAL],
		    selfcost_text(cost, sizeof(cost), &s->live->cost, &s->cost_before));
	}
}

/* -a: the profile's threads are processes. */
static bool by_process(const struct tui_screen *s)
{
	return s->shown && s->shown->by_process;
}

static void draw_tabs(struct tui_screen *s, int y)
{
	char text[TUI_FILTER_MAX + 160], buf[TUI_PUT_MAX];
	int x = 0, n = 0;

	tui_fill(y, 0, COLS, s->attrs[THEME_TAB]);
	for (int v = 0; v < TUI_NVIEWS; v++) {
		char tab[32];

		snprintf(tab, sizeof(tab), " %d %s ", v + 1,
			 v == TUI_THREADS && by_process(s) ? "Processes"
							   : tui_screen_view_name((enum tui_view)v));
		s->tab_x[v] = x;
		x += tui_put(y, x, COLS, s->attrs[v == (int)s->view ? THEME_TAB_ACTIVE : THEME_TAB], tab);
		x += tui_put(y, x, 1, s->attrs[THEME_TAB], " ");
	}
	s->tab_x[TUI_NVIEWS] = x;
	text[0] = 0;
	if (s->thread)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " %s %d",
			      by_process(s) ? "process" : "thread", (int)s->thread);
	if (s->view == TUI_CALLERS && s->lists[TUI_CALLERS].rows)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " callers of %s",
			      tui_shown_name(s, s->callers[0].name, buf));
	if (s->view == TUI_LINES && s->shown && s->lines_func < tui_screen_lines_snapshot(s)->nfuncs)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " lines of %s",
			      tui_shown_name(s, tui_screen_lines_snapshot(s)->funcs[s->lines_func].name,
					 buf));
	if (s->view == TUI_TREE && s->focused && s->lists[TUI_TREE].rows)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " %% of %s",
			      tui_shown_name(s, s->tree[0].name, buf));
	if (s->filter[0] && !s->editing && s->view != TUI_CALLERS && s->view != TUI_LINES)
		snprintf(text + n, sizeof(text) - (size_t)n, " filter: %s", s->filter);
	tui_put(y, x + 1, COLS, s->attrs[THEME_TAB], text);
}

/* --- the views -------------------------------------------------------------------------------- */

struct columns {
	int fn_x, fn_w;            /* the function column */
	int mod_x, mod_w;          /* the module column; mod_w 0 when it does not fit */
	int ncells;                /* VIEW_NCELLS, or VIEW_NCELLS_DIFF with the change cells */
};

/* The function column takes what the numbers leave (and the change cells against a baseline),
 * the module column its longest entry (at most 24) when the function column keeps 16 columns or
 * more. */
static struct columns layout(int module_len, bool deltas)
{
	int x = VIEW_CELLS_WIDTH + (deltas ? VIEW_DELTAS_WIDTH : 0);
	struct columns c = { x, COLS - x, 0, 0, deltas ? VIEW_NCELLS_DIFF : VIEW_NCELLS };
	int mod = module_len > 24 ? 24 : module_len;

	if (mod && COLS - x - 2 - mod >= 16) {
		c.fn_w = COLS - x - 2 - mod;
		c.mod_x = x + c.fn_w + 2;
		c.mod_w = mod;
	}
	return c;
}

/* A change's colour: growth or shrinkage of half a point or more stands out. */
/* What the count column counts: samples, seconds (the timed modes), bytes or objects. */
static const char *count_heading(const struct tui_screen *s)
{
	return s->shown ? snapshot_unit(s->shown) : "SAMPLES";
}

/* The function's name, and against a baseline its mark when it has samples on one side only. */
static void draw_name(const struct tui_screen *s, int y, int x, int width, const char *name,
		      bool only_new, bool only_old, unsigned long sel)
{
	const char *mark = only_new ? "(new)" : only_old ? "(gone)" : NULL;
	char buf[TUI_PUT_MAX];
	int used = tui_put(y, x, mark ? width - 7 : width, sel ? sel : s->attrs[THEME_NORMAL],
		       tui_shown_name(s, name, buf));

	if (mark)
		tui_put(y, x + used + 1, width - used - 1,
		    sel ? sel : s->attrs[only_new ? THEME_DIFF_GROWN : THEME_DIFF_SHRUNK], mark);
}

/* The headings, and what a click on each sorts by (the Top view's; -1 elsewhere). */
static void draw_headings(struct tui_screen *s, int y, const struct columns *c, const char *first,
			  const char *second, const char *third)
{
	static const enum view_sort sorted_by[] = { VIEW_SORT_SELF, VIEW_SORT_TOTAL, VIEW_SORT_SELF,
						    VIEW_SORT_DELTA_SELF, VIEW_SORT_DELTA_TOTAL };
	const char *names[2] = { "FUNCTION", c->mod_w ? "MODULE" : "" };
	struct view_cells cells;
	int xs[3] = { c->fn_x, c->mod_w ? c->mod_x : COLS, COLS };
	int ncols = c->ncells + 2;

	view_cell_headings(&cells, first, second, third);
	if (c->ncells > VIEW_NCELLS) { /* the changes of the percentages: "ΔSELF" for "SELF%" */
		const char *delta = s->utf8 ? "Δ" : "+";
		char d1[16], d2[16];

		snprintf(d1, sizeof(d1), "%s%.*s", delta, (int)strcspn(first, "%"), first);
		snprintf(d2, sizeof(d2), "%s%.*s", delta, (int)strcspn(second, "%"), second);
		view_delta_headings(&cells, d1, d2);
	}
	tui_fill(y, 0, COLS, s->attrs[THEME_COLUMNS]);
	for (int i = 0; i < ncols; i++) {
		enum view_sort by = i < c->ncells ? sorted_by[i]
				    : i == c->ncells ? VIEW_SORT_NAME : VIEW_SORT_MODULE;
		bool top = s->view == TUI_TOP, sorted = top && by == s->sort && i != VIEW_CELL_COUNT;
		unsigned long a = s->attrs[sorted ? THEME_COLUMN_SORTED : THEME_COLUMNS];
		int x = i < c->ncells ? cells.x[i] : xs[i - c->ncells];

		if (i < c->ncells)
			tui_put(y, x, cells.width[i], a, cells.text[i]);
		else
			tui_put(y, x, xs[i - c->ncells + 1] - x, a, names[i - c->ncells]);
		s->column_x[i] = x;
		s->column_sort[i] = top ? by : (enum view_sort)-1;
	}
	s->column_x[ncols] = COLS;
}

/* The longest module name among the rows on screen (not all rows: a tree may have 100,000). */
static int longest_module(const char *const *modules, size_t stride, size_t first, size_t n)
{
	int len = 0;

	for (size_t i = first; i < n; i++) {
		const char *m = *(const char *const *)((const char *)modules + i * stride);
		int l = (int)strlen(m);

		if (l > len)
			len = l;
	}
	return len;
}

static void draw_top(struct tui_screen *s)
{
	struct tui_list *l = &s->lists[TUI_TOP];
	size_t first = tui_first_shown(l, s->list_h), n = l->rows;
	size_t last = first + (size_t)(s->list_h > 0 ? s->list_h : 0);
	/* Beside an allocation profile's bytes, the blocks (a baseline's changes take the room). */
	const struct snapshot *objects =
		s->shown && !s->baseline ? snapshot_objects(s->shown, s->shown) : NULL;
	/* A coverage run's lines reached, in the same room. */
	bool lines = s->shown && !s->baseline && snapshot_coverage(s->shown);
	struct columns c = layout(n ? longest_module(&s->top[0].module, sizeof(*s->top), first,
						     last < n ? last : n) : 0,
				  s->baseline || objects || lines);

	if (objects || lines) /* the change cells' room holds them: no changes without a baseline */
		c.ncells = VIEW_NCELLS;
	if (s->columns_y >= 0)
		draw_headings(s, s->columns_y, &c, "SELF%", "TOTAL%", count_heading(s));
	if (s->columns_y >= 0 && objects)
		tui_put(s->columns_y, VIEW_CELLS_WIDTH, VIEW_DELTAS_WIDTH, s->attrs[THEME_COLUMNS],
		    "  OBJECTS     ");
	if (s->columns_y >= 0 && lines)
		tui_put(s->columns_y, VIEW_CELLS_WIDTH, VIEW_DELTAS_WIDTH, s->attrs[THEME_COLUMNS],
			VIEW_LINES_HEADING);
	for (int i = 0; i < s->list_h && first + (size_t)i < n; i++) {
		const struct view_row *r = &s->top[first + (size_t)i];
		int y = s->list_y + i;
		unsigned long sel = first + (size_t)i == l->cursor ? s->attrs[THEME_SELECTED] : 0;
		double delta[2] = { r->self_pct - r->old_self_pct, r->total_pct - r->old_total_pct };

		tui_fill(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL]);
		tui_draw_numbers(s, y, r->self_pct, r->total_pct, r->self, s->baseline ? delta : NULL, sel);
		if (objects && r->func < objects->nfuncs) {
			char text[32];

			snprintf(text, sizeof(text), "%9llu      ",
				 (unsigned long long)objects->func_self[r->func]);
			tui_put(y, VIEW_CELLS_WIDTH, VIEW_DELTAS_WIDTH, sel ? sel : s->attrs[THEME_NORMAL],
			    text);
		}
		if (lines) {
			char text[48];

			view_lines_cell(text, sizeof(text), r);
			tui_put(y, VIEW_CELLS_WIDTH, VIEW_DELTAS_WIDTH, sel ? sel : s->attrs[THEME_NORMAL],
				text);
		}
		draw_name(s, y, c.fn_x, c.fn_w, r->name, r->only_new, r->only_old, sel);
		if (c.mod_w)
			tui_put(y, c.mod_x, c.mod_w, sel ? sel : s->attrs[THEME_MODULE], r->module);
	}
	if (!n && s->list_h > 0)
		tui_put(s->list_y, 2, COLS - 2, s->attrs[THEME_NORMAL],
		    s->filter[0] ? "no function matches the filter" : "no samples yet");
}

/* Indentation and the open/closed mark of a tree row. The indentation stops growing at a third of
 * the function column so deep stacks keep their names visible; deeper rows show their depth as a
 * number there instead (view_tree_indent()). */
static int draw_tree_prefix(const struct tui_screen *s, int y, int x, int width,
			    const struct view_tree_row *r, unsigned long sel)
{
	const char *mark = !r->has_children ? "  " : r->open ? (s->utf8 ? "▾ " : "- ")
							    : (s->utf8 ? "▸ " : "+ ");
	struct view_indent in;

	view_tree_indent(&in, r->depth, width / 3, s->utf8);
	tui_fill(y, x, in.columns, sel ? sel : s->attrs[THEME_NORMAL]);
	if (in.mark[0])
		tui_put(y, x + in.mark_x, width - in.mark_x, sel ? sel : s->attrs[THEME_TREE], in.mark);
	return in.columns + tui_put(y, x + in.columns, width - in.columns,
				sel ? sel : s->attrs[THEME_TREE], mark);
}

static void draw_tree_rows(struct tui_screen *s, enum tui_view v, const struct view_tree_row *rows)
{
	struct tui_list *l = &s->lists[v];
	size_t first = tui_first_shown(l, s->list_h), n = l->rows;
	size_t last = first + (size_t)(s->list_h > 0 ? s->list_h : 0);
	bool deltas = s->baseline && v == TUI_TREE; /* (the callers tree is another tree) */
	struct columns c = layout(n ? longest_module(&rows[0].module, sizeof(*rows), first,
						     last < n ? last : n) : 0, deltas);

	if (s->columns_y >= 0)
		draw_headings(s, s->columns_y, &c, "TOTAL%", "SELF%", count_heading(s));
	for (int i = 0; i < s->list_h && first + (size_t)i < n; i++) {
		const struct view_tree_row *r = &rows[first + (size_t)i];
		int y = s->list_y + i, used;
		unsigned long sel = first + (size_t)i == l->cursor ? s->attrs[THEME_SELECTED] : 0;
		double delta[2] = { r->total_pct - r->old_total_pct, r->self_pct - r->old_self_pct };

		tui_fill(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL]);
		tui_draw_numbers(s, y, r->total_pct, r->self_pct, r->total, deltas ? delta : NULL, sel);
		used = draw_tree_prefix(s, y, c.fn_x, c.fn_w, r, sel);
		draw_name(s, y, c.fn_x + used, c.fn_w - used, r->name, deltas && r->only_new, false, sel);
		if (c.mod_w)
			tui_put(y, c.mod_x, c.mod_w, sel ? sel : s->attrs[THEME_MODULE], r->module);
	}
	if (!n && s->list_h > 0)
		tui_put(s->list_y, 2, COLS - 2, s->attrs[THEME_NORMAL],
		    s->filter[0] && v == TUI_TREE ? "no function matches the filter" : "no samples yet");
}

static void draw_threads(struct tui_screen *s)
{
	struct tui_list *l = &s->lists[TUI_THREADS];
	size_t first = tui_first_shown(l, s->list_h);
	uint64_t all = s->shown ? s->shown->samples : 0;

	bool processes = by_process(s);

	if (s->columns_y >= 0) {
		tui_fill(s->columns_y, 0, COLS, s->attrs[THEME_COLUMNS]);
		tui_put(s->columns_y, 0, COLS, s->attrs[THEME_COLUMNS], processes
		    ? "  SAMPLES   SHARE%      PID  COMMAND                     SELF%  HOTTEST FUNCTION"
		    : "  SAMPLES   SHARE%      TID      PID  COMMAND            SELF%  HOTTEST FUNCTION");
	}
	for (int i = 0; i < s->list_h && first + (size_t)i < l->rows; i++) {
		size_t row = first + (size_t)i;
		int y = s->list_y + i;
		unsigned long sel = row == l->cursor ? s->attrs[THEME_SELECTED] : 0;
		char text[160], buf[TUI_PUT_MAX];

		tui_fill(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL]);
		if (row == 0) {
			snprintf(text, sizeof(text), "%c%8llu  %7.2f  %s", s->thread ? ' ' : '*',
				 (unsigned long long)all, all ? 100.0 : 0.0,
				 processes ? "all processes" : "all threads");
			tui_put(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL], text);
			continue;
		}
		const struct view_thread_row *t = &s->threads[row - 1];

		if (processes) /* tid is pid: the command gets the TID column's room */
			snprintf(text, sizeof(text), "%c%8llu  %7.2f %8d  %-24.24s  ",
				 s->thread == t->tid ? '*' : ' ', (unsigned long long)t->samples,
				 t->pct, (int)t->pid, t->comm);
		else
			snprintf(text, sizeof(text), "%c%8llu  %7.2f %8d %8d  %-15.15s  ",
				 s->thread == t->tid ? '*' : ' ', (unsigned long long)t->samples,
				 t->pct, (int)t->tid, (int)t->pid, t->comm);
		tui_put(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL], text);
		snprintf(text, sizeof(text), "%6.2f%%  ", t->hot_pct);
		tui_put(y, 55, 9, sel ? sel : tui_pct_attr(s, t->hot_pct), text);
		tui_put(y, 64, COLS - 64, sel ? sel : s->attrs[THEME_NORMAL], tui_shown_name(s, t->hot_name, buf));
	}
}

/* --- the bottom line and the help ------------------------------------------------------------- */

static void draw_bottom(struct tui_screen *s, int y)
{
	char text[TUI_FILTER_MAX + 128];

	if (s->editing) {
		snprintf(text, sizeof(text), " Filter: %s_", s->filter);
		tui_fill(y, 0, COLS, s->attrs[THEME_FILTER]);
		tui_put(y, 0, COLS, s->attrs[THEME_FILTER], text);
		tui_put(y, (int)strlen(text) + 2, COLS, s->attrs[THEME_FILTER],
		    "(Enter keeps it, Esc clears it)");
	} else if (s->message[0]) {
		unsigned long a = s->attrs[s->message_is_error ? THEME_WARNING : THEME_MESSAGE];

		tui_fill(y, 0, COLS, a);
		tui_put(y, 1, COLS - 1, a, s->message);
	} else {
		tui_keys_hints(s->timeline.active ? TUI_IN_TIMELINE : 1u << s->view, COLS, text,
			       sizeof(text));
		tui_fill(y, 0, COLS, s->attrs[THEME_STATUS]);
		tui_put(y, 0, COLS, s->attrs[THEME_STATUS], text);
	}
}

/* Where the help's scrolled lines stand for a box of rows lines: how many there are, how many
 * show, and the first shown, kept so that the box stays full after a resize. */
static void help_fit(struct tui_screen *s, const struct tui_help *help, int rows)
{
	int last;

	s->help_lines = help->n - TUI_HELP_HEAD;
	s->help_rows = rows > TUI_HELP_HEAD ? rows - TUI_HELP_HEAD : 0;
	last = s->help_lines > s->help_rows ? s->help_lines - s->help_rows : 0;
	if (s->help_top > last)
		s->help_top = last;
	if (s->help_top < 0)
		s->help_top = 0;
}

/* Line i of a help box of rows lines: the title (with the lines shown, when not all are), the
 * line of the help's keys, then the lines from help_top. */
static const char *help_line(const struct tui_screen *s, const struct tui_help *help, int rows,
			     int i, char *title, size_t size)
{
	if (i)
		return help->line[i < TUI_HELP_HEAD ? i : i + s->help_top];
	if (rows >= help->n)
		return help->line[0];
	snprintf(title, size, "%s  (lines %d-%d of %d)", help->line[0], s->help_top + 1,
		 s->help_top + s->help_rows, s->help_lines);
	return title;
}

/* The help from the key table, in a box in the middle; its blank first and last lines only when
 * the terminal is tall enough for them. On a terminal too short for every line, the title and
 * the line of the help's keys stay and the rest scrolls under them. */
static void draw_help(struct tui_screen *s)
{
	struct tui_help help;
	char title[TUI_HELP_WIDTH + 48];
	int rows, w = 0, pad, top, left;

	tui_keys_help(&help, COLS - 4);
	rows = help.n < LINES ? help.n : LINES;
	help_fit(s, &help, rows);
	for (int i = 0; i < rows; i++) {
		int len = (int)strlen(help_line(s, &help, rows, i, title, sizeof(title)));

		w = len > w ? len : w;
	}
	w += 4;
	pad = LINES >= rows + 2;
	top = LINES > rows + 2 * pad ? (LINES - rows - 2 * pad) / 2 : 0;
	left = COLS > w ? (COLS - w) / 2 : 0;
	for (int i = -pad; i < rows + pad && top + pad + i < LINES; i++) {
		unsigned long a = i == 0 ? s->attrs[THEME_HEADER] : s->attrs[THEME_NORMAL];

		tui_fill(top + pad + i, left, w, a);
		if (i >= 0 && i < rows)
			tui_put(top + pad + i, left + 2, w - 2, a,
			    help_line(s, &help, rows, i, title, sizeof(title)));
	}
}

/* --- the flame graph ------------------------------------------------------------------------- */

/* The heading: the selected frame's samples, the zoom, the search's share. */
static void draw_flame_heading(struct tui_screen *s, int y)
{
	const struct view_flame_frame *f = tui_flame_selected(&s->flame);
	uint64_t all = s->flame.n ? s->flame.frames[0].total : 0;
	char text[512], extra[160] = "", buf[TUI_PUT_MAX];
	int x;

	tui_fill(y, 0, COLS, s->attrs[THEME_COLUMNS]);
	if (!f)
		return;
	if (s->filter[0])
		snprintf(extra, sizeof(extra), "  match %.2f%%",
			 all ? 100.0 * (double)s->flame.matched / (double)all : 0.0);
	if (s->baseline) {
		size_t n = strlen(extra);

		snprintf(extra + n, sizeof(extra) - n, f->only_new ? "  new since baseline"
			 : "  %+.2f points since baseline", fabs(f->delta) < 0.005 ? 0.0 : f->delta);
	}
	snprintf(text, sizeof(text), " total %llu (%.2f%%)  self %llu (%.2f%%)%s%s  ",
		 (unsigned long long)f->total, all ? 100.0 * (double)f->total / (double)all : 0.0,
		 (unsigned long long)f->self, all ? 100.0 * (double)f->self / (double)all : 0.0,
		 s->flame.nzoom ? "  zoomed" : "", extra);
	x = tui_put(y, 0, COLS, s->attrs[THEME_COLUMNS], text);
	x += tui_put(y, x, COLS - x, s->attrs[THEME_COLUMN_SORTED],
		 f->func == SNAPSHOT_ROOT_FUNC ? "all" : tui_shown_name(s, f->name, buf));
	if (f->func != SNAPSHOT_ROOT_FUNC)
		x += tui_put(y, x + 2, COLS - x - 2, s->attrs[THEME_COLUMNS], f->module);
}

/* A frame's colour: its module's (one of three roles, by a hash of the name), the search's, the
 * cursor's. Against a baseline, a differential flame graph's: growth and shrinkage of half a
 * point or more in their roles, the rest in the normal one reversed (a plain block). */
static unsigned long flame_attr(const struct tui_screen *s, const struct view_flame_frame *f,
				bool selected)
{
	static const int roles[3] = { THEME_FLAME_1, THEME_FLAME_2, THEME_FLAME_3 };
	uint64_t h = 0;

	if (selected)
		return s->attrs[THEME_SELECTED];
	if (f->match)
		return s->attrs[THEME_FLAME_MATCH];
	if (s->baseline)
		return f->delta >= DIFF_SIGNIFICANT_POINTS || f->delta <= -DIFF_SIGNIFICANT_POINTS
			       ? tui_delta_attr(s, f->delta) : s->attrs[THEME_NORMAL] | A_REVERSE;
	for (const char *p = f->module; p && *p; p++)
		h = h * 31 + (unsigned char)*p;
	return s->attrs[roles[h % 3]];
}

/* Each frame: its name in its cells, the last cell left blank so that neighbours part. */
static void draw_flame(struct tui_screen *s)
{
	char buf[TUI_PUT_MAX];

	if (tui_flame_fit(&s->flame, COLS, s->list_h)) {
		s->stale = true;
		tui_screen_rebuild(s);
	}
	if (s->columns_y >= 0)
		draw_flame_heading(s, s->columns_y);
	for (size_t i = 0; i < s->flame.n; i++) {
		const struct view_flame_frame *f = &s->flame.frames[i];
		int row = (int)f->depth, y, w = f->width > 1 ? f->width - 1 : 1;
		unsigned long a = flame_attr(s, f, i == s->flame.cursor);

		if (row >= s->list_h)
			continue;
		y = s->flame.up ? s->list_y + s->list_h - 1 - row : s->list_y + row;
		tui_fill(y, f->x, w, a);
		tui_put(y, f->x, w, a, f->func == SNAPSHOT_ROOT_FUNC ? "all" : tui_shown_name(s, f->name, buf));
	}
	if (!s->flame.n && s->list_h > 0)
		tui_put(s->list_y, 2, COLS - 2, s->attrs[THEME_NORMAL], "no samples yet");
}

/* --- the frame -------------------------------------------------------------------------------- */

static void draw_rows(struct tui_screen *s)
{
	switch (s->view) {
	case TUI_TOP:
		draw_top(s);
		break;
	case TUI_TREE:
		draw_tree_rows(s, TUI_TREE, s->tree);
		break;
	case TUI_CALLERS:
		draw_tree_rows(s, TUI_CALLERS, s->callers);
		break;
	case TUI_LINES:
		tui_draw_lines(s);
		break;
	case TUI_FLAME:
		draw_flame(s);
		break;
	default:
		draw_threads(s);
		break;
	}
}

void tui_draw(struct tui_screen *s)
{
	int h = LINES, y = 0, bottom = h >= 3 ? h - 1 : h;
	bool traced;

	erase();
	if (h >= 1)
		draw_title(s, y++);
	if (h >= 7)
		draw_counters(s, y++);
	s->timeline.w = COLS > 2 ? COLS - 2 : 1;
	s->timeline.y = s->live && s->live->nspans && (h >= 12 || (s->timeline.active && h >= 4)) ? y++ : -1;
	traced = s->timeline.y >= 0 && h >= 16; /* its row stays while nothing is traced yet */
	if (s->timeline.y >= 0)
		draw_timeline(s, s->timeline.y, traced);
	y += traced;
	s->tabs_y = h >= 4 ? y++ : -1;
	if (s->tabs_y >= 0)
		draw_tabs(s, s->tabs_y);
	s->columns_y = h >= 5 ? y++ : -1;
	s->list_y = y;
	s->list_h = bottom > y ? bottom - y : 0;
	memset(s->column_x, 0, sizeof(s->column_x));
	draw_rows(s);
	if (h >= 3)
		draw_bottom(s, h - 1);
	if (s->help)
		draw_help(s);
	attrset(A_NORMAL);
	wnoutrefresh(stdscr);
	doupdate();
}
