/* tui_timeline.c — the timeline's columns, its cursor and the stretch of the run the screen
 * shows (tui_timeline.h). No curses here: tui_draw.c draws the strip. */
#include "proftop/tui_timeline.h"

#include "proftop/snapshot.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define DEFAULT_WIDTH 78

void tui_timeline_scale(const struct tui_screen *s, struct tui_timeline_scale *scale)
{
	const struct snapshot *p = s->live;
	uint64_t run = p ? (p->elapsed_ns + 999999999u) / 1000000000u : 0;
	uint64_t width = s->timeline_w > 0 ? (uint64_t)s->timeline_w : DEFAULT_WIDTH;

	/* The newest second counts as soon as it has a sample. */
	if (p && p->nspans && p->spans[p->nspans - 1].end_s > run)
		run = p->spans[p->nspans - 1].end_s;
	if (!run)
		run = 1;
	scale->run_s = run;
	scale->per_column = (run + width - 1) / width;
	scale->columns = (int)((run + scale->per_column - 1) / scale->per_column);
}

void tui_timeline_columns(const struct tui_screen *s, const struct tui_timeline_scale *scale,
			  bool traced, double *samples)
{
	const struct snapshot *p = s->live;

	/* What is in use is a level, not a count: a column of several seconds shows its highest. */
	bool level = p && snapshot_level(p);

	memset(samples, 0, (size_t)scale->columns * sizeof(*samples));
	for (size_t i = 0; p && i < p->nspans; i++) {
		const struct snapshot_span *span = &p->spans[i];
		double per_second = (double)(traced ? span->traced : span->samples) /
				    (double)(span->end_s - span->start_s);
		uint64_t at = span->start_s;

		while (at < span->end_s) {
			uint64_t column = at / scale->per_column;
			uint64_t end = (column + 1) * scale->per_column;

			if (column >= (uint64_t)scale->columns)
				break;
			if (end > span->end_s)
				end = span->end_s;
			if (level && samples[column] < (double)span->samples)
				samples[column] = (double)span->samples;
			else if (!level)
				samples[column] += per_second * (double)(end - at);
			at = end;
		}
	}
}

bool tui_timeline_bounds(const struct tui_screen *s, uint64_t *from_s, uint64_t *to_s)
{
	struct tui_timeline_scale scale;
	uint64_t window;

	switch (s->stretch) {
	case TUI_STRETCH_FIXED:
		*from_s = s->stretch_from_s;
		*to_s = s->stretch_to_s;
		return true;
	case TUI_STRETCH_WINDOW:
		tui_timeline_scale(s, &scale);
		window = (uint64_t)ceil(s->window_s);
		*to_s = scale.run_s;
		*from_s = scale.run_s > window ? scale.run_s - window : 0;
		return true;
	default:
		return false;
	}
}

bool tui_timeline_range(const struct tui_screen *s, struct snapshot_range *range)
{
	memset(range, 0, sizeof(*range));
	switch (s->stretch) {
	case TUI_STRETCH_FIXED:
		range->from_s = s->stretch_from_s;
		range->to_s = s->stretch_to_s;
		return true;
	case TUI_STRETCH_WINDOW:
		range->last_ns = (uint64_t)llround(s->window_s * 1e9);
		return true;
	default:
		return false;
	}
}

/* The message line says where the cursor and the stretch are. */
static void tell(struct tui_screen *s)
{
	uint64_t from, to;

	if (!tui_timeline_bounds(s, &from, &to))
		tui_screen_message(s, false, "timeline: cursor at %llus; the whole run shown "
				   "([ ] mark a stretch)", (unsigned long long)s->timeline_cursor_s);
	else if (s->stretch == TUI_STRETCH_WINDOW)
		tui_screen_message(s, false, "timeline: cursor at %llus; the last %.0f seconds shown",
				   (unsigned long long)s->timeline_cursor_s, s->window_s);
	else
		tui_screen_message(s, false, "timeline: cursor at %llus; seconds %llu-%llu shown",
				   (unsigned long long)s->timeline_cursor_s, (unsigned long long)from,
				   (unsigned long long)to);
}

/* The stretch changed: the loop asks the session for it. */
static void changed(struct tui_screen *s)
{
	s->stretch_changed = true;
	tell(s);
}

void tui_timeline_enter(struct tui_screen *s, int unused)
{
	struct tui_timeline_scale scale;

	(void)unused;
	tui_timeline_scale(s, &scale);
	if (!s->live || !s->live->nspans) {
		tui_screen_message(s, true, "no timeline: this profile keeps no history, or no "
				   "samples yet");
		return;
	}
	s->timeline = true;
	if (!s->timeline_placed || s->timeline_cursor_s >= scale.run_s)
		s->timeline_cursor_s = scale.run_s - 1;
	s->timeline_placed = true;
	tell(s);
}

void tui_timeline_leave(struct tui_screen *s, int unused)
{
	(void)unused;
	s->timeline = false;
	s->message[0] = 0;
}

/* The first second of the cursor's column, moved by columns (clamped to the run). */
static uint64_t column_start(const struct tui_timeline_scale *scale, uint64_t second, long columns)
{
	long column = (long)(second / scale->per_column) + columns;

	if (column < 0)
		column = 0;
	if (column >= scale->columns)
		column = scale->columns - 1;
	return (uint64_t)column * scale->per_column;
}

void tui_timeline_cursor(struct tui_screen *s, int columns)
{
	struct tui_timeline_scale scale;

	tui_timeline_scale(s, &scale);
	if (columns == INT_MIN)
		s->timeline_cursor_s = 0;
	else if (columns == INT_MAX)
		s->timeline_cursor_s = scale.run_s - 1;
	else
		s->timeline_cursor_s = column_start(&scale, s->timeline_cursor_s, columns);
	tell(s);
}

/* A stretch that is fixed from now on: the window's seconds as they are now, or the whole run. */
static void fix(struct tui_screen *s, const struct tui_timeline_scale *scale)
{
	uint64_t from, to;

	if (!tui_timeline_bounds(s, &from, &to)) {
		from = 0;
		to = scale->run_s;
	}
	s->stretch = TUI_STRETCH_FIXED;
	s->stretch_from_s = from;
	s->stretch_to_s = to;
}

void tui_timeline_mark(struct tui_screen *s, int end)
{
	struct tui_timeline_scale scale;
	uint64_t start;

	tui_timeline_scale(s, &scale);
	start = column_start(&scale, s->timeline_cursor_s, 0);
	fix(s, &scale);
	if (!end) {
		s->stretch_from_s = start;
		if (s->stretch_to_s <= start)
			s->stretch_to_s = start + scale.per_column;
	} else {
		s->stretch_to_s = start + scale.per_column;
		if (s->stretch_from_s >= s->stretch_to_s)
			s->stretch_from_s = start;
	}
	changed(s);
}

void tui_timeline_shift(struct tui_screen *s, int columns)
{
	struct tui_timeline_scale scale;
	uint64_t step, span;

	tui_timeline_scale(s, &scale);
	fix(s, &scale);
	step = (uint64_t)(columns < 0 ? -columns : columns) * scale.per_column;
	span = s->stretch_to_s - s->stretch_from_s;
	if (columns < 0) {
		s->stretch_from_s = s->stretch_from_s > step ? s->stretch_from_s - step : 0;
	} else {
		s->stretch_from_s += step;
		if (s->stretch_from_s + span > scale.run_s)
			s->stretch_from_s = scale.run_s > span ? scale.run_s - span : 0;
	}
	s->stretch_to_s = s->stretch_from_s + span;
	s->timeline_cursor_s = s->stretch_from_s;
	changed(s);
}

void tui_timeline_widen(struct tui_screen *s, int columns)
{
	struct tui_timeline_scale scale;
	uint64_t step;

	tui_timeline_scale(s, &scale);
	fix(s, &scale);
	step = (uint64_t)(columns < 0 ? -columns : columns) * scale.per_column;
	if (columns > 0) {
		s->stretch_from_s = s->stretch_from_s > step ? s->stretch_from_s - step : 0;
		s->stretch_to_s = s->stretch_to_s + step < scale.run_s ? s->stretch_to_s + step
								    : scale.run_s;
	} else if (s->stretch_to_s - s->stretch_from_s > 2 * step) { /* a column stays at least */
		s->stretch_from_s += step;
		s->stretch_to_s -= step;
	}
	changed(s);
}

void tui_timeline_window(struct tui_screen *s, int unused)
{
	(void)unused;
	s->stretch = s->stretch == TUI_STRETCH_WINDOW ? TUI_STRETCH_ALL : TUI_STRETCH_WINDOW;
	s->stretch_changed = true;
	if (s->timeline)
		tell(s);
}

void tui_timeline_all(struct tui_screen *s, int unused)
{
	(void)unused;
	s->stretch = TUI_STRETCH_ALL;
	changed(s);
}

void tui_timeline_click(struct tui_screen *s, int x)
{
	struct tui_timeline_scale scale;

	tui_timeline_scale(s, &scale);
	if (x < 0 || x >= scale.columns || !s->live || !s->live->nspans)
		return;
	s->timeline = true;
	s->timeline_placed = true;
	s->timeline_cursor_s = (uint64_t)x * scale.per_column;
	tell(s);
}
