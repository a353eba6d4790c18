/* tui_paint.c — the drawing primitives of the TUI's frame (tui_paint.h): text clipped to the
 * screen in visible form, blank runs, the colours of percentages and changes, a row's number
 * cells, and the scrolling of a list. */
#include "proftop/ui/tui_paint.h"

#include "proftop/diff.h"
#include "proftop/util.h"
#include "proftop/view_name.h"

#include <curses.h>

#define HOT_PCT 10.0
#define WARM_PCT 1.0

/* Bytes of text that fill at most width columns (a UTF-8 sequence counts as one column). */
static int fit(const char *text, int width, int *columns)
{
	int bytes = 0, cols = 0;

	while (text[bytes] && cols < width) {
		bytes++;
		while ((text[bytes] & 0xc0) == 0x80)
			bytes++;
		cols++;
	}
	*columns = cols;
	return bytes;
}

/* Text at (y, x), clipped to width columns and to the screen; returns the columns used. Names
 * come from the target: the text is drawn in visible form (util.h), as batch mode prints it, so
 * what the screen shows is what fit() counted and no byte of it acts on the terminal. */
int tui_put(int y, int x, int width, unsigned long attr, const char *text)
{
	char shown[TUI_PUT_MAX];
	int cols, bytes;

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return 0;
	if (width > COLS - x)
		width = COLS - x;
	if (width <= 0)
		return 0;
	util_visible(shown, sizeof(shown), text);
	bytes = fit(shown, width, &cols);
	attrset((attr_t)attr);
	mvaddnstr(y, x, shown, bytes);
	return cols;
}

void tui_fill(int y, int x, int width, unsigned long attr)
{
	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	if (width > COLS - x)
		width = COLS - x;
	if (width <= 0)
		return;
	attrset((attr_t)attr);
	mvhline(y, x, ' ', width);
}

/* A function's name as the screen shows it (the p key): whole, or shortened into buf. */
const char *tui_shown_name(const struct tui_screen *s, const char *name, char buf[TUI_PUT_MAX])
{
	return view_name(name, s->names, buf, TUI_PUT_MAX);
}

unsigned long tui_pct_attr(const struct tui_screen *s, double pct)
{
	return s->attrs[pct >= HOT_PCT ? THEME_HOT : pct >= WARM_PCT ? THEME_WARM : THEME_COLD];
}

unsigned long tui_delta_attr(const struct tui_screen *s, double delta)
{
	if (delta >= DIFF_SIGNIFICANT_POINTS)
		return s->attrs[THEME_DIFF_GROWN];
	if (delta <= -DIFF_SIGNIFICANT_POINTS)
		return s->attrs[THEME_DIFF_SHRUNK];
	return s->attrs[THEME_NORMAL];
}

/* A source line's row: its numbers, the count as view_line_count_cell() writes it. */
void tui_draw_line_numbers(const struct tui_screen *s, int y, double a, double b, uint64_t n,
			   unsigned long sel)
{
	struct view_cells c;

	view_cells(&c, a, b, n);
	if (s->shown)
		view_line_count_cell(&c, tui_screen_lines_snapshot(s), n);
	for (int i = 0; i < VIEW_NCELLS; i++)
		tui_put(y, c.x[i], c.width[i],
			sel ? sel : i == VIEW_CELL_COUNT ? s->attrs[THEME_NORMAL]
			: tui_pct_attr(s, i == VIEW_CELL_FIRST ? a : b), c.text[i]);
}

/* A row's numbers: two percentages, a count, and with delta (NULL: none) their two changes. */
void tui_draw_numbers(const struct tui_screen *s, int y, double a, double b, uint64_t n,
			 const double *delta, unsigned long sel)
{
	struct view_cells c;

	view_cells(&c, a, b, n);
	if (s->shown)
		view_count_cell(&c, s->shown, n);
	if (delta)
		view_delta_cells(&c, delta[0], delta[1]);
	for (int i = 0; i < (delta ? VIEW_NCELLS_DIFF : VIEW_NCELLS); i++) {
		unsigned long attr = i == VIEW_CELL_COUNT ? s->attrs[THEME_NORMAL]
				     : i >= VIEW_CELL_DELTA_FIRST
					     ? tui_delta_attr(s, delta[i - VIEW_CELL_DELTA_FIRST])
					     : tui_pct_attr(s, i == VIEW_CELL_FIRST ? a : b);

		tui_put(y, c.x[i], c.width[i], sel ? sel : attr, c.text[i]);
	}
}

/* The first row shown: the cursor stays on screen, scrolling as little as possible. */
size_t tui_first_shown(struct tui_list *l, int height)
{
	size_t h = height > 0 ? (size_t)height : 1;

	if (l->cursor < l->top)
		l->top = l->cursor;
	else if (l->cursor >= l->top + h)
		l->top = l->cursor - h + 1;
	if (l->top + h > l->rows)
		l->top = l->rows > h ? l->rows - h : 0;
	return l->top;
}
