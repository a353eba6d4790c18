/* tui_screen_internal.h — what the screen's files share (tui_screen.c: state and keys,
 * tui_rows.c: the rows, tui_mouse.c: clicks): the screen's own helpers. Not for other modules. */
#ifndef PROFTOP_TUI_SCREEN_INTERNAL_H
#define PROFTOP_TUI_SCREEN_INTERNAL_H

#include "proftop/ui/tui_screen.h"

void tui_screen_help_scroll(struct tui_screen *s, int lines);
bool tui_screen_is_tree_view(const struct tui_screen *s);
struct tui_list *tui_screen_list(struct tui_screen *s);
void tui_screen_move_cursor(struct tui_screen *s, long delta);
void tui_screen_select_row(struct tui_screen *s, size_t row);
void tui_screen_switch_view(struct tui_screen *s, int v);
void tui_screen_take_result(struct tui_screen *s, struct tui_result r);
void tui_screen_toggle_node(struct tui_screen *s, int unused);
uint64_t tui_screen_row_key(const struct tui_screen *s, enum tui_view v, size_t i);
uint32_t tui_screen_scope_root(const struct tui_screen *s);

#endif
