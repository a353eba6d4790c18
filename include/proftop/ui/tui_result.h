/* tui_result.h — what a sub-view's handler (the timeline's, the Flame view's, the Lines view's)
 * asks of the screen, as htop's Panel handlers return a HandlerResult: the sub-views change only
 * their own state and never call into the screen; tui_screen.c acts on what they return. */
#ifndef PROFTOP_TUI_RESULT_H
#define PROFTOP_TUI_RESULT_H

#include <stdbool.h>

struct tui_result {
	bool rebuild;          /* the rows must be made again */
	bool message;          /* say text on the message line (an error when error) */
	bool clear_message;    /* take the message line's text away */
	bool error;
	char text[160];
};

/* A result that says text (printf-style). */
struct tui_result tui_result_say(bool error, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
