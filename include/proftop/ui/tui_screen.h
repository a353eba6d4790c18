/* tui_screen.h — the TUI's state and its halves: tui_screen.c turns keys (through the key table,
 * which tui_keys.c also reads for the hints and the help) and mouse clicks into state changes and
 * rebuilds the view rows, tui_draw.c draws the state. The loop in tui.c owns the terminal, the
 * session and the clock. No curses types here; keys are curses key codes as ints.
 *
 * Selection survives new snapshots: each view remembers what its cursor is on by a key that does
 * not change between snapshots (a function id, a tree path hash, a thread id) and finds it again
 * after every rebuild (a source line by its file and number).
 *
 * The Lines view reads the shown snapshot's sites: a stretch's count its self samples (no totals),
 * and under a thread scope a snapshot of that thread's sites is made from the node sites. */
#ifndef PROFTOP_TUI_SCREEN_H
#define PROFTOP_TUI_SCREEN_H

#include "proftop/annotate.h"
#include "proftop/selfcost.h"
#include "proftop/ui/theme.h"
#include "proftop/ui/tui_flame.h"
#include "proftop/ui/tui_lines.h"
#include "proftop/ui/tui_timeline.h"
#include "proftop/view.h"
#include "proftop/view_flame.h"
#include "proftop/view_name.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum tui_view {
	TUI_TOP,
	TUI_TREE,
	TUI_CALLERS,
	TUI_THREADS,
	TUI_FLAME,             /* the call tree as a flame graph */
	TUI_LINES,             /* one function per source line: opened with `a`, not by Tab */
	TUI_NVIEWS,
};

/* What a key asks of the loop (the screen handles everything else itself). */
enum tui_action {
	TUI_ACT_NONE,
	TUI_ACT_QUIT,
	TUI_ACT_FREQ_UP,
	TUI_ACT_FREQ_DOWN,
	TUI_ACT_SAVE,
	TUI_ACT_STRETCH,       /* the stretch shown changed (stretch_changed; tui_timeline.h) */
	TUI_ACT_BASELINE,      /* `b`/`B`: the baseline changed (base_raw; NULL: dropped) */
	TUI_ACT_THEME,         /* `T`: load the next theme */
	TUI_ACT_MODE,          /* `m`: show the next mode's profile */
	TUI_ACT_PAUSE,         /* space toggled screen->paused */
	TUI_ACT_REDRAW,        /* Ctrl-L: repaint the whole terminal */
};

#define TUI_NCOUNTERS 15       /* the uint64_t fields of struct counters */
#define TUI_FOCUS_MAX 256
#define TUI_FILTER_MAX 128

struct tui_list {
	size_t rows;           /* how many */
	size_t cursor, top;    /* the selected row, the first row on screen */
	uint64_t key;          /* what the cursor is on */
	bool has_key;
	/* The mode shown changed (`m`): a key whose row is not in this mode's profile is kept, to
	 * be found again in another mode, until the cursor is moved. */
	bool keep_key;
};

struct tui_screen {
	/* The profile in the tables (frozen while paused) and the newest one, for the header. Both
	 * are references the screen holds. */
	struct snapshot *shown, *live;
	/* What shown is made of: the same, or with inlined frames folded. */
	struct snapshot *shown_raw;
	bool fold_inlined;     /* `i`: inlined functions count in their callers */
	enum view_names names; /* `p`: function names whole or shortened, as drawn (filters and
				* sorting read whole names) */
	bool stale;            /* the rows must be rebuilt from shown */

	enum tui_view view;
	bool help, paused, editing;
	/* The help: the first of its lines under the head (TUI_HELP_HEAD) shown, and as last drawn
	 * how many lines there are under the head and how many of them the box shows. */
	int help_top, help_lines, help_rows;
	char filter[TUI_FILTER_MAX];
	enum view_sort sort;
	pid_t thread;          /* scope: only this thread's samples; 0 for all */
	uint32_t callers_func; /* the function the callers view is about; 0: the hottest */
	uint32_t focus[TUI_FOCUS_MAX]; /* the tree's "relative to" node, as a path of functions */
	size_t nfocus;
	bool focused;
	struct view_expansion tree_open, callers_open;
	uint32_t lines_func;   /* the function the Lines view annotates; 0: none yet */
	enum tui_view lines_from; /* where `a` was pressed: Esc goes back there */
	bool lines_of_profile; /* percentages of the whole profile, not of the function */
	bool lines_fresh;      /* just opened: the cursor goes to the hottest line, centred */
	bool lines_center;     /* centre the cursor's row at the next frame */
	bool lines_asm;        /* `d`: each line's instructions under it */

	/* Rows, rebuilt by tui_screen_rebuild(). */
	struct view_row *top;
	struct view_tree tree_src, callers_src;
	struct view_tree_row *tree, *callers;
	size_t tree_cap, callers_cap;
	struct view_thread_row *threads;
	struct tui_lines annotated; /* the Lines view's rows (tui_lines.c) */
	struct tui_list lists[TUI_NVIEWS];

	struct tui_flame flame;    /* the Flame view (tui_flame.c) */
	struct tui_timeline timeline; /* the stretch shown, the timeline (tui_timeline.c) */

	/* The baseline every view compares with (b, --baseline): base_raw as it was taken, and
	 * baseline made from it as shown is made from shown_raw (inlined frames folded or not),
	 * matched against shown at each rebuild. NULL: none. */
	struct snapshot *base_raw;
	struct diff_base *baseline;
	char base_label[64];       /* "seconds 0-12", or the file's name */

	/* The header. */
	char *target;          /* the command line or the PIDs */
	char state[96];        /* "running", "exited with status 3", ... */
	char serving[80];      /* --serve's address ("" when not serving) */
	bool serving_exposed;  /* ... which other machines reach */
	bool ended;
	double rate[TUI_NCOUNTERS]; /* per second, the counters in struct counters order */
	struct selfcost cost_before; /* proftop's at the snapshot before live (none: whole run) */
	char message[160];
	bool message_is_error;
	uint64_t message_ns;   /* when it was set (util_now_ns) */
	bool utf8;             /* the terminal takes UTF-8: tree marks and timeline blocks */

	/* Drawing: the theme and the geometry of the last frame, for mouse clicks. */
	struct theme theme;
	unsigned long attrs[THEME_NROLES]; /* curses attributes per role */
	int list_y, list_h;    /* screen lines of the rows */
	int tabs_y, columns_y; /* -1 when not shown */
	int tab_x[TUI_NVIEWS + 1];
	int column_x[8];       /* where each top-view column starts; column_x[n] = end */
	enum view_sort column_sort[7]; /* what a click on each sorts by (-1: nothing) */
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

/* Compare with raw from now on (a reference the screen takes; NULL: with nothing), named label. */
void tui_screen_set_baseline(struct tui_screen *screen, struct snapshot *raw, const char *label);

/* The function the cursor is on (the Lines view's function there); 0: none, or rows not rebuilt
 * since a change. */
uint32_t tui_screen_selected_func(const struct tui_screen *screen);

/* The snapshot the Lines rows were made from (annotated.src), else the shown one. */
const struct snapshot *tui_screen_lines_snapshot(const struct tui_screen *screen);

/* "Top", "Tree", "Callers", "Threads", "Lines": the tabs and the help name the views alike. */
const char *tui_screen_view_name(enum tui_view view);

/* --- the key table -------------------------------------------------------------------------------
 *
 * Every key the screen takes is one binding in one table (tui_screen.c, in the help's order): its
 * keys, where they work, what they do, the help's explanation and its hint in the bottom line.
 * tui_screen_key() runs the binding a key has where the screen is, and tui_keys.c writes each
 * view's bottom line and the help from the same table, so what the screen says cannot drift from
 * what it does.
 *
 * A key has at most one binding per view, and one while typing; Enter, + and - have a binding
 * per group of views.
 * While a filter is typed, printable keys go into it; a binding for TUI_IN_FILTER alone edits it
 * (Enter, Esc, Backspace, Ctrl-U), and one for TUI_IN_FILTER and the views ends the typing, then
 * does what it does in the view (Up, Tab...). Other keys are ignored while typing.
 * On the timeline (after t) a key's TUI_IN_TIMELINE binding comes first, then the view's.
 * With the help shown only TUI_IN_HELP bindings work (they scroll it); any other key closes it. */

/* Where a binding works: a bit per view, and one for while a filter is typed. */
enum {
	TUI_IN_TOP = 1 << TUI_TOP,
	TUI_IN_TREE = 1 << TUI_TREE,
	TUI_IN_CALLERS = 1 << TUI_CALLERS,
	TUI_IN_THREADS = 1 << TUI_THREADS,
	TUI_IN_FLAME = 1 << TUI_FLAME,
	TUI_IN_LINES = 1 << TUI_LINES,
	TUI_IN_TREES = TUI_IN_TREE | TUI_IN_CALLERS,
	TUI_IN_VIEWS = (1 << TUI_NVIEWS) - 1,
	TUI_IN_PROFILE = TUI_IN_VIEWS & ~TUI_IN_LINES, /* the views of the whole profile */
	TUI_IN_LISTS = TUI_IN_VIEWS & ~TUI_IN_FLAME,   /* the views of rows */
	TUI_IN_FILTER = 1 << TUI_NVIEWS,
	TUI_IN_TIMELINE = 1 << (TUI_NVIEWS + 1), /* after t: before the view's own bindings */
	TUI_IN_HELP = 1 << (TUI_NVIEWS + 2),     /* while the help is shown: nothing else */
};

/* Keys curses has no KEY_* name for. */
enum {
	TUI_CTRL_H = 8,        /* Backspace on some terminals */
	TUI_CTRL_L = 12,
	TUI_CTRL_U = 21,
	TUI_ESC = 27,
	TUI_DEL = 127,         /* Backspace on most */
};

#define TUI_BINDING_KEYS 6

struct tui_hint {
	const char *label;     /* "/:filter"; NULL: no hint */
	unsigned in;           /* TUI_IN_*: the views whose bottom line shows it */
	int at;                /* its place in those lines, from the left */
	int rank;              /* 1 always shown; a line too wide for the terminal drops the
				* highest rank first (the rightmost of a rank first) */
};

struct tui_binding {
	int keys[TUI_BINDING_KEYS]; /* curses codes; the unused ones 0 */
	unsigned where;        /* TUI_IN_* */
	void (*run)(struct tui_screen *screen, int arg); /* NULL: the action alone */
	tui_timeline_handler *timeline; /* or a timeline handler, whose result the screen takes */
	int arg;               /* what run is given: a view, a step, a direction */
	enum tui_action action; /* asked of the loop after run */
	const char *help;      /* \n splits lines; NULL: told on the line of the binding above */
	struct tui_hint hint;
};

/* The table and its length. */
const struct tui_binding *tui_screen_bindings(size_t *n);

/* tui_keys.c: the first binding of key that works somewhere in where (TUI_IN_* bits); NULL if
 * none. */
const struct tui_binding *tui_keys_find(int key, unsigned where);
/* How help and hints write key ("Up", "Tab", "Ctrl-L", "q"); NULL for a key without a name.
 * Single characters are written into one. */
const char *tui_keys_name(int key, char one[static 2]);
/* The bottom line where the screen is (a view's TUI_IN_* bit, or TUI_IN_TIMELINE) for a terminal
 * width columns wide: its bindings' hints, in the order of their places, as many of them as fit
 * by rank. */
void tui_keys_hints(unsigned where, int width, char *buf, size_t size);

#define TUI_HELP_LINES 192
#define TUI_HELP_WIDTH 128
#define TUI_HELP_HEAD 2        /* the title and the line of the help's keys: they never scroll */

struct tui_help {
	char line[TUI_HELP_LINES][TUI_HELP_WIDTH]; /* line[0] is the title, line[1] the help's keys */
	int n;
};

/* The help: a title, a line naming the help's own keys, then a line per binding with help text, its
 * keys and those of the bindings after it without, and which views it works in when not all.
 * Its text is wrapped at blanks to lines of width columns (from 60; narrower, and past
 * TUI_HELP_WIDTH, lines are cut). */
void tui_keys_help(struct tui_help *help, int width);

/* tui_draw.c: the colours of theme for this terminal (after initscr), and a whole frame. */
void tui_draw_theme(struct tui_screen *screen, const struct theme *theme);
void tui_draw(struct tui_screen *screen);

#endif
