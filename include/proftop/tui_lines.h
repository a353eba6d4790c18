/* tui_lines.h — the rows of the screen's Lines view (tui_lines.c): a function's source lines with
 * their samples, and with the disassembly on each line's instructions under it. */
#ifndef PROFTOP_TUI_LINES_H
#define PROFTOP_TUI_LINES_H

#include "proftop/tui_screen.h"

#include <stddef.h>
#include <stdint.h>

/* The rows of lines_func again, in lines_rows, with lines_order its lines by heat, from the shown
 * snapshot, or its sites in the subtree under scope (a thread's root; SNAPSHOT_NO_NODE: all),
 * which becomes lines_src. Returns how many rows. */
size_t tui_lines_build(struct tui_screen *screen, uint32_t scope);
/* A source line's key: its file and number. */
uint64_t tui_lines_line_key(const struct annotate_line *line);
/* A row's key: its line's file and number, or its instruction's address. */
uint64_t tui_lines_row_key(const struct tui_screen *screen, size_t row);
/* The row of line (its own, not its instructions'). */
size_t tui_lines_row_of_line(const struct tui_screen *screen, size_t line);
void tui_lines_free(struct tui_screen *screen);

#endif
