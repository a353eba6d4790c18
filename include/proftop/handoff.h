/* handoff.h — debug files debuginfod sent (fetch.h), handed to every collector worker.
 *
 * The collector thread takes what the fetcher finished (handoff_take()): it reports what could
 * not be fetched and keeps the files that came, in order, for as long as the run lasts. Each
 * worker takes them in that order (handoff_next()) into its own symbolizer, keeping its place
 * in a counter of its own. Any worker may ask for a file (handoff_want()). The list has its own
 * lock: taken by the collector thread and the workers, never by readers. */
#ifndef PROFTOP_HANDOFF_H
#define PROFTOP_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>

struct diag;
struct fetched;
struct handoff;

/* A hand-off of the files fetched from DEBUGINFOD_URLS' servers; the fetcher writes wake_fd
 * when one is done. NULL when none is configured (errno 0) or the fetcher could not start
 * (errno set, and diag told). */
struct handoff *handoff_new(int wake_fd, struct diag *diag);
void handoff_free(struct handoff *h);

/* A worker's module lacks the file of build_id[0..len): asked for, unless it came already
 * (to another worker, or for another module of that build-id): then *applied goes back to 0,
 * so the worker takes the files again, now that the module is in place. */
void handoff_want(struct handoff *h, const unsigned char *build_id, size_t len,
		  const char *module, size_t *applied);
/* The collector thread: what the fetcher finished. True when files came for the workers. */
bool handoff_take(struct handoff *h);
/* Whether files came that a worker at *applied has not taken (a look without the lock). */
bool handoff_waiting(const struct handoff *h, size_t applied);
/* The next file for a worker at *applied (moved on), NULL when it has them all. */
const struct fetched *handoff_next(struct handoff *h, size_t *applied);
/* What is being fetched now, for a snapshot (empty when nothing). */
void handoff_status(struct handoff *h, char *buf, size_t size);
/* Profiling is over: nothing would take what arrives from now on; says what was still on its
 * way. The files that came stay (the workers' symbolizers point into them). */
void handoff_stop(struct handoff *h);

#endif
