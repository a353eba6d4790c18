/* tui.h — the interactive frontend: a live ncurses screen over the same view rows batch mode
 * prints. Four views (top functions, call tree, callers, threads), a header with the sampling
 * counters, themes, and keys for everything (? lists them).
 *
 * Threads: the screen is drawn on the thread that runs the session (session_run() calls the
 * screen's ops there) and only ever takes references to published snapshots, so a slow terminal
 * delays frames, never the sampler or the collector. */
#ifndef PROFTOP_TUI_H
#define PROFTOP_TUI_H

#include "proftop/view_name.h"

#include <stdbool.h>

struct session;

struct tui_options {
	double window;         /* seconds in the time window `w` shows */
	const char *theme;     /* name or path; NULL: default (mono under NO_COLOR) */
	enum view_names names; /* --names: how function names show at first (key p) */
};

#define TUI_DEFAULT_WINDOW 10.0
#define TUI_MIN_REFRESH 0.1

/* Whether the screen can run here: standard output is a terminal, TERM names a terminal that is
 * not dumb and whose description exists, and there is a terminal to read keys from. */
bool tui_usable(void);

/* Show the session until q or a signal, and return proftop's exit status (from session_run()).
 * The terminal is restored on every way out, fatal errors included. Returns -1 without running
 * the session when the terminal could not be set up (the caller then falls back to batch mode). */
int tui_run(struct session *session, const struct tui_options *options);

#endif
