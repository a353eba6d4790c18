/* tui_screen.h — the TUI's state and its two halves: tui_screen.c turns keys and mouse clicks into
 * state changes and rebuilds the view rows, tui_draw.c draws the state. The loop in tui.c owns the
 * terminal, the session and the clock. No curses types here; keys are curses key codes as ints.
 *
 * Selection survives new snapshots: each view remembers what its cursor is on by a key that does
 * not change between snapshots (a function id, a tree path hash, a thread id) and finds it again
 * after every rebuild. */
#ifndef PROFTOP_TUI_SCREEN_H
#define PROFTOP_TUI_SCREEN_H

#include "proftop/theme.h"
#include "proftop/view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum tui_view {
	TUI_TOP,
	TUI_TREE,
	TUI_CALLERS,
	TUI_THREADS,
	TUI_NVIEWS,
};

/* What a key asks of the loop (the screen handles everything else itself). */
enum tui_action {
	TUI_ACT_NONE,
	TUI_ACT_QUIT,
	TUI_ACT_FREQ_UP,
	TUI_ACT_FREQ_DOWN,
	TUI_ACT_SAVE,
	TUI_ACT_WINDOW,        /* `w` toggled screen->window */
	TUI_ACT_THEME,         /* `T`: load the next theme */
	TUI_ACT_PAUSE,         /* space toggled screen->paused */
	TUI_ACT_REDRAW,        /* Ctrl-L: repaint the whole terminal */
};

#define TUI_SPARK_MAX 64
#define TUI_FOCUS_MAX 256
#define TUI_FILTER_MAX 128

struct tui_list {
	size_t rows;           /* how many */
	size_t cursor, top;    /* the selected row, the first row on screen */
	uint64_t key;          /* what the cursor is on */
	bool has_key;
};

struct tui_screen {
	/* The profile in the tables (frozen while paused) and the newest one, for the header. Both
	 * are references the screen holds. */
	struct snapshot *shown, *live;
	bool stale;            /* the rows must be rebuilt from shown */

	enum tui_view view;
	bool help, paused, window, editing;
	char filter[TUI_FILTER_MAX];
	enum view_sort sort;
	pid_t thread;          /* scope: only this thread's samples; 0 for all */
	uint32_t callers_func; /* the function the callers view is about; 0: the hottest */
	uint32_t focus[TUI_FOCUS_MAX]; /* the tree's "relative to" node, as a path of functions */
	size_t nfocus;
	bool focused;
	struct view_expansion tree_open, callers_open;

	/* Rows, rebuilt by tui_screen_rebuild(). */
	struct view_row *top;
	struct view_tree tree_src, callers_src;
	struct view_tree_row *tree, *callers;
	size_t tree_cap, callers_cap;
	struct view_thread_row *threads;
	struct tui_list lists[TUI_NVIEWS];

	/* The header. */
	char *target;          /* the command line or the PIDs */
	char state[96];        /* "running", "exited with status 3", ... */
	bool ended;
	double rate[5];        /* per second, the counters in struct counters order */
	uint64_t spark[TUI_SPARK_MAX]; /* samples per refresh, oldest first */
	size_t nspark;
	char message[160];
	bool message_is_error;
	uint64_t message_ns;   /* when it was set (util_now_ns) */
	bool utf8;             /* the terminal takes UTF-8: tree marks and sparkline blocks */

	/* Drawing: the theme and the geometry of the last frame, for mouse clicks. */
	struct theme theme;
	unsigned long attrs[THEME_NROLES]; /* curses attributes per role */
	int list_y, list_h;    /* screen lines of the rows */
	int tabs_y, columns_y; /* -1 when not shown */
	int tab_x[TUI_NVIEWS + 1];
	int column_x[8];       /* where each top-view column starts; column_x[n] = end */
};

void tui_screen_init(struct tui_screen *screen, const char *target);
void tui_screen_free(struct tui_screen *screen);
/* Take snapshot as the newest (a reference the screen keeps); unless paused it is also shown. */
void tui_screen_set_snapshot(struct tui_screen *screen, struct snapshot *snapshot);
/* Rebuild the current view's rows if anything changed. */
void tui_screen_rebuild(struct tui_screen *screen);
/* A key (curses code) or a mouse click at (y, x) (key KEY_MOUSE); returns what the loop must do. */
enum tui_action tui_screen_key(struct tui_screen *screen, int key);
enum tui_action tui_screen_click(struct tui_screen *screen, int y, int x, bool wheel_up,
				 bool wheel_down);
void tui_screen_message(struct tui_screen *screen, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* tui_draw.c: the colours of theme for this terminal (after initscr), and a whole frame. */
void tui_draw_theme(struct tui_screen *screen, const struct theme *theme);
void tui_draw(struct tui_screen *screen);

#endif
