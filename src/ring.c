/* ring.c — the lock-free ring from the sampler thread to the collector's thread or threads. The
 * contract and the memory-ordering diagram are in ring.h; this file is the layout.
 *
 * data[] is size bytes, size a power of two. head and tail are free-running byte counters and a
 * counter's offset in data[] is (counter & mask). Bytes [tail, head) hold published records; bytes
 * [head, tail + size) are free. Every record starts with an 8-byte header:
 *
 *	+---------+-----------+----------------------------------+
 *	| len u32 | flags u32 | len bytes: reserved length, to 8 |
 *	+---------+-----------+----------------------------------+
 *	^ 8-aligned           ^ what ring_reserve()/ring_peek_reader() hand out
 *
 * Invariants:
 *  - 0 <= head - tail <= size for every reader's tail, and all are multiples of 8. So every header is 8-aligned, and the
 *    space left before the end of data[] is either none or room for at least a header.
 *  - A record never wraps. When the next one would, the producer first writes a pad record
 *    (REC_PAD) that runs to the end of data[]. Each reader steps over pads: ring_peek_reader()
 *    never returns one.
 *  - next_head == head unless a reservation is pending; next_tail == tail unless a record is
 *    peeked. So a stray ring_commit() or ring_release() stores the value already there.
 *
 * The producer publishes the pad as soon as it sees the record will not fit before the end, even
 * when the record will not fit at offset 0 yet either. Waiting until both fit could wait forever:
 * in an empty ring whose head is at size/2, a size/2 record fits neither before the end nor (with
 * the pad counted) at 0, and with nothing to consume no counter would ever move. Once the readers
 * skip the early pad the ring is empty at offset 0, where anything ring_reserve() accepts fits.
 *
 * Each side caches the other's counter and rereads it (acquire) only when the cached value says
 * full (producer) or empty (a reader). A stale copy can only under-report room or records, so the
 * pairing in ring.h holds, and the common case touches no cache line the other side writes.
 *
 * With several readers each has its own tail (on a line of its own) and reads every record; the
 * producer's room ends at the smallest tail, which it computes only when its cached one says full.
 * A smaller tail than the real minimum only under-reports room, as above.
 *
 * Threads: head, tail_cache and next_head belong to the producer; reader i's tail, head_cache and
 * next_tail to reader i; data, size, mask and nreaders are read-only after ring_create_readers(). */
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
	uint64_t tail_cache;	/* a tail every reader has passed; may lag */
	uint64_t next_head;	/* head once the pending reservation is committed */
	char pad1[CACHELINE];

	unsigned nreaders;
	struct ring_reader *readers;
};

struct ring_reader {
	_Atomic uint64_t tail;	/* bytes before it this reader has read */
	uint64_t head_cache;	/* a head the producer has published; may lag */
	uint64_t next_tail;	/* tail once the peeked record is released */
	char pad[CACHELINE];	/* keeps the next reader (or heap block) off this one's line */
};

static inline uint64_t ring_align8(uint64_t len)
{
	return (len + 7) & ~(uint64_t)7;
}

static inline struct rec_hdr *ring_hdr(const struct ring *ring, uint64_t pos)
{
	return (struct rec_hdr *)(ring->data + (pos & ring->mask));
}

struct ring *ring_create_readers(size_t capacity, unsigned readers)
{
	struct ring *ring;
	uint64_t size = RING_MIN_SIZE;

	if (capacity == 0 || capacity > RING_MAX_SIZE || readers == 0 || readers > RING_MAX_READERS)
		return NULL;
	while (size < capacity)
		size <<= 1;

	ring = xcalloc(1, sizeof(*ring));
	ring->data = xmalloc(size);
	ring->size = size;
	ring->mask = size - 1;
	ring->nreaders = readers;
	ring->readers = xcalloc(readers, sizeof(*ring->readers));
	atomic_init(&ring->head, 0);
	for (unsigned i = 0; i < readers; i++)
		atomic_init(&ring->readers[i].tail, 0);
	return ring;
}

struct ring *ring_create(size_t capacity)
{
	return ring_create_readers(capacity, 1);
}

void ring_destroy(struct ring *ring)
{
	if (!ring)
		return;
	free(ring->readers);
	free(ring->data);
	free(ring);
}

unsigned ring_readers(const struct ring *ring)
{
	return ring->nreaders;
}

/* The tail of the reader furthest behind: every byte before it has been read by all. */
static uint64_t ring_min_tail(const struct ring *ring)
{
	uint64_t min = atomic_load_explicit(&ring->readers[0].tail, memory_order_acquire);

	for (unsigned i = 1; i < ring->nreaders; i++) {
		uint64_t t = atomic_load_explicit(&ring->readers[i].tail, memory_order_acquire);

		if (t < min)
			min = t;
	}
	return min;
}

size_t ring_capacity(const struct ring *ring)
{
	return ring->size;
}

/* Can need bytes go at head? The real tails are read only when the cached one says no, since that
 * read is the cache miss the readers' last releases caused. */
static bool ring_has_room(struct ring *ring, uint64_t head, uint64_t need)
{
	if (head + need - ring->tail_cache <= ring->size)
		return true;
	ring->tail_cache = ring_min_tail(ring);
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
const void *ring_peek_reader(struct ring *ring, unsigned reader, size_t *len)
{
	struct ring_reader *r = &ring->readers[reader];
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const struct rec_hdr *hdr;

	for (;;) {
		if (tail == r->head_cache) {
			r->head_cache = atomic_load_explicit(&ring->head, memory_order_acquire);
			if (tail == r->head_cache)
				return NULL;
		}
		hdr = ring_hdr(ring, tail);
		if (!(hdr->flags & REC_PAD))
			break;
		tail += sizeof(*hdr) + hdr->len;
		r->next_tail = tail;
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}

	r->next_tail = tail + sizeof(*hdr) + hdr->len;
	if (len)
		*len = hdr->len;
	return hdr + 1;
}

void ring_release_reader(struct ring *ring, unsigned reader)
{
	struct ring_reader *r = &ring->readers[reader];

	atomic_store_explicit(&r->tail, r->next_tail, memory_order_release);
}

const void *ring_peek(struct ring *ring, size_t *len)
{
	return ring_peek_reader(ring, 0, len);
}

void ring_release(struct ring *ring)
{
	ring_release_reader(ring, 0);
}

/* Counts headers and pads too, up to the reader furthest behind. The tails are read first and with
 * acquire: a reader acquired a head at least that large before storing its tail, so the head read
 * after them cannot be smaller. */
size_t ring_used(const struct ring *ring)
{
	uint64_t tail = ring_min_tail(ring);
	uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint64_t used = head - tail;

	return used < ring->size ? used : ring->size;
}
