/* tui_mouse.c — clicks and the wheel on the screen: tabs, column headings, rows, the timeline,
 * the Flame view's frames, as the geometry of the last frame drawn places them. */
#include "proftop/ui/tui_screen_internal.h"

#include "proftop/diff.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_lines.h"
#include "proftop/util.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

static void click_heading(struct tui_screen *s, int x)
{
	for (int c = 0; c < 7; c++) {
		if (x >= s->column_x[c] && x < s->column_x[c + 1] && s->column_x[c + 1] > s->column_x[c]) {
			if ((int)s->column_sort[c] >= 0) {
				s->sort = s->column_sort[c];
				s->stale = true;
			}
			return;
		}
	}
}

/* A click on a frame selects it; on the selected one, zooms into it (a double click). */
static void flame_click(struct tui_screen *s, int row, int x)
{
	const struct view_flame_frame *before = tui_flame_selected(&s->flame);
	uint64_t path = before ? before->path : 0;
	unsigned depth = (unsigned)(s->flame.up ? s->list_h - 1 - row : row);

	tui_screen_rebuild(s);
	if (tui_flame_select_at(&s->flame, depth, x) && before &&
	    tui_flame_selected(&s->flame)->path == path)
		s->stale |= tui_flame_zoom(&s->flame);
}

enum tui_action tui_screen_click(struct tui_screen *s, int y, int x, bool wheel_up, bool wheel_down)
{
	struct tui_list *l = tui_screen_list(s);

	s->message[0] = 0;
	if (s->help && (wheel_up || wheel_down)) {
		tui_screen_help_scroll(s, wheel_up ? -3 : 3);
		return TUI_ACT_NONE;
	}
	if (s->help) {
		s->help = false;
		return TUI_ACT_NONE;
	}
	if (wheel_up || wheel_down) {
		if (s->view != TUI_FLAME)
			tui_screen_move_cursor(s, wheel_up ? -3 : 3);
		return TUI_ACT_NONE;
	}
	if (y == s->timeline.y) {
		tui_screen_take_result(s, tui_timeline_click(&s->timeline, s->live, x - 1));
	} else if (y == s->tabs_y) {
		for (int v = 0; v < TUI_NVIEWS; v++)
			if (x >= s->tab_x[v] && x < s->tab_x[v + 1])
				tui_screen_switch_view(s, v);
	} else if (y == s->columns_y && s->view == TUI_TOP) {
		click_heading(s, x);
	} else if (s->view == TUI_FLAME && y >= s->list_y && y < s->list_y + s->list_h) {
		flame_click(s, y - s->list_y, x);
	} else if (y >= s->list_y && y < s->list_y + s->list_h) {
		size_t row = l->top + (size_t)(y - s->list_y);

		if (row >= l->rows)
			return TUI_ACT_NONE;
		if (row == l->cursor && tui_screen_is_tree_view(s))
			tui_screen_toggle_node(s, 0);
		tui_screen_select_row(s, row);
	}
	return TUI_ACT_NONE;
}
