/* tui_timeline.c — the timeline's columns, its cursor and the stretch of the run the screen
 * shows (tui_timeline.h). No curses here: tui_draw.c draws the strip. */
#include "proftop/ui/tui_timeline.h"

#include "proftop/snapshot.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define DEFAULT_WIDTH 78

void tui_timeline_scale(const struct tui_timeline *tl, const struct snapshot *live,
			struct tui_timeline_scale *scale)
{
	const struct snapshot *p = live;
	uint64_t run = p ? (p->elapsed_ns + 999999999u) / 1000000000u : 0;
	uint64_t width = tl->w > 0 ? (uint64_t)tl->w : DEFAULT_WIDTH;

	/* The newest second counts as soon as it has a sample. */
	if (p && p->nspans && p->spans[p->nspans - 1].end_s > run)
		run = p->spans[p->nspans - 1].end_s;
	if (!run)
		run = 1;
	scale->run_s = run;
	scale->per_column = (run + width - 1) / width;
	scale->columns = (int)((run + scale->per_column - 1) / scale->per_column);
}

void tui_timeline_columns(const struct snapshot *live, const struct tui_timeline_scale *scale,
			  bool traced, double *samples)
{
	const struct snapshot *p = live;

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

bool tui_timeline_bounds(const struct tui_timeline *tl, const struct snapshot *live, uint64_t *from_s,
			 uint64_t *to_s)
{
	struct tui_timeline_scale scale;
	uint64_t window;

	switch (tl->stretch) {
	case TUI_STRETCH_FIXED:
		*from_s = tl->from_s;
		*to_s = tl->to_s;
		return true;
	case TUI_STRETCH_WINDOW:
		tui_timeline_scale(tl, live, &scale);
		window = (uint64_t)ceil(tl->window_s);
		*to_s = scale.run_s;
		*from_s = scale.run_s > window ? scale.run_s - window : 0;
		return true;
	default:
		return false;
	}
}

bool tui_timeline_range(const struct tui_timeline *tl, struct snapshot_range *range)
{
	memset(range, 0, sizeof(*range));
	switch (tl->stretch) {
	case TUI_STRETCH_FIXED:
		range->from_s = tl->from_s;
		range->to_s = tl->to_s;
		return true;
	case TUI_STRETCH_WINDOW:
		range->last_ns = (uint64_t)llround(tl->window_s * 1e9);
		return true;
	default:
		return false;
	}
}

/* The message line says where the cursor and the stretch are. */
static struct tui_result tell(const struct tui_timeline *tl, const struct snapshot *live)
{
	uint64_t from, to;

	if (!tui_timeline_bounds(tl, live, &from, &to))
		return tui_result_say(false, "timeline: cursor at %llus; the whole run shown "
				   "([ ] mark a stretch)", (unsigned long long)tl->cursor_s);
	if (tl->stretch == TUI_STRETCH_WINDOW)
		return tui_result_say(false, "timeline: cursor at %llus; the last %.0f seconds shown",
				   (unsigned long long)tl->cursor_s, tl->window_s);
	return tui_result_say(false, "timeline: cursor at %llus; seconds %llu-%llu shown",
				   (unsigned long long)tl->cursor_s, (unsigned long long)from,
				   (unsigned long long)to);
}

/* The stretch changed: the loop asks the session for it. */
static struct tui_result changed(struct tui_timeline *tl, const struct snapshot *live)
{
	tl->changed = true;
	return tell(tl, live);
}

struct tui_result tui_timeline_enter(struct tui_timeline *tl, const struct snapshot *live, int unused)
{
	struct tui_timeline_scale scale;

	(void)unused;
	tui_timeline_scale(tl, live, &scale);
	if (!live || !live->nspans) {
		return tui_result_say(true, "no timeline: this profile keeps no history, or no "
				      "samples yet");
	}
	tl->active = true;
	if (!tl->placed || tl->cursor_s >= scale.run_s)
		tl->cursor_s = scale.run_s - 1;
	tl->placed = true;
	return tell(tl, live);
}

struct tui_result tui_timeline_leave(struct tui_timeline *tl, const struct snapshot *live, int unused)
{
	(void)unused;
	(void)live;
	tl->active = false;
	return (struct tui_result){ .clear_message = true };
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

struct tui_result tui_timeline_cursor(struct tui_timeline *tl, const struct snapshot *live, int columns)
{
	struct tui_timeline_scale scale;

	tui_timeline_scale(tl, live, &scale);
	if (columns == INT_MIN)
		tl->cursor_s = 0;
	else if (columns == INT_MAX)
		tl->cursor_s = scale.run_s - 1;
	else
		tl->cursor_s = column_start(&scale, tl->cursor_s, columns);
	return tell(tl, live);
}

/* A stretch that is fixed from now on: the window's seconds as they are now, or the whole run. */
static void fix(struct tui_timeline *tl, const struct snapshot *live,
		const struct tui_timeline_scale *scale)
{
	uint64_t from, to;

	if (!tui_timeline_bounds(tl, live, &from, &to)) {
		from = 0;
		to = scale->run_s;
	}
	tl->stretch = TUI_STRETCH_FIXED;
	tl->from_s = from;
	tl->to_s = to;
}

struct tui_result tui_timeline_mark(struct tui_timeline *tl, const struct snapshot *live, int end)
{
	struct tui_timeline_scale scale;
	uint64_t start;

	tui_timeline_scale(tl, live, &scale);
	start = column_start(&scale, tl->cursor_s, 0);
	fix(tl, live, &scale);
	if (!end) {
		tl->from_s = start;
		if (tl->to_s <= start)
			tl->to_s = start + scale.per_column;
	} else {
		tl->to_s = start + scale.per_column;
		if (tl->from_s >= tl->to_s)
			tl->from_s = start;
	}
	return changed(tl, live);
}

struct tui_result tui_timeline_shift(struct tui_timeline *tl, const struct snapshot *live, int columns)
{
	struct tui_timeline_scale scale;
	uint64_t step, span;

	tui_timeline_scale(tl, live, &scale);
	fix(tl, live, &scale);
	step = (uint64_t)(columns < 0 ? -columns : columns) * scale.per_column;
	span = tl->to_s - tl->from_s;
	if (columns < 0) {
		tl->from_s = tl->from_s > step ? tl->from_s - step : 0;
	} else {
		tl->from_s += step;
		if (tl->from_s + span > scale.run_s)
			tl->from_s = scale.run_s > span ? scale.run_s - span : 0;
	}
	tl->to_s = tl->from_s + span;
	tl->cursor_s = tl->from_s;
	return changed(tl, live);
}

struct tui_result tui_timeline_widen(struct tui_timeline *tl, const struct snapshot *live, int columns)
{
	struct tui_timeline_scale scale;
	uint64_t step;

	tui_timeline_scale(tl, live, &scale);
	fix(tl, live, &scale);
	step = (uint64_t)(columns < 0 ? -columns : columns) * scale.per_column;
	if (columns > 0) {
		tl->from_s = tl->from_s > step ? tl->from_s - step : 0;
		tl->to_s = tl->to_s + step < scale.run_s ? tl->to_s + step
								    : scale.run_s;
	} else if (tl->to_s - tl->from_s > 2 * step) { /* a column stays at least */
		tl->from_s += step;
		tl->to_s -= step;
	}
	return changed(tl, live);
}

struct tui_result tui_timeline_window(struct tui_timeline *tl, const struct snapshot *live, int unused)
{
	(void)unused;
	tl->stretch = tl->stretch == TUI_STRETCH_WINDOW ? TUI_STRETCH_ALL : TUI_STRETCH_WINDOW;
	tl->changed = true;
	return tl->active ? tell(tl, live) : (struct tui_result){ 0 };
}

struct tui_result tui_timeline_all(struct tui_timeline *tl, const struct snapshot *live, int unused)
{
	(void)unused;
	tl->stretch = TUI_STRETCH_ALL;
	return changed(tl, live);
}

struct tui_result tui_timeline_click(struct tui_timeline *tl, const struct snapshot *live, int x)
{
	struct tui_timeline_scale scale;

	tui_timeline_scale(tl, live, &scale);
	if (x < 0 || x >= scale.columns || !live || !live->nspans)
		return (struct tui_result){ 0 };
	tl->active = true;
	tl->placed = true;
	tl->cursor_s = (uint64_t)x * scale.per_column;
	return tell(tl, live);
}
