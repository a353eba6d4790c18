/* ring.c — the lock-free SPSC ring from the sampler thread to the collector thread. The contract
 * and the memory-ordering diagram are in ring.h; this file is the layout.
 *
 * data[] is size bytes, size a power of two. head and tail are free-running byte counters and a
 * counter's offset in data[] is (counter & mask). Bytes [tail, head) hold published records; bytes
 * [head, tail + size) are free. Every record starts with an 8-byte header:
 *
 *	+---------+-----------+----------------------------------+
 *	| len u32 | flags u32 | len bytes: reserved length, to 8 |
 *	+---------+-----------+----------------------------------+
 *	^ 8-aligned           ^ what ring_reserve()/ring_peek() hand out
 *
 * Invariants:
 *  - 0 <= head - tail <= size, and both are multiples of 8. So every header is 8-aligned, and the
 *    space left before the end of data[] is either none or room for at least a header.
 *  - A record never wraps. When the next one would, the producer first writes a pad record
 *    (REC_PAD) that runs to the end of data[]. The consumer steps over pads: ring_peek() never
 *    returns one.
 *  - next_head == head unless a reservation is pending; next_tail == tail unless a record is
 *    peeked. So a stray ring_commit() or ring_release() stores the value already there.
 *
 * The producer publishes the pad as soon as it sees the record will not fit before the end, even
 * when the record will not fit at offset 0 yet either. Waiting until both fit could wait forever:
 * in an empty ring whose head is at size/2, a size/2 record fits neither before the end nor (with
 * the pad counted) at 0, and with nothing to consume no counter would ever move. Once the consumer
 * skips the early pad the ring is empty at offset 0, where anything ring_reserve() accepts fits.
 *
 * Each side caches the other's counter and rereads it (acquire) only when the cached value says
 * full (producer) or empty (consumer). A stale copy can only under-report room or records, so the
 * pairing in ring.h holds, and the common case touches no cache line the other side writes.
 *
 * Threads: head, tail_cache and next_head belong to the producer; tail, head_cache and next_tail
 * to the consumer; data, size and mask are read-only after ring_create(). */
#include "proftop/ring.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "proftop/util.h"

#define RING_MIN_SIZE	4096u
/* A pad's len (size - 8 at most) must fit the header's u32. */
#define RING_MAX_SIZE	((uint64_t)1 << 31)
#define CACHELINE	64

#define REC_PAD		1u

struct rec_hdr {
	uint32_t len;		/* bytes after the header; a multiple of 8 */
	uint32_t flags;		/* REC_PAD: skip len bytes, no record here */
};

/* malloc() promises 16-byte alignment, not 64, so _Alignas(CACHELINE) would be a promise xmalloc()
 * cannot keep. A full line of padding between the groups does the same job: two bytes 64 apart
 * never share a line, whatever the base address. */
struct ring {
	unsigned char *data;
	uint64_t size;
	uint64_t mask;
	char pad0[CACHELINE];

	_Atomic uint64_t head;	/* records before it are complete */
	uint64_t tail_cache;	/* a tail the consumer has passed; may lag */
	uint64_t next_head;	/* head once the pending reservation is committed */
	char pad1[CACHELINE];

	_Atomic uint64_t tail;	/* bytes before it may be overwritten */
	uint64_t head_cache;	/* a head the producer has published; may lag */
	uint64_t next_tail;	/* tail once the peeked record is released */
	char pad2[CACHELINE];	/* keeps the next heap block off the consumer's line */
};

static inline uint64_t ring_align8(uint64_t len)
{
	return (len + 7) & ~(uint64_t)7;
}

static inline struct rec_hdr *ring_hdr(const struct ring *ring, uint64_t pos)
{
	return (struct rec_hdr *)(ring->data + (pos & ring->mask));
}

struct ring *ring_create(size_t capacity)
{
	struct ring *ring;
	uint64_t size = RING_MIN_SIZE;

	if (capacity == 0 || capacity > RING_MAX_SIZE)
		return NULL;
	while (size < capacity)
		size <<= 1;

	ring = xcalloc(1, sizeof(*ring));
	ring->data = xmalloc(size);
	ring->size = size;
	ring->mask = size - 1;
	atomic_init(&ring->head, 0);
	atomic_init(&ring->tail, 0);
	return ring;
}

void ring_destroy(struct ring *ring)
{
	if (!ring)
		return;
	free(ring->data);
	free(ring);
}

size_t ring_capacity(const struct ring *ring)
{
	return ring->size;
}

/* Can need bytes go at head? The real tail is read only when the cached one says no, since that
 * read is the cache miss the consumer's last release caused. */
static bool ring_has_room(struct ring *ring, uint64_t head, uint64_t need)
{
	if (head + need - ring->tail_cache <= ring->size)
		return true;
	ring->tail_cache = atomic_load_explicit(&ring->tail, memory_order_acquire);
	return head + need - ring->tail_cache <= ring->size;
}

/* Fill head to the end of data[] with a pad and publish it, so the next record starts at offset
 * 0. Published at once, not with the record: see the file comment. */
static bool ring_pad(struct ring *ring, uint64_t *head)
{
	uint64_t gap = ring->size - (*head & ring->mask);
	struct rec_hdr *hdr;

	if (!ring_has_room(ring, *head, gap))
		return false;
	hdr = ring_hdr(ring, *head);
	hdr->len = (uint32_t)(gap - sizeof(*hdr));
	hdr->flags = REC_PAD;
	*head += gap;
	ring->next_head = *head;
	atomic_store_explicit(&ring->head, *head, memory_order_release);
	return true;
}

/* A reservation that is never committed is forgotten: the next ring_reserve() hands out the same
 * bytes again. */
void *ring_reserve(struct ring *ring, size_t len)
{
	uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint64_t need;
	struct rec_hdr *hdr;

	ring->next_head = head;
	if (len > ring->size / 2)
		return NULL;
	need = sizeof(*hdr) + ring_align8(len);
	if ((head & ring->mask) + need > ring->size && !ring_pad(ring, &head))
		return NULL;
	if (!ring_has_room(ring, head, need))
		return NULL;

	hdr = ring_hdr(ring, head);
	hdr->len = (uint32_t)(need - sizeof(*hdr));
	hdr->flags = 0;
	ring->next_head = head + need;
	return hdr + 1;
}

/* After this the record belongs to the ring: the producer must not touch the bytes again. */
void ring_commit(struct ring *ring)
{
	atomic_store_explicit(&ring->head, ring->next_head, memory_order_release);
}

/* Peeking twice without a release returns the same record. Pads are released as they are met,
 * so the producer gets their space back even if the ring then turns out empty. */
const void *ring_peek(struct ring *ring, size_t *len)
{
	uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	const struct rec_hdr *hdr;

	for (;;) {
		if (tail == ring->head_cache) {
			ring->head_cache = atomic_load_explicit(&ring->head, memory_order_acquire);
			if (tail == ring->head_cache)
				return NULL;
		}
		hdr = ring_hdr(ring, tail);
		if (!(hdr->flags & REC_PAD))
			break;
		tail += sizeof(*hdr) + hdr->len;
		ring->next_tail = tail;
		atomic_store_explicit(&ring->tail, tail, memory_order_release);
	}

	ring->next_tail = tail + sizeof(*hdr) + hdr->len;
	if (len)
		*len = hdr->len;
	return hdr + 1;
}

void ring_release(struct ring *ring)
{
	atomic_store_explicit(&ring->tail, ring->next_tail, memory_order_release);
}

/* Counts headers and pads too. tail is read first and with acquire: the consumer acquired a head at
 * least that large before storing it, so the head read after it cannot be smaller. */
size_t ring_used(const struct ring *ring)
{
	uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint64_t used = head - tail;

	return used < ring->size ? used : ring->size;
}
