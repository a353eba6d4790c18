/* outstream.h — a stdio stream onto a FIFO, a device, a terminal or a pipe that never makes
 * proftop deaf to the signals that end it.
 *
 * The session keeps SIGINT, SIGTERM, SIGQUIT and SIGHUP blocked and reads them from a signalfd,
 * so a write() that waits for a reader who stopped reading (a FIFO, `| less`, a terminal on hold)
 * would keep proftop from ending for good. An outstream writes at most PIPE_BUF bytes at a time
 * once poll() says there is room, and gives up:
 *   - when one of those signals is pending (it stays pending for the session to read);
 *   - once outstream_hurry() was called (profiling ended on a signal, which the session has
 *     read, and what is left is the final table or snapshot), when the reader takes nothing
 *     for OUTSTREAM_STALL_S seconds.
 * A write that gave up fails with EINTR (a signal) or ETIMEDOUT (the stall). Used by the main
 * thread only; outstream_hurry() is process-wide, since signals are. */
#ifndef PROFTOP_OUTSTREAM_H
#define PROFTOP_OUTSTREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OUTSTREAM_STALL_S 5

struct outstream;

/* A stream onto fd (not a regular file), which outstream_close() closes when own_fd. */
struct outstream *outstream_open(int fd, bool own_fd);
/* A stream onto what descriptor fd (1 or 2) is, through a description of its own opened
 * non-blocking (setting O_NONBLOCK on fd itself would change it for the shell and everything
 * else sharing it); through fd itself when it cannot be reopened (a socket). */
struct outstream *outstream_reopen(int fd);
FILE *outstream_file(struct outstream *out);
/* The signal a write gave up on (0: none), whether it gave up on a stall, and the bytes that
 * went in. */
int outstream_signal(const struct outstream *out);
bool outstream_stalled(const struct outstream *out);
uint64_t outstream_written(const struct outstream *out);
/* Why a write failed when it gave up ("interrupted by SIGTERM while waiting to write", "its
 * reader took nothing for 5 s after profiling ended"), malloc'd; NULL when it did not. */
char *outstream_gave_up(const struct outstream *out);
/* Flush, close the stream (and fd when owned) and free out. Returns 0 or an errno; with why,
 * *why is outstream_gave_up() of the closed stream (the flush may have given up too). */
int outstream_close(struct outstream *out, char **why);

/* From now on a wait for room ends after OUTSTREAM_STALL_S seconds without progress. */
void outstream_hurry(void);

#endif
