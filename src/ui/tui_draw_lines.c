/* tui_draw_lines.c — the Lines view's part of the frame: one function's source lines (or
 * instructions) with their samples, under a heading naming the file, read as annotate.h gives
 * them (tui_lines.c keeps its rows and cursor). */
#include "proftop/ui/tui_paint.h"

#include "proftop/annotate.h"
#include "proftop/disasm.h"
#include "proftop/snapshot.h"
#include "proftop/ui/tui_lines.h"
#include "proftop/util.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
}

/* "lines.c:14": the file's basename (the heading of batch's annotation names it whole). */
static void line_place(const struct annotate_line *l, char *buf, size_t size)
{
	const char *base = l->file ? strrchr(l->file, '/') : NULL;

	if (!l->file)
		snprintf(buf, size, "[no line]");
	else
		snprintf(buf, size, "%s:%u", base ? base + 1 : l->file, l->line);
}

/* The width of the place column: its longest entry on screen, 4 to 40 columns. */
static int place_width(const struct tui_screen *s, size_t first, size_t last)
{
	int w = 4;

	for (size_t i = first; i < last && i < s->lists[TUI_LINES].rows; i++) {
		const struct tui_lines_row *r = &s->annotated.rows[i];
		char place[TUI_PUT_MAX], shown[TUI_PUT_MAX];

		if (r->insn != TUI_NO_INSN || r->line == TUI_NO_LINE)
			continue;
		line_place(&s->annotated.lines.lines[r->line], place, sizeof(place));
		util_visible(shown, sizeof(shown), place);
		if ((int)strlen(shown) > w)
			w = (int)strlen(shown);
	}
	return w > 40 ? 40 : w;
}

/* The function, its module and samples, the basis of the percentages, and whether the lines
 * have totals (a window's or a thread's count only where samples were taken). */
static void draw_lines_heading(struct tui_screen *s, int y, const struct snapshot *src)
{
	const struct snapshot_func *f = s->lines_func < src->nfuncs ? &src->funcs[s->lines_func] : NULL;
	unsigned long a = s->attrs[THEME_NORMAL] | A_BOLD;
	char text[TUI_PUT_MAX], buf[TUI_PUT_MAX];

	snprintf(text, sizeof(text), " %s  %s  self %llu  total %llu  %% of %s%s",
		 f ? tui_shown_name(s, f->name, buf) : "?",
		 f ? f->module : "", (unsigned long long)s->annotated.lines.self,
		 (unsigned long long)s->annotated.lines.total,
		 s->lines_of_profile ? "the whole profile" : "the function",
		 !src->sites_self_only ? "" : s->thread ? "  (this thread's self samples: no line totals)"
							 : "  (the window's self samples: no line totals)");
	tui_fill(y, 0, COLS, a);
	tui_put(y, 0, COLS, a, text);
}

static void draw_line_row(struct tui_screen *s, int y, const struct annotate_line *l, int place_w,
			  uint64_t samples, unsigned long sel, const char *binary)
{
	bool all = s->lines_of_profile, self_only = tui_screen_lines_snapshot(s)->sites_self_only;
	const char *why = NULL, *text = annotate_source_line(s->annotated.sources, l->file, l->line,
							     binary, &s->annotated.readers, &why);
	unsigned long a = sel ? sel : s->attrs[THEME_NORMAL];
	int x = VIEW_CELLS_WIDTH + place_w + 2;
	char place[TUI_PUT_MAX];

	tui_fill(y, 0, COLS, a);
	tui_draw_line_numbers(s, y, pct(l->self, all ? samples : s->annotated.lines.self),
			      self_only ? -1 : pct(l->total, all ? samples : s->annotated.lines.total),
			      l->self, sel);
	line_place(l, place, sizeof(place));
	tui_put(y, VIEW_CELLS_WIDTH, place_w, sel ? sel : s->attrs[THEME_MODULE], place);
	if (text) {
		char *expanded = util_expand_tabs(text);

		tui_put(y, x, COLS - x, a, expanded);
		free(expanded);
	} else if (l->file) {
		snprintf(place, sizeof(place), "(source %s)", why);
		tui_put(y, x, COLS - x, sel ? sel : s->attrs[THEME_COLD], place);
	}
}

/* An instruction under its line: the cells of its samples (blank without any), its address and
 * text, as batch --asm prints them. */
static void draw_insn_row(struct tui_screen *s, int y, size_t i, uint64_t samples, unsigned long sel)
{
	const struct disasm_insn *insn = &s->annotated.code.insns[i];
	bool all = s->lines_of_profile, self_only = tui_screen_lines_snapshot(s)->sites_self_only;
	int x = VIEW_CELLS_WIDTH + 4, used;
	uint64_t self, total;
	char addr[32];

	tui_fill(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL]);
	annotate_code_samples(&s->annotated.code, i, &self, &total);
	if (self || total)
		tui_draw_numbers(s, y, pct(self, all ? samples : s->annotated.lines.self),
			     self_only ? -1 : pct(total, all ? samples : s->annotated.lines.total), self, NULL,
			     sel);
	snprintf(addr, sizeof(addr), "0x%llx  ", (unsigned long long)insn->addr);
	used = tui_put(y, x, COLS - x, sel ? sel : s->attrs[THEME_MODULE], addr);
	tui_put(y, x + used, COLS - x - used, sel ? sel : s->attrs[THEME_NORMAL], insn->text);
}

static void draw_lines_row(struct tui_screen *s, int y, size_t row, int place_w, uint64_t samples,
			   const char *binary)
{
	const struct tui_lines_row *r = &s->annotated.rows[row];
	unsigned long sel = row == s->lists[TUI_LINES].cursor ? s->attrs[THEME_SELECTED] : 0;

	if (r->insn != TUI_NO_INSN) {
		draw_insn_row(s, y, r->insn, samples, sel);
	} else if (r->line != TUI_NO_LINE) {
		draw_line_row(s, y, &s->annotated.lines.lines[r->line], place_w, samples, sel, binary);
	} else {
		tui_fill(y, 0, COLS, sel ? sel : s->attrs[THEME_NORMAL]);
		tui_put(y, VIEW_CELLS_WIDTH, COLS - VIEW_CELLS_WIDTH, sel ? sel : s->attrs[THEME_MODULE],
		    "[instructions without a line]");
	}
}

/* A line of the list area taken by the heading or a note: the rows start below it. */
static int take_line(struct tui_screen *s)
{
	if (s->list_h <= 0)
		return -1;
	s->list_h--;
	return s->list_y++;
}

void tui_draw_lines(struct tui_screen *s)
{
	const struct snapshot *src = tui_screen_lines_snapshot(s);
	struct tui_list *l = &s->lists[TUI_LINES];
	const char *why = annotate_why_no_lines(&s->annotated.lines), *binary;
	struct view_cells cells;
	size_t first, n = l->rows;
	int y, place_w, columns_y;
	char note[TUI_PUT_MAX];

	if (!src || !s->annotated.sources)
		return;
	binary = annotate_binary(src, s->lines_func);
	/* The heading where the other views have their column headings, which come below it. */
	if ((y = s->columns_y >= 0 ? s->columns_y : take_line(s)) >= 0)
		draw_lines_heading(s, y, src);
	if (why && (y = take_line(s)) >= 0) {
		snprintf(note, sizeof(note), "no source lines: %s", why);
		tui_put(y, 2, COLS - 2, s->attrs[THEME_WARNING], note);
	}
	if (s->lines_asm && s->annotated.code_why && (y = take_line(s)) >= 0) {
		const struct snapshot_func *f = &src->funcs[s->lines_func];

		snprintf(note, sizeof(note), "no instructions: %s: %s", f->path ? f->path : f->name,
			 s->annotated.code_why);
		tui_put(y, 2, COLS - 2, s->attrs[THEME_WARNING], note);
	}
	columns_y = s->columns_y >= 0 ? take_line(s) : -1;
	if (s->lines_center && s->list_h > 0) {
		l->top = l->cursor > (size_t)s->list_h / 2 ? l->cursor - (size_t)s->list_h / 2 : 0;
		s->lines_center = false;
	}
	first = tui_first_shown(l, s->list_h);
	place_w = place_width(s, first, first + (size_t)(s->list_h > 0 ? s->list_h : 0));
	if (columns_y >= 0) {
		view_cell_headings(&cells, "SELF%", "TOTAL%", view_line_count_heading(src));
		tui_fill(columns_y, 0, COLS, s->attrs[THEME_COLUMNS]);
		for (int i = 0; i < VIEW_NCELLS; i++)
			tui_put(columns_y, cells.x[i], cells.width[i], s->attrs[THEME_COLUMNS], cells.text[i]);
		tui_put(columns_y, VIEW_CELLS_WIDTH, place_w, s->attrs[THEME_COLUMNS], "LINE");
		tui_put(columns_y, VIEW_CELLS_WIDTH + place_w + 2, COLS, s->attrs[THEME_COLUMNS], "SOURCE");
	}
	for (int i = 0; i < s->list_h && first + (size_t)i < n; i++)
		draw_lines_row(s, s->list_y + i, first + (size_t)i, place_w, src->samples, binary);
	if (!n && s->list_h > 0)
		tui_put(s->list_y, 2, COLS - 2, s->attrs[THEME_NORMAL], "no samples of it yet");
}
