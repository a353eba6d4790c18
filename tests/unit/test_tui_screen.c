/* Unit tests of the TUI's state without a terminal: keys, the selection kept across snapshots,
 * the filter, thread scope, the callers subject, pause and mouse clicks; and the key table, whose
 * hint lines and help must name only keys that do what they say where they say. Only curses' key
 * codes are used here; nothing is drawn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/debugfile.h"
#include "proftop/disasm.h"
#include "proftop/module.h"
#include "proftop/profile.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_screen.h"
#include "proftop/ui/tui_timeline.h"

#include <ctype.h>
#include <curses.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char module[] = "prog";

struct fixture {
	struct profile *p;
	uint32_t main_, pa, pb, burn, solo;
	struct tui_screen s;
};

static uint32_t func(struct profile *p, const char *name)
{
	return profile_func(p, module, name, 0);
}

static void add_n(struct profile *p, pid_t tid, const uint32_t *stack, size_t depth, int n)
{
	for (int i = 0; i < n; i++)
		profile_add(p, 1, tid, stack, depth);
}

/* Thread 11: main → path_a → burn 60, main → solo 10; thread 12: main → path_b → burn 30. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->p = profile_new(NULL);
	f->main_ = func(f->p, "main");
	f->pa = func(f->p, "path_a");
	f->pb = func(f->p, "path_b");
	f->burn = func(f->p, "burn");
	f->solo = func(f->p, "solo");
	uint32_t s1[] = { f->main_, f->pa, f->burn }, s2[] = { f->main_, f->pb, f->burn };
	uint32_t s3[] = { f->main_, f->solo };
	add_n(f->p, 11, s1, 3, 60);
	add_n(f->p, 12, s2, 3, 30);
	add_n(f->p, 11, s3, 2, 10);
	profile_set_comm(f->p, 1, 11, "main-thread");
	profile_set_comm(f->p, 1, 12, "worker");
	tui_screen_init(&f->s, "prog");
	f->s.list_h = 20; /* as a frame of 20 rows would leave it */
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tui_screen_free(&f->s);
	profile_free(f->p);
	free(f);
	return 0;
}

static enum tui_action key(struct fixture *f, int k)
{
	enum tui_action a = tui_screen_key(&f->s, k);

	tui_screen_rebuild(&f->s);
	return a;
}

static void keys(struct fixture *f, const char *text)
{
	for (const char *c = text; *c; c++)
		key(f, (unsigned char)*c);
}

static const struct tui_list *list(const struct fixture *f)
{
	return &f->s.lists[f->s.view];
}

/* The cursor on row (of the current view's list), as the arrows put it there. */
static void select_row_at(struct fixture *f, size_t row)
{
	key(f, KEY_HOME);
	for (size_t i = 0; i < row; i++)
		key(f, KEY_DOWN);
}

static void selection_follows_its_function(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->s.view, TUI_TOP);
	assert_string_equal(f->s.top[0].name, "burn");
	key(f, KEY_DOWN);
	assert_int_equal(list(f)->cursor, 1);
	assert_string_equal(f->s.top[1].name, "solo");
	/* solo becomes the hottest: the cursor moves with it to the first row */
	uint32_t s3[] = { f->main_, f->solo };
	add_n(f->p, 11, s3, 2, 200);
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
	assert_string_equal(f->s.top[0].name, "solo");
	assert_int_equal(list(f)->cursor, 0);
	/* sorting by name */
	key(f, '>');
	key(f, '>');
	assert_int_equal(f->s.sort, VIEW_SORT_NAME);
	assert_string_equal(f->s.top[0].name, "burn");
	key(f, KEY_END);
	assert_int_equal(list(f)->cursor, list(f)->rows - 1);
	key(f, KEY_HOME);
	assert_int_equal(list(f)->cursor, 0);
}

/* f's profile as a snapshot of mode. */
static void show_mode(struct fixture *f, struct profile *p, enum sample_mode mode)
{
	struct snapshot *s = profile_snapshot(p);

	s->mode = mode;
	tui_screen_set_snapshot(&f->s, s);
	tui_screen_rebuild(&f->s);
}

/* `m` shows another mode's profile, with the same function ids: the selected function is
 * selected again when a mode has it, also after one that has not. */
static void mode_change_keeps_the_selection(void **state)
{
	struct fixture *f = *state;
	struct profile *other = profile_new(NULL);
	uint32_t main_ = func(other, "main"), pa = func(other, "path_a");

	(void)func(other, "path_b");
	uint32_t burn = func(other, "burn"), s1[] = { main_, pa, burn };

	assert_int_equal(burn, f->burn);
	add_n(other, 11, s1, 3, 5); /* no solo in this mode */
	key(f, KEY_DOWN);
	assert_string_equal(f->s.top[list(f)->cursor].name, "solo");
	show_mode(f, other, SAMPLE_MODE_RUNNABLE);
	assert_true(list(f)->cursor < list(f)->rows);
	assert_string_not_equal(f->s.top[list(f)->cursor].name, "solo");
	show_mode(f, f->p, SAMPLE_MODE_WALL);
	assert_string_equal(f->s.top[list(f)->cursor].name, "solo");
	/* Once the cursor moved in a mode without it, what it moved to is the selection. */
	show_mode(f, other, SAMPLE_MODE_OFFCPU);
	key(f, KEY_HOME);
	show_mode(f, f->p, SAMPLE_MODE_CPU);
	assert_string_equal(f->s.top[list(f)->cursor].name, "burn");
	/* Within one mode, a row gone takes the selection with it (the cursor stays put). */
	key(f, KEY_DOWN);
	assert_string_equal(f->s.top[list(f)->cursor].name, "solo");
	show_mode(f, other, SAMPLE_MODE_CPU);
	show_mode(f, f->p, SAMPLE_MODE_CPU);
	assert_string_not_equal(f->s.top[list(f)->cursor].name, "solo");
	profile_free(other);
}

static void filter_as_typed(void **state)
{
	struct fixture *f = *state;

	key(f, '/');
	assert_true(f->s.editing);
	keys(f, "PATH");
	assert_string_equal(f->s.filter, "PATH");
	assert_int_equal(list(f)->rows, 2);
	key(f, KEY_BACKSPACE);
	assert_string_equal(f->s.filter, "PAT");
	assert_int_equal(key(f, 'q'), TUI_ACT_NONE); /* typed, not quit */
	assert_string_equal(f->s.filter, "PATq");
	assert_int_equal(list(f)->rows, 0);
	key(f, KEY_BACKSPACE);
	key(f, '\n');
	assert_false(f->s.editing);
	assert_int_equal(list(f)->rows, 2);
	key(f, 27);
	assert_string_equal(f->s.filter, "");
	assert_int_equal(list(f)->rows, 5);
}

static void tree_keys_open_and_close(void **state)
{
	struct fixture *f = *state;

	key(f, '\t');
	assert_int_equal(f->s.view, TUI_TREE);
	/* main, path_a (open, hottest), burn, path_b (closed), solo */
	assert_int_equal(list(f)->rows, 5);
	assert_string_equal(f->s.tree[3].name, "path_b");
	assert_false(f->s.tree[3].open);
	for (int i = 0; i < 3; i++)
		key(f, KEY_DOWN);
	assert_int_equal(key(f, '+'), TUI_ACT_NONE); /* opens, does not change the frequency */
	assert_int_equal(list(f)->rows, 6);
	assert_true(f->s.tree[3].open);
	key(f, KEY_RIGHT); /* on an open node: to its child */
	assert_string_equal(f->s.tree[list(f)->cursor].name, "burn");
	key(f, KEY_LEFT); /* a leaf: to its parent */
	assert_string_equal(f->s.tree[list(f)->cursor].name, "path_b");
	key(f, KEY_LEFT);
	assert_int_equal(list(f)->rows, 5);
	key(f, '*');
	assert_int_equal(list(f)->rows, 6);
	/* % shows path_b's subtree alone, relative to it */
	assert_string_equal(f->s.tree[list(f)->cursor].name, "path_b");
	key(f, '%');
	assert_true(f->s.focused);
	assert_string_equal(f->s.tree[0].name, "path_b");
	assert_true(f->s.tree[0].total_pct > 99.9);
	key(f, 27);
	assert_false(f->s.focused);
	/* c: the callers of the selected function */
	key(f, KEY_HOME);
	key(f, KEY_DOWN);
	key(f, KEY_DOWN); /* burn under path_a */
	key(f, 'c');
	assert_int_equal(f->s.view, TUI_CALLERS);
	assert_string_equal(f->s.callers[0].name, "burn");
	assert_int_equal(f->s.callers[0].total, 90);
}

static void callers_follow_the_top_selection(void **state)
{
	struct fixture *f = *state;

	key(f, '3');
	assert_string_equal(f->s.callers[0].name, "burn"); /* the hottest at first */
	key(f, '1');
	key(f, KEY_DOWN);
	assert_string_equal(f->s.top[1].name, "solo");
	key(f, '3');
	assert_string_equal(f->s.callers[0].name, "solo");
	assert_string_equal(f->s.callers[1].name, "main");
	key(f, '1');
	key(f, KEY_HOME);
	key(f, '\n'); /* Enter on Top: callers of burn */
	assert_int_equal(f->s.view, TUI_CALLERS);
	assert_string_equal(f->s.callers[0].name, "burn");
}

static void threads_scope_every_view(void **state)
{
	struct fixture *f = *state;

	key(f, '4');
	assert_int_equal(list(f)->rows, 3); /* all threads, 11, 12 */
	assert_int_equal(f->s.threads[0].tid, 11);
	key(f, KEY_DOWN);
	key(f, KEY_DOWN);
	key(f, '\n');
	assert_int_equal(f->s.thread, 12);
	key(f, '1');
	assert_int_equal(list(f)->rows, 3); /* burn, main, path_b: thread 12 only */
	assert_string_equal(f->s.top[0].name, "burn");
	assert_true(f->s.top[0].self_pct > 99.9);
	key(f, '4');
	key(f, KEY_HOME);
	key(f, '\n');
	assert_int_equal(f->s.thread, 0);
}

static void pause_keeps_the_shown_profile(void **state)
{
	struct fixture *f = *state;
	struct snapshot *before = f->s.shown;

	assert_int_equal(key(f, ' '), TUI_ACT_PAUSE);
	assert_true(f->s.paused);
	uint32_t s3[] = { f->main_, f->solo };
	add_n(f->p, 11, s3, 2, 5);
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	assert_ptr_equal(f->s.shown, before);
	assert_ptr_not_equal(f->s.live, before);
	key(f, ' ');
	assert_false(f->s.paused);
	assert_ptr_equal(f->s.shown, f->s.live);
}

/* The row of the Top view named name; NULL when none. */
static const struct view_row *top_row(const struct fixture *f, const char *name)
{
	for (size_t i = 0; i < f->s.lists[TUI_TOP].rows; i++)
		if (!strcmp(f->s.top[i].name, name))
			return &f->s.top[i];
	return NULL;
}

/* b: what is shown becomes the baseline; the views then carry its shares (Top with the functions
 * only it has, by a key of their own), sort by the changes, follow the thread scope and the
 * inlined toggle; B drops it, and the sort by a change with it. */
static void baseline_compares_views(void **state)
{
	struct fixture *f = *state;
	uint32_t s3[] = { f->main_, f->solo };

	assert_int_equal(key(f, 'b'), TUI_ACT_BASELINE);
	assert_non_null(f->s.baseline);
	assert_ptr_equal(f->s.base_raw, f->s.shown_raw);
	assert_string_equal(f->s.base_label, "seconds 0-0");
	add_n(f->p, 11, s3, 2, 100); /* solo: 10 of 100 then, 110 of 200 now */
	uint32_t fresh = func(f->p, "fresh"), s4[] = { f->main_, fresh };
	add_n(f->p, 11, s4, 2, 50);
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
	const struct view_row *solo = top_row(f, "solo"), *burn = top_row(f, "burn");
	assert_true(solo->old_self_pct == 10.0 && solo->self_pct == 44.0 && !solo->only_new);
	assert_true(burn->old_self_pct == 90.0 && burn->self_pct == 36.0);
	assert_true(top_row(f, "fresh")->only_new && top_row(f, "fresh")->old_total_pct == 0);
	/* Sorting goes through the changes now: SELF, TOTAL, ΔSELF, ΔTOTAL, NAME. */
	keys(f, ">>");
	assert_int_equal(f->s.sort, VIEW_SORT_DELTA_SELF);
	assert_string_equal(f->s.top[0].name, "burn"); /* -54 points, then solo +34, fresh +20 */
	assert_string_equal(f->s.top[1].name, "solo");
	key(f, '>');
	assert_int_equal(f->s.sort, VIEW_SORT_DELTA_TOTAL);
	/* The Tree: main → solo was 10% of all, 44% now. */
	key(f, '2');
	key(f, '*');
	for (size_t i = 0; i < list(f)->rows; i++)
		if (!strcmp(f->s.tree[i].name, "solo"))
			assert_true(f->s.tree[i].old_total_pct == 10.0 && f->s.tree[i].total_pct == 44.0);
	/* The flame graph: solo's frame grew 34 points. */
	key(f, '5');
	bool seen = false;
	for (size_t i = 0; i < f->s.flame.n; i++) {
		if (f->s.flame.frames[i].func == f->solo) {
			assert_true(f->s.flame.frames[i].delta > 33.99 && f->s.flame.frames[i].delta < 34.01);
			seen = true;
		}
	}
	assert_true(seen);
	/* Thread 12 alone: its burn was all of its samples then and is now. */
	key(f, '4');
	for (size_t i = 0; i < list(f)->rows; i++)
		if (i && f->s.threads[i - 1].tid == 12)
			select_row_at(f, i);
	key(f, '\n');
	key(f, '1');
	burn = top_row(f, "burn");
	assert_true(burn->old_self_pct == 100.0 && burn->self_pct == 100.0 && !top_row(f, "solo"));
	key(f, '4');
	select_row_at(f, 0);
	key(f, '\n');
	key(f, '1');
	key(f, 'i'); /* presented again, as shown is */
	assert_non_null(f->s.baseline);
	assert_true(top_row(f, "solo")->old_self_pct == 10.0);
	assert_int_equal(key(f, 'B'), TUI_ACT_BASELINE);
	assert_null(f->s.baseline);
	assert_null(f->s.base_raw);
	assert_int_equal(f->s.sort, VIEW_SORT_SELF);
	keys(f, ">>");
	assert_int_equal(f->s.sort, VIEW_SORT_NAME); /* no changes to sort by */
	assert_int_equal(key(f, 'B'), TUI_ACT_BASELINE); /* nothing to drop: said so */
	assert_non_null(strstr(f->s.message, "no baseline"));
}

/* A baseline from another profile (a file): its functions that this profile lacks are rows, and
 * the cursor stays on one as the profile moves. */
static void baseline_only_rows_keep_the_cursor(void **state)
{
	struct fixture *f = *state;
	struct profile *other = profile_new(NULL);
	uint32_t ghost = profile_func(other, "old", "ghost", 0), m = profile_func(other, module, "main", 0);
	uint32_t stack[] = { m, ghost };

	add_n(other, 1, stack, 2, 500);
	struct snapshot *old = profile_snapshot(other);

	tui_screen_set_baseline(&f->s, old, "old.out");
	snapshot_unref(old);
	tui_screen_rebuild(&f->s);
	assert_non_null(top_row(f, "ghost"));
	assert_true(top_row(f, "ghost")->only_old && top_row(f, "ghost")->func == 0);
	assert_true(top_row(f, "ghost")->old_self_pct == 100.0);
	select_row_at(f, (size_t)(top_row(f, "ghost") - f->s.top));
	uint32_t s3[] = { f->main_, f->solo };
	add_n(f->p, 11, s3, 2, 300); /* solo now first: the rows move */
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
	assert_string_equal(f->s.top[list(f)->cursor].name, "ghost");
	assert_int_equal(tui_screen_selected_func(&f->s), 0); /* no function of this profile */
	key(f, '\n'); /* Enter on it: no callers to show */
	assert_int_equal(f->s.view, TUI_TOP);
	profile_free(other);
}

static void actions_for_the_loop(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(key(f, 'q'), TUI_ACT_QUIT);
	assert_int_equal(key(f, KEY_F(10)), TUI_ACT_QUIT);
	assert_int_equal(key(f, '+'), TUI_ACT_FREQ_UP); /* Top: the frequency */
	assert_int_equal(key(f, '-'), TUI_ACT_FREQ_DOWN);
	assert_int_equal(key(f, ']'), TUI_ACT_FREQ_UP);
	assert_int_equal(key(f, 's'), TUI_ACT_SAVE);
	assert_int_equal(key(f, 'T'), TUI_ACT_THEME);
	assert_int_equal(key(f, 'w'), TUI_ACT_STRETCH);
	assert_int_equal(f->s.timeline.stretch, TUI_STRETCH_WINDOW);
	assert_true(f->s.timeline.changed);
	key(f, '?');
	assert_true(f->s.help);
	assert_int_equal(key(f, 'x'), TUI_ACT_NONE); /* any key closes the help */
	assert_false(f->s.help);
	key(f, KEY_BTAB);
	assert_int_equal(f->s.view, TUI_FLAME);
}

static void clicks_select(void **state)
{
	struct fixture *f = *state;

	/* the geometry a frame leaves: tabs on line 2, headings on 3, rows from 4 */
	f->s.tabs_y = 2;
	f->s.columns_y = 3;
	f->s.list_y = 4;
	f->s.list_h = 10;
	for (int v = 0; v <= TUI_NVIEWS; v++)
		f->s.tab_x[v] = v * 10;
	f->s.column_x[0] = 0;
	f->s.column_x[1] = 8;
	f->s.column_x[2] = 16;
	f->s.column_x[3] = 26;
	f->s.column_x[4] = 60;
	f->s.column_x[5] = 80;
	f->s.column_sort[3] = VIEW_SORT_NAME; /* as drawn: what a click on each heading sorts by */
	f->s.column_sort[4] = VIEW_SORT_MODULE;
	tui_screen_click(&f->s, 6, 30, false, false);
	tui_screen_rebuild(&f->s);
	assert_int_equal(list(f)->cursor, 2);
	tui_screen_click(&f->s, 3, 30, false, false); /* the FUNCTION heading */
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.sort, VIEW_SORT_NAME);
	tui_screen_click(&f->s, 2, 15, false, false); /* the second tab */
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.view, TUI_TREE);
	tui_screen_click(&f->s, 0, 0, false, true); /* the wheel */
	assert_int_equal(list(f)->cursor, 3);
	tui_screen_click(&f->s, 50, 0, false, false); /* below the rows: nothing */
	assert_int_equal(list(f)->cursor, 3);
}

static const struct view_flame_frame *flame_selected(const struct fixture *f)
{
	const struct view_flame_frame *fr = tui_flame_selected(&f->s.flame);

	assert_non_null(fr);
	return fr;
}

/* Flame (all 100: main 100: path_a 60 → burn, path_b 30 → burn, solo 10), 100 cells and 10 rows:
 * the arrows as drawn, a click selects and a second one zooms, Esc goes back where the zoom
 * started, f turns the arrows and the clicks upside down, the selection follows new snapshots, a
 * thread scope and `a`. */
static void flame_keys_and_clicks(void **state)
{
	struct fixture *f = *state;

	f->s.columns_y = 3;
	f->s.list_y = 4;
	f->s.list_h = 10;
	key(f, '5');
	assert_int_equal(f->s.view, TUI_FLAME);
	if (tui_flame_fit(&f->s.flame, 100, 10)) {
		f->s.stale = true;
		tui_screen_rebuild(&f->s);
	}
	assert_int_equal(f->s.flame.n, 7);
	assert_int_equal(flame_selected(f)->func, SNAPSHOT_ROOT_FUNC);
	keys(f, "jj");
	assert_int_equal(flame_selected(f)->func, f->pa); /* the widest child */
	key(f, KEY_RIGHT);
	assert_int_equal(flame_selected(f)->func, f->pb);
	assert_int_equal(flame_selected(f)->x, 60);
	key(f, 'l');
	assert_int_equal(flame_selected(f)->func, f->solo);
	key(f, 'l'); /* nothing further right */
	assert_int_equal(flame_selected(f)->func, f->solo);
	keys(f, "hk");
	assert_int_equal(flame_selected(f)->func, f->main_);

	/* A click on burn under path_b (row 3, x 70) selects it; a second click zooms into it. */
	tui_screen_click(&f->s, 4 + 3, 70, false, false);
	assert_int_equal(flame_selected(f)->func, f->burn);
	assert_int_equal(flame_selected(f)->x, 60);
	tui_screen_click(&f->s, 4 + 3, 70, false, false);
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.flame.frames[0].func, f->burn);
	assert_int_equal(f->s.flame.frames[0].total, 30);
	assert_int_equal(f->s.flame.frames[0].width, 100);
	key(f, TUI_ESC); /* back to where the zoom started: the whole */
	assert_int_equal(f->s.flame.frames[0].func, SNAPSHOT_ROOT_FUNC);
	assert_int_equal(flame_selected(f)->func, f->burn);
	/* Two zooms, two steps back. */
	key(f, 'k');
	key(f, '\n');
	assert_int_equal(f->s.flame.frames[0].func, f->pb);
	key(f, 'j');
	key(f, '\n');
	assert_int_equal(f->s.flame.frames[0].func, f->burn);
	key(f, TUI_ESC);
	assert_int_equal(f->s.flame.frames[0].func, f->pb);
	key(f, TUI_ESC);
	assert_int_equal(f->s.flame.frames[0].func, SNAPSHOT_ROOT_FUNC);
	key(f, TUI_ESC); /* nothing to undo */
	assert_int_equal(f->s.flame.frames[0].func, SNAPSHOT_ROOT_FUNC);
	/* Keys and the wheel of the lists do nothing here. */
	tui_screen_click(&f->s, 0, 0, false, true);
	keys(f, "gG");
	key(f, KEY_NPAGE);
	assert_int_equal(flame_selected(f)->func, f->burn);

	/* Upside down: the root on the last row, Up goes to the child. */
	key(f, 'f');
	assert_true(f->s.flame.up);
	tui_screen_click(&f->s, 4 + 9, 5, false, false);
	assert_int_equal(flame_selected(f)->func, SNAPSHOT_ROOT_FUNC);
	key(f, KEY_UP);
	assert_int_equal(flame_selected(f)->func, f->main_);
	key(f, KEY_DOWN);
	assert_int_equal(flame_selected(f)->func, SNAPSHOT_ROOT_FUNC);
	key(f, 'f');

	/* A new snapshot keeps the selection; a thread scope keeps it where the path still is. */
	keys(f, "jjl");
	assert_int_equal(flame_selected(f)->func, f->pb);
	uint32_t more[] = { f->main_, f->pa, f->burn };
	add_n(f->p, 11, more, 3, 100);
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
	assert_int_equal(flame_selected(f)->func, f->pb);
	assert_int_equal(flame_selected(f)->x, 80); /* path_a 160 of 200 */
	f->s.thread = 12;
	f->s.stale = true;
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.flame.frames[0].total, 30);
	assert_int_equal(flame_selected(f)->func, f->pb);
	assert_int_equal(flame_selected(f)->width, 100);
	/* The search marks and counts; Esc clears it before it zooms out. */
	keys(f, "/solo\n");
	f->s.thread = 0;
	f->s.stale = true;
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.flame.matched, 10);
	key(f, TUI_ESC);
	assert_int_equal(f->s.filter[0], 0);
	assert_int_equal(f->s.flame.matched, 0);
	key(f, 'a');
	assert_int_equal(f->s.view, TUI_LINES);
	assert_int_equal(f->s.lines_func, f->pb);
}

/* Enter does what the view says: callers (Top), open / close (Tree, Callers), the thread
 * (Threads); each of its three codes does it. */
static void enter_per_view(void **state)
{
	struct fixture *f = *state;

	key(f, KEY_DOWN); /* solo */
	assert_int_equal(key(f, '\n'), TUI_ACT_NONE);
	assert_int_equal(f->s.view, TUI_CALLERS);
	assert_string_equal(f->s.callers[0].name, "solo");
	assert_int_equal(list(f)->rows, 2); /* solo ▾ main */
	key(f, '\r');
	assert_int_equal(list(f)->rows, 1);
	key(f, KEY_ENTER);
	assert_int_equal(list(f)->rows, 2);
	key(f, '2');
	for (int i = 0; i < 3; i++)
		key(f, KEY_DOWN);
	assert_string_equal(f->s.tree[list(f)->cursor].name, "path_b");
	key(f, '\n');
	assert_int_equal(list(f)->rows, 6);
	key(f, '\n');
	assert_int_equal(list(f)->rows, 5);
	key(f, '4');
	key(f, KEY_DOWN);
	assert_int_equal(key(f, KEY_ENTER), TUI_ACT_NONE);
	assert_int_equal(f->s.thread, 11);
	assert_int_equal(f->s.view, TUI_THREADS);
}

/* + and - open and close nodes in the tree views and change the frequency in the others. */
static void plus_minus_per_view(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(key(f, '+'), TUI_ACT_FREQ_UP);
	assert_int_equal(key(f, '-'), TUI_ACT_FREQ_DOWN);
	assert_int_equal(f->s.view, TUI_TOP);
	assert_int_equal(list(f)->cursor, 0);
	key(f, '3'); /* the callers of burn: burn ▾ path_a ▾ main, path_b ▸ */
	assert_int_equal(list(f)->rows, 4);
	assert_int_equal(key(f, '-'), TUI_ACT_NONE);
	assert_int_equal(list(f)->rows, 1);
	assert_int_equal(key(f, '+'), TUI_ACT_NONE);
	assert_int_equal(list(f)->rows, 4);
	key(f, '+'); /* on an open node: to its first child */
	assert_string_equal(f->s.callers[list(f)->cursor].name, "path_a");
	key(f, '-');
	assert_int_equal(list(f)->rows, 3);
	key(f, '-'); /* closed: to its parent */
	assert_int_equal(list(f)->cursor, 0);
	key(f, '4');
	assert_int_equal(key(f, '+'), TUI_ACT_FREQ_UP);
	assert_int_equal(key(f, '-'), TUI_ACT_FREQ_DOWN);
	assert_int_equal(f->s.thread, 0);
}

/* While a filter is typed, printable keys type (even q, ? and the vi keys), the line editor keys
 * edit, Up/Down/PgUp/PgDn/Tab/Shift-Tab end the typing and then act, and the rest is ignored. */
static void editing_keys(void **state)
{
	struct fixture *f = *state;
	static const int ignored[] = { KEY_HOME, KEY_END, KEY_LEFT, KEY_RIGHT, KEY_F(10), KEY_F(1),
				       12, KEY_IC };

	key(f, '/');
	keys(f, "kjhgGq?c%*<");
	assert_string_equal(f->s.filter, "kjhgGq?c%*<");
	for (size_t i = 0; i < sizeof(ignored) / sizeof(*ignored); i++) {
		assert_int_equal(key(f, ignored[i]), TUI_ACT_NONE);
		assert_true(f->s.editing);
		assert_int_equal(f->s.view, TUI_TOP);
		assert_false(f->s.help);
	}
	assert_string_equal(f->s.filter, "kjhgGq?c%*<");
	key(f, 21); /* Ctrl-U */
	assert_string_equal(f->s.filter, "");
	assert_true(f->s.editing);
	keys(f, "PATH");
	assert_int_equal(list(f)->rows, 2);
	assert_int_equal(key(f, KEY_DOWN), TUI_ACT_NONE);
	assert_false(f->s.editing);
	assert_int_equal(list(f)->cursor, 1);
	assert_string_equal(f->s.filter, "PATH");
	key(f, KEY_UP); /* not typing now: moves */
	assert_int_equal(list(f)->cursor, 0);
	key(f, '/');
	keys(f, "PATH");
	key(f, KEY_DOWN);
	key(f, '/');
	keys(f, "PATH");
	assert_int_equal(list(f)->cursor, 0);
	key(f, KEY_UP);
	assert_false(f->s.editing);
	key(f, KEY_END);
	assert_int_equal(list(f)->cursor, 1);
	key(f, '/');
	keys(f, "PATH");
	key(f, KEY_UP); /* typing ends, then Up moves */
	assert_false(f->s.editing);
	assert_int_equal(list(f)->cursor, 0);
	key(f, '/'); /* a new filter starts empty */
	assert_true(f->s.editing);
	assert_string_equal(f->s.filter, "");
	keys(f, "burn");
	key(f, '\t');
	assert_false(f->s.editing);
	assert_int_equal(f->s.view, TUI_TREE);
	assert_string_equal(f->s.filter, "burn");
	key(f, '/');
	key(f, KEY_BTAB);
	assert_false(f->s.editing);
	assert_int_equal(f->s.view, TUI_TOP);
	key(f, '/');
	key(f, KEY_NPAGE);
	assert_false(f->s.editing);
	key(f, '/');
	key(f, KEY_PPAGE);
	assert_false(f->s.editing);
	key(f, '/');
	keys(f, "abc");
	key(f, KEY_BACKSPACE);
	assert_string_equal(f->s.filter, "ab");
	key(f, 127);
	assert_string_equal(f->s.filter, "a");
	key(f, 8);
	key(f, 8); /* on an empty filter: nothing */
	assert_string_equal(f->s.filter, "");
	assert_true(f->s.editing);
	keys(f, "solo");
	key(f, KEY_ENTER); /* keeps it */
	assert_false(f->s.editing);
	assert_string_equal(f->s.filter, "solo");
	key(f, '/');
	keys(f, "main");
	key(f, 27); /* drops it */
	assert_false(f->s.editing);
	assert_string_equal(f->s.filter, "");
	assert_int_equal(list(f)->rows, 5);
}

/* Esc clears the filter first, then leaves relative percentages, then does nothing. */
static void escape_in_order(void **state)
{
	struct fixture *f = *state;

	key(f, '2');
	key(f, '*'); /* everything open: main, path_a, burn, path_b, burn, solo */
	for (int i = 0; i < 3; i++)
		key(f, KEY_DOWN);
	key(f, '%');
	assert_true(f->s.focused);
	key(f, '/');
	keys(f, "burn");
	key(f, '\n');
	key(f, 27);
	assert_string_equal(f->s.filter, "");
	assert_true(f->s.focused);
	key(f, 27);
	assert_false(f->s.focused);
	assert_string_equal(f->s.message, "percentages of the whole profile");
	assert_int_equal(key(f, 27), TUI_ACT_NONE);
	assert_false(f->s.focused);
	assert_string_equal(f->s.message, "");
}

/* Keys that act in every view, also where nothing shows it (the sort, the focus), and keys that
 * do nothing where they do not apply. */
static void keys_across_views(void **state)
{
	struct fixture *f = *state;

	key(f, '2');
	key(f, '>');
	assert_int_equal(f->s.sort, VIEW_SORT_TOTAL);
	key(f, '<');
	key(f, '<');
	assert_int_equal(f->s.sort, VIEW_SORT_MODULE);
	key(f, '*');
	for (int i = 0; i < 3; i++)
		key(f, KEY_DOWN);
	key(f, '%');
	assert_true(f->s.focused);
	key(f, '1');
	key(f, '%'); /* the whole profile again, from any view */
	assert_false(f->s.focused);
	assert_int_equal(list(f)->rows, 5);
	key(f, '*'); /* Top has no nodes */
	assert_string_equal(f->s.message, "");
	key(f, KEY_RIGHT);
	key(f, 'l');
	key(f, KEY_LEFT);
	assert_int_equal(f->s.view, TUI_TOP);
	assert_int_equal(list(f)->cursor, 0);
	key(f, '3'); /* callers of burn */
	key(f, KEY_DOWN);
	key(f, 'c'); /* in Callers: the callers of the selected caller */
	assert_string_equal(f->s.callers[0].name, "path_a");
	key(f, '4');
	key(f, KEY_DOWN);
	key(f, 'c'); /* Threads has no functions */
	assert_int_equal(f->s.view, TUI_THREADS);
	key(f, 'g');
	assert_int_equal(list(f)->cursor, 0);
	key(f, 'G');
	assert_int_equal(list(f)->cursor, 2);
	key(f, 'k');
	assert_int_equal(list(f)->cursor, 1);
	key(f, 'j');
	assert_int_equal(list(f)->cursor, 2);
	key(f, '3');
	assert_int_equal(f->s.view, TUI_CALLERS);
	key(f, '\t');
	assert_int_equal(f->s.view, TUI_THREADS);
	key(f, '\t');
	assert_int_equal(f->s.view, TUI_FLAME);
	key(f, '\t');
	assert_int_equal(f->s.view, TUI_TOP);
}

/* p: names whole, short, bare and whole again, in every view; the rows stay as they were (the
 * drawing shortens them), the cursor where it was. */
static void p_steps_the_names(void **state)
{
	struct fixture *f = *state;
	static const enum view_names want[] = { VIEW_NAMES_SHORT, VIEW_NAMES_BARE, VIEW_NAMES_FULL };

	assert_int_equal(f->s.names, VIEW_NAMES_FULL);
	key(f, KEY_DOWN);
	for (int v = 0; v < 5; v++) {
		key(f, "12345"[v]);
		for (size_t i = 0; i < 3; i++) {
			size_t cursor = list(f)->cursor, rows = list(f)->rows;

			key(f, 'p');
			assert_int_equal(f->s.names, want[i]);
			assert_non_null(strstr(f->s.message, want[i] == VIEW_NAMES_FULL ? "in full"
							  : want[i] == VIEW_NAMES_SHORT ? "short names"
											  : "bare names"));
			tui_screen_rebuild(&f->s);
			assert_int_equal(list(f)->cursor, cursor);
			assert_int_equal(list(f)->rows, rows);
		}
	}
}

/* Any key but a resize clears the message; with the help open, a key only closes it (q too). */
static void message_and_help(void **state)
{
	struct fixture *f = *state;

	tui_screen_message(&f->s, false, "hello");
	assert_int_equal(key(f, KEY_RESIZE), TUI_ACT_NONE);
	assert_string_equal(f->s.message, "hello");
	assert_int_equal(key(f, 'x'), TUI_ACT_NONE);
	assert_string_equal(f->s.message, "");
	key(f, 'h');
	assert_true(f->s.help);
	tui_screen_message(&f->s, false, "hello");
	assert_int_equal(key(f, '2'), TUI_ACT_NONE);
	assert_false(f->s.help);
	assert_int_equal(f->s.view, TUI_TOP);
	assert_string_equal(f->s.message, "");
	key(f, KEY_F(1));
	assert_true(f->s.help);
	assert_int_equal(key(f, KEY_F(10)), TUI_ACT_NONE);
	assert_false(f->s.help);
	key(f, '?');
	assert_int_equal(key(f, 'q'), TUI_ACT_NONE); /* as a pager's q: the help closes */
	assert_false(f->s.help);
	assert_int_equal(key(f, 'q'), TUI_ACT_QUIT);
	key(f, '?');
	assert_int_equal(key(f, TUI_ESC), TUI_ACT_NONE);
	assert_false(f->s.help);
	assert_int_equal(key(f, '['), TUI_ACT_FREQ_DOWN);
	assert_int_equal(key(f, 12), TUI_ACT_REDRAW);
	assert_int_equal(key(f, 0), TUI_ACT_NONE);
}

/* The help taller than its box scrolls: a line, a page less a line, either end, the wheel; never
 * past its ends. (The drawing says how many lines there are and how many show: 50 and 20 here.)
 * It opens at its start again. */
static void help_scrolls(void **state)
{
	struct fixture *f = *state;

	key(f, '?');
	f->s.help_lines = 50;
	f->s.help_rows = 20;
	assert_int_equal(f->s.help_top, 0);
	key(f, KEY_UP);
	assert_int_equal(f->s.help_top, 0);
	key(f, KEY_DOWN);
	key(f, 'j');
	assert_int_equal(f->s.help_top, 2);
	key(f, 'k');
	assert_int_equal(f->s.help_top, 1);
	key(f, KEY_NPAGE);
	assert_int_equal(f->s.help_top, 20);
	key(f, ' ');
	assert_int_equal(f->s.help_top, 30); /* the last 20 lines */
	key(f, KEY_DOWN);
	assert_int_equal(f->s.help_top, 30);
	key(f, KEY_PPAGE);
	assert_int_equal(f->s.help_top, 11);
	key(f, KEY_HOME);
	assert_int_equal(f->s.help_top, 0);
	key(f, 'G');
	assert_int_equal(f->s.help_top, 30);
	key(f, 'g');
	assert_int_equal(tui_screen_click(&f->s, 5, 5, false, true), TUI_ACT_NONE);
	assert_int_equal(f->s.help_top, 3);
	assert_true(f->s.help);
	assert_int_equal(f->s.view, TUI_TOP); /* the keys moved nothing behind the help */
	assert_int_equal(f->s.lists[TUI_TOP].cursor, 0);
	key(f, KEY_END);
	key(f, KEY_LEFT); /* not the help's: closes it */
	assert_false(f->s.help);
	key(f, 'h');
	assert_true(f->s.help);
	assert_int_equal(f->s.help_top, 0);
	tui_screen_click(&f->s, 5, 5, false, false);
	assert_false(f->s.help);
}

/* --- the Lines view --------------------------------------------------------------------------- */

/* burn's samples on lines 10 (5), 11 (10) and 12 (20) of /src/burn.c, through path_a. */
static void add_burn_line(struct fixture *f, unsigned line, int n)
{
	uint32_t funcs[] = { f->main_, f->pa, f->burn };
	uint32_t sites[] = { PROFILE_NO_SITE, PROFILE_NO_SITE,
			     profile_site(f->p, f->burn, 0x1000 + line, "/src/burn.c", line) };

	for (int i = 0; i < n; i++)
		profile_add_sites(f->p, 1, 11, funcs, sites, 3);
}

static unsigned cursor_line(const struct fixture *f)
{
	const struct tui_list *l = &f->s.lists[TUI_LINES];

	assert_true(l->cursor < l->rows);
	assert_int_equal(f->s.annotated.rows[l->cursor].insn, TUI_NO_INSN);
	assert_true(f->s.annotated.rows[l->cursor].line < f->s.annotated.lines.nlines);
	return f->s.annotated.lines.lines[f->s.annotated.rows[l->cursor].line].line;
}

static void new_snapshot(struct fixture *f)
{
	tui_screen_set_snapshot(&f->s, profile_snapshot(f->p));
	tui_screen_rebuild(&f->s);
}

/* a on burn in Top: its lines, the cursor on the hottest; n and N through them by heat, wrapping;
 * the selection stays on its file:line as lines come and go; Esc and Left go back. */
static void lines_from_top(void **state)
{
	struct fixture *f = *state;

	key(f, '6'); /* no function yet: nothing to show */
	assert_int_equal(f->s.view, TUI_TOP);
	add_burn_line(f, 10, 5);
	add_burn_line(f, 11, 10);
	add_burn_line(f, 12, 20);
	new_snapshot(f);
	assert_string_equal(f->s.top[0].name, "burn");
	key(f, 'a');
	assert_int_equal(f->s.view, TUI_LINES);
	assert_int_equal(f->s.lines_func, f->burn);
	assert_int_equal(f->s.annotated.lines.nlines, 3);
	assert_int_equal(cursor_line(f), 12);
	key(f, 'n');
	assert_int_equal(cursor_line(f), 11);
	key(f, 'n');
	assert_int_equal(cursor_line(f), 10);
	key(f, 'n');
	assert_int_equal(cursor_line(f), 12);
	key(f, 'N');
	assert_int_equal(cursor_line(f), 10);
	key(f, KEY_HOME);
	assert_int_equal(cursor_line(f), 10);
	key(f, KEY_DOWN);
	assert_int_equal(cursor_line(f), 11);
	/* a new line before it: the cursor stays on line 11, now the third row */
	add_burn_line(f, 9, 50);
	new_snapshot(f);
	assert_int_equal(f->s.annotated.lines.nlines, 4);
	assert_int_equal(list(f)->cursor, 2);
	assert_int_equal(cursor_line(f), 11);
	assert_false(f->s.lines_of_profile);
	key(f, '%');
	assert_true(f->s.lines_of_profile);
	key(f, '%');
	assert_false(f->s.lines_of_profile);
	key(f, TUI_ESC);
	assert_int_equal(f->s.view, TUI_TOP);
	key(f, '6');
	assert_int_equal(f->s.view, TUI_LINES);
	assert_int_equal(cursor_line(f), 11);
	key(f, KEY_LEFT);
	assert_int_equal(f->s.view, TUI_TOP);
	/* Tab cycles the five views of the profile; from Lines it goes on to Top */
	for (int i = 0; i < 5; i++)
		key(f, '\t');
	assert_int_equal(f->s.view, TUI_TOP);
	key(f, KEY_BTAB);
	assert_int_equal(f->s.view, TUI_FLAME);
	key(f, '6');
	key(f, '\t');
	assert_int_equal(f->s.view, TUI_TOP);
}

/* From the tree the selected node's function; pause freezes the lines; a stretch's lines count
 * its self samples, without totals. */
static void lines_from_tree_paused_and_windowed(void **state)
{
	struct fixture *f = *state;

	profile_set_history(f->p, 600, 0);
	add_burn_line(f, 10, 5);
	add_burn_line(f, 12, 20);
	new_snapshot(f);
	key(f, '2');
	while (list(f)->cursor + 1 < list(f)->rows && strcmp(f->s.tree[list(f)->cursor].name, "burn"))
		key(f, KEY_DOWN);
	assert_string_equal(f->s.tree[list(f)->cursor].name, "burn");
	key(f, 'a');
	assert_int_equal(f->s.view, TUI_LINES);
	assert_int_equal(f->s.lines_from, TUI_TREE);
	assert_int_equal(cursor_line(f), 12);
	key(f, ' ');
	add_burn_line(f, 11, 5);
	new_snapshot(f);
	assert_int_equal(f->s.annotated.lines.nlines, 2); /* paused */
	key(f, ' ');
	assert_int_equal(f->s.annotated.lines.nlines, 3);
	add_burn_line(f, 13, 1);
	tui_screen_set_snapshot(&f->s, profile_range_snapshot(f->p, 0, UINT64_MAX));
	tui_screen_rebuild(&f->s);
	assert_true(tui_screen_lines_snapshot(&f->s)->sites_self_only);
	assert_int_equal(f->s.annotated.lines.nlines, 4);
	assert_int_equal(cursor_line(f), 12);
	for (size_t i = 0; i < f->s.annotated.lines.nlines; i++) {
		const struct annotate_line *l = &f->s.annotated.lines.lines[i];

		assert_int_equal(l->self, l->line == 10 ? 5 : l->line == 11 ? 5 : l->line == 12 ? 20 : 1);
		assert_int_equal(l->total, 0);
	}
	key(f, TUI_ESC);
	assert_int_equal(f->s.view, TUI_TREE);
}

/* A window's lines lack those with totals only (a call's line): the cursor stays on its line. */
static void lines_window_keeps_the_cursor(void **state)
{
	struct fixture *f = *state;
	uint32_t funcs[] = { f->main_, f->pa, f->burn, f->solo };
	uint32_t sites[] = { PROFILE_NO_SITE, PROFILE_NO_SITE,
			     profile_site(f->p, f->burn, 0x1009, "/src/burn.c", 9),
			     profile_site(f->p, f->solo, 0x2000, "/src/solo.c", 3) };

	profile_set_history(f->p, 600, 0);
	add_burn_line(f, 10, 5);
	add_burn_line(f, 12, 20);
	for (int i = 0; i < 3; i++)
		profile_add_sites(f->p, 1, 11, funcs, sites, 4);
	new_snapshot(f);
	f->s.lines_func = f->burn;
	f->s.lines_fresh = true;
	f->s.view = TUI_LINES;
	f->s.stale = true;
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.annotated.lines.nlines, 3);
	assert_int_equal(cursor_line(f), 12);
	tui_screen_set_snapshot(&f->s, profile_range_snapshot(f->p, 0, UINT64_MAX));
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.annotated.lines.nlines, 2);
	assert_int_equal(cursor_line(f), 12);
	assert_true(list(f)->cursor < list(f)->rows);
}

/* Under a thread scope the lines count that thread's samples only, from the node sites, without
 * totals; all threads again: the whole profile's, with totals. */
static void lines_in_a_thread(void **state)
{
	struct fixture *f = *state;
	uint32_t funcs[] = { f->main_, f->pa, f->burn };
	uint32_t sites[] = { PROFILE_NO_SITE, PROFILE_NO_SITE,
			     profile_site(f->p, f->burn, 0x1100, "/src/burn.c", 40) };

	add_burn_line(f, 12, 20); /* thread 11 */
	for (int i = 0; i < 7; i++)
		profile_add_sites(f->p, 1, 12, funcs, sites, 3);
	new_snapshot(f);
	f->s.lines_func = f->burn;
	f->s.view = TUI_LINES;
	f->s.stale = true;
	tui_screen_rebuild(&f->s);
	assert_int_equal(f->s.annotated.lines.nlines, 2); /* lines 12 and 40 */
	for (f->s.thread = 0; f->s.thread != 12;) { /* the Threads view's row of tid 12 */
		key(f, '4');
		while (list(f)->cursor + 1 < list(f)->rows &&
		       (list(f)->cursor == 0 || f->s.threads[list(f)->cursor - 1].tid != 12))
			key(f, KEY_DOWN);
		key(f, '\n');
	}
	key(f, '6');
	tui_screen_rebuild(&f->s);
	assert_true(tui_screen_lines_snapshot(&f->s)->sites_self_only);
	assert_int_equal(f->s.annotated.lines.nlines, 1);
	assert_int_equal(f->s.annotated.lines.lines[0].line, 40);
	assert_int_equal(f->s.annotated.lines.lines[0].self, 7);
	assert_int_equal(f->s.annotated.lines.lines[0].total, 0);
	key(f, '4');
	key(f, KEY_HOME);
	key(f, '\n');
	key(f, '6');
	tui_screen_rebuild(&f->s);
	assert_false(tui_screen_lines_snapshot(&f->s)->sites_self_only);
	assert_int_equal(f->s.annotated.lines.nlines, 2);
}

/* The function the disassembly test profiles: its own code, read back from this test's file. */
__attribute__((noinline)) unsigned disasm_subject(unsigned x)
{
	x = x * 2654435761u + 1;
	x ^= x >> 13;
	return x * 3 + (x >> 7);
}

/* Where disasm_subject is in this test's file: its path and link-time range, from the mapping
 * that holds it (/proc/self/maps) and the file's symbols. */
static void subject_code(char *path, size_t size, uint64_t *start, uint64_t *end)
{
	uintptr_t at = (uintptr_t)&disasm_subject;
	unsigned long lo, hi, off;
	char line[512], file[PATH_MAX];
	FILE *maps = fopen("/proc/self/maps", "r");
	bool found = false;

	assert_non_null(maps);
	while (!found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi, &off, file) == 4 &&
			at >= lo && at < hi;
	fclose(maps);
	assert_true(found);
	snprintf(path, size, "%s", file);

	struct debugfile_origin origin = { .pid = getpid(), .path = path, .path_len = strlen(path) };
	struct module *mod = module_new("test", 4);
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, &origin), 0);
	close(fd);
	assert_non_null(module_lookup_range(mod, module_translate(mod, at - lo + off), start, end));
	module_free(mod);
}

/* The Lines row the cursor is on. */
static const struct tui_lines_row *cursor_row(const struct fixture *f)
{
	const struct tui_list *l = &f->s.lists[TUI_LINES];

	assert_true(l->cursor < l->rows);
	return &f->s.annotated.rows[l->cursor];
}

/* Each line's row, then its instructions by address, every instruction once; lines in order. */
static void assert_interleaved(const struct fixture *f)
{
	const struct tui_screen *s = &f->s;
	size_t line = TUI_NO_LINE, lines = 0, insns = 0;
	uint64_t last_addr = 0;

	for (size_t i = 0; i < s->lists[TUI_LINES].rows; i++) {
		const struct tui_lines_row *r = &s->annotated.rows[i];

		if (r->insn == TUI_NO_INSN) {
			assert_int_equal(r->line, lines++);
			line = r->line;
			last_addr = 0;
			continue;
		}
		const struct disasm_insn *insn = &s->annotated.code.insns[r->insn];
		const struct annotate_line *l = &s->annotated.lines.lines[line];

		assert_int_equal(r->line, line);
		assert_true(insn->addr > last_addr);
		assert_string_equal(insn->file, l->file);
		assert_int_equal(insn->line, l->line);
		last_addr = insn->addr;
		insns++;
	}
	assert_int_equal(lines, s->annotated.lines.nlines);
	assert_int_equal(insns, s->annotated.code.n);
}

/* d in Lines: the function's instructions under their lines, with the samples at their
 * addresses, its unsampled lines too; the cursor stays on its line or instruction as rows come,
 * n and N go on from an instruction's line, d again goes back to the lines. A function without
 * code says why. */
static void lines_with_disassembly(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	uint64_t start, end, self, total;
	struct disasm *d = disasm_new();
	struct disasm_insn *insns;
	size_t n, a = SIZE_MAX, b = SIZE_MAX;
	const char *why;

	assert_int_equal(module_init(), 0);
	subject_code(path, sizeof(path), &start, &end);
	assert_int_equal(disasm_function(d, path, start, end, &insns, &n, &why), 0);
	for (size_t i = 0; i < n; i++) {
		if (insns[i].file && a == SIZE_MAX)
			a = i;
		else if (insns[i].file && insns[i].line != insns[a].line)
			b = i;
	}
	assert_true(a != SIZE_MAX && b != SIZE_MAX); /* two lines of code */

	uint32_t subject = profile_func(f->p, module, "disasm_subject", start);
	uint32_t funcs[] = { f->main_, subject };
	uint32_t sa[] = { PROFILE_NO_SITE, profile_site(f->p, subject, insns[a].addr, insns[a].file,
							insns[a].line) };
	uint32_t sb[] = { PROFILE_NO_SITE, profile_site(f->p, subject, insns[b].addr, insns[b].file,
							insns[b].line) };

	profile_func_code(f->p, subject, path, start, end);
	for (int i = 0; i < 7; i++)
		profile_add_sites(f->p, 1, 11, funcs, sa, 2);
	for (int i = 0; i < 3; i++)
		profile_add_sites(f->p, 1, 11, funcs, sb, 2);
	new_snapshot(f);
	while (f->s.top[list(f)->cursor].func != subject && list(f)->cursor + 1 < list(f)->rows)
		key(f, KEY_DOWN);
	key(f, 'a');
	assert_int_equal(f->s.lines_func, subject);
	assert_int_equal(list(f)->rows, 2);
	assert_int_equal(cursor_line(f), insns[a].line);

	key(f, 'd');
	assert_true(f->s.lines_asm);
	assert_null(f->s.annotated.code_why);
	assert_int_equal(f->s.annotated.code.n, n);
	assert_true(list(f)->rows == f->s.annotated.lines.nlines + n);
	assert_true(f->s.annotated.lines.nlines >= 2);
	assert_interleaved(f);
	assert_int_equal(cursor_row(f)->insn, TUI_NO_INSN);
	assert_int_equal(f->s.annotated.lines.lines[cursor_row(f)->line].line, insns[a].line);
	annotate_code_samples(&f->s.annotated.code, a, &self, &total);
	assert_int_equal(self, 7);
	annotate_code_samples(&f->s.annotated.code, b, &self, &total);
	assert_int_equal(total, 3);

	/* the cursor on the last instruction; a new line before it: it stays on that address, the
	 * disassembly is not made again */
	key(f, KEY_END);
	assert_int_not_equal(cursor_row(f)->insn, TUI_NO_INSN);
	uint64_t addr = f->s.annotated.code.insns[cursor_row(f)->insn].addr;
	size_t row = list(f)->cursor;
	const struct disasm_insn *made = f->s.annotated.code.insns;
	uint32_t sx[] = { PROFILE_NO_SITE, profile_site(f->p, subject, 1, "/a/first.c", 1) };

	for (int i = 0; i < 20; i++)
		profile_add_sites(f->p, 1, 11, funcs, sx, 2);
	new_snapshot(f);
	assert_ptr_equal(f->s.annotated.code.insns, made);
	assert_int_equal(list(f)->cursor, row + 1);
	assert_int_equal(f->s.annotated.code.insns[cursor_row(f)->insn].addr, addr);
	assert_interleaved(f);

	/* n and N by heat (first.c 20, a 7, b 3), from an instruction its line's place */
	key(f, KEY_HOME);
	assert_int_equal(cursor_line(f), 1);
	key(f, 'n');
	assert_int_equal(cursor_line(f), insns[a].line);
	key(f, KEY_DOWN);
	assert_int_not_equal(cursor_row(f)->insn, TUI_NO_INSN);
	key(f, 'n');
	assert_int_equal(cursor_line(f), insns[b].line);
	key(f, 'N');
	assert_int_equal(cursor_line(f), insns[a].line);
	key(f, 'N');
	assert_int_equal(cursor_line(f), 1);

	/* d on an instruction of the upper of a's and b's lines: the lines alone, the cursor on it */
	unsigned upper = insns[a].line < insns[b].line ? insns[a].line : insns[b].line;

	while (cursor_line(f) != upper)
		key(f, 'n');
	key(f, KEY_DOWN);
	assert_int_not_equal(cursor_row(f)->insn, TUI_NO_INSN);
	key(f, 'd');
	assert_false(f->s.lines_asm);
	assert_int_equal(list(f)->rows, 3);
	assert_int_equal(cursor_line(f), upper);

	/* burn has no code address: the reason, and the lines alone */
	key(f, TUI_ESC);
	key(f, KEY_HOME);
	assert_int_equal(f->s.top[0].func, f->burn);
	key(f, 'a');
	add_burn_line(f, 10, 5);
	new_snapshot(f);
	key(f, 'd');
	assert_true(f->s.lines_asm);
	assert_non_null(f->s.annotated.code_why);
	assert_non_null(strstr(f->s.annotated.code_why, "no code address"));
	assert_int_equal(list(f)->rows, f->s.annotated.lines.nlines);
	free(insns);
	disasm_free(d);
}

/* --- the key table: what the hints and the help say is what the keys do ----------------------- */

/* The codes of the table's keys whose name is name[0..len); how many, up to max. */
static int codes_named(const char *name, size_t len, int *codes, int max)
{
	size_t n;
	const struct tui_binding *t = tui_screen_bindings(&n);
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < TUI_BINDING_KEYS && t[i].keys[k]; k++) {
			char one[2];
			const char *kn = tui_keys_name(t[i].keys[k], one);
			bool seen = false;

			if (!kn || strlen(kn) != len || strncmp(kn, name, len))
				continue;
			for (int j = 0; j < found; j++)
				seen |= codes[j] == t[i].keys[k];
			if (!seen && found < max)
				codes[found++] = t[i].keys[k];
		}
	}
	return found;
}

/* Every key named name[0..len) has a binding in each view of views. */
static void assert_named_keys_work(const char *name, size_t len, unsigned views, const char *where)
{
	int codes[8], n = codes_named(name, len, codes, 8);

	if (!n)
		fail_msg("\"%.*s\" in %s names no key of the table", (int)len, name, where);
	for (int i = 0; i < n; i++) {
		for (int v = 0; v < TUI_NVIEWS; v++)
			if ((views & (1u << v)) && !tui_keys_find(codes[i], 1u << v))
				fail_msg("\"%.*s\" in %s does nothing in %s", (int)len, name, where,
					 tui_screen_view_name((enum tui_view)v));
		if ((views & TUI_IN_TIMELINE) && !tui_keys_find(codes[i], TUI_IN_TIMELINE))
			fail_msg("\"%.*s\" in %s does nothing on the timeline", (int)len, name, where);
	}
}

/* Each key of each binding reaches that binding wherever it works: no binding hides another, and
 * none for the filter alone binds a printable key (which would be typed instead). Every key has a
 * name, and a binding shows its hint only where it works. */
static void table_keys_reach_their_bindings(void **state)
{
	size_t n;
	const struct tui_binding *t = tui_screen_bindings(&n);

	(void)state;
	assert_non_null(t[0].help);
	for (size_t i = 0; i < n; i++) {
		const struct tui_binding *b = &t[i];

		assert_true(b->keys[0] != 0);
		assert_true(b->where != 0);
		assert_true(b->run || b->timeline || b->action != TUI_ACT_NONE);
		assert_int_equal(b->hint.in & ~b->where, 0);
		assert_true(!b->hint.label || (b->hint.in && b->hint.at > 0));
		for (int k = 0; k < TUI_BINDING_KEYS && b->keys[k]; k++) {
			int key = b->keys[k];
			char one[2];

			if (!tui_keys_name(key, one))
				fail_msg("binding %zu: key %d has no name", i, key);
			for (int v = 0; v < TUI_NVIEWS; v++)
				if (b->where & (1u << v))
					assert_ptr_equal(tui_keys_find(key, 1u << v), b);
			if (b->where & TUI_IN_TIMELINE)
				assert_ptr_equal(tui_keys_find(key, TUI_IN_TIMELINE), b);
			if (!(b->where & TUI_IN_FILTER))
				continue;
			if (key >= ' ' && key <= '~')
				assert_true(b->where & TUI_IN_VIEWS); /* typed: 'k' is a letter there */
			else
				assert_ptr_equal(tui_keys_find(key, TUI_IN_FILTER), b);
		}
	}
}

/* The keys of a hint, keys[0..len), work in views: "Enter/Left/Right", "<>" (two keys), "/". */
static void assert_hint_keys_work(const char *keys, size_t len, unsigned views, const char *where)
{
	const char *slash = len > 1 ? memchr(keys, '/', len) : NULL;
	int codes[8];

	if (slash) {
		assert_hint_keys_work(keys, (size_t)(slash - keys), views, where);
		assert_hint_keys_work(slash + 1, len - (size_t)(slash - keys) - 1, views, where);
	} else if (codes_named(keys, len, codes, 8) || isalpha((unsigned char)*keys)) {
		assert_named_keys_work(keys, len, views, where);
	} else {
		for (size_t c = 0; c < len; c++)
			assert_named_keys_work(keys + c, 1, views, where);
	}
}

/* Each view's bottom line fits 80 columns (dropping the least important hints), shows them all on
 * a wide terminal, starts as the TUI test expects, has its hints in a place of their own, and
 * every key it names does something in that view. */
static void hint_lines_name_working_keys(void **state)
{
	static const char *const want[TUI_NVIEWS] = {
		" ?:help  Tab:view  /:filter  <>:sort  Enter:callers  a:annotate  s:save  q:quit",
		" ?:help  Tab:view  Enter/Left/Right:open/close  %:relative  a:annotate  q:quit",
		" ?:help  Tab:view  Enter/Left/Right:open/close  *:all  a:annotate  q:quit",
		" ?:help  Tab:view  Enter:only this thread  /:filter  space:pause  q:quit",
		" ?:help  Tab:view  h/j/k/l:move  Enter:zoom  Esc:out  a:annotate  q:quit",
		" ?:help  Tab:view  Esc:back  n/N:next hot  d:asm  %:of all  space:pause  q:quit",
	};
	static const char *const wide[TUI_NVIEWS] = {
		" ?:help  Tab:view  /:filter  <>:sort  Enter:callers  a:annotate  space:pause  "
		"t:timeline  +-:freq  s:save  b:baseline  q:quit",
		" ?:help  Tab:view  Enter/Left/Right:open/close  *:all  %:relative  c:callers  "
		"/:filter  a:annotate  t:timeline  b:baseline  q:quit",
		" ?:help  Tab:view  Enter/Left/Right:open/close  *:all  a:annotate  space:pause  "
		"w:window  q:quit",
		" ?:help  Tab:view  Enter:only this thread  /:filter  space:pause  +-:freq  q:quit",
		" ?:help  Tab:view  h/j/k/l:move  Enter:zoom  Esc:out  f:flip  /:filter  a:annotate  "
		"space:pause  t:timeline  b:baseline  q:quit",
		" ?:help  Tab:view  Esc:back  n/N:next hot  d:asm  %:of all  <>:function  space:pause  q:quit",
	};
	size_t n;
	const struct tui_binding *t = tui_screen_bindings(&n);

	(void)state;
	for (int v = 0; v < TUI_NVIEWS; v++) {
		char line[256], where[64];

		tui_keys_hints(1u << v, 200, line, sizeof(line));
		assert_string_equal(line, wide[v]);
		tui_keys_hints(1u << v, 80, line, sizeof(line));
		assert_true(strlen(line) <= 80);
		assert_true(strncmp(line, " ?:help  Tab:view  ", 19) == 0);
		snprintf(where, sizeof(where), "the %s hints", tui_screen_view_name((enum tui_view)v));
		for (char *item = strtok(line, " "); item; item = strtok(NULL, " ")) {
			const char *colon = strchr(item + 1, ':');

			if (!colon)
				continue; /* "this thread": the rest of a label */
			assert_hint_keys_work(item, (size_t)(colon - item), 1u << v, where);
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				assert_false(t[i].hint.label && t[j].hint.label &&
					     (t[i].hint.in & t[j].hint.in & (1u << v)) &&
					     t[i].hint.at == t[j].hint.at);
		tui_keys_hints(1u << v, 80, line, sizeof(line));
		assert_string_equal(line, want[v]);
	}
}

/* The timeline: 100 s of samples on 50 columns (2 s each); the cursor, [ and ] mark a stretch,
 * < > move it, + - widen and narrow it, w and x switch to the window and back to all; the
 * stretch stays in seconds while the run grows. Without a history t says so. */
static void timeline_selects_stretches(void **state)
{
	struct fixture *f = *state;
	uint32_t s1[] = { f->main_, f->pa, f->burn };
	struct snapshot_range r;
	uint64_t from, to;
	double columns[50];
	struct tui_timeline_scale scale;

	key(f, 't');
	assert_false(f->s.timeline.active); /* no history yet */
	profile_set_history(f->p, 600, 0);
	for (uint64_t second = 0; second < 100; second++) {
		profile_set_time(f->p, second * 1000000000ull + 1);
		add_n(f->p, 11, s1, 3, second < 50 ? 2 : 4);
	}
	f->s.timeline.w = 50;
	new_snapshot(f);
	tui_timeline_scale(&f->s.timeline, f->s.live, &scale);
	assert_int_equal(scale.per_column, 2);
	assert_int_equal(scale.columns, 50);
	tui_timeline_columns(f->s.live, &scale, false, columns);
	assert_true(columns[0] == 4 && columns[24] == 4 && columns[25] == 8 && columns[49] == 8);
	assert_false(tui_timeline_range(&f->s.timeline, &r));

	key(f, 't');
	assert_true(f->s.timeline.active);
	assert_int_equal(f->s.timeline.cursor_s, 99);
	key(f, KEY_HOME);
	for (int i = 0; i < 5; i++)
		key(f, KEY_RIGHT);
	assert_int_equal(f->s.timeline.cursor_s, 10);
	assert_int_equal(key(f, '['), TUI_ACT_STRETCH);
	assert_true(tui_timeline_range(&f->s.timeline, &r));
	assert_int_equal(r.from_s, 10);
	assert_int_equal(r.to_s, 100);
	for (int i = 0; i < 10; i++)
		key(f, KEY_RIGHT);
	key(f, ']');
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_int_equal(from, 10);
	assert_int_equal(to, 32);
	key(f, '>');
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_true(from == 12 && to == 34);
	key(f, '-');
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_true(from == 14 && to == 32);
	key(f, '+');
	key(f, '+');
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_true(from == 10 && to == 36);
	for (int i = 0; i < 60; i++)
		key(f, '<');
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_true(from == 0 && to == 26);
	/* Keys the timeline does not take go to the view: Down moves Top's cursor. */
	key(f, KEY_DOWN);
	assert_int_equal(list(f)->cursor, 1);
	assert_true(f->s.timeline.active);

	/* w: the last 10 s, moving with the run; [ fixes it where it is; x: all again. */
	assert_int_equal(key(f, 'w'), TUI_ACT_STRETCH);
	assert_true(tui_timeline_range(&f->s.timeline, &r));
	assert_int_equal(r.last_ns, 10000000000ull);
	assert_true(tui_timeline_bounds(&f->s.timeline, f->s.live, &from, &to));
	assert_true(from == 90 && to == 100);
	assert_int_equal(key(f, 'x'), TUI_ACT_STRETCH);
	assert_false(tui_timeline_range(&f->s.timeline, &r));
	key(f, TUI_ESC);
	assert_false(f->s.timeline.active);
	assert_int_equal(key(f, KEY_LEFT), TUI_ACT_NONE); /* Top's own Left again */

	/* A run twice as long: 4 s per column, the cursor's second unchanged. */
	profile_set_time(f->p, 199 * 1000000000ull + 1);
	add_n(f->p, 11, s1, 3, 1);
	new_snapshot(f);
	tui_timeline_scale(&f->s.timeline, f->s.live, &scale);
	assert_int_equal(scale.per_column, 4);
	assert_int_equal(f->s.timeline.cursor_s, 0);
}

/* The timeline's bottom line fits 80 columns and names keys that work there. */
static void timeline_hints_name_working_keys(void **state)
{
	char line[256];

	(void)state;
	tui_keys_hints(TUI_IN_TIMELINE, 80, line, sizeof(line));
	assert_true(strlen(line) <= 80);
	assert_true(strncmp(line, " Left/Right:cursor  []:start/end  <>:move  ", 43) == 0);
	assert_non_null(strstr(line, "Enter:done"));
	for (char *item = strtok(line, " "); item; item = strtok(NULL, " ")) {
		const char *colon = strchr(item + 1, ':');

		if (colon)
			assert_hint_keys_work(item, (size_t)(colon - item), TUI_IN_TIMELINE,
					      "the timeline hints");
	}
}

/* The views a help text starts with ("Tree, Callers: "); every view when it names none. */
static unsigned help_views(const char *text)
{
	unsigned views = 0;
	const char *p = text;

	if (!strncmp(text, "Timeline: ", 10))
		return TUI_IN_TIMELINE;
	for (;;) {
		int v = 0;

		while (v < TUI_NVIEWS && strncmp(p, tui_screen_view_name((enum tui_view)v),
						 strlen(tui_screen_view_name((enum tui_view)v))))
			v++;
		if (v == TUI_NVIEWS)
			return TUI_IN_VIEWS;
		views |= 1u << v;
		p += strlen(tui_screen_view_name((enum tui_view)v));
		if (*p == ':')
			return views;
		if (strncmp(p, ", ", 2))
			return TUI_IN_VIEWS;
		p += 2;
	}
}

/* The help's second line: "KEYS: scroll; other keys close", each of KEYS scrolling the help (and
 * every key that does named). */
static void assert_help_keys_line(const char *line)
{
	size_t n;
	const struct tui_binding *t = tui_screen_bindings(&n);
	const char *colon = strstr(line, ": scroll; other keys close");
	char named[TUI_HELP_WIDTH + 2];

	assert_non_null(colon);
	assert_string_equal(colon, ": scroll; other keys close");
	snprintf(named, sizeof(named), " %.*s ", (int)(colon - line), line);
	for (const char *k = named + 1; *k;) {
		size_t len = strcspn(k, " ");
		int codes[8], found = len ? codes_named(k, len, codes, 8) : 0;

		if (len && !found)
			fail_msg("\"%.*s\" in the help's keys names no key", (int)len, k);
		for (int i = 0; i < found; i++)
			if (!tui_keys_find(codes[i], TUI_IN_HELP))
				fail_msg("\"%.*s\" does not scroll the help", (int)len, k);
		k += len + (k[len] == ' ');
	}
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; (t[i].where & TUI_IN_HELP) && k < TUI_BINDING_KEYS && t[i].keys[k]; k++) {
			char one[2], word[32];

			snprintf(word, sizeof(word), " %s ", tui_keys_name(t[i].keys[k], one));
			if (!strstr(named, word))
				fail_msg("the help's keys do not name%s", word);
		}
	}
}

/* The words of help's lines from the first binding's on, in order, each followed by a blank. */
static void help_words(const struct tui_help *help, char *out, size_t size)
{
	out[0] = 0;
	for (int i = TUI_HELP_HEAD + 1; i < help->n; i++) {
		char line[TUI_HELP_WIDTH], *save = NULL;

		snprintf(line, sizeof(line), "%s", help->line[i]);
		for (char *w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			strncat(out, w, size - strlen(out) - 1);
			strncat(out, " ", size - strlen(out) - 1);
		}
	}
}

/* Wrapped for an 80-column terminal, the help says the same, word for word, in lines of at most
 * 76 columns, with the text still after the keys column. */
static void help_wraps_to_the_terminal(void **state)
{
	static struct tui_help wide, narrow;
	static char wide_words[16384], narrow_words[16384];

	(void)state;
	tui_keys_help(&wide, TUI_HELP_WIDTH);
	tui_keys_help(&narrow, 76);
	assert_true(narrow.n > wide.n && narrow.n < TUI_HELP_LINES);
	for (int i = 0; i <= TUI_HELP_HEAD; i++)
		assert_string_equal(narrow.line[i], wide.line[i]);
	for (int i = TUI_HELP_HEAD + 1; i < narrow.n; i++) {
		const char *line = narrow.line[i];

		assert_true(strlen(line) > 23 && strlen(line) <= 76);
		assert_true(line[21] == ' ' && line[22] == ' ' && line[23] != ' ');
	}
	help_words(&wide, wide_words, sizeof(wide_words));
	help_words(&narrow, narrow_words, sizeof(narrow_words));
	assert_true(strlen(wide_words) > 1000 && strlen(wide_words) < sizeof(wide_words) - 1);
	assert_string_equal(narrow_words, wide_words);
}

/* Every key the help names works in the views its line says (a line with no key names has those
 * of the line above, and its views), and every key of every view's binding is named in the help. */
static void help_names_working_keys(void **state)
{
	struct tui_help h;
	size_t n;
	const struct tui_binding *t = tui_screen_bindings(&n);
	char keys[TUI_HELP_WIDTH] = "", named[1024] = " ";
	unsigned views = TUI_IN_VIEWS;

	(void)state;
	tui_keys_help(&h, TUI_HELP_WIDTH);
	assert_true(h.n > 20 && h.n < TUI_HELP_LINES);
	assert_string_equal(h.line[0], "proftop keys, the most used first");
	assert_help_keys_line(h.line[1]);
	assert_string_equal(h.line[2], "");
	/* The most used first: quitting, this help, the views. */
	assert_true(!strncmp(h.line[3], "q F10 ", 6) && !strncmp(h.line[4], "? F1 h ", 7));
	assert_true(!strncmp(h.line[5], "Tab Shift-Tab 1 2 3 4 ", 22));
	for (int i = TUI_HELP_HEAD + 1; i < h.n; i++) { /* keys in 21 columns, two spaces, text */
		const char *line = h.line[i], *text = line + 23;
		char where[160];

		assert_true(strlen(line) > 23 && strlen(line) < TUI_HELP_WIDTH - 1);
		assert_true(line[21] == ' ' && line[22] == ' ' && text[0] != ' ');
		if (line[0] != ' ' || help_views(text) != TUI_IN_VIEWS)
			views = help_views(text); /* Enter's lines name their views */
		if (line[0] != ' ') {
			snprintf(keys, sizeof(keys), "%.21s", line);
			strncat(named, keys, sizeof(named) - strlen(named) - 2);
			strcat(named, " ");
		}
		snprintf(where, sizeof(where), "help line \"%s\"", line);
		for (const char *k = keys; *k;) {
			size_t len = strcspn(k, " ");

			if (len)
				assert_named_keys_work(k, len, views, where);
			k += len + (k[len] == ' ');
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!(t[i].where & (TUI_IN_VIEWS | TUI_IN_TIMELINE)))
			continue; /* the filter's own keys: told on the line of / */
		for (int k = 0; k < TUI_BINDING_KEYS && t[i].keys[k]; k++) {
			char one[2], word[32];

			snprintf(word, sizeof(word), " %s ", tui_keys_name(t[i].keys[k], one));
			if (!strstr(named, word))
				fail_msg("the help does not name%s", word);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(selection_follows_its_function, setup, teardown),
		cmocka_unit_test(timeline_hints_name_working_keys),
		cmocka_unit_test_setup_teardown(timeline_selects_stretches, setup, teardown),
		cmocka_unit_test_setup_teardown(mode_change_keeps_the_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(filter_as_typed, setup, teardown),
		cmocka_unit_test_setup_teardown(tree_keys_open_and_close, setup, teardown),
		cmocka_unit_test_setup_teardown(callers_follow_the_top_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(threads_scope_every_view, setup, teardown),
		cmocka_unit_test_setup_teardown(pause_keeps_the_shown_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(actions_for_the_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(baseline_compares_views, setup, teardown),
		cmocka_unit_test_setup_teardown(baseline_only_rows_keep_the_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(clicks_select, setup, teardown),
		cmocka_unit_test_setup_teardown(flame_keys_and_clicks, setup, teardown),
		cmocka_unit_test_setup_teardown(enter_per_view, setup, teardown),
		cmocka_unit_test_setup_teardown(plus_minus_per_view, setup, teardown),
		cmocka_unit_test_setup_teardown(editing_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(escape_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(keys_across_views, setup, teardown),
		cmocka_unit_test_setup_teardown(p_steps_the_names, setup, teardown),
		cmocka_unit_test_setup_teardown(message_and_help, setup, teardown),
		cmocka_unit_test_setup_teardown(help_scrolls, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_from_top, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_from_tree_paused_and_windowed, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_in_a_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_window_keeps_the_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_with_disassembly, setup, teardown),
		cmocka_unit_test(table_keys_reach_their_bindings),
		cmocka_unit_test(hint_lines_name_working_keys),
		cmocka_unit_test(help_names_working_keys),
		cmocka_unit_test(help_wraps_to_the_terminal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
