/* diag.h — the engine's diagnostics channel: how the sampler, the collector and what they call
 * (symbolizer, unwinder, profile) say what went wrong without printing and without dying. As with
 * perf's perf_error_ops, the frontend decides where a report shows: the screen's status line,
 * batch mode's standard error.
 *
 * Any thread may report; reports wait in a small queue and an eventfd becomes readable. The
 * frontend's thread takes them with diag_deliver() and hands each to the ops it passes, so no
 * worker thread ever touches the terminal. The same text is delivered once per channel, so a
 * condition met on every sample (an unreadable file, a refused JIT map) is one line, not a flood;
 * past DIAG_QUEUE_MAX undelivered reports the rest are counted and summed up in one line.
 *
 * A NULL channel is allowed everywhere a channel is taken: reports to it are dropped (unit tests,
 * fuzz targets, benchmark replays). */
#ifndef PROFTOP_DIAG_H
#define PROFTOP_DIAG_H

#include <stddef.h>
#include <stdio.h>

enum diag_level {
	DIAG_INFO,       /* something the user asked for happened ("saved tmon.out") */
	DIAG_WARNING,    /* profiling goes on, with less than it should have */
	DIAG_ERROR,      /* something the user asked for failed */
};

#define DIAG_QUEUE_MAX 64
#define DIAG_TEXT_MAX 240

struct diag;

struct diag_ops {
	void (*report)(void *arg, enum diag_level level, const char *text);
};

/* A new channel, or NULL with errno set when no eventfd could be made. */
struct diag *diag_new(void);
void diag_free(struct diag *diag);
/* Any thread. The text is cut at DIAG_TEXT_MAX bytes and kept in visible form (util.h: a path or
 * a name the target chose may hold control characters; ESC shows as ^[). */
void diag_report(struct diag *diag, enum diag_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Readable while reports wait. */
int diag_fd(const struct diag *diag);
/* The frontend's thread: every waiting report, oldest first, to ops->report. Returns how many. */
size_t diag_deliver(struct diag *diag, const struct diag_ops *ops, void *arg);
/* What goes before a report's text on a line of its own: "warning: " for a warning, else ""
 * (an error's text says what failed, an info's what happened). */
const char *diag_prefix(enum diag_level level);
/* A report as a line of its own: "proftop: [warning: ]text", text in visible form. */
void diag_print(FILE *out, enum diag_level level, const char *text);

#endif
