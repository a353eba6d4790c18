/* tui_paint.h — drawing primitives shared by the files that draw the TUI's frame (tui_draw.c,
 * tui_draw_lines.c). Curses is theirs alone. Every string goes through tui_put(), which clips it
 * to the screen and draws it in visible form. */
#ifndef PROFTOP_TUI_PAINT_H
#define PROFTOP_TUI_PAINT_H

#include "proftop/ui/tui_screen.h"

#include <stddef.h>
#include <stdint.h>

/* Bytes of one tui_put(): 1000 columns of 4-byte characters. */
#define TUI_PUT_MAX 4096

/* Text at (y, x), clipped to width columns and to the screen; returns the columns used. */
int tui_put(int y, int x, int width, unsigned long attr, const char *text);
void tui_fill(int y, int x, int width, unsigned long attr);
/* A function's name as the screen shows it (the p key): whole, or shortened into buf. */
const char *tui_shown_name(const struct tui_screen *s, const char *name, char buf[TUI_PUT_MAX]);
unsigned long tui_pct_attr(const struct tui_screen *s, double pct);
/* A change's colour: grown or shrunk past DIFF_SIGNIFICANT_POINTS, else plain. */
unsigned long tui_delta_attr(const struct tui_screen *s, double delta);
/* A row's numbers: two percentages, a count, and with delta (NULL: none) their two changes. */
void tui_draw_line_numbers(const struct tui_screen *s, int y, double a, double b, uint64_t n,
			   unsigned long sel);
void tui_draw_numbers(const struct tui_screen *s, int y, double a, double b, uint64_t n,
		      const double *delta, unsigned long sel);
/* The first row shown: the cursor stays on screen, scrolling as little as possible. */
size_t tui_first_shown(struct tui_list *l, int height);

/* The Lines view's rows (tui_draw_lines.c). */
void tui_draw_lines(struct tui_screen *s);

#endif
