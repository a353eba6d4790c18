/* tui_timeline.h — the screen's timeline (tui_timeline.c): the run's samples per second as a row
 * of bars under the header, and the stretch of the run the views show.
 *
 * The strip spans the whole run, a column per second while it fits and a few seconds per column
 * once it does not. The stretch is the whole run, the window preset (the last --window seconds,
 * moving with the run) or fixed seconds [from, to). The stretch and the timeline's cursor are
 * kept in seconds, so they stay put while the columns rescale. */
#ifndef PROFTOP_TUI_TIMELINE_H
#define PROFTOP_TUI_TIMELINE_H

#include "proftop/snapshot.h"
#include "proftop/ui/tui_result.h"

#include <stdbool.h>
#include <stdint.h>

/* The stretch of the run shown and the timeline's cursor: the screen's, this module's to change
 * (through the handlers below, whose results the screen acts on). */
struct tui_timeline {
	enum tui_stretch {
		TUI_STRETCH_ALL,       /* every sample since the start */
		TUI_STRETCH_WINDOW,    /* the last window_s seconds, moving with the run */
		TUI_STRETCH_FIXED,     /* the seconds [from_s, to_s) of the run */
	} stretch;
	uint64_t from_s, to_s;
	bool changed;          /* since the loop last asked the session for it */
	double window_s;       /* --window */
	bool active;           /* `t`: the timeline's keys come first */
	bool placed;           /* the cursor was put somewhere */
	uint64_t cursor_s;
	int y, w;              /* where the strip was drawn (-1: not) and its columns */
};

struct tui_timeline_scale {
	uint64_t run_s;        /* seconds of the run so far (at least 1) */
	uint64_t per_column;   /* seconds per column */
	int columns;           /* columns the run takes */
};

/* The strip's scale for the newest snapshot live (NULL: none yet). */
void tui_timeline_scale(const struct tui_timeline *tl, const struct snapshot *live,
			struct tui_timeline_scale *scale);
/* Samples per column over the scale's columns, into samples[0..columns) (a stretch the history
 * merged coarser spreads evenly over its seconds): all of them, or with traced those through the
 * traced function. */
void tui_timeline_columns(const struct snapshot *live, const struct tui_timeline_scale *scale,
			  bool traced, double *samples);
/* The seconds [*from_s, *to_s) the stretch takes on the strip now; false for the whole run. */
bool tui_timeline_bounds(const struct tui_timeline *tl, const struct snapshot *live,
			 uint64_t *from_s, uint64_t *to_s);
/* What the session is to select for the screen's stretch; false: the whole run (none). */
bool tui_timeline_range(const struct tui_timeline *tl, struct snapshot_range *range);

/* Key handlers: each changes the cursor or the stretch, and says what the screen is to say. */
typedef struct tui_result tui_timeline_handler(struct tui_timeline *tl,
					       const struct snapshot *live, int arg);
tui_timeline_handler tui_timeline_enter;   /* t: keys go to the timeline */
tui_timeline_handler tui_timeline_leave;
tui_timeline_handler tui_timeline_cursor;  /* by arg columns; INT_MIN/INT_MAX: the ends */
tui_timeline_handler tui_timeline_mark;    /* 0: the stretch starts, 1: ends at the cursor */
tui_timeline_handler tui_timeline_shift;
tui_timeline_handler tui_timeline_widen;   /* on each side; < 0 narrows */
tui_timeline_handler tui_timeline_window;  /* the window preset / all */
tui_timeline_handler tui_timeline_all;
tui_timeline_handler tui_timeline_click;   /* at column arg */

#endif
