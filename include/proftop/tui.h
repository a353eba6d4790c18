/* tui.h — the interactive frontend: a live ncurses screen over the same view rows batch mode
 * prints. Four views (top functions, call tree, callers, threads), a header with the sampling
 * counters, themes, and keys for everything (? lists them).
 *
 * Threads: the TUI runs on the calling thread and only ever takes references to published
 * snapshots, so a slow terminal delays frames, never the sampler or the collector. */
#ifndef PROFTOP_TUI_H
#define PROFTOP_TUI_H

#include <stdbool.h>

struct snapshot;
struct session;

struct export_options;

struct tui_options {
	double refresh;        /* seconds between screen refreshes (at least TUI_MIN_REFRESH) */
	double window;         /* seconds in the time window `w` shows */
	double duration;       /* stop profiling after this many seconds; 0: never */
	const char *theme;     /* name or path; NULL: default (mono under NO_COLOR) */
	const struct export_options *export; /* where `s` saves; NULL: tmon.out, tmon.out.1, ... */
};

#define TUI_DEFAULT_WINDOW 10.0
#define TUI_MIN_REFRESH 0.1

/* Whether the screen can run here: standard output is a terminal, TERM names a terminal that is
 * not dumb and whose description exists, and there is a terminal to read keys from. */
bool tui_usable(void);

/* Show the session until q or a signal: then end it (a launched command is terminated, attached
 * processes are left running) and return proftop's exit status. The terminal is restored on
 * every way out, fatal errors included. Returns -1 without touching the session when the terminal
 * could not be set up (the caller then falls back to batch mode). */
int tui_run(struct session *session, const struct tui_options *options);

/* Browse a fixed profile (e.g. a saved one) until q; title says where it came from. Returns 0, or
 * -1 when the terminal could not be set up. */
int tui_browse(struct snapshot *snapshot, const char *title,
	       const struct tui_options *options);

#endif
