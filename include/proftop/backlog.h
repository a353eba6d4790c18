/* backlog.h — a first-in first-out queue of records, in memory of its own, for the sampler thread:
 * what the kernel handed over while the ring to the collector was full waits here, in order, until
 * the ring has room again.
 *
 * A collector can be busy for a while (reading a library's DWARF at its first sample takes
 * tenths of a second on a loaded machine) while the switch modes bring tens of megabytes a
 * second: the ring alone (8 MiB) then overflows. The backlog takes up the rest, up to its limit.
 *
 * Records are stored one after the other in chunks of BACKLOG_CHUNK bytes, mapped as they are
 * needed and unmapped as soon as every record in them was read: an empty backlog holds no memory
 * but one chunk kept for the next burst. Only one thread uses a backlog. */
#ifndef PROFTOP_BACKLOG_H
#define PROFTOP_BACKLOG_H

#include <stdbool.h>
#include <stddef.h>

#define BACKLOG_CHUNK (1u << 20)

struct backlog_chunk;

struct backlog {
	struct backlog_chunk *head, *tail; /* read from head, written at tail */
	struct backlog_chunk *spare;       /* an emptied chunk kept for reuse */
	size_t bytes;                      /* held by the records queued */
	size_t limit;                      /* backlog_reserve(.., true) refuses beyond it */
};

/* An empty backlog that holds at most limit bytes of records it may refuse. */
void backlog_init(struct backlog *b, size_t limit);
void backlog_free(struct backlog *b);
/* Room for a record of len bytes (at most BACKLOG_CHUNK / 2) at the end of the queue, to be
 * written by the caller at once; NULL when bounded and the backlog holds limit bytes already (a
 * record that must not be lost passes bounded false), or when memory cannot be mapped. */
void *backlog_reserve(struct backlog *b, size_t len, bool bounded);
/* The oldest record and its length; NULL when empty. Valid until backlog_pop(). */
const void *backlog_peek(const struct backlog *b, size_t *len);
/* Forget the oldest record. */
void backlog_pop(struct backlog *b);
bool backlog_empty(const struct backlog *b);

#endif
