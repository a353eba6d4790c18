/* ring.h — the lock-free single-producer ring from the sampler thread to the collector thread (one
 * reader), or to the collectors' unwinding threads (several readers, each reading every record).
 *
 * It carries variable-length records (each a perf_event_header-style blob, 8-byte aligned) in a
 * power-of-two byte buffer. The producer never waits: ring_reserve() returns NULL when the record
 * does not fit, and the caller counts that as overflow. The readers never write the data.
 *
 * Memory ordering (head and tail are free-running 64-bit byte counters, never wrapped):
 *
 *      producer (sampler)                         each reader (a collector worker)
 *      ------------------                         --------------------------------
 *      t = load_acquire(tail)   ---------+        h = load_acquire(head) ----+
 *      if head + len - t > size: full    |        if h == tail: empty        |
 *      write record bytes at head        |        read record bytes at tail  |
 *      store_release(head, head+len) ----|------> (pairs with the acquire)   |
 *                                        +------- store_release(tail, t+len) |
 *                                                 (pairs with the producer's |
 *                                                  acquire of tail: the slot |
 *                                                  is reused only after the  |
 *                                                  consumer finished reading)|
 *
 * The head release orders the record's bytes before the new head, so a consumer that acquires the
 * head sees the whole record. The tail release orders the consumer's reads before the producer's
 * later overwrite of the same bytes. A record never wraps: when it does not fit before the end of
 * the buffer the producer writes a padding record up to the end and starts at offset 0.
 *
 * Several readers: each has its own tail and the diagram holds for each; the producer's room ends
 * at the smallest tail, so a byte is overwritten only after every reader released it.
 *
 * Ownership: the pointer from ring_reserve() belongs to the producer until ring_commit(); the
 * pointer from ring_peek_reader() is valid until that reader's ring_release_reader(). Only one
 * thread may produce, and only one thread may read as each reader. */
#ifndef PROFTOP_RING_H
#define PROFTOP_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

#define RING_MAX_READERS 64

/* capacity is rounded up to a power of two (at least 4096 bytes); readers 1..RING_MAX_READERS.
 * Returns NULL on a bad size or count. ring_create() makes a ring of one reader. */
struct ring *ring_create_readers(size_t capacity, unsigned readers);
struct ring *ring_create(size_t capacity);
unsigned ring_readers(const struct ring *ring);
void ring_destroy(struct ring *ring);
size_t ring_capacity(const struct ring *ring);

/* Producer side. Reserve len bytes (rounded up to 8); NULL when full or len > capacity/2. */
void *ring_reserve(struct ring *ring, size_t len);
/* Publish the record reserved last. */
void ring_commit(struct ring *ring);

/* Reader side. The oldest record reader has not released and its length (as reserved, rounded to
 * 8), or NULL if none. ring_peek() and ring_release() are reader 0's. */
const void *ring_peek_reader(struct ring *ring, unsigned reader, size_t *len);
/* Done with the record returned by the reader's last peek. */
void ring_release_reader(struct ring *ring, unsigned reader);
const void *ring_peek(struct ring *ring, size_t *len);
void ring_release(struct ring *ring);

/* Bytes not yet released by every reader, for statistics (approximate while the others run). */
size_t ring_used(const struct ring *ring);

#endif
