/* tui_timeline.h — the screen's timeline (tui_timeline.c): the run's samples per second as a row
 * of bars under the header, and the stretch of the run the views show.
 *
 * The strip spans the whole run, a column per second while it fits and a few seconds per column
 * once it does not. The stretch is the whole run, the window preset (the last --window seconds,
 * moving with the run) or fixed seconds [from, to). The stretch and the timeline's cursor are
 * kept in seconds, so they stay put while the columns rescale. */
#ifndef PROFTOP_TUI_TIMELINE_H
#define PROFTOP_TUI_TIMELINE_H

#include "proftop/tui_screen.h"

#include <stdbool.h>
#include <stdint.h>

struct tui_timeline_scale {
	uint64_t run_s;        /* seconds of the run so far (at least 1) */
	uint64_t per_column;   /* seconds per column */
	int columns;           /* columns the run takes */
};

void tui_timeline_scale(const struct tui_screen *screen, struct tui_timeline_scale *scale);
/* Samples per column over the scale's columns, into samples[0..columns) (a stretch the history
 * merged coarser spreads evenly over its seconds): all of them, or with traced those through the
 * traced function. */
void tui_timeline_columns(const struct tui_screen *screen, const struct tui_timeline_scale *scale,
			  bool traced, double *samples);
/* The seconds [*from_s, *to_s) the stretch takes on the strip now; false for the whole run. */
bool tui_timeline_bounds(const struct tui_screen *screen, uint64_t *from_s, uint64_t *to_s);
/* What the session is to select for the screen's stretch; false: the whole run (none). */
bool tui_timeline_range(const struct tui_screen *screen, struct snapshot_range *range);

/* Key handlers (the key table's): each changes the cursor or the stretch. */
void tui_timeline_enter(struct tui_screen *screen, int unused);   /* t: keys go to the timeline */
void tui_timeline_leave(struct tui_screen *screen, int unused);
void tui_timeline_cursor(struct tui_screen *screen, int columns); /* INT_MIN/INT_MAX: the ends */
void tui_timeline_mark(struct tui_screen *screen, int end);       /* 0: start, 1: end here */
void tui_timeline_shift(struct tui_screen *screen, int columns);
void tui_timeline_widen(struct tui_screen *screen, int columns);  /* on each side; < 0 narrows */
void tui_timeline_window(struct tui_screen *screen, int unused);  /* the window preset / all */
void tui_timeline_all(struct tui_screen *screen, int unused);
/* A click at column x of the strip puts the cursor there. */
void tui_timeline_click(struct tui_screen *screen, int x);

#endif
